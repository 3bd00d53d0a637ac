"""Item statistics: how each criterion and task behaves across every graded attempt of every
model, as review-priority signals.

Item analysis over one grader's stored verdicts (the headline grader, the one the review queues
follow), with no model and no text: per criterion its pass rate, its discrimination against the
rest of its task (the correlation of passing it with the share of the task's other criteria
passed, over the task's attempts) and against model strength (with each attempt's model's pass@1
on the other tasks); per task its discrimination against model strength. Five checks turn them
into info findings, each with its statistic, the attempts behind it and, where verdicts could be
shuffled, the chance of a pattern at least as extreme if verdicts and models were unrelated (an
exact permutation probability given the margins): `task_fails_on_same_criteria` (a task every
attempt failed, on the same criteria), `criterion_never_varies` (one verdict on every attempt
while its task's outcome varies), `criteria_redundant` (criteria with identical verdicts on every
attempt, which vary), `criterion_negative_discrimination` and `task_negative_discrimination`
(stronger models fail, weaker ones pass). A statistic needs `MIN_ATTEMPTS` decided attempts from
at least two models or variants; a pattern that chance makes likelier than `CHANCE` is no signal.
The signals rank the failures queue (`review.labels.by_priority`) and never score anything;
their precision is measured on planted cases in `tests/corpus/items/` and by reviewers.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from math import comb, prod
from typing import TYPE_CHECKING

from pydantic import BaseModel

from rubric_audit.core.model import AttemptRow, Finding, GradeRow, Task, grades_by_attempt
from rubric_audit.core.scores import attempt_outcome

if TYPE_CHECKING:
    import numpy as np  # imported where used: reading a stored summary needs none

MIN_ATTEMPTS = 4
CHANCE = 0.2
EXACT_LIMIT = 200_000  # compositions enumerated for an exact chance; past it, a normal approximation


@dataclass(frozen=True)
class ItemAttempt:
    """One decided attempt of a task: its model and variant, its verdict per criterion (pass or
    fail only) and its outcome under the APEX rule."""

    key: str
    verdicts: dict[str, bool]
    passed: bool


@dataclass(frozen=True)
class TaskItems:
    """What the item checks read of one task: its criteria in rubric order, its decided attempts
    and each model's strength (pass@1 on the benchmark's other tasks; None with no other task)."""

    task_id: str
    criteria: tuple[str, ...]
    attempts: tuple[ItemAttempt, ...]
    strength: dict[str, float | None]


class ItemRow(BaseModel):
    """One criterion's (or, with criterion_id None, one task's) statistics in audit.json."""

    task_id: str
    criterion_id: str | None
    attempts: int
    pass_rate: float
    rest_correlation: float | None  # criteria only: with the share of the task's other criteria
    strength_correlation: float | None  # with the attempt's model's pass@1 on other tasks
    chance: float | None  # of a strength correlation this low if verdicts and models were unrelated


def task_items(tasks: list[Task], attempts: Iterable[AttemptRow], grades: Iterable[GradeRow],
               grader: str) -> list[TaskItems]:
    """Each task's decided attempts by `grader`, with each model's leave-this-task-out strength."""
    by_attempt = grades_by_attempt(grades, grader)
    by_id = {t.id: t for t in tasks}
    decided: dict[str, list[ItemAttempt]] = defaultdict(list)
    for a in attempts:
        task, own = by_id.get(a.task_id), by_attempt.get(a.id)
        if task is None or a.state != "graded" or not own:
            continue
        outcome = attempt_outcome(task, own)
        if outcome != "unscored":
            decided[a.task_id].append(ItemAttempt(
                key=f"{a.model} / {a.variant}", passed=outcome == "pass",
                verdicts={g.criterion_id: g.verdict == "pass" for g in own
                          if g.verdict in ("pass", "fail")}))
    rates: dict[str, dict[str, float]] = defaultdict(dict)  # key -> task -> pass rate
    for task_id, rows in decided.items():
        for key in {r.key for r in rows}:
            mine = [r.passed for r in rows if r.key == key]
            rates[key][task_id] = sum(mine) / len(mine)
    totals = {key: (sum(r.values()), len(r)) for key, r in rates.items()}

    def strength(key: str, task_id: str) -> float | None:
        total, n = totals[key]
        if task_id in rates[key]:
            total, n = total - rates[key][task_id], n - 1
        return total / n if n else None

    return [TaskItems(task_id=t.id, criteria=tuple(c.id for c in t.criteria),
                      attempts=tuple(decided[t.id]),
                      strength={k: strength(k, t.id) for k in {r.key for r in decided[t.id]}})
            for t in tasks if decided.get(t.id)]


def correlation(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r (point-biserial for a 0/1 x); None when either side never varies."""
    import numpy as np

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def low_sum_chance(passed: list[bool], values: list[float]) -> float:
    """P(S <= S_observed), S the sum of `values` over the passing attempts, when the passes are
    shuffled over the attempts: exact over the attempts' distinct values (a multivariate
    hypergeometric), or a normal approximation past EXACT_LIMIT compositions."""
    import numpy as np

    groups: dict[float, list[bool]] = defaultdict(list)
    for p, v in zip(passed, values, strict=True):
        groups[v].append(p)
    levels, sizes = list(groups), [len(g) for g in groups.values()]
    c, n = sum(passed), len(passed)
    observed = sum(v * sum(g) for v, g in groups.items())
    if prod(s + 1 for s in sizes) > EXACT_LIMIT:
        from scipy.stats import norm

        y = np.asarray(values, dtype=float)
        variance = c * (1 - c / n) * y.var(ddof=1) if n > 1 else 0.0
        return 1.0 if variance == 0 else float(norm.cdf(observed + 1e-9, c * y.mean(),
                                                          np.sqrt(variance)))
    ways = 0
    for counts in itertools.product(*(range(s + 1) for s in sizes)):
        if sum(counts) == c and sum(k * v for k, v in zip(counts, levels, strict=True)) \
                <= observed + 1e-9:
            ways += prod(comb(s, k) for s, k in zip(sizes, counts, strict=True))
    return ways / comb(n, c)


