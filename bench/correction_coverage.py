"""Coverage and bias of the corrected pass@1 (rubric_audit/report/correction.py), by simulation.

    python bench/correction_coverage.py [--simulations 1000] [--seed S]

Synthetic benchmarks with a known true pass rate, judged with known error rates (a false fail:
the judge fails an answer that truly passes; a false pass the reverse) and reviewed as the review
app reviews (every failure; a random sample of passes per domain, drawn by the app's own
sampler), scored by `build_correction`. Prints per scenario the true rate, the mean corrected
estimate and its bias in standard errors, the 95% interval's coverage and mean width, and the
bias of pass@1 as graded. The last scenario breaks an assumption on purpose: two models whose
answers the judge also misgrades on the tasks they split, which no review draws from, and a
reviewer who labels a failure a grader error only where both models truly passed.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from rubric_audit.core.model import Criterion, Task
from rubric_audit.report.correction import build_correction
from rubric_audit.review.labels import pass_audit_sample


@dataclass(frozen=True)
class Scenario:
    name: str
    domain_sizes: tuple[int, ...] = (60, 36, 24)
    true_rates: tuple[tuple[float, ...], ...] = ((0.35, 0.5, 0.6),)  # per model, per domain
    false_fail: float = 0.2
    false_pass: float = 0.1
    per_domain: int = 5  # the review app's default


@dataclass(frozen=True)
class Simulated:
    truth: np.ndarray  # per model: the true pass rate
    corrected: np.ndarray  # simulations x models x (estimate, low, high)
    graded: np.ndarray  # simulations x models: pass@1 as graded


def simulate(scenario: Scenario, simulations: int = 1000, seed: int = 20_260_530) -> Simulated:
    """One attempt per model and task; every failure reviewed, `per_domain` passes per domain."""
    domains = np.repeat(np.arange(len(scenario.domain_sizes)), scenario.domain_sizes)
    ids = [f"t{i:04d}" for i in range(len(domains))]
    tasks = [Task(id=t, name=t, world_id="w", domain=f"domain {d}", prompt="p",
                  criteria=[Criterion(id=f"{t}-c", text="States x")])
             for t, d in zip(ids, domains, strict=True)]
    domain_of = {t.id: t.domain for t in tasks}
    rates = np.asarray(scenario.true_rates)[:, domains]  # models x tasks
    rng = np.random.default_rng(seed)
    true = rng.random((simulations, *rates.shape)) < rates
    flip = rng.random(true.shape)
    judged = np.where(true, flip >= scenario.false_fail, flip < scenario.false_pass)
    models = [(f"model {m}", "v") for m in range(len(rates))]
    corrected = np.full((simulations, len(models), 3), np.nan)
    for s in range(simulations):
        failed, passed = ~judged[s].any(axis=0), judged[s].all(axis=0)
        failures = [t for t, f in zip(ids, failed, strict=True) if f]
        passes = [t for t, p in zip(ids, passed, strict=True) if p]
        sample = pass_audit_sample(passes, domain_of, scenario.per_domain, seed=s)
        index = {t: i for i, t in enumerate(ids)}
        labels: dict[str, str | None] = {
            t: "grader_error" if true[s, :, index[t]].all() else "model_error" for t in failures}
        labels |= {t: "unearned" if not true[s, :, index[t]].any() else "sound" for t in sample}
        table = {key: {t: (1, int(judged[s, m, i]), []) for i, t in enumerate(ids)}
                 for m, key in enumerate(models)}
        result = build_correction(tasks, table, (failures, passes), labels, {"tasks": sample},
                                  "judge", {})
        for m, score in enumerate(result.scores):
            i = score.corrected
            corrected[s, m] = (i.estimate, i.low, i.high)
    truth = np.average(rates, axis=1)
    return Simulated(truth=truth, corrected=corrected, graded=judged.mean(axis=2))


SCENARIOS = [
    Scenario("one model, 120 tasks, the test's design"),
    Scenario("one model, 10 passes reviewed per domain", per_domain=10),
    Scenario("one model, 350 tasks", domain_sizes=(200, 100, 50)),
    Scenario("one model, a lenient judge (false pass 20%)", false_fail=0.1, false_pass=0.2),
    Scenario("one model, a nearly right judge (2% each way)", false_fail=0.02, false_pass=0.02),
    Scenario("two models, errors on split tasks too (an assumption broken)",
             true_rates=((0.35, 0.5, 0.6), (0.55, 0.7, 0.75))),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20_260_530)
    args = parser.parse_args()
    print(f"{args.simulations} simulations per scenario, seed {args.seed}")
    for scenario in SCENARIOS:
        result = simulate(scenario, args.simulations, args.seed)
        for m, truth in enumerate(result.truth):
            estimates, low, high = result.corrected[:, m].T
            error = estimates.mean() - truth
            noise = estimates.std(ddof=1) / np.sqrt(len(estimates))
            covered = np.mean((low <= truth) & (truth <= high))
            print(f"{scenario.name}{f', model {m}' if len(result.truth) > 1 else ''}: true "
                  f"{truth:.4f}, corrected {estimates.mean():.4f} (bias {error:+.4f}, "
                  f"{error / noise:+.1f} standard errors), coverage {covered:.1%}, mean width "
                  f"{np.mean(high - low):.3f}; as graded bias {result.graded[:, m].mean() - truth:+.4f}")


if __name__ == "__main__":
    main()
