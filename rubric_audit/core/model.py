"""The data model every stage shares: benchmarks, worlds, tasks, attempts, grades, findings, reviews.

Field names follow rubric-audit's vocabulary (docs/design.md); the loaders map the APEX and
Archipelago names onto them. Everything here is plain data: no I/O, no behaviour beyond lookups.
"""

from __future__ import annotations

import difflib
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Annotated, Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from rubric_audit.core.errors import InputError
from rubric_audit.core.words import plural

MAX_ID_BYTES = 200


def path_safe(value: str) -> str:
    """An id that becomes a folder or file name must be exactly one name: it can never lead
    out of the folder it is joined to (no separators, no `.`/`..`, no control characters)."""
    if (value in ("", ".", "..") or "/" in value or "\\" in value or not value.isprintable()
            or len(value.encode("utf-8", errors="replace")) > MAX_ID_BYTES):
        raise ValueError(f"not usable as a folder name: {value[:80]!r} (one name of at most "
                         f"{MAX_ID_BYTES} bytes; no '/', '\\', control characters, '.' or '..')")
    return value


PathSafeId = Annotated[str, AfterValidator(path_safe)]


ESCAPED = "%/\\"
"""Characters `safe_id` escapes besides the unprintable ones: `%` itself, so the escape reverses."""
LONG_ID_MARK = "%~"
"""Between a long id's kept start and its hash: never in an escaped id (its `%` are escapes)."""


def safe_id(value: str) -> str:
    """A task id made from a foreign format's names (Harbor task names, inspect sample ids), one
    path-safe name that no other name becomes: `%`, separators and unprintable characters are
    percent-encoded (their UTF-8 bytes as `%XX`), `.` and `..` become `%2E` and `%2E%2E`, the
    empty name `%`. A name without those characters is its own id, so `dep/x` is `dep%2Fx` and
    `dep_x` stays `dep_x`. An id longer than MAX_ID_BYTES keeps its first 120 bytes, then
    LONG_ID_MARK and 32 hex digits of the name's sha256 (two names share it only if their
    hashes do; `checks.input.input_id_collision` says so if ever)."""
    encoded = "".join(c if c.isprintable() and c not in ESCAPED
                      else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                      for c in value)
    if encoded in ("", ".", ".."):
        encoded = "%2E" * len(encoded) or "%"
    if len(encoded.encode("utf-8")) <= MAX_ID_BYTES:
        return encoded
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    start = encoded.encode("utf-8")[:120].decode("utf-8", "ignore")
    return f"{start}{LONG_ID_MARK}{digest}"


MAX_INDEX = 2**63 - 1
"""SQLite's largest INTEGER: the largest count or attempt number that can be stored."""
Number = Annotated[float, Field(allow_inf_nan=False)]
"""A score, reward, cost or time read from a foreign file: finite (NaN, infinities and numbers
too large for a float, such as 1e400, are refused as the field's error)."""
Count = Annotated[int, Field(ge=0, le=MAX_INDEX)]
"""A token or trial count read from a foreign file: not negative, and fits SQLite's integer."""


class Record(BaseModel):
    """Base for all models: unknown fields are errors, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class Criterion(Record):
    """One rubric criterion (an APEX `verifier`)."""

    id: str
    text: str
    explanation: str = ""
    weight: float = 1.0
    primary: bool = False


class Gold(Record):
    """The reference answer: text, or deliverable files under `gold_files/<task_id>/`."""

    type: Literal["text", "file"] = "text"
    text: str = ""
    files: list[str] = Field(default_factory=list, description="paths relative to the benchmark")


class Task(Record):
    """One benchmark task: a prompt in a world, graded by its rubric."""

    id: PathSafeId
    name: str
    domain: str = ""
    world_id: str
    prompt: str
    criteria: list[Criterion]
    gold: Gold | None = None
    expected_output: str | None = None
    input_files_declared: bool = False
    overlay: str | None = Field(None, description="task_files/<task_id>/, relative, when present")
    source: Literal["benchmark", "runs"] = "benchmark"

    def version(self) -> str:
        """A short hash of the task's content, so results can say which version they graded."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    def criterion(self, criterion_id: str) -> Criterion | None:
        return next((c for c in self.criteria if c.id == criterion_id), None)

    def criterion_numbers(self) -> dict[str, str]:
        """Criterion id -> "C1", "C2" ... in rubric order: how every output names a criterion."""
        return {c.id: f"C{i}" for i, c in enumerate(self.criteria, 1)}