def _keys(items: TaskItems) -> list[str]:
    return sorted({a.key for a in items.attempts})


def _enough(items: TaskItems, attempts: list[ItemAttempt] | None = None) -> bool:
    seen = list(items.attempts) if attempts is None else attempts
    return len(seen) >= MIN_ATTEMPTS and len({a.key for a in seen}) >= 2


def _strengths(items: TaskItems, attempts: list[ItemAttempt]) -> list[float] | None:
    values = [items.strength.get(a.key) for a in attempts]
    return None if any(v is None for v in values) else [float(v) for v in values if v is not None]


def _per_model(items: TaskItems, passed: Callable[[ItemAttempt], bool | None]) -> dict[str, str]:
    """model -> "k of n passed (pass@1 elsewhere s)", for the evidence."""
    out = {}
    for key in _keys(items):
        mine = [p for a in items.attempts if a.key == key and (p := passed(a)) is not None]
        s = items.strength.get(key)
        out[key] = f"{sum(mine)} of {len(mine)}" + (
            f" (pass@1 on the other tasks {s:.0%})" if s is not None else "")
    return out


@dataclass(frozen=True)
class Discrimination:
    attempts: int
    pass_rate: float
    strength_r: float | None
    chance: float | None


def _discrimination(items: TaskItems, passed: Callable[[ItemAttempt], bool | None]
                    ) -> Discrimination | None:
    import numpy as np

    seen = [(a, p) for a in items.attempts if (p := passed(a)) is not None]
    if not seen:
        return None
    outcomes = [p for _, p in seen]
    strengths = _strengths(items, [a for a, _ in seen])
    r = None if strengths is None else correlation(np.asarray(outcomes, dtype=float),
                                                     np.asarray(strengths))
    chance = (low_sum_chance(outcomes, strengths)
              if strengths is not None and r is not None and r < 0 else None)
    return Discrimination(len(seen), sum(outcomes) / len(seen), r, chance)


