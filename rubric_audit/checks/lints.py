"""Static task checks: pure functions of a task and its world, each returning findings.

No model is called. Each check is named for what it finds and quotes the text, numbers and
sources its finding rests on. `TASK_CHECKS` is the one list `audit`, the tests and the docs use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache, wraps
from pathlib import PurePosixPath

from rubric_audit.checks.code_grade import grade_numeric
from rubric_audit.checks.criterion import (
    Tolerance,
    criterion_targets,
    read_claim,
    split_criterion,
    tolerance_for,
)
from rubric_audit.checks.numbers import Quantity, find_quantities, find_ranges, in_units, unread
from rubric_audit.checks.precision import CODE_FAIL
from rubric_audit.checks.text import (
    content_tokens,
    is_negative,
    stem,
    task_texts,
    words,
    world_vocabulary,
)
from rubric_audit.core.model import CheckSummary, Criterion, Finding, Severity, Task, WorldContents

FILE_NAME = re.compile(r"(?<![\w\-.])[\w\-.]+\.(?:pdf|xlsx|xlsm|xls|docx|doc|pptx|ppt|csv|md|txt|json)\b",
                       re.I)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
QUOTE = 600  # characters of a quoted source sentence kept in a finding's evidence
MESSAGE_SOURCES = 5  # messages named per finding
RESTATE_COVERAGE = 0.75
RESTATE_VALUE_COVERAGE = 0.5
INPUT_VERBS = frozenset(("us", "use", "appli", "bas", "refer", "cit", "mention", "quot", "rel",
                         "tak", "start", "assum", "given"))
COMPARATIVE = re.compile(r"\b\w+er\s+than\b|\b(?:more|less|fewer|higher|lower|wider|narrower|"
                         r"greater|smaller|larger|cheaper|exceeds?|below|above|most|least|fewest|"
                         r"highest|lowest|largest|smallest|biggest|greatest|cheapest|best|worst|"
                         r"fastest|slowest|strongest|weakest|longest|shortest)\b", re.I)
STATUTORY = re.compile(r"\b(?:statutory|regulatory|prescribed|filing\s+fee|set\s+by\s+law)\b",
                       re.I)
ABSENT_SHARE = 0.4
# A value the claim compares its own with: after a comparison, a few words allowed between.
COMPARED_WITH = re.compile(
    r"\b(?:exceed(?:s|ed|ing)?|surpass(?:es|ed|ing)?|above|below|under|over|beats?|"
    r"breach(?:es|ed|ing)?|short\s+of|than|versus|vs\.?|against|compared\s+(?:with|to))\s+"
    r"(?:(?:the|a|an|its|their|our)\s+)?(?:[A-Za-z][\w-]*\s+){0,2}$", re.I)
_LIMIT = r"(?:thresholds?|hurdles?|covenants?|caps?|capped|ceilings?|floors?|limits?|minimums?|" \
         r"maximums?|triggers?)"
LIMIT_BEFORE = re.compile(rf"\b{_LIMIT}\b(?:\s+[\w-]+){{0,2}}\s*$", re.I)
LIMIT_AFTER = re.compile(rf"\s*(?:[\w-]+\s+)?{_LIMIT}\b", re.I)


TaskCheck = Callable[[Task, WorldContents], Iterator[Finding]]


def reads_numbers(check: TaskCheck) -> TaskCheck:
    """A check that reads the numbers of the task's own texts: silent on a task with a text too
    long to read (`numbers.unread`; `input_text_too_long_to_read` names it)."""
    @wraps(check)
    def checked(task: Task, world: WorldContents) -> Iterator[Finding]:
        if unread(**task_texts(task)):
            return iter(())
        return check(task, world)
    return checked


def _finding(task: Task, check: str, severity: Severity, message: str,
             criterion: Criterion | None = None, **evidence: object) -> Finding:
    return Finding(task_id=task.id, criterion_id=criterion.id if criterion else None,
                   check=check, severity=severity, message=message, evidence=evidence)


@reads_numbers
def criterion_contradicts_explanation(task: Task, world: WorldContents) -> Iterator[Finding]:
    """The criterion's value is not the value its own explanation arrives at."""
    for criterion in task.criteria:
        if not criterion.explanation:
            continue
        _, tolerance_text = split_criterion(criterion.text)
        for target in criterion_targets(criterion.text):
            explained = [q for q in find_quantities(criterion.explanation)
                         if q.compatible(target)]
            equals = criterion.explanation.rfind("=")
            if equals >= 0:
                explained = [q for q in explained if q.start > equals][:1]
            elif len(explained) != 1:
                continue
            tolerance = tolerance_for(target, tolerance_text, task.prompt)
            if not explained or not target.value:
                continue
            same_order = 0.5 <= explained[0].value / target.value <= 2
            if same_order and not tolerance.contains(explained[0].value):
                yield _finding(
                    task, "criterion_contradicts_explanation", "error",
                    f"criterion requires {target.text} but its explanation arrives at "
                    f"{explained[0].text}", criterion, criterion_text=criterion.text,
                    explanation=criterion.explanation, criterion_value=target.value,
                    explanation_value=explained[0].value)


