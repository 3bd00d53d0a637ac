"""Model-assisted task checks (only with --lint-model): what a rule cannot see, a model reads.

Each asks one structured question about a task and its world and, when the model says the
problem is there, returns a finding that quotes the message id, file or sentence it rests on.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from rubric_audit.core.llm import ModelConfig, ResponseCache, structured
from rubric_audit.core.model import Finding, Severity, Task, WorldContents


class LintAnswer(BaseModel):
    applies: bool = Field(description="true only if the problem is clearly present")
    criterion_ids: list[str] = Field(default_factory=list,
                                     description="ids of the criteria concerned, if any")
    source: str = Field("", description="message id, file path or 'prompt' the finding rests on")
    quote: str = Field("", description="the exact sentence quoted from that source")
    explanation: str = ""


def _rubric(task: Task) -> str:
    return "\n".join(f"- [{c.id}] {c.text}" + (f" (why: {c.explanation})" if c.explanation else "")
                     for c in task.criteria)


def _messages(world: WorldContents) -> str:
    mail = [f"[mail {m.message_id}] {m.date} from {m.sender}: {m.subject}\n{m.body}"
            for m in world.mail]
    chat = [f"[chat {s.name} / {m.message_id}] {m.created} {m.author}: {m.text}"
            for s in world.chat for m in s.messages]
    return "\n\n".join(mail + chat) or "(no mail or chat)"


QUESTIONS: dict[str, tuple[str, Severity]] = {
    "gold_ignores_message_instruction": (
        "Does the gold answer, or any rubric criterion, ignore or contradict an instruction that "
        "a mail or chat message in the world gives for this task (for example, to exclude an "
        "item, to use an updated figure, to avoid an action)? Quote the message.",
        "error"),
    "criterion_not_asked_by_prompt": (
        "Does any rubric criterion grade something the prompt never asks for and the world does "
        "not make necessary? List those criteria and quote what they require.",
        "warning"),
    "prompt_has_two_readings": (
        "Does the prompt have two reasonable readings that lead to different answers, where the "
        "rubric accepts only one of them? Quote the ambiguous sentence and say both readings.",
        "warning"),
}

TEMPLATE = """You are auditing a task of a knowledge-work benchmark for defects.

Question: {question}

## Prompt
{prompt}

## Rubric
{rubric}

## Gold answer
{gold}

## Mail and chat in the world
{messages}

## Files in the world
{files}
"""


async def model_lint(check: str, task: Task, world: WorldContents, config: ModelConfig,
                     cache: ResponseCache | None) -> list[Finding]:
    question, severity = QUESTIONS[check]
    content = TEMPLATE.format(question=question, prompt=task.prompt, rubric=_rubric(task),
                              gold=task.gold.text if task.gold else "(none)",
                              messages=_messages(world),
                              files=", ".join(f.path for f in world.files) or "(none)")
    reply = await structured(config, [{"role": "user", "content": content}], LintAnswer, cache)
    answer: LintAnswer | None = reply.value
    if answer is None or not answer.applies:
        return []
    known: list[str | None] = [c for c in answer.criterion_ids if task.criterion(c)] or [None]
    return [Finding(task_id=task.id, criterion_id=criterion_id, check=check, severity=severity,
                    message=f"{config.model}: {answer.explanation or question}",
                    evidence={"source": answer.source, "quote": answer.quote,
                              "model": config.model})
            for criterion_id in known]


MODEL_CHECKS = tuple(QUESTIONS)