def _negative(items: TaskItems, passed: Callable[[ItemAttempt], bool | None]
              ) -> Discrimination | None:
    """The discrimination of `passed` when it is a signal: stronger models fail and weaker ones
    pass more than CHANCE allows, over enough attempts."""
    d = _discrimination(items, passed)
    attempts = [a for a in items.attempts if passed(a) is not None]
    if d is None or not _enough(items, attempts) or d.chance is None or d.chance > CHANCE:
        return None
    return d


def _criterion(criterion_id: str) -> Callable[[ItemAttempt], bool | None]:
    return lambda a: a.verdicts.get(criterion_id)


def _outcome(a: ItemAttempt) -> bool:
    return a.passed


def _finding(items: TaskItems, check: str, criterion_id: str | None, message: str,
             **evidence: object) -> Finding:
    return Finding(task_id=items.task_id, criterion_id=criterion_id, check=check,
                   severity="info", message=message, evidence=evidence)


def task_fails_on_same_criteria(items: TaskItems) -> Iterator[Finding]:
    """A task every attempt failed, where every attempt failed the same criteria: the likeliest
    defect is in those criteria, not in the models. (A criterion every attempt fails makes its
    task fail every attempt, so this says it once, for the task.)"""
    if not _enough(items) or any(a.passed for a in items.attempts):
        return
    shared = [c for c in items.criteria
              if all(a.verdicts.get(c) is False for a in items.attempts)]
    if not shared:
        return
    others = {c: f"passed by {sum(bool(a.verdicts.get(c)) for a in items.attempts)}"
              for c in items.criteria if c not in shared}
    yield _finding(items, "task_fails_on_same_criteria", shared[0] if len(shared) == 1 else None,
                   f"all {len(items.attempts)} attempts (of {len(_keys(items))} models or "
                   f"variants) fail, every one on {', '.join(shared)}",
                   statistic="share of attempts failing these criteria", value=1.0,
                   attempts=len(items.attempts), models=_keys(items), criteria=shared,
                   other_criteria=others)


def criterion_never_varies(items: TaskItems) -> Iterator[Finding]:
    """A criterion every attempt passes while its task's outcome varies: it separates no answer
    from another (a restated premise, a check anyone meets)."""
    if not _enough(items) or len({a.passed for a in items.attempts}) < 2:
        return
    for c in items.criteria:
        seen = [v for a in items.attempts if (v := a.verdicts.get(c)) is not None]
        if len(seen) >= MIN_ATTEMPTS and all(seen):
            task_passes = sum(a.passed for a in items.attempts)
            yield _finding(items, "criterion_never_varies", c,
                           f"{c} passes on all {len(seen)} attempts, while the task passes on "
                           f"{task_passes} of {len(items.attempts)}",
                           statistic="pass rate", value=1.0, attempts=len(seen),
                           models=_keys(items))


def criteria_redundant(items: TaskItems) -> Iterator[Finding]:
    """Criteria whose verdicts are identical on every attempt and vary: one of them decides as
    much as all of them. The chance is that of the identical patterns if the criteria were
    unrelated, given how often each passes: 1 / C(n, passes) per criterion past the first."""
    complete = [a for a in items.attempts if all(c in a.verdicts for c in items.criteria)]
    if not _enough(items, complete):
        return
    patterns: dict[tuple[bool, ...], list[str]] = defaultdict(list)
    for c in items.criteria:
        patterns[tuple(a.verdicts[c] for a in complete)].append(c)
    for pattern, criteria in patterns.items():
        passes = sum(pattern)
        if len(criteria) < 2 or passes in (0, len(pattern)):
            continue
        chance = (1 / comb(len(pattern), passes)) ** (len(criteria) - 1)
        if chance <= CHANCE:
            yield _finding(items, "criteria_redundant", criteria[0],
                           f"{', '.join(criteria)} get the same verdict on all {len(pattern)} "
                           f"attempts (each passes {passes})",
                           statistic="agreement", value=1.0, chance=round(chance, 4),
                           attempts=len(pattern), models=_keys(items), criteria=criteria)