@reads_numbers
def gold_contradicts_criterion(task: Task, world: WorldContents) -> Iterator[Finding]:
    """The gold answer fails one of its own numeric criteria (checked in code)."""
    if task.gold is None or not task.gold.text.strip():
        return
    for criterion in task.criteria:
        verdict = grade_numeric(criterion.text, task.gold.text, task.prompt)
        if verdict.verdict == "fail":
            yield _finding(task, "gold_contradicts_criterion", "error",
                           f"the gold fails this criterion: {verdict.reason}", criterion,
                           criterion_text=criterion.text, gold=task.gold.text,
                           code_reason=verdict.reason, rests_on=CODE_FAIL)


def _label(criterion: Criterion, target: Quantity) -> set[str]:
    """The words that say which quantity a target is (the text before it, numbers included)."""
    body, _ = split_criterion(criterion.text)
    return set(words(body[:target.start])) - {"states", "that", "the", "a", "an", "is", "of"}


@reads_numbers
def criteria_conflict_on_quantity(task: Task, world: WorldContents) -> Iterator[Finding]:
    """Two criteria require different values for the same quantity."""
    seen: list[tuple[Criterion, Quantity, set[str]]] = []
    for criterion in task.criteria:
        for target in criterion_targets(criterion.text):
            label = _label(criterion, target)
            for other, other_target, other_label in seen:
                same = label and label == other_label and target.compatible(other_target)
                tolerance = tolerance_for(target, split_criterion(criterion.text)[1], "")
                if same and not tolerance.contains(other_target.value):
                    yield _finding(
                        task, "criteria_conflict_on_quantity", "error",
                        f"{other.id} requires {other_target.text} and {criterion.id} requires "
                        f"{target.text} for the same quantity", criterion,
                        criteria=[other.text, criterion.text],
                        values=[other_target.value, target.value])
            seen.append((criterion, target, label))


@reads_numbers
def criterion_restates_premise(task: Task, world: WorldContents) -> Iterator[Finding]:
    """A criterion the prompt already satisfies: it only restates the prompt's premise.

    It must add nothing the prompt does not give: every value it states is a value the prompt
    states, and it claims no answer (no yes/no, conclusion, choice or named entity, no
    comparison); a criterion without values must take nearly all its words from the prompt.
    """
    prompt_tokens = content_tokens(task.prompt)
    prompt_values = {(q.dimension, round(q.value, 9)) for q in find_quantities(task.prompt)}
    prompt_names = _names(task.prompt)
    for criterion in task.criteria:
        body, _ = split_criterion(criterion.text)
        tokens = content_tokens(body) - INPUT_VERBS
        if len(tokens) < 2 or is_negative(criterion.text) \
                or _claims_an_answer(criterion.text, body, task.prompt):
            continue
        values = find_quantities(body)
        if any((q.dimension, round(q.value, 9)) not in prompt_values for q in values):
            continue  # a value the prompt does not give: computed, so the answer
        names = _names(body.strip(), first=False)
        if names - prompt_names - {"states", "notes"} and ASKS_WHO.search(task.prompt):
            continue  # an entity the prompt does not name, where it asks which or who
        covered = len(tokens & prompt_tokens) / len(tokens)
        if covered >= (RESTATE_VALUE_COVERAGE if values else RESTATE_COVERAGE):
            yield _finding(task, "criterion_restates_premise", "warning",
                           f"{covered:.0%} of this criterion's words and all its values come "
                           f"from the prompt, which states them as given; any answer repeating "
                           f"the question passes it", criterion, criterion_text=criterion.text,
                           premise=_premise(task.prompt, tokens, values))