def find_task(tasks: Sequence[Task], key: str, where: str, field: str = "task") -> Task:
    """The task whose id or name is `key`, else the only one that is `key` but for case; where
    there is none, one line naming `where` and `field` and the closest ids and names."""
    exact = next((t for t in tasks if key in (t.id, t.name)), None)
    if exact is not None:
        return exact
    folded = {t.id: t for t in tasks if key.casefold() in (t.id.casefold(), t.name.casefold())}
    if len(folded) == 1:
        return next(iter(folded.values()))
    # difflib is quadratic in a name's length: names past MAX_ID_BYTES are not compared
    spelled = {k.casefold(): k for t in tasks for k in (t.id, t.name) if len(k) <= MAX_ID_BYTES}
    close = sorted(folded) or ([spelled[k] for k in difflib.get_close_matches(
        key.casefold(), list(spelled), n=3)] if len(key) <= MAX_ID_BYTES else [])
    hint = f"; did you mean {' or '.join(repr(k) for k in close)}?" if close else ""
    raise InputError(where, field, f"no task {key!r} (by id or name){hint}")


class App(Record):
    service_id: str
    service_name: str = ""


WorldLayout = Literal["apex", "task-package"]


class World(Record):
    """A fictional firm the tasks run in; `source` is where its shared files are, relative to the
    benchmark (None: the benchmark does not hold them), laid out as `layout` says: `apex` (a zip or
    folder with filesystem/ and .apps_data/; task overlays alike) or `task-package` (Archipelago's
    task package: `source` is files/, the apps' data is in tools/.apps_data/, and a task's own
    files are in tools/files/<task>/ and tools/.apps_data/<task>/)."""

    id: PathSafeId
    name: str = ""
    description: str = ""
    domain: str = ""
    apps: list[App] = Field(default_factory=list)
    source: str | None = None
    layout: WorldLayout = "apex"


class BenchmarkVersion(Record):
    """Which version of a benchmark was read: the sha256 of its tasks file (`of`; for a layout
    without one, of its tasks as read), and, for a benchmark `rubric-audit patch` wrote
    (patch.json), the versions it was patched from, oldest first, and every task whose prompt
    or rubric those patches changed: grades recorded under an earlier version graded another
    task there."""

    sha256: str
    of: str
    lineage: list[str] = Field(default_factory=list)
    changed_tasks: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        """One line: the short hash, what it is of, and where it was patched from."""
        patched = (f"; patched from {self.lineage[-1][:12]} "
                   f"({plural(len(self.lineage), 'earlier version')}), "
                   f"{plural(len(self.changed_tasks), 'task')} changed since "
                   f"{self.lineage[0][:12]}" if self.lineage else "")
        return f"{self.sha256[:12]} (sha256 of {self.of}){patched}"


class Benchmark(Record):
    """A benchmark directory (APEX dataset or Archipelago task package), loaded."""

    name: str
    root: str
    tasks: list[Task]
    worlds: list[World]
    version: BenchmarkVersion | None = None

    def task(self, key: str) -> Task | None:
        """The first task whose id or name is `key` (ids are unique; a name can be shared)."""
        if self._task_keys[0] is not self.tasks:  # a copy given other tasks (model_copy)
            del self._task_keys
        return self._task_keys[1].get(key)

    @cached_property
    def _task_keys(self) -> tuple[list[Task], dict[str, Task]]:
        """Each id and name to the first task holding it, built once (tasks are not changed in
        place), with the list it was built from: `model_copy` carries this over, so a copy given
        other tasks builds its own."""
        by_key: dict[str, Task] = {}
        for t in self.tasks:
            by_key.setdefault(t.id, t)
            by_key.setdefault(t.name, t)
        return self.tasks, by_key

    def named(self, key: str, field: str = "task") -> Task:
        """`find_task` on this benchmark: the task, or one line naming it and `field`."""
        return self.task(key) or find_task(self.tasks, key, self.root, field)

    def world(self, world_id: str) -> World | None:
        return next((w for w in self.worlds if w.id == world_id), None)


class WorldFile(Record):
    path: str
    size: int
    text: str | None = Field(None, description="extracted text where the format has one")


class MailMessage(Record):
    message_id: str
    mailbox: str
    date: str
    sender: str
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    subject: str = ""
    in_reply_to: str | None = None
    body: str = ""


class CalendarEvent(Record):
    uid: str
    calendar: str
    summary: str = ""
    description: str = ""
    location: str = ""
    start: str = ""
    end: str = ""
    attendees: list[str] = Field(default_factory=list)
    # A recurring event's iCalendar lines (DTSTART with its TZID, RRULE, RDATE, EXDATE).
    recurrence: list[str] = Field(default_factory=list)


