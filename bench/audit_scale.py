"""The offline audit at archive scale: a first audit, a second of the same inputs, then one with
a variant added.

    python bench/audit_scale.py [--tasks 480] [--variants 4] [--attempts 2] [--quick]
                                [--profile first|none] [--top 40] [--keep DIR]

Builds an APEX-format benchmark deterministically from `rubrics/sample` (its tasks copied under
new ids until there are --tasks, its three worlds shared; runs copied for --variants variants x
--attempts attempts, each variant a model of its own; `--quick` keeps each task's first
criterion only, in the rubric and in the runs' verifiers and grades), then runs `rubric-audit
audit` into one folder three times, each in its own process: first, again on unchanged inputs,
and after one more variant (of --attempts attempts per task) was added to the runs. Prints each
audit's wall time, CPU time (the audit's process and its workers), attempts per second, peak RSS
of the audit's process (its VmHWM) and the peak of the PSS of it and its workers summed (the
memory they use together: a page they share counted once, in shares; sampled every 50 ms), the
load average, and the top of a sampling profile
(pyinstrument) of a fourth audit, a first one of the grown runs in a new folder, done in one
process (RUBRIC_AUDIT_WORKERS=1) so that the profile shows where the work goes.

Targets on an idle machine, 1920 x 4 x 4 (30,720 attempts): first audit <= 20 s and <= 500 MB,
second <= 2 s, a variant added <= 5 s; 307,200 attempts (1920 x 4 x 40 --quick) <= 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "rubrics" / "sample"
SAMPLE_VARIANTS = ("atlas-1", "cirrus-2")
ID = re.compile(rb"\b(task|ver)_[0-9a-f]{32}\b")
Rename = Callable[[bytes], bytes]


def _renamer(copy: int) -> Rename:
    """Bytes with every task and verifier id of the sample given copy `copy`'s suffix."""
    return lambda data: ID.sub(lambda m: m.group(0) + f"_{copy:03d}".encode(), data)


def _first_criterion(name: str, data: bytes, kept: set[str]) -> bytes:
    """--quick: a run file with only the tasks' first criteria (`kept` verifier ids)."""
    if name == "verifiers.json":
        return json.dumps([v for v in json.loads(data) if v["verifier_id"] in kept]).encode()
    if name == "grades.json":
        grading = json.loads(data)
        grading["verifier_results"] = [r for r in grading.get("verifier_results") or []
                                       if r["verifier_id"] in kept]
        return json.dumps(grading).encode()
    return data


def _copy_tree(source: Path, target: Path, rename: Rename,
               transform: Callable[[str, bytes], bytes] = lambda _, data: data) -> None:
    for path in sorted(source.rglob("*")):
        if path.is_file():
            dest = target / rename(path.relative_to(source).as_posix().encode()).decode()
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(transform(path.name, rename(path.read_bytes())))


def _link_tree(source: Path, target: Path) -> None:
    """The same files under another folder, as hard links (an attempt recorded alike)."""
    for path in sorted(source.rglob("*")):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, dest)


@dataclass
class Built:
    root: Path
    copies: int
    kept: set[bytes]  # task ids
    first_criteria: set[str] | None  # --quick: the verifier ids kept