def _premise(prompt: str, tokens: AbstractSet[str], values: list[Quantity]) -> str:
    """The prompt's sentences that state what the criterion restates: those holding one of its
    values, else those sharing most of its words (the whole prompt is in the task's view)."""
    sentences = [s.strip() for s in SENTENCE.split(prompt) if s.strip()]
    wanted = {(q.dimension, round(q.value, 9)) for q in values}
    holding = [s for s in sentences if wanted & {(q.dimension, round(q.value, 9))
                                                 for q in find_quantities(s)}]
    if not holding:
        best = max((len(tokens & content_tokens(s)) for s in sentences), default=0)
        holding = [s for s in sentences if best and len(tokens & content_tokens(s)) == best]
    return " ".join(holding)[:QUOTE]


def _claims_an_answer(criterion: str, body: str, prompt: str) -> bool:
    """A yes/no answer, a conclusion (one drawn from the prompt's own values too: "the −16.5 °C
    peak breached the −18 °C limit"), a choice, recommendation or named entity, or a comparison
    (a superlative included: "the channel with the most conversions" is the answer to 'which
    drove the most'): the code checker's reading of what the criterion claims (`read_claim`)."""
    return bool(read_claim(criterion, prompt).not_numeric or COMPARATIVE.search(body))


# A question for an entity: a name the prompt does not give is then the answer ("Which supplier
# ...?" -> "States that Acme charged $4.2m"); else it names whom the task is about ("Sierra")
ASKS_WHO = re.compile(r"\b(?:which|who|whom|whose|name\s+the|identify)\b", re.I)
NAME_WORD = re.compile(r"\b[A-Z][\w&-]*(?:['\u2019][\w&-]+)*")
POSSESSIVE = re.compile(r"['\u2019]s$")
PER_WORD = re.compile(r"\bper\s+$", re.I)


def _names(text: str, first: bool = True) -> set[str]:
    """The capitalised words of `text`, lower case, a possessive's 's dropped ("Fitzroy's" is
    Fitzroy); a word after "per" names a unit, not an entity ("$1,050 per TEU"); the first
    word only if `first`."""
    return {POSSESSIVE.sub("", m.group(0).lower()) for m in NAME_WORD.finditer(text)
            if (first or m.start() > 0) and not PER_WORD.search(text, max(0, m.start() - 5),
                                                                  m.start())}


def criterion_terms_absent_from_world(task: Task, world: WorldContents) -> Iterator[Finding]:
    """A criterion whose key terms appear nowhere in the prompt, files, mail, calendar or chat."""
    if not (world.files or world.mail or world.events or world.chat):
        return
    vocabulary = world_vocabulary(task, world)
    for criterion in task.criteria:
        body, _ = split_criterion(criterion.text)
        tokens = {t for t in content_tokens(body) if not t[0].isdigit()}
        written = {stem(w): w for w in reversed(words(body))}
        absent = sorted(written[t] for t in tokens - vocabulary)
        if len(absent) >= 2 and len(absent) / max(len(tokens), 1) >= ABSENT_SHARE:
            yield _finding(task, "criterion_terms_absent_from_world", "error",
                           f"the criterion's terms {', '.join(absent)} appear nowhere the agent "
                           f"can look (prompt, files, mail, calendar, chat)", criterion,
                           criterion_text=criterion.text, absent_terms=absent)


def prompt_names_missing_file(task: Task, world: WorldContents) -> Iterator[Finding]:
    """The prompt names a file that neither the world nor the task overlay contains."""
    names = {PurePosixPath(f.path).name.lower() for f in world.files}
    for match in FILE_NAME.finditer(task.prompt):
        wanted = match.group(0).lower()
        if not any(name == wanted or name.endswith(wanted) for name in names):
            yield _finding(task, "prompt_names_missing_file", "error",
                           f"the prompt names {match.group(0)}, which is not among the world's "
                           f"{len(names)} files", file=match.group(0),
                           world_files=sorted(names))


def rubric_only_negative_criteria(task: Task, world: WorldContents) -> Iterator[Finding]:
    """Every criterion says what not to do, so an empty answer passes the rubric."""
    if task.criteria and all(is_negative(c.text) for c in task.criteria):
        yield _finding(task, "rubric_only_negative_criteria", "error",
                       "every criterion is negative (\"does not ...\"): an empty answer passes",
                       criteria=[c.text for c in task.criteria])


def criterion_duplicated(task: Task, world: WorldContents) -> Iterator[Finding]:
    """Two criteria with the same text grade the same thing twice."""
    seen: dict[str, Criterion] = {}
    for criterion in task.criteria:
        key = " ".join(words(criterion.text))
        if key and key in seen:
            yield _finding(task, "criterion_duplicated", "warning",
                           f"same text as criterion {seen[key].id}", criterion,
                           criterion_text=criterion.text)
        seen.setdefault(key, criterion)


