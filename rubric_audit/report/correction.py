"""Pass@1 corrected for the judge's measured error: a stratified, design-based estimator.

Tasks fall into strata by what the headline grader said: *failures* (every model failed every
graded attempt: the failures queue, reviewed in full), *passes* of each domain (every model
passed: the pass audit reviews a random sample of each domain, its seed stored) and *mixed* (the
rest, which no review draws from). A reviewed task's label is its true outcome: a grader error
makes every attempt on it a pass, an unearned pass every attempt a fail, any other label leaves it
as graded. A model's corrected pass@1 is the mean over its scored tasks of the label's outcome
where reviewed, the share of sound passes among its domain's reviewed passes for an unreviewed
pass, and the graded rate for a mixed task: prediction-powered inference with one rectifier per
stratum (the judge's verdict the prediction, the label the truth), weighted by stratum size. Its
variance adds the spread of true outcomes over tasks (the tasks as a sample of tasks like them,
as the headline's intervals resample tasks) to each domain's sampling variance of its reviewed
share (finite-population corrected, the share smoothed to (x + 1/2) / (n + 1) so a domain whose
reviews found no error still carries doubt); the interval is normal, clipped to [0, 1].
Assumptions: a label holds for every attempt of every model on its task, as the rescoring
options read it; within a domain the reviewed passes are a random part of the sample; the
judge's error on mixed tasks is not measured, so they count as graded. It refuses to correct
until every failure is reviewed (the queue is ordered by review priority, so a part of it is no
random sample; a disputed label is not a review) and every domain of passes has
`MIN_PASS_REVIEWS` reviews from the stored sample (all of a smaller domain), and says how many
pass reviews per domain a given interval width needs. Controls (synthetic answers: a gold
failed, a null or near miss passed) measure the judge too; they are shown beside the estimate as
a check and never enter it, since they are not drawn from the models' answers.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from rubric_audit.core.model import FAILURE_LABELS, PASS_LABELS, Task
from rubric_audit.report.statistics import PerTask
from rubric_audit.report.stats import Interval, proportion

if TYPE_CHECKING:
    import numpy as np  # imported where used: reading a stored summary needs none

Z = 1.959963984540054  # the standard normal's 97.5th percentile
MIN_PASS_REVIEWS = 2
PLANNED_HALF_WIDTHS = (0.01, 0.02, 0.05)
METHOD = ("stratified difference estimator (prediction-powered, one rectifier per stratum), "
          "normal interval")
MIXED = -1
FAILURES = 0  # pass domains are 1, 2, ...


class Stratum(BaseModel):
    """One stratum of the design: its tasks, how many the design drew for review, how many are
    reviewed, and the judge's errors found there (grader errors among failures, unearned passes
    among passes) with a Wilson interval."""

    kind: Literal["failures", "passes", "mixed"]
    domain: str | None
    tasks: int
    sampled: int
    reviewed: int
    errors: int
    error_rate: Interval | None


class CorrectedScore(BaseModel):
    """One model and variant: pass@1 as graded and corrected, and its scored tasks per stratum."""

    model: str
    variant: str
    tasks: int
    as_graded: float
    corrected: Interval
    strata: dict[str, int]


class ReviewPlan(BaseModel):
    """Pass reviews per domain that bring the review part of the interval to ± half_width
    (with every failure reviewed), and the reviews that makes in all."""

    half_width: float
    per_domain: int
    reviews: int


class JudgeOnControls(BaseModel):
    """The headline grader on controls: answers that must pass (golds, rewordings) it failed,
    and answers that must fail (empty, refusal, near misses) it passed."""

    grader: str
    false_fails: Interval
    false_passes: Interval


class Correction(BaseModel):
    grader: str
    method: str
    strata: list[Stratum]
    false_fail_rate: Interval
    false_pass_rate: Interval
    review_half_width: float | None
    scores: list[CorrectedScore]
    refused: list[str]
    plan: list[ReviewPlan]
    controls: JudgeOnControls | None


def stratified_estimate(graded: np.ndarray, stratum: np.ndarray, truth: np.ndarray
                        ) -> Interval:
    """The corrected mean of one model's per-task pass rates.

    `graded` is each task's rate as graded, `stratum` MIXED, FAILURES or a pass domain (1, 2,
    ...), `truth` the reviewed outcome (NaN where unreviewed). Every failure must be reviewed
    and every pass domain must have a review (ValueError otherwise: the caller refuses first).
    """
    import numpy as np

    t = len(graded)
    reviewed = ~np.isnan(truth)
    if not t:
        return Interval(estimate=None, low=None, high=None, n=0, method=METHOD)
    if np.any((stratum == FAILURES) & ~reviewed):
        raise ValueError("every failure must be reviewed")
    domains = np.where(stratum > FAILURES, stratum, 0)
    width = int(domains.max()) + 1
    in_pass = (stratum > FAILURES).astype(float)
    size = np.bincount(domains, weights=in_pass, minlength=width)
    seen = np.bincount(domains, weights=in_pass * reviewed, minlength=width)
    sound = np.bincount(domains, weights=in_pass * np.where(reviewed, truth, 0.0),
                        minlength=width)
    present = size > 0
    if np.any(present & (seen == 0)):
        raise ValueError("a pass domain has no review")
    share = np.divide(sound, seen, out=np.zeros(width), where=seen > 0)
    values = np.where(reviewed, truth, graded)
    imputed = (stratum > FAILURES) & ~reviewed
    values = np.where(imputed, share[domains], values)
    estimate = float(values.mean())
    unseen = size - seen
    spread = float(((values - estimate) ** 2).sum() + (unseen * share * (1 - share)).sum())
    between = spread / (t * (t - 1)) if t > 1 else 0.0
    errors = seen - sound
    smoothed = np.divide(errors + 0.5, seen + 1.0, out=np.zeros(width), where=present)
    within = np.divide((size / t) ** 2 * unseen / np.where(present, size, 1.0)
                       * smoothed * (1 - smoothed), np.where(seen > 0, seen, 1.0),
                       out=np.zeros(width), where=present)
    half = Z * float(np.sqrt(between + within.sum()))
    return Interval(estimate=estimate, low=max(0.0, estimate - half),
                    high=min(1.0, estimate + half), n=t, method=METHOD)


def half_width(sizes: list[int], reviewed: list[int], shares: list[float], tasks: int) -> float:
    """± of the pass reviews' part of a corrected pass@1 over `tasks` tasks, with `reviewed` of
    each domain's `sizes` reviewed and an unearned share of `shares` there."""
    total = 0.0
    for size, n, p in zip(sizes, reviewed, shares, strict=True):
        if size and not n:
            return 1.0
        if size:
            total += (size / tasks) ** 2 * (1 - n / size) * p * (1 - p) / n
    return Z * math.sqrt(total)