def build_benchmark(root: Path, tasks: int, variants: int, attempts: int,
                    all_recipes: bool = False, quick: bool = False) -> tuple[Built, int]:
    """Write the benchmark and its runs under `root`; returns it and the number of attempts.

    Gold recomputation recipes are the auditor's own hand-written files, so only the sample's
    tasks keep theirs unless `all_recipes` (then every copy has one: 70% of tasks); with
    `quick`, none (a recipe may name a criterion past the first).
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
                if quick:
                    task["rubric"] = task["rubric"][:1]
                rows.append(task)
                kept.add(task["task_id"].encode())
        _copy_tree(SAMPLE / "task_files", root / "task_files", rename)
        if (copy == 0 or all_recipes) and not quick:
            _copy_tree(SAMPLE / "regold", root / "regold", rename)
    (root / "tasks_and_rubrics.json").write_text(json.dumps(rows, indent=2))
    for extra in (root / "task_files").iterdir():
        if extra.name.encode() not in kept:
            shutil.rmtree(extra)
    for recipe in (root / "regold").iterdir() if (root / "regold").is_dir() else []:
        if recipe.stem.encode() not in kept:
            recipe.unlink()
    built = Built(root, copies, kept,
                  {t["rubric"][0]["verifier_id"] for t in rows if t["rubric"]} if quick else None)
    return built, sum(write_variant(built, v, attempts) for v in range(variants))


def write_variant(built: Built, v: int, attempts: int) -> int:
    """Runs of variant `v` (a copy of one of the sample's two variants, its model renamed), each
    task attempted `attempts` times; returns the number of attempts written. Attempts recorded
    alike (the sample has two per task) and variants copying the same sample variant share
    their files as hard links."""
    source = SAMPLE / "runs" / SAMPLE_VARIANTS[v % len(SAMPLE_VARIANTS)]
    target = built.root / "runs" / f"{source.name}-v{v}"
    earlier = built.root / "runs" / f"{source.name}-v{v % len(SAMPLE_VARIANTS)}"
    first_criteria = built.first_criteria
    transform = ((lambda name, data: _first_criterion(name, data, first_criteria))
                 if first_criteria is not None else (lambda _, data: data))
    header, rows_csv, failures, written = b"", b"", b"", 0
    for copy in range(built.copies):
        rename = _renamer(copy)
        for task_dir in sorted(p for p in source.iterdir() if p.is_dir()):
            task_id = rename(task_dir.name.encode())
            if task_id not in built.kept:
                continue
            task = target / task_id.decode()
            for k in range(1, attempts + 1):
                origin = (k - 1) % 2 + 1
                if v >= len(SAMPLE_VARIANTS) and k <= 2:
                    _link_tree(earlier / task_id.decode() / f"attempt_{k}", task / f"attempt_{k}")
                elif k <= 2:
                    _copy_tree(task_dir / f"attempt_{origin}", task / f"attempt_{k}", rename,
                               transform)
                else:
                    _link_tree(task / f"attempt_{origin}", task / f"attempt_{k}")
                written += 1
        header, *lines = rename((source / "results.csv").read_bytes()).splitlines(True)
        rows_csv += b"".join(line for line in lines if line.split(b",")[0] in built.kept)
        failures += b"".join(
            line for line in rename((source / "results.failures.jsonl").read_bytes())
            .splitlines(True) if line.strip() and json.loads(line)["task_id"].encode()
            in built.kept)
    model = f"fictional/{source.name}".encode()
    for part, data in (("results.csv", header + rows_csv), ("results.failures.jsonl", failures)):
        (target / part).write_bytes(data.replace(model, model + f"-v{v}".encode()))
    return written


@dataclass
class Measured:
    wall: float
    cpu: float  # the audit's process and every worker it waited for
    rss: int  # MB, peak RSS of the audit's own process (its VmHWM, as last read before it ended)
    tree_pss: int  # MB, peak of the PSS of the audit's process and its workers summed


def _high_water(pid: int) -> int:
    """A process's peak RSS so far, in bytes (/proc/PID/status VmHWM). Not the ru_maxrss wait4
    gives: a child's counts the RSS its parent had when it forked, this bench's own included."""
    with open(f"/proc/{pid}/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    return int(kb) * 1024


def _pss(process: psutil.Process) -> int:
    """A process's PSS, 0 for one that ended since it was listed (a worker done)."""
    try:
        return int(process.memory_full_info().pss)
    except psutil.Error:
        return 0


def _sample(pid: int, peak: list[int], stop: threading.Event) -> None:
    """Every 50 ms until the audit ends: its peak RSS so far, and the PSS of it and its workers
    (peak[0] and peak[1]). A worker that ends between two samples is passed over; sampling
    stopped at the first (the RSS of an audit whose readers had ended was its peak before
    them: 187 MB for a variant added to 307,200 attempts)."""
    try:
        process = psutil.Process(pid)
    except psutil.Error:
        return
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], _high_water(pid))
            children = process.children(recursive=True)
        except (psutil.Error, OSError, StopIteration):  # the audit ended between two samples
            return
        peak[1] = max(peak[1], _pss(process) + sum(_pss(child) for child in children))
        stop.wait(0.05)