class ChatMember(Record):
    name: str
    email: str = ""


class ChatMessage(Record):
    message_id: str
    author: str
    author_email: str = ""
    created: str = ""
    text: str = ""
    topic_id: str | None = None


class ChatSpace(Record):
    name: str
    members: list[ChatMember] = Field(default_factory=list)
    messages: list[ChatMessage] = Field(default_factory=list)


class WorldContents(Record):
    """What an agent can see in a task's world (world plus task overlay)."""

    files: list[WorldFile] = Field(default_factory=list)
    mail: list[MailMessage] = Field(default_factory=list)
    events: list[CalendarEvent] = Field(default_factory=list)
    chat: list[ChatSpace] = Field(default_factory=list)


class Usage(Record):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None

    @classmethod
    def zero(cls) -> Usage:
        return cls(prompt_tokens=0, completion_tokens=0, total_tokens=0, cost=0.0)

    def plus(self, other: Usage) -> Usage:
        """Token counts add up; the cost is known only while every part's cost is known."""
        return Usage(
            prompt_tokens=(self.prompt_tokens or 0) + (other.prompt_tokens or 0),
            completion_tokens=(self.completion_tokens or 0) + (other.completion_tokens or 0),
            total_tokens=(self.total_tokens or 0) + (other.total_tokens or 0),
            cost=None if self.cost is None or other.cost is None else self.cost + other.cost)


class ToolCall(Record):
    """One tool call with its result (None when no result was recorded); `arguments` as text."""

    id: str = ""
    name: str
    arguments: str = ""
    result: str | None = None
    error: bool = False


Role = Literal["system", "user", "assistant", "tool"]


class Step(Record):
    """One message of a trajectory. A `tool` step holds a result whose call was not recorded:
    as a call of the name the result gives, or as its text when it names no call."""

    role: Role
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tokens: int | None = Field(None, description="tokens the step produced, where recorded")


class Trajectory(Record):
    """What an agent did, normalised from its source format (`rubric_audit/load/trajectory.py`)."""

    format: str
    steps: list[Step] = Field(default_factory=list)

    def calls(self) -> list[tuple[int, ToolCall]]:
        """(step index, call) of every tool call, in order."""
        return [(i, call) for i, step in enumerate(self.steps) for call in step.tool_calls]




class Attempt(Record):
    """One agent run of one task. `graded`: some grader gave verdicts. `ungraded`: the agent ran
    and answered but no grader has graded it yet (a judge can). `unavailable`: it failed outside
    the model (harness, provider, grader infrastructure), with its reason. Only graded attempts
    can fail; the other two states are never a fail."""

    id: str
    task_id: str
    model: str
    variant: str
    index: int = Field(ge=1, le=MAX_INDEX)
    state: Literal["graded", "ungraded", "unavailable"]
    unavailable_reason: str | None = None
    answer: str | None = None
    artifacts: list[str] = Field(default_factory=list)
    trajectory: Trajectory | None = Field(
        None, description="as loaded; the store keeps it apart, compressed (AuditStore.trajectory)")
    usage: Usage = Field(default_factory=Usage)
    wall_time: float | None = None
    agent_status: str | None = None
    agent: str | None = Field(None, description="the harness's agent that ran the model, where "
                                                "recorded (Archipelago's agent_config_id)")
    judge_model: str | None = None
    source: str = Field("", description="the attempt folder it was read from")
    fingerprint: str = Field("", description="hash of the attempt folder's files")

    @staticmethod
    def make_id(variant: str, task_id: str, index: int) -> str:
        return f"{variant}/{task_id}/{index}"


Verdict = Literal["pass", "fail", "unscored", "not_applicable"]
Outcome = Literal["pass", "fail", "unscored"]


def task_outcome(verdicts: Sequence[str]) -> Outcome:
    """The APEX rule, for one attempt's verdicts on its task's criteria: pass only if every
    criterion passes, fail if any fails, else unscored (a criterion without a verdict)."""
    if "fail" in verdicts:
        return "fail"
    if verdicts and all(v == "pass" for v in verdicts):
        return "pass"
    return "unscored"


class CriterionGrade(Record):
    """One verdict on one criterion of one attempt, by one grader (`recorded`, `judge:<m>`, `code`)."""

    attempt_id: str
    criterion_id: str
    grader: str
    verdict: Verdict
    rationale: str = ""
    score: float | None = None