@dataclass(frozen=True)
class _ToleranceReading:
    """A criterion's numeric targets as the tolerance lint reads them: `unstated` are graded at
    their own precision (no tolerance or rounding rule in the criterion, its explanation or the
    prompt, and no range), `unfixed` those of them whose precision clearly matters."""

    numeric: bool
    unstated: tuple[tuple[Quantity, Tolerance], ...] = ()
    unfixed: tuple[tuple[Quantity, Tolerance], ...] = ()


def _read_tolerances(task: Task, criterion: Criterion) -> _ToleranceReading:
    """Which of a criterion's values state no tolerance, and which of those need one.

    A value needs one where the prompt does not fix its precision and it is a computed or
    estimated non-integer (a ratio, percentage or amount written with decimals). Not: whole
    numbers (exact counts and durations, amounts to the unit), identifiers (the tokenizer skips
    them), each end of a range ("between A and B" is the tolerance), a threshold the claim
    compares its value with ("exceeds the 1.25x covenant"), a value the criterion compares
    with ("from X"), a value the prompt itself gives, and values set by rule (statutory).
    """
    claim = read_claim(criterion.text, task.prompt)
    if claim.not_numeric or not claim.targets:
        return _ToleranceReading(numeric=False)
    body, tolerance_text = split_criterion(criterion.text)
    explained = split_criterion(criterion.explanation)[1] if criterion.explanation else ""
    stated = " ".join(t for t in (tolerance_text, explained, _accepts(criterion.explanation))
                      if t)
    range_ends = {q for pair in find_ranges(body, list(claim.targets)) for q in pair}
    unstated = [(target, tolerance) for target in claim.targets if target not in range_ends
                and (tolerance := tolerance_for(target, stated, task.prompt)).basis
                .startswith("precision")]
    if not unstated or STATUTORY.search(body):
        return _ToleranceReading(True, tuple(unstated))
    given = _prompt_values(task.prompt)
    thresholds = _thresholds(body, claim.targets)
    unfixed = [(target, tolerance) for target, tolerance in unstated
               if target.decimals and target not in thresholds
               and claim.roles[claim.targets.index(target)] != "compared"
               and (target.dimension, round(target.value, 9)) not in given]
    return _ToleranceReading(True, tuple(unstated), tuple(unfixed))


@lru_cache(maxsize=256)
def _prompt_values(prompt: str) -> frozenset[tuple[str, float]]:
    """The values a prompt gives (an input restated is no computed value)."""
    return frozenset((q.dimension, round(q.value, 9)) for q in find_quantities(prompt))


def _thresholds(body: str, targets: tuple[Quantity, ...]) -> set[Quantity]:
    """The targets a claim compares its value with: one after a comparison ("exceeds",
    "below the", "versus"), and one a limit word names ("the 1.25x covenant", "a hurdle of
    8.0%") where another value of the criterion is its answer."""
    compared = {t for t in targets if COMPARED_WITH.search(body, max(0, t.start - 40), t.start)}
    limits = {t for t in targets if LIMIT_BEFORE.search(body, max(0, t.start - 30), t.start)
              or LIMIT_AFTER.match(body, t.end, t.end + 40)}
    answers = [t for t in targets if t not in compared | limits]
    return compared | (limits if answers else set())


@reads_numbers
def numeric_criterion_without_tolerance(task: Task, world: WorldContents) -> Iterator[Finding]:
    """A numeric criterion graded at its own precision where a tolerance clearly matters: a
    computed non-integer value whose precision neither the criterion nor the prompt fixes
    (`_read_tolerances`). That most criteria state no tolerance at all is a habit of the
    benchmark, said once by `tolerance_summary`, not a finding per task."""
    for criterion in task.criteria:
        unfixed = _read_tolerances(task, criterion).unfixed
        if unfixed:
            values = "; ".join(f"{target.text} ({in_units(tolerance.low, target)} to "
                               f"{in_units(tolerance.high, target)})"
                               for target, tolerance in unfixed)
            yield _finding(task, "numeric_criterion_without_tolerance", "info",
                           f"no tolerance or rounding rule for a computed value, so it is "
                           f"graded at its own precision: {values}", criterion,
                           criterion_text=criterion.text,
                           values=[target.text for target, _ in unfixed])


