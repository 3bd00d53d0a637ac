"""Precision and coverage of the deterministic checks on the labelled corpus (tests/corpus).

    python bench/check_precision.py [--corpus tests/corpus] [--no-write] [--by-class]
    python bench/check_precision.py --corpus tests/corpus/holdoutN --first-measurement

Prints, per check, how many cases it spoke on and how often rightly (the code checker: decided
cases and agreement with the expert verdict; judge-vs-code and lint checks: findings and true
findings), and writes the numbers to rubric_audit/checks/precision.json, which the audit reads to
give each finding its check's confidence, and how many of the cases a numeric checker can decide
(`code` not `not_applicable`) it decided, with its false fails (a sound gold read as failing: a
false broken oracle) and false passes. --by-class splits the code checker by failure class.
--first-measurement records a new held-out set's numbers in precision_unseen.json instead, once:
run it before anyone has looked at a result on that set, and never again for it.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
from collections import Counter
from pathlib import Path

from rubric_audit.checks.precision import (
    DATA,
    UNSEEN,
    _cases,
    code_verdict,
    first_measurement,
    measure,
    write,
)

ROOT = Path(__file__).resolve().parents[1]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests/corpus")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--by-class", action="store_true")
    parser.add_argument("--first-measurement", action="store_true",
                        help="record this held-out set's first measurement (once per set)")
    args = parser.parse_args()
    measured = measure(args.corpus)
    print(f"{'check':40} {'cases':>6} {'fired':>6} {'right':>6} {'precision':>9} {'coverage':>8}")
    for p in measured.values():
        print(f"{p.check:40} {p.cases:6} {p.fired:6} {p.correct:6} {_pct(p.precision):>9} "
              f"{_pct(p.coverage):>8}" + (f"  missed {p.missed}" if p.missed else ""))
    cases = _cases(args.corpus, "criteria")
    verdicts = {case["id"]: code_verdict(case).verdict for case in cases}
    decidable = [c for c in cases if c.get("code", "not_applicable") != "not_applicable"]
    decided = sum(verdicts[c["id"]] != "not_applicable" for c in decidable)
    false_fails = sum(verdicts[c["id"]] == "fail" and c["verdict"] == "pass" for c in cases)
    false_passes = sum(verdicts[c["id"]] == "pass" and c["verdict"] == "fail" for c in cases)
    print(f"code checker: decided {decided} of {len(decidable)} decidable cases "
          f"({_pct(decided / len(decidable) if decidable else None)}); "
          f"false fails {false_fails}, false passes {false_passes}")
    if args.by_class:
        counts: Counter[tuple[str, str]] = Counter()
        for case in cases:
            verdict = verdicts[case["id"]]
            outcome = ("n/a" if verdict == "not_applicable"
                       else "right" if verdict == case["verdict"] else "wrong")
            counts[(case["failure_class"], outcome)] += 1
        for cls in sorted({c for c, _ in counts}):
            right, wrong, na = (counts[(cls, o)] for o in ("right", "wrong", "n/a"))
            print(f"  {cls:20} right {right:3}  wrong {wrong:3}  n/a {na:3}")
    if args.first_measurement:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                                capture_output=True).stdout.strip() or "unknown"
        name = args.corpus.resolve().name
        try:
            first_measurement(name, measured, commit, datetime.date.today().isoformat())
        except ValueError as exc:
            raise SystemExit(f"not recorded: {exc}") from None
        print(f"recorded the first measurement of {name} in {UNSEEN.relative_to(ROOT)}")
    elif not args.no_write:
        write(measured)
        print(f"wrote {DATA.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