class TokenCount(Protocol):
    @property
    def completion_tokens(self) -> int | None: ...


class AttemptRow(Protocol):
    """What scores and summaries read of an attempt: an `Attempt`, or an `AttemptLine` where an
    archive's attempts are too many to hold whole."""

    @property
    def id(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def unavailable_reason(self) -> str | None: ...
    @property
    def usage(self) -> TokenCount: ...


class GradeRow(Protocol):
    """What scores read of a grade: a `CriterionGrade`, or a `GradeLine`."""

    @property
    def attempt_id(self) -> str: ...
    @property
    def criterion_id(self) -> str: ...
    @property
    def grader(self) -> str: ...
    @property
    def verdict(self) -> str: ...


class Tokens(NamedTuple):
    completion_tokens: int | None


class AttemptLine(NamedTuple):
    """An attempt as its stored row's columns give it, without its answer, artifacts and
    trajectory: a few hundred bytes, where a whole attempt is kilobytes."""

    id: str
    task_id: str
    model: str
    variant: str
    state: str
    unavailable_reason: str | None
    usage: Tokens


class GradeLine(NamedTuple):
    """A grade without its rationale."""

    attempt_id: str
    criterion_id: str
    grader: str
    verdict: str


G = TypeVar("G", bound=GradeRow)


def grades_by_attempt(grades: Iterable[G], grader: str | None = None) -> dict[str, list[G]]:
    """The grades of each attempt, by attempt id: one grader's, or every grader's (None)."""
    grouped: dict[str, list[G]] = defaultdict(list)
    for g in grades:
        if grader is None or g.grader == grader:
            grouped[g.attempt_id].append(g)
    return grouped


Expectation = Literal["pass", "fail"]  # the verdict a control must get
ControlOutcome = Literal["pass", "fail", "undetermined"]  # what it got, over its criteria


class Control(BaseModel):
    """One synthetic answer to a task (checks/controls.py makes them): the gold, an empty
    answer, a near miss or an alternative, and the verdict it must get. `criterion_id` names
    the criterion a near miss targets."""

    id: str
    task_id: str
    task_version: str
    kind: str
    criterion_id: str | None = None
    answer: str
    expect: Expectation


class ControlGrade(BaseModel):
    """A verdict on a control (its id in `grade.attempt_id`), with the repeat and task version."""

    grade: CriterionGrade
    repeat: int = 0
    task_version: str


class Measurement(Record):
    """A recorded score value that is no verdict (a win rate, a count of steps, a 0-10 rating):
    kept as the source gave it, never made into a criterion or a pass/fail. `key` is the
    score's dict key or rubric item ("" for the scorer's own value); `value` the number the
    source's metrics take it as (None where it is none), `recorded` the value as written (JSON)."""

    attempt_id: str
    scorer: str
    key: str = ""
    value: float | None
    recorded: str


class SourceMetric(Record):
    """A metric a source computed over its samples (inspect_ai's `results.scores[].metrics`),
    beside the same number computed from the samples as read (None where it is not
    recomputed); `difference` says why the two differ or why it was not recomputed, and is ""
    where they agree."""

    source: str
    variant: str
    scorer: str
    key: str = ""
    metric: str
    value: float | None
    computed: float | None = None
    samples: int = Field(0, description="samples the computed value is over")
    difference: str = ""


class VariantPrompt(Record):
    """What one variant's prompt added to, or dropped from, the prompt its task's variants share."""

    task_id: str
    variant: str
    added: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)


class SourceSummary(Record):
    """What one source (variant folder, Harbor variant, inspect log) gave: said per source on
    import. `format` is the layout the source was read as; `variant` names the variant where a
    source's folder does not (a Harbor variant spans the jobs that ran its agent and model)."""

    path: str
    format: str
    variant: str = ""
    attempts: int = 0
    graded: int = 0
    ungraded: int = 0
    unavailable: int = 0
    unavailable_reasons: dict[str, int] = Field(default_factory=dict)
    tasks: int = 0
    criteria: int = 0
    controls: int = Field(0, description="recorded gold and null controls (Harbor's oracle and "
                                         "nop trials)")
    unmapped: list[str] = Field(default_factory=list, description="what could not be mapped")
    model_from: dict[str, int] = Field(default_factory=dict, description=(
        "attempts whose own config names no model, by where their model was read instead (a "
        "summary file, the folder's name)"))
    answer_rules: dict[str, int] = Field(default_factory=dict, description=(
        "attempts by the rule that found their answer (a final_answer call, the last assistant "
        "message, ...), where the format has more than one"))


