"""Throughput of the deterministic numeric checker on (criterion, answer) pairs.

    python bench/code_checker_throughput.py [--pairs 100000]

Pairs are drawn in turn from the sample benchmark's runs and the shared APEX-Agents fixtures (real
criteria and answers). Prints criteria checked per second and the share decided (not n/a).
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from rubric_audit.checks.code_grade import grade_numeric
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs

ROOT = Path(__file__).resolve().parents[1]


def pairs() -> list[tuple[str, str, str]]:
    """(criterion, answer, prompt) for every recorded grade in the sample and the fixtures."""
    out = []
    for runs, tasks in (
        (load_runs([ROOT / "rubrics/sample/runs"]),
         {t.id: t for t in load_benchmark(ROOT / "rubrics/sample").tasks}),
        (shared := load_runs([ROOT / "tests/fixtures/apex-agents-runs"]), shared.tasks),
    ):
        answers = {a.id: a for a in runs.attempts}
        for g in runs.grades:
            attempt = answers[g.attempt_id]
            task = tasks[attempt.task_id]
            out.append((task.criterion(g.criterion_id).text, attempt.answer or "", task.prompt))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    args = parser.parse_args()
    pool = pairs()
    decided = 0
    start = time.perf_counter()
    for criterion, answer, prompt in itertools.islice(itertools.cycle(pool), args.pairs):
        decided += grade_numeric(criterion, answer, prompt).verdict != "not_applicable"
    seconds = time.perf_counter() - start
    print(f"pairs={args.pairs} distinct={len(pool)} seconds={seconds:.2f} "
          f"rate={args.pairs / seconds:,.0f} criteria/s decided={decided / args.pairs:.1%}")


if __name__ == "__main__":
    main()