def smoothed_share(errors: int, reviewed: int) -> float:
    """(x + 1/2) / (n + 1): one half before any review, never 0 or 1 after some."""
    return (errors + 0.5) / (reviewed + 1.0)


def review_half_width(strata: list[Stratum], tasks: int) -> float:
    """± of the pass reviews' part of a corrected pass@1, with the reviews made so far."""
    return half_width([s.tasks for s in strata], [s.reviewed for s in strata],
                      [smoothed_share(s.errors, s.reviewed) for s in strata], tasks)


def plan_reviews(strata: list[Stratum], tasks: int) -> list[ReviewPlan]:
    """For each planned ± half width, the fewest pass reviews per domain (the same number in each,
    as the pass audit draws them; all of a smaller domain), at the unearned share each domain's
    reviews found so far (smoothed: one half before any)."""
    passes = [s for s in strata if s.kind == "passes"]
    failures = sum(s.tasks for s in strata if s.kind == "failures")
    shares = [smoothed_share(s.errors, s.reviewed) for s in passes]
    sizes = [s.tasks for s in passes]
    plans = []
    for target in PLANNED_HALF_WIDTHS:
        n = next((n for n in range(1, max(sizes, default=0) + 1)
                  if half_width(sizes, [min(n, size) for size in sizes], shares, tasks)
                  <= target), max(sizes, default=0))
        plans.append(ReviewPlan(half_width=target, per_domain=n,
                                reviews=failures + sum(min(n, size) for size in sizes)))
    return plans