CODE_GRADER = "code"
"""The grader name of the code checker's verdicts (beside judges' and recorded ones)."""

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}  # worst first


class Finding(Record):
    """Something a check found; `check` is the name of the function that found it."""

    task_id: str | None
    criterion_id: str | None = None
    check: str
    severity: Severity
    message: str
    evidence: dict[str, Any] = Field(default_factory=dict)


class CheckSummary(Record):
    """A benchmark-level line of a check whose condition holds on most tasks: `counted` of
    `total` `subject` `condition` (the authors' habit, said once), of which `findings` are
    findings, where `finding_when` holds. Computed from the tasks (`lints.CHECK_SUMMARIES`);
    `unread_tasks` tasks with a text too long to read for numbers (`numbers.unread`) are in no
    count, as their check is silent on them."""

    check: str
    subject: str
    condition: str
    counted: int
    total: int
    findings: int
    finding_when: str
    unread_tasks: int = 0

    def describe(self) -> str:
        unread = (f"; {plural(self.unread_tasks, 'task')} not read, a text too long to read "
                  f"for numbers" if self.unread_tasks else "")
        return (f"{self.counted} of {self.total} {self.subject} {self.condition}; "
                f"{self.findings} of them a finding ({self.finding_when}){unread}")


ReviewLabel = Literal[
    "defective_task", "grader_error", "ambiguous", "model_error", "sound", "unearned"
]


class LabelMeaning(BaseModel):
    """What a review label is called wherever it is shown (the app, the report, the exports),
    what separates it from the others, and an example."""

    model_config = ConfigDict(frozen=True)

    name: str
    means: str
    example: str


LABELS: dict[ReviewLabel, LabelMeaning] = {
    "defective_task": LabelMeaning(
        name="defective task",
        means="the task is wrong whatever the reading: its gold, a criterion or its prompt "
              "contradicts the world or itself, so a right answer fails",
        example="the criterion wants NOK 48.50, but the workbook at the WACC the prompt "
                "states gives NOK 44.21"),
    "ambiguous": LabelMeaning(
        name="ambiguous",
        means="the task can reasonably be read two ways and the answer took a reading the "
              "rubric did not foresee",
        example="'net debt' at the year end or after the 28 February mail: the answer used "
                "the other date"),
    "grader_error": LabelMeaning(
        name="grader error",
        means="the task is sound and the answer meets the criterion, but the judge failed it",
        example="the answer states 9.4x and the judge failed it for 'not stating 9.4x'"),
    "model_error": LabelMeaning(
        name="model error",
        means="the task is sound and graded right: the agent got it wrong",
        example="the agent took FY2023 EBITDA where the prompt asks for FY2024"),
    "sound": LabelMeaning(
        name="sound pass",
        means="every criterion the answer was credited with, it meets",
        example="the answer states NOK 48.50 and shows the DCF it came from"),
    "unearned": LabelMeaning(
        name="unearned pass",
        means="a criterion passed that the answer does not meet: a hedge over several values, "
              "a value outside the tolerance, an empty or off-topic answer",
        example="'between NOK 40 and 50 per share' passed for NOK 48.50"),
}
FAILURE_LABELS: tuple[ReviewLabel, ...] = ("defective_task", "grader_error", "ambiguous",
                                           "model_error")  # the order of the label keys
PASS_LABELS: tuple[ReviewLabel, ...] = ("sound", "unearned")


LABEL_NAMES: dict[str, str] = {label: meaning.name for label, meaning in LABELS.items()}


def label_name(label: str) -> str:
    """A review label's words, as every sink shows them ("defective task"); a value that is no
    label (a state such as "disputed") with its underscores as spaces."""
    return LABEL_NAMES.get(label, label.replace("_", " "))


class FindingReview(Record):
    """A reviewer's judgement of one finding (by its `finding_key`): confirmed or a false alarm.
    Append-only like labels; a retraction (verdict None) points at the entry it undoes."""

    reviewer: str
    created_at: str
    finding_key: str
    task_id: str | None
    check: str
    verdict: Literal["confirmed", "false_alarm"] | None = None
    retracts: int | None = None


class Review(Record):
    """One entry of the append-only review log; a retraction points at the entry it undoes."""

    reviewer: str
    created_at: str
    task_id: str
    label: ReviewLabel | None = None
    note: str = ""
    evidence_hash: str = ""
    retracts: int | None = None
