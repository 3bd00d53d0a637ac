"""One task from the variants that ran it: the prompt they share, and each variant's difference.

Run folders record the prompt as sent, so a variant that adds a block to the user turn (a
cheatsheet, a reference ledger) records the task's prompt with that block. The task's prompt is
the one the variants share: among the recorded prompts and their sentence-wise intersection, the
one closest to all of them (fewest sentences added or dropped in total; on a tie the shorter).
What each variant's prompt adds or drops relative to it is that variant's `VariantPrompt`.
"""

from __future__ import annotations

import re
from collections import Counter

from rubric_audit.model import Task, VariantPrompt

SENTENCE_BREAK = re.compile(r"((?<=[.!?])\s+|\n+)")


def sentences(text: str) -> list[str]:
    """The prompt's sentences (and lines), stripped, in order."""
    return [s.strip() for s in SENTENCE_BREAK.split(text)[::2] if s.strip()]


def _keep(text: str, keep: set[str]) -> str:
    """`text` with only the sentences in `keep`, each with the break that followed it."""
    parts = SENTENCE_BREAK.split(text)  # sentence, break, sentence, break, ..., sentence
    out = []
    for i in range(0, len(parts), 2):
        if parts[i].strip() in keep:
            out.append(parts[i] + (parts[i + 1] if i + 1 < len(parts) else ""))
    return "".join(out).strip()


def _rubric(task: Task) -> list[tuple[str, str, bool]]:
    return [(c.id, c.text, c.primary) for c in task.criteria]


def shared_task(task_id: str, recorded: dict[str, Task]) -> tuple[Task, list[VariantPrompt]]:
    """The task as its variants share it, and what each variant's prompt changed.

    The rubric, world and domain are those most variants recorded (the first variant by name on
    a tie; a variant that recorded none does not count); disagreements are findings
    (`checks.input.input_variants_disagree`), not settled here.
    """
    variants = sorted(recorded)
    units = {v: sentences(recorded[v].prompt) for v in variants}
    common = set.intersection(*(set(u) for u in units.values()))
    candidates = list(dict.fromkeys(recorded[v].prompt for v in variants))
    candidates.append(_keep(recorded[variants[0]].prompt, common))

    def distance(prompt: str) -> tuple[int, int]:
        own = set(sentences(prompt))
        return sum(len(own ^ set(u)) for u in units.values()), len(own)

    prompt = min(candidates, key=distance)
    base = sentences(prompt)
    differences = []
    for v in variants:
        seen = set(units[v])
        differences.append(VariantPrompt(
            task_id=task_id, variant=v,
            added=list(dict.fromkeys(s for s in units[v] if s not in set(base))),
            dropped=[s for s in base if s not in seen]))
    # A variant that recorded no rubric (never graded) does not vote: its rubric is unknown.
    rubric_votes = Counter(tuple(_rubric(recorded[v])) for v in variants if recorded[v].criteria)
    top = max(rubric_votes.values(), default=0)
    chosen = next((v for v in variants if recorded[v].criteria
                   and rubric_votes[tuple(_rubric(recorded[v]))] == top), variants[0])
    world = Counter(recorded[v].world_id for v in variants if recorded[v].world_id)
    domain = Counter(recorded[v].domain for v in variants if recorded[v].domain)
    task = recorded[chosen].model_copy(update={
        "prompt": prompt,
        "world_id": world.most_common(1)[0][0] if world else recorded[chosen].world_id,
        "domain": domain.most_common(1)[0][0] if domain else recorded[chosen].domain})
    return task, differences
