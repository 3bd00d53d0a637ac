"""Rewordings a model writes, only when one is given (`patch OUT --propose --model M`): a criterion
that grades what the prompt never asked for, reworded to grade what it does ask; a sentence that
removes a prompt's ambiguity. They replace the proposal's `proposed` text, say which model wrote
them, and, like every proposal, apply only once the author accepts them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from rubric_audit.core.llm import ModelConfig, ModelUnavailable, ResponseCache, structured
from rubric_audit.core.model import Task
from rubric_audit.patch.proposals import Change, Proposal
from rubric_audit.report.describe import criterion_numbers

MAX_TEXT = 1_000  # characters of a reworded criterion or a sentence; a longer reply is unusable
REWORDED = ("unasked", "prompt")
ASK = {
    "unasked": "Rubric criterion {number} grades something the prompt never asks for (or only "
               "restates what the prompt gives). Reword it so it grades what the prompt does "
               "ask, in the rubric's own style, as `text`, with a short `explanation` of what a "
               "correct answer contains. Never add a requirement the prompt does not make.",
    "prompt": "The prompt has two reasonable readings and the rubric accepts only one. Write one "
              "sentence, as `text`, to add at the end of the prompt so that only the reading the "
              "rubric accepts remains. Do not give away the value the answer should state.",
}
PROMPT = """You help the author of a knowledge-work benchmark fix a task an audit found defective.
{ask}

## Prompt
{prompt}

## Rubric
{rubric}

## Gold answer
{gold}

## What the audit found
{evidence}
"""


class Rewording(BaseModel):
    text: str = Field(description="the reworded criterion, or the sentence to add")
    explanation: str = Field("", description="for a criterion: what a correct answer contains")


def _content(proposal: Proposal, task: Task) -> str:
    numbers = criterion_numbers(task)
    rubric = "\n".join(f"- {numbers[c.id]}: {c.text}" for c in task.criteria)
    evidence = "\n".join(f"- {e.message}" for e in proposal.evidence)
    ask = ASK[proposal.kind].format(number=numbers.get(proposal.criterion, ""))
    return PROMPT.format(ask=ask, prompt=task.prompt, rubric=rubric,
                         gold=task.gold.text if task.gold else "(none)", evidence=evidence)


def _reworded(proposal: Proposal, task: Task, reply: Rewording, model: str) -> Proposal | None:
    """The proposal with the model's text as `proposed` (and `after`); None if unusable."""
    text = " ".join(reply.text.split())
    if not text or len(text) > MAX_TEXT or len(reply.explanation) > MAX_TEXT:
        return None
    if proposal.kind == "prompt":
        prompt = f"{task.prompt.rstrip()} {text}"
        changes = [Change(field="prompt", before=task.prompt, proposed=prompt, after=prompt)]
        summary = f"add to the prompt: {text}"
    else:
        criterion = task.criterion(proposal.criterion)
        if criterion is None:
            return None
        explanation = " ".join(reply.explanation.split())
        changes = [Change(field="criterion", criterion=criterion.id, before=criterion.text,
                          proposed=text, after=text),
                   Change(field="explanation", criterion=criterion.id,
                          before=criterion.explanation, proposed=explanation, after=explanation)]
        summary = f"reword {criterion_numbers(task)[criterion.id]}: {text}"
    return proposal.model_copy(update={"changes": changes, "summary": summary,
                                       "written_by": f"model:{model}"})


async def reword(proposals: list[Proposal], tasks: dict[str, Task], config: ModelConfig,
                 cache: ResponseCache | None) -> tuple[list[Proposal], int, int]:
    """The proposals, with a model's rewording where their kind takes one; and how many replies
    were unusable and how many calls the provider failed (those keep the proposal of code).
    Callers check the model first (llm.check_models)."""
    out: list[Proposal] = []
    unusable = failed = 0
    for proposal in proposals:
        task = tasks.get(proposal.task)
        if proposal.kind not in REWORDED or task is None:
            out.append(proposal)
            continue
        try:
            reply = await structured(config, [{"role": "user",
                                               "content": _content(proposal, task)}],
                                     Rewording, cache)
        except ModelUnavailable:
            failed += 1
            out.append(proposal)
            continue
        reworded = _reworded(proposal, task, reply.value, config.model) if reply.value else None
        unusable += reworded is None
        out.append(reworded or proposal)
    return out, unusable, failed