def tolerance_summary(tasks: Iterable[Task]) -> CheckSummary:
    """How many numeric criteria of the benchmark state no tolerance or rounding rule, and how
    many of those grade a value that needs one (the findings). A task with a text too long to
    read for numbers is left out and counted apart (the check is silent on it)."""
    tasks = list(tasks)
    read = [task for task in tasks if not unread(**task_texts(task))]
    readings = [r for task in read for c in task.criteria
                if (r := _read_tolerances(task, c)).numeric]
    return CheckSummary(check="numeric_criterion_without_tolerance", subject="numeric criteria",
                        condition="state no tolerance or rounding rule for a value (in the "
                                  "criterion, its explanation or the prompt)",
                        counted=sum(bool(r.unstated) for r in readings), total=len(readings),
                        findings=sum(bool(r.unfixed) for r in readings),
                        finding_when="a computed value written with decimals whose precision "
                                     "the prompt does not fix",
                        unread_tasks=len(tasks) - len(read))


def _accepts(explanation: str) -> str:
    """An explanation's 'accept A-B' or 'within X' sentence, read as the criterion's tolerance."""
    return " ".join(s for s in re.split(r"(?<=[.!?])\s+", explanation or "")
                    if re.search(r"\baccept|\bwithin\b|±|\+/-|tolerance", s, re.I))


@lru_cache(maxsize=256)
def _values(text: str) -> frozenset[float]:
    """Values of the quantities in a text, kept per text: a world's tasks share its messages."""
    return frozenset(q.value for q in find_quantities(text))


@reads_numbers
def task_depends_on_messages(task: Task, world: WorldContents) -> Iterator[Finding]:
    """Values or key terms the rubric or gold need that only the mail or chat contain (info).

    Such tasks are the subset where an elicitation ablation about reading messages can matter.
    """
    if not (world.mail or world.chat):
        return
    messages = " ".join([f"{m.subject} {m.body}" for m in world.mail] +
                        [m.text for s in world.chat for m in s.messages])
    elsewhere = " ".join([task.prompt, *(f.text or "" for f in world.files)])
    needed = " ".join([c.text for c in task.criteria] + [task.gold.text if task.gold else ""])
    in_messages, outside = _values(messages), _values(elsewhere)
    values = sorted({q.text for q in find_quantities(needed)
                     if q.value in in_messages and q.value not in outside})
    stems = (content_tokens(needed) & content_tokens(messages)) - content_tokens(elsewhere)
    written = {stem(w): w for w in reversed(words(needed))}
    terms = sorted(written[t] for t in stems if not t[0].isdigit())
    if values or len(terms) >= 2:
        yield _finding(task, "task_depends_on_messages", "info",
                       "the rubric or gold needs what only the mail or chat say: "
                       + ", ".join(values + terms), values=values, terms=terms,
                       sources=_message_sources(world, [q.value for q in find_quantities(needed)
                                                        if q.text in values], stems))


def _message_sources(world: WorldContents, values: list[float], stems: AbstractSet[str]
                     ) -> list[dict[str, str]]:
    """Where the mail and chat say what the rubric needs: each message holding a needed value or
    term, by sender and subject (mail) or space and author (chat), with the sentence that says
    it; at most MESSAGE_SOURCES."""
    said: list[tuple[str, str, str]] = (
        [(f"mail from {m.sender}", m.subject, m.body) for m in world.mail]
        + [(f"chat {s.name}", m.author, m.text) for s in world.chat for m in s.messages])
    found = []
    for where, title, text in said:
        sentence = next((s for s in SENTENCE.split(text)
                         if set(values) & _values(s) or stems & content_tokens(s)), None)
        if sentence is not None:
            found.append({"where": where, "title": title, "quote": sentence.strip()[:QUOTE]})
        if len(found) == MESSAGE_SOURCES:
            break
    return found


# Benchmark-level lines of checks whose condition holds on most tasks: said once, from the tasks.
CHECK_SUMMARIES: list[Callable[[Iterable[Task]], CheckSummary]] = [tolerance_summary]
TASK_CHECKS: list[TaskCheck] = [
    criterion_contradicts_explanation,
    gold_contradicts_criterion,
    criteria_conflict_on_quantity,
    criterion_restates_premise,
    criterion_terms_absent_from_world,
    prompt_names_missing_file,
    rubric_only_negative_criteria,
    criterion_duplicated,
    numeric_criterion_without_tolerance,
    task_depends_on_messages,
]
# Checks that read the task's world: they cannot run on a task known only from its runs.
WORLD_CHECKS: list[TaskCheck] = [
    criterion_terms_absent_from_world,
    prompt_names_missing_file,
    task_depends_on_messages,
]