def _negative_message(what: str, d: Discrimination) -> str:
    return (f"{what} goes with weaker models: correlation with model strength "
            f"{d.strength_r:+.2f} over {d.attempts} attempts, chance {d.chance:.0%} if "
            f"unrelated")


def criterion_negative_discrimination(items: TaskItems) -> Iterator[Finding]:
    """A criterion that stronger models fail and weaker ones pass (in a task of several
    criteria: a task of one is said by `task_negative_discrimination`)."""
    if len(items.criteria) < 2:
        return
    for c in items.criteria:
        d = _negative(items, _criterion(c))
        if d is not None:
            yield _finding(items, "criterion_negative_discrimination", c,
                           _negative_message(f"passing {c}", d),
                           statistic="correlation with model strength",
                           value=round(d.strength_r or 0.0, 4), chance=round(d.chance or 0, 4),
                           attempts=d.attempts, passes_by_model=_per_model(items, _criterion(c)))


def task_negative_discrimination(items: TaskItems) -> Iterator[Finding]:
    """A task that stronger models fail and weaker ones pass, where no criterion of it says so
    already (`criterion_negative_discrimination`)."""
    if any(_negative(items, _criterion(c)) for c in items.criteria if len(items.criteria) > 1):
        return
    d = _negative(items, _outcome)
    if d is not None:
        yield _finding(items, "task_negative_discrimination", None,
                       _negative_message("passing the task", d),
                       statistic="correlation with model strength",
                       value=round(d.strength_r or 0.0, 4), chance=round(d.chance or 0, 4),
                       attempts=d.attempts, passes_by_model=_per_model(items, _outcome))


ITEM_CHECKS: list[Callable[[TaskItems], Iterator[Finding]]] = [
    task_fails_on_same_criteria, criterion_never_varies, criteria_redundant,
    criterion_negative_discrimination, task_negative_discrimination]
ITEM_CHECK_NAMES = frozenset(c.__name__ for c in ITEM_CHECKS)


def item_findings(items: list[TaskItems]) -> list[Finding]:
    return [f for task in items for check in ITEM_CHECKS for f in check(task)]


def item_rows(items: list[TaskItems]) -> list[ItemRow]:
    """Every task's and criterion's statistics, for audit.json (the findings are the signals)."""
    rows = []
    for task in items:
        for criterion_id in (None, *task.criteria):
            passed = _outcome if criterion_id is None else _criterion(criterion_id)
            d = _discrimination(task, passed)
            if d is None:
                continue
            rows.append(ItemRow(task_id=task.task_id, criterion_id=criterion_id,
                                attempts=d.attempts, pass_rate=round(d.pass_rate, 4),
                                rest_correlation=None if criterion_id is None
                                else _rest_correlation(task, criterion_id),
                                strength_correlation=None if d.strength_r is None
                                else round(d.strength_r, 4),
                                chance=None if d.chance is None else round(d.chance, 4)))
    return rows


def _rest_correlation(items: TaskItems, criterion_id: str) -> float | None:
    """Passing the criterion against the share of the task's other criteria passed."""
    import numpy as np

    others = [c for c in items.criteria if c != criterion_id]
    pairs = [(a.verdicts[criterion_id], sum(a.verdicts.get(c, False) for c in others)
              / len(others)) for a in items.attempts if criterion_id in a.verdicts and others]
    if not pairs:
        return None
    r = correlation(np.asarray([p for p, _ in pairs], dtype=float),
                    np.asarray([rest for _, rest in pairs]))
    return None if r is None else round(r, 4)
