"""One task from the variants that ran it: the prompt they share, and each variant's difference.

Run folders record the prompt as sent, so a variant that adds a block to the user turn (a
cheatsheet, a reference ledger) records the task's prompt with that block. The task's prompt is
the one the variants share: among the recorded prompts and their sentence-wise intersection, the
one closest to all of them (fewest sentences added or dropped in total; on a tie the shorter).
What each variant's prompt adds or drops relative to it is that variant's `VariantPrompt`.

Sentences are compared with their per-run environment text masked (`mask_environment_text`): a
harness that records the prompt with a container's shell prompt, a timestamp or a temporary path
records another one on every run, though the task did not change. A variant that recorded no
prompt does not vote on the shared one, and has no difference.
"""

from __future__ import annotations

import re
from collections import Counter

from rubric_audit.core.model import Task, VariantPrompt

SENTENCE_BREAK = re.compile(r"((?<=[.!?])\s+|\n+)")
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# Text that differs from run to run of one prompt, each with what stands for it. Every pattern
# starts at a token boundary or a literal, so masking stays linear in the text.
ENVIRONMENT_TEXT = (
    # a shell prompt, user@host:cwd# (a container's host name is its random id)
    ("<shell prompt>", re.compile(r"(?<![\w.@-])[\w.-]+@[\w.-]+:[^\s#$]*[#$]")),
    ("<uuid>", re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")),
    ("<timestamp>", re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?"
                               r"(?:Z|[+-]\d\d:?\d\d)?(?![\w:])")),
    ("<timestamp>", re.compile(rf"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:{MONTHS}) [ \d]\d "
                               r"\d\d:\d\d:\d\d(?: [A-Z]{2,5})? \d{4}\b")),
    # tempfile's and mktemp's random names, macOS's per-user temporary folder
    ("<temp path>", re.compile(r"/tmp/tmp\.?[A-Za-z0-9_]{6,}|/var/folders/[\w-]+/[\w-]+/T"
                               r"|/tmp/pytest-of-[\w-]+/pytest-\d+")),
    # a container's host name (Docker's short id), where it stands alone
    ("<host>", re.compile(r"\b(?=[0-9a-f]{0,11}\d)(?=[0-9a-f]{0,11}[a-f])[0-9a-f]{12}"
                          r"(?:[0-9a-f]{52})?\b")),
)


def mask_environment_text(text: str) -> str:
    """`text` with what differs between runs of one prompt, though the task does not, masked:
    shell prompts (`root@a1b2c3d4e5f6:/app#`), uuids, timestamps (ISO 8601 and `date`'s),
    temporary paths and container host names. Words, numbers and dates stay as they are, so a
    sentence that says something else still differs."""
    for mask, pattern in ENVIRONMENT_TEXT:
        text = pattern.sub(mask, text)
    return text


def sentences(text: str) -> list[str]:
    """The prompt's sentences (and lines), stripped, in order."""
    return [s.strip() for s in SENTENCE_BREAK.split(text)[::2] if s.strip()]


def _keep(text: str, keep: set[str]) -> str:
    """`text` with only the sentences whose masked form is in `keep`, each with the break that
    followed it."""
    parts = SENTENCE_BREAK.split(text)  # sentence, break, sentence, break, ..., sentence
    out = []
    for i in range(0, len(parts), 2):
        if mask_environment_text(parts[i].strip()) in keep:
            out.append(parts[i] + (parts[i + 1] if i + 1 < len(parts) else ""))
    return "".join(out).strip()


def _masked(text: str) -> list[str]:
    return [mask_environment_text(s) for s in sentences(text)]


def _rubric(task: Task) -> list[tuple[str, str, bool]]:
    return [(c.id, c.text, c.primary) for c in task.criteria]


def shared_task(task_id: str, recorded: dict[str, Task]) -> tuple[Task, list[VariantPrompt]]:
    """The task as its variants share it, and what each variant's prompt changed.

    The rubric, world and domain are those most variants recorded (the first variant by name on
    a tie; a variant that recorded none does not count); disagreements are findings
    (`checks.input.input_variants_disagree`), not settled here.
    """
    variants = sorted(recorded)
    voters = [v for v in variants if recorded[v].prompt.strip()]
    units = {v: _masked(recorded[v].prompt) for v in voters}
    common = set.intersection(*(set(u) for u in units.values())) if voters else set()
    candidates = list(dict.fromkeys(recorded[v].prompt for v in voters)) or [""]
    if voters:
        candidates.append(_keep(recorded[voters[0]].prompt, common))

    def distance(prompt: str) -> tuple[int, int]:
        own = set(_masked(prompt))
        return sum(len(own ^ set(u)) for u in units.values()), len(own)

    prompt = min(candidates, key=distance)
    base = list(zip(_masked(prompt), sentences(prompt), strict=True))
    base_keys = {key for key, _ in base}
    differences = []
    for v in voters:
        seen = set(units[v])
        own = zip(units[v], sentences(recorded[v].prompt), strict=True)
        differences.append(VariantPrompt(
            task_id=task_id, variant=v,
            added=list(dict.fromkeys(s for key, s in own if key not in base_keys)),
            dropped=[s for key, s in base if key not in seen]))
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