def _truth(label: str | None, kind: str) -> float | None:
    """A settled label's true outcome for every attempt on the task, in its stratum."""
    if kind == "failures" and label in FAILURE_LABELS:
        return 1.0 if label == "grader_error" else 0.0
    if kind == "passes" and label in PASS_LABELS:
        return 0.0 if label == "unearned" else 1.0
    return None


def _judge_on_controls(grader: str, controls: dict[str, tuple[int, int]]
                       ) -> JudgeOnControls | None:
    """From (broken, decided) per control kind of the headline grader."""
    if not controls:
        return None
    must_pass = [v for kind, v in controls.items() if kind.split(":")[0] in ("gold", "alternative")]
    must_fail = [v for kind, v in controls.items() if kind.split(":")[0] not in
                 ("gold", "alternative")]
    return JudgeOnControls(
        grader=grader,
        false_fails=proportion(sum(b for b, _ in must_pass), sum(n for _, n in must_pass)),
        false_passes=proportion(sum(b for b, _ in must_fail), sum(n for _, n in must_fail)))


def build_correction(tasks: list[Task], table: dict[tuple[str, str], PerTask],
                     queues: tuple[list[str], list[str]], labels: dict[str, str | None],
                     pass_audit: dict[str, Any] | None, grader: str,
                     controls: dict[str, tuple[int, int]]) -> Correction:
    """`table` is the headline grader's per-task results (statistics.per_task), `queues` its
    (failures, passes) review queues, `labels` the reviewers' consensus (None where tied),
    `pass_audit` the stored sample ({"tasks": [...]}, None before one is drawn) and `controls`
    the grader's (broken, decided) per control kind."""
    domain_of = {t.id: t.domain for t in tasks}
    failures, passes = queues
    sample = set((pass_audit or {}).get("tasks", [])) & set(passes)
    domains = sorted({domain_of[t] for t in passes})
    kind_of: dict[str, tuple[str, int]] = {t: ("failures", FAILURES) for t in failures}
    kind_of |= {t: ("passes", domains.index(domain_of[t]) + 1) for t in passes}
    drawn = set(failures) | sample
    truth = {t: v for t, (kind, _) in kind_of.items()
             if t in drawn and (v := _truth(labels.get(t), kind)) is not None}
    scored = sorted({t for rows in table.values() for t in rows})
    strata = _strata(failures, passes, domains, domain_of, sample, truth,
                     [t for t in scored if t not in kind_of])
    refused = _refusals(strata, pass_audit is not None or not passes)
    pass_strata = [s for s in strata if s.kind == "passes"]
    scores = [] if refused else [_score(key, rows, kind_of, truth) for key, rows in
                                 sorted(table.items())]
    return Correction(
        grader=grader, method=METHOD, strata=strata,
        false_fail_rate=proportion(sum(s.errors for s in strata if s.kind == "failures"),
                                   sum(s.reviewed for s in strata if s.kind == "failures")),
        false_pass_rate=_weighted_rate(pass_strata),
        review_half_width=None if refused else review_half_width(pass_strata, len(scored)),
        scores=scores, refused=refused, plan=plan_reviews(strata, len(scored)),
        controls=_judge_on_controls(grader, controls))


