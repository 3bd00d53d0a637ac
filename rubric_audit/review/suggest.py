"""Label suggestions for the review queues: a model reads a task's evidence and proposes a label.

Suggestions are stored for the app to show beside the task; only a reviewer's key press labels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from rubric_audit.core.llm import ModelConfig, ModelUnavailable, ResponseCache, default_cache_path, structured

if TYPE_CHECKING:
    from rubric_audit.review.session import ReviewData

PROMPT = """You help review a knowledge-work benchmark. Read the task, its rubric, the gold, the
agents' answers with the judge's verdicts, and the audit's findings. {question}
Give your reasons briefly, quoting the evidence.

{evidence}
"""
QUESTIONS = {
    "failures": "Every model failed this task. Was it a defective task, a grader error, an "
                "ambiguous task, or a genuine model error?",
    "passes": "Every model passed this task. Was the credit sound, or unearned?",
}


class Suggestion(BaseModel):
    label: Literal["defective_task", "grader_error", "ambiguous", "model_error", "sound",
                   "unearned"]
    reasons: str


async def suggest(data: ReviewData, config: ModelConfig,
                  evidence: Callable[[ReviewData, str], str]) -> tuple[int, int, int]:
    """Suggest a label for every task in the failures and pass-audit queues, from its evidence
    as the reviewer reads it (`evidence(data, task_id)`: the review app's text of the task, given
    by the caller, so the core does not import the app). Callers check the model first
    (llm.check_models). Returns (stored, unusable: a reply that did not parse or
    named a label the task does not offer, failed: the provider was unavailable), so no reply
    is dropped unsaid."""
    cache = ResponseCache(default_cache_path())
    stored = data.store.meta("suggestions", {}) or {}
    made = unusable = failed = 0
    for queue, question in QUESTIONS.items():
        for task_id in data.queues[queue]:
            content = PROMPT.format(question=question, evidence=evidence(data, task_id))
            try:
                reply = await structured(config, [{"role": "user", "content": content}],
                                         Suggestion, cache)
            except ModelUnavailable:
                failed += 1
                continue
            if reply.value is not None and reply.value.label in data.labels_for(task_id):
                stored[task_id] = {"label": reply.value.label, "reasons": reply.value.reasons,
                                   "model": config.model}
                made += 1
            else:
                unusable += 1
    with data.store.transaction():
        data.store.set_meta("suggestions", stored)
    return made, unusable, failed
