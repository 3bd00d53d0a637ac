"""The offline audit at benchmark scale: a first audit, then a second of the same inputs.

    python bench/audit_scale.py [--tasks 480] [--variants 4] [--attempts 2] [--profile first]

Builds an APEX-format benchmark deterministically from `rubrics/sample` (its tasks copied under
new ids until there are --tasks, its three worlds shared; runs copied for --variants variants x
--attempts attempts, each variant a model of its own), then runs `rubric-audit audit` twice into
the same folder, each in its own process. Prints the start-up time of the offline commands, each
audit's wall time, attempts per second and peak RSS (targets at 480 x 4 x 2 on an idle machine:
first <= 10 s, second <= 3 s), the load average, and the top of a profile of one audit.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "rubrics" / "sample"
SAMPLE_VARIANTS = ("atlas-1", "cirrus-2")
ID = re.compile(rb"\b(task|ver)_[0-9a-f]{32}\b")


def _renamer(copy: int):
    """Bytes with every task and verifier id of the sample given copy `copy`'s suffix."""
    return lambda data: ID.sub(lambda m: m.group(0) + f"_{copy:03d}".encode(), data)


def _copy_tree(source: Path, target: Path, rename) -> None:
    for path in sorted(source.rglob("*")):
        if path.is_file():
            dest = target / rename(path.relative_to(source).as_posix().encode()).decode()
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(rename(path.read_bytes()))


def build_benchmark(root: Path, tasks: int, variants: int, attempts: int,
                    all_recipes: bool = False) -> int:
    """Write the benchmark and its runs under `root`; returns the number of attempts.

    Gold recomputation recipes are the auditor's own hand-written files, so only the sample's
    tasks keep theirs unless `all_recipes` (then every copy has one: 70% of tasks).
    """
    sample_tasks = json.loads((SAMPLE / "tasks_and_rubrics.json").read_bytes())
    copies = -(-tasks // len(sample_tasks))
    root.mkdir(parents=True)
    shutil.copy(SAMPLE / "world_descriptions.json", root)
    shutil.copytree(SAMPLE / "worlds", root / "worlds")
    raw = (SAMPLE / "tasks_and_rubrics.json").read_bytes()
    rows: list[dict] = []
    kept: set[bytes] = set()
    for copy in range(copies):
        rename = _renamer(copy)
        for task in json.loads(rename(raw)):
            if len(rows) < tasks:
                rows.append(task)
                kept.add(task["task_id"].encode())
        _copy_tree(SAMPLE / "task_files", root / "task_files", rename)
        if copy == 0 or all_recipes:
            _copy_tree(SAMPLE / "regold", root / "regold", rename)
    (root / "tasks_and_rubrics.json").write_text(json.dumps(rows, indent=2))
    for extra in (root / "task_files").iterdir():
        if extra.name.encode() not in kept:
            shutil.rmtree(extra)
    for recipe in (root / "regold").iterdir():
        if recipe.stem.encode() not in kept:
            recipe.unlink()
    written = 0
    for v in range(variants):
        source = SAMPLE / "runs" / SAMPLE_VARIANTS[v % len(SAMPLE_VARIANTS)]
        name = f"{source.name}-v{v}"
        target = root / "runs" / name
        header, rows_csv, failures = b"", b"", b""
        for copy in range(copies):
            rename = _renamer(copy)
            for task_dir in sorted(p for p in source.iterdir() if p.is_dir()):
                task_id = rename(task_dir.name.encode())
                if task_id not in kept:
                    continue
                for k in range(1, attempts + 1):
                    origin = task_dir / f"attempt_{(k - 1) % 2 + 1}"
                    _copy_tree(origin, target / task_id.decode() / f"attempt_{k}", rename)
                    written += 1
            header, *lines = rename((source / "results.csv").read_bytes()).splitlines(True)
            rows_csv += b"".join(line for line in lines if line.split(b",")[0] in kept)
            failures += b"".join(
                line for line in rename((source / "results.failures.jsonl").read_bytes())
                .splitlines(True) if line.strip() and json.loads(line)["task_id"].encode() in kept)
        model = f"fictional/{source.name}".encode()
        for part, data in (("results.csv", header + rows_csv),
                           ("results.failures.jsonl", failures)):
            (target / part).write_bytes(data.replace(model, model + f"-v{v}".encode()))
    return written


def audit_in_process(bench: Path, out: Path) -> tuple[float, float, int]:
    """One `rubric-audit audit` in its own process: (wall seconds, CPU seconds, peak RSS in MB).

    On a busy machine the CPU seconds are the better guide to the wall time when idle."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "rubric_audit", "audit", str(bench),
                             "--out", str(out)], stdout=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"audit exited with {proc.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - start, cpu, usage.ru_maxrss // 1024


def startup(args: list[str], repeats: int = 3) -> float:
    """Best wall time of a short offline command, start-up included."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rubric_audit", *args], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
        best = min(best, time.perf_counter() - start)
    return best


def profile(bench: Path, out: Path, top: int) -> str:
    sys.path.insert(0, str(ROOT))
    from rubric_audit.audit.job import run_audit

    profiler = cProfile.Profile()
    profiler.runcall(run_audit, bench, None, out)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=480)
    parser.add_argument("--variants", type=int, default=4)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--all-recipes", action="store_true",
                        help="a gold recomputation recipe for every copied task, not only the "
                             "sample's own")
    parser.add_argument("--profile", choices=("first", "second", "none"), default="first",
                        help="profile a third audit: into a fresh folder, or the same one again")
    parser.add_argument("--top", type=int, default=30, help="profile lines to print")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} on {os.cpu_count()} cores")
    print(f"start-up: --help {startup(['--help']):.2f}s, "
          f"tasks rubrics/sample {startup(['tasks', str(SAMPLE)]):.2f}s")
    with tempfile.TemporaryDirectory() as tmp:
        bench, out = Path(tmp) / "bench", Path(tmp) / "out"
        start = time.perf_counter()
        attempts = build_benchmark(bench, args.tasks, args.variants, args.attempts,
                                   args.all_recipes)
        size = sum(p.stat().st_size for p in (bench / "runs").rglob("*") if p.is_file())
        print(f"built {args.tasks} tasks x {args.variants} variants x {args.attempts} attempts "
              f"= {attempts} attempts ({size / 1e6:.0f} MB of runs) in "
              f"{time.perf_counter() - start:.1f}s")
        for label in ("first", "second"):
            wall, cpu, rss = audit_in_process(bench, out)
            print(f"{label} audit: {wall:.2f}s wall, {cpu:.2f}s CPU, {attempts / wall:.0f} "
                  f"attempts/s, peak RSS {rss} MB")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if args.profile != "none":
            target = out if args.profile == "second" else Path(tmp) / "profiled"
            print(profile(bench, target, args.top))


if __name__ == "__main__":
    main()
