"""Throughput of the deterministic numeric checker on (criterion, answer) pairs.

    python bench/code_checker_throughput.py [--pairs 100000]

Pairs are drawn in turn from the sample benchmark's runs and the shared APEX-Agents fixtures (real
criteria and answers). Prints criteria checked per second and the share decided (not n/a), twice:
cycling the pairs (every text seen before, so the parsers' caches answer), and with each answer
new (every parsed text forgotten before the answer's criteria are checked, except the criteria's
parsed claims, which recur in an audit where many attempts answer the same task). Each rate is
given by the wall clock and by the process's CPU time, which a machine shared with other work
does not slow.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from rubric_audit.checks import numbers, owners
from rubric_audit.checks.answer import read_answer
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
    run("cycled", pool, args.pairs, lambda: None)
    run("each answer new", sorted(pool, key=lambda pair: pair[1]), args.pairs // 10, _forget_texts)


def run(name: str, pool: list[tuple[str, str, str]], count: int, before_answer) -> None:
    decided = 0
    previous = None
    start, cpu = time.perf_counter(), time.process_time()
    for criterion, answer, prompt in itertools.islice(itertools.cycle(pool), count):
        if answer != previous:
            before_answer()
            previous = answer
        decided += grade_numeric(criterion, answer, prompt).verdict != "not_applicable"
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    print(f"{name}: pairs={count} distinct={len(pool)} seconds={seconds:.2f} "
          f"rate={count / seconds:,.0f} criteria/s decided={decided / count:.1%} "
          f"cpu_seconds={cpu_seconds:.2f} cpu_rate={count / cpu_seconds:,.0f} criteria/s")


def _forget_texts() -> None:
    """Forget every text read so far (answers, and the quantities of criteria and prompts too);
    only each criterion's parsed claim stays, as it would across an audit's attempts."""
    read_answer.cache_clear()
    owners.forget()
    numbers._quantities.cache_clear()
    numbers._scan.cache_clear()


if __name__ == "__main__":
    main()