def audit_in_process(bench: Path, out: Path, profile: Path | None = None) -> Measured:
    """One `rubric-audit audit` in its own process; with `profile`, under pyinstrument's
    sampling profiler writing its text report there, without worker processes (all the work
    in the one process profiled)."""
    command = [sys.executable, "-m", "rubric_audit", "audit", str(bench), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if profile is not None:
        command[1:1] = ["-m", "pyinstrument", "-r", "text", "-o", str(profile)]
        env["RUBRIC_AUDIT_WORKERS"] = "1"
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    peak, stop = [0, 0], threading.Event()
    sampler = threading.Thread(target=_sample, args=(proc.pid, peak, stop), daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    stop.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"audit exited with {proc.returncode}")
    return Measured(time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
                    peak[0] // 2**20, peak[1] // 2**20)


def _tree_size(root: Path) -> int:
    """Bytes in the files under `root` (a hard link counted each time), walked without holding
    every path (Path.rglob keeps a set of them: gigabytes at 307,200 attempts)."""
    total, pending = 0, [root]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


def startup(args: list[str], repeats: int = 3) -> float:
    """Best wall time of a short offline command, start-up included."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rubric_audit", *args], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
        best = min(best, time.perf_counter() - start)
    return best


def _line(label: str, m: Measured, attempts: int) -> str:
    return (f"{label}: {m.wall:.2f}s wall, {m.cpu:.2f}s CPU, {attempts / m.wall:.0f} attempts/s, "
            f"peak RSS {m.rss} MB (PSS with its workers {m.tree_pss} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=480)
    parser.add_argument("--variants", type=int, default=4)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--quick", action="store_true",
                        help="each task's first criterion only (rubric, verifiers, grades)")
    parser.add_argument("--all-recipes", action="store_true",
                        help="a gold recomputation recipe for every copied task, not only the "
                             "sample's own")
    parser.add_argument("--profile", choices=("first", "none"), default="first",
                        help="profile a first audit (pyinstrument, sampling, one process)")
    parser.add_argument("--top", type=int, default=40, help="profile lines to print")
    parser.add_argument("--keep", type=Path, help="build and audit here, and keep it")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} on {os.cpu_count()} cores")
    print(f"start-up: --help {startup(['--help']):.2f}s, "
          f"tasks rubrics/sample {startup(['tasks', str(SAMPLE)]):.2f}s")
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        bench, out, profile = base / "bench", base / "out", base / "profile.txt"
        start = time.perf_counter()
        built, attempts = build_benchmark(bench, args.tasks, args.variants, args.attempts,
                                          args.all_recipes, args.quick)
        size = _tree_size(bench / "runs")
        print(f"built {args.tasks} tasks x {args.variants} variants x {args.attempts} attempts "
              f"= {attempts} attempts ({size / 1e6:.0f} MB of runs"
              f"{', first criteria only' if args.quick else ''}) in "
              f"{time.perf_counter() - start:.1f}s")
        print(_line("first audit", audit_in_process(bench, out), attempts))
        print(_line("second audit, unchanged inputs", audit_in_process(bench, out), attempts))
        added = write_variant(built, args.variants, args.attempts)
        grown = audit_in_process(bench, out)
        print(_line(f"a variant added ({added} attempts)", grown, added))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if args.profile == "first":
            profiled = audit_in_process(bench, base / "profiled", profile)
            print(_line("first audit again, profiled in one process", profiled,
                        attempts + added))
            print("\n".join(profile.read_text().splitlines()[:args.top]))


if __name__ == "__main__":
    main()