def _strata(failures: list[str], passes: list[str], domains: list[str],
            domain_of: dict[str, str], sample: set[str], truth: dict[str, float],
            mixed: list[str]) -> list[Stratum]:
    def stratum(kind: Literal["failures", "passes"], domain: str | None, ids: list[str],
                drawn: Iterable[str]) -> Stratum:
        known = [truth[t] for t in ids if t in truth]
        errors = int(sum(known)) if kind == "failures" else len(known) - int(sum(known))
        return Stratum(kind=kind, domain=domain, tasks=len(ids), sampled=len(set(drawn)),
                       reviewed=len(known), errors=errors,
                       error_rate=proportion(errors, len(known)))

    by_domain: dict[str, list[str]] = defaultdict(list)
    for t in passes:
        by_domain[domain_of[t]].append(t)
    return ([stratum("failures", None, failures, failures)] if failures else []) + [
        stratum("passes", d, by_domain[d], sample & set(by_domain[d])) for d in domains] + (
        [Stratum(kind="mixed", domain=None, tasks=len(mixed), sampled=0, reviewed=0, errors=0,
                 error_rate=None)] if mixed else [])


def _refusals(strata: list[Stratum], drawn: bool) -> list[str]:
    """Why the design cannot correct yet, one reason per stratum short of reviews."""
    reasons = []
    if not drawn:
        reasons.append("no pass-audit sample has been drawn yet (`rubric-audit review OUT` "
                       "draws and stores it)")
    for s in strata:
        if s.kind == "failures" and s.reviewed < s.tasks:
            reasons.append(f"{s.tasks - s.reviewed} of the {s.tasks} failures are not reviewed "
                           f"(or disputed): all are needed")
        if s.kind == "passes" and drawn and s.reviewed < min(MIN_PASS_REVIEWS, s.tasks):
            reasons.append(f"{s.reviewed} of the {s.sampled} sampled passes in {s.domain} are "
                           f"reviewed: {min(MIN_PASS_REVIEWS, s.tasks)} are needed" + (
                               "" if s.sampled else " (the stored sample predates these "
                               "passes: `rubric-audit review OUT` draws it again)"))
    return reasons


def _weighted_rate(strata: list[Stratum]) -> Interval:
    """The judge's rate of unearned passes: each domain's reviewed share weighted by its size,
    with a normal interval for the rate (no finite-population correction: a rate of the judge,
    not a count of these tasks), each share smoothed as the estimate's."""
    counted = [s for s in strata if s.reviewed]
    total = sum(s.tasks for s in counted)
    if not total:
        return Interval(estimate=None, low=None, high=None, n=0, method="stratified")
    estimate = sum(s.tasks / total * s.errors / s.reviewed for s in counted)
    shares = [smoothed_share(s.errors, s.reviewed) for s in counted]
    half = Z * math.sqrt(sum((s.tasks / total) ** 2 * p * (1 - p) / s.reviewed
                             for s, p in zip(counted, shares, strict=True)))
    return Interval(estimate=estimate, low=max(0.0, estimate - half),
                    high=min(1.0, estimate + half), n=sum(s.reviewed for s in counted),
                    method="stratified by domain, normal interval")


def _score(key: tuple[str, str], rows: PerTask, kind_of: dict[str, tuple[str, int]],
           truth: dict[str, float]) -> CorrectedScore:
    import numpy as np

    ids = sorted(rows)
    graded = np.asarray([rows[t][1] / rows[t][0] for t in ids])
    stratum = np.asarray([kind_of.get(t, ("mixed", MIXED))[1] for t in ids])
    known = np.asarray([truth.get(t, np.nan) for t in ids])
    kinds = Counter(kind_of.get(t, ("mixed", MIXED))[0] for t in ids)
    counts = {kind: kinds[kind] for kind in ("failures", "passes", "mixed")}
    try:
        corrected = stratified_estimate(graded, stratum, known)
    except ValueError as exc:  # this model scored none of a domain's reviewed passes
        corrected = Interval(estimate=None, low=None, high=None, n=len(ids),
                             method=f"not corrected: {exc}")
    return CorrectedScore(model=key[0], variant=key[1], tasks=len(ids),
                          as_graded=float(graded.mean()) if len(ids) else 0.0,
                          corrected=corrected, strata=counts)
