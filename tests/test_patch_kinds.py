"""Each kind of proposal from the findings the real checks make on the sample's tasks, the
defects a review confirms (and a false alarm does not), the proposals file with hostile text,
and the proposals applied to the tasks in memory."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from rubric_audit.checks.lints import (
    criterion_contradicts_explanation,
    criterion_restates_premise,
    numeric_criterion_without_tolerance,
)
from rubric_audit.checks.precision import calibrate
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Finding, FindingReview, Review, WorldContents
from rubric_audit.core.text import UNSAFE
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.patch.defects import confirmed_defects
from rubric_audit.patch.edit import accepted, apply
from rubric_audit.patch.kinds import (
    consistent_proposal,
    prompt_proposal,
    propose,
    tolerance_proposal,
    unasked_proposal,
)
from rubric_audit.patch.proposals import (
    FORMAT,
    Change,
    Evidence,
    Proposal,
    Proposals,
    read_proposals,
    write_proposals,
)
from rubric_audit.review.labels import finding_key
from tests.conftest import SAMPLE
from tests.hostile import STORABLE


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(SAMPLE)


def label(task_id: str, name: str = "defective_task", reviewer: str = "ana") -> tuple[int, Review]:
    return (1, Review(reviewer=reviewer, created_at="t", task_id=task_id, label=name))


def defects_of(findings: list[Finding], task_id: str):
    return confirmed_defects(findings, [label(task_id)], [])


def test_a_contradicted_criterion_takes_its_explanations_value(sample) -> None:
    task = sample.task("nordlys_04")
    findings = list(criterion_contradicts_explanation(task, WorldContents()))
    [defect] = defects_of(findings, task.id)
    made = consistent_proposal(task, task.criteria[0], [defect])
    assert made is not None and made.kind == "consistent"
    [change] = made.changes
    assert (change.field, change.before, change.proposed) == (
        "criterion", "States a success fee of NOK 25.9m", "States a success fee of NOK 29.5m")
    assert "the value its explanation arrives at" in made.summary
    patched = task.model_copy(update={"criteria": [task.criteria[0].model_copy(
        update={"text": change.proposed})]})
    assert not list(criterion_contradicts_explanation(patched, WorldContents()))


def test_a_restated_premise_is_removed_with_its_explanation(sample) -> None:
    task = sample.task("meridian_02")
    findings = list(calibrate(criterion_restates_premise(task, WorldContents())))
    [defect] = defects_of(findings, task.id)
    made = unasked_proposal(task, task.criteria[0], [defect])
    assert [(c.field, c.proposed) for c in made.changes] == [("criterion", ""),
                                                             ("explanation", "")]
    assert made.summary.startswith("remove C1")
    [(proposal, who)] = accepted(Proposals(format=FORMAT, benchmark="b", version="v", author="bo",
                                           proposal=[made.model_copy(update={"decision": "accept"})]),
                                 Path("p.toml"))
    patched, records = apply({task.id: task}, [(proposal, who)], Path("p.toml"))
    assert [c.id for c in patched[task.id].criteria] == [task.criteria[1].id]
    assert [r.field for r in records] == ["criterion", "explanation"] and records[0].after == ""


def test_a_tolerance_is_stated_as_the_checker_reads_it(sample) -> None:
    task = sample.task("kestrel_04")
    findings = list(calibrate(numeric_criterion_without_tolerance(task, WorldContents())))
    [defect] = confirmed_defects(findings, [], [])
    assert "measured" in defect.findings[0].confirmed_by[0] and not defect.reviewed
    made = tolerance_proposal(task, task.criteria[0], [defect])
    assert made is not None
    assert made.changes[0].proposed == ("States Southern region revenue growth of 3.8% "
                                        "(accept 3.75% to 3.85%)")
    stated = sample.task("kestrel_05")  # states its own range already
    assert tolerance_proposal(stated, stated.criteria[0], [defect]) is None


def test_a_prompt_sentence_says_the_form_the_rubric_takes(sample) -> None:
    task = sample.task("kestrel_04")
    finding = Finding(task_id=task.id, check="prompt_has_two_readings", severity="warning",
                      message="GBP or percent", evidence={"quote": task.prompt})
    made = prompt_proposal(task, defects_of([finding], task.id))
    assert made.changes[0].proposed == f"{task.prompt} Give the figure as a percentage."
    unitless = task.model_copy(update={"criteria": [task.criteria[0].model_copy(
        update={"text": "States that 3 stores grew"})]})
    written_by_no_one = prompt_proposal(unitless, defects_of([finding], task.id))
    assert written_by_no_one.changes[0].proposed == task.prompt, "left for a model or the author"
    with pytest.raises(InputError, match="changes nothing"):
        accepted(Proposals(format=FORMAT, benchmark="b", version="v", author="bo", proposal=[
            written_by_no_one.model_copy(update={"decision": "accept"})]), Path("p.toml"))


def test_a_false_alarm_is_never_a_defect_and_a_confirmed_finding_is(sample) -> None:
    task = sample.task("nordlys_04")
    [finding] = criterion_contradicts_explanation(task, WorldContents())
    review = FindingReview(reviewer="bo", created_at="t", finding_key=finding_key(finding),
                           task_id=task.id, check=finding.check, verdict="false_alarm")
    [unfounded] = confirmed_defects([finding], [label(task.id)], [(1, review)])
    assert unfounded.findings == [] and "no finding says what is wrong" in unfounded.unfounded
    confirmed = confirmed_defects([finding], [], [(1, review.model_copy(
        update={"verdict": "confirmed"}))])
    assert confirmed[0].findings[0].confirmed_by == ["bo confirmed this finding"]
    sound = confirmed_defects([finding], [label(task.id, "sound")], [])
    assert sound == [], "a sound label confirms nothing"


def test_a_label_no_finding_backs_is_said_not_patched(sample) -> None:
    task = sample.task("kestrel_06")
    [defect] = confirmed_defects([], [label(task.id)], [])
    assert defect.reviewed and "no finding says what is wrong" in defect.unfounded
    made = propose(sample, [defect])
    assert made.proposal == [] and made.unpatched[0].task_name == "kestrel_06"


def test_two_proposals_changing_one_field_are_refused(sample) -> None:
    task = sample.task("nordlys_04")
    findings = list(criterion_contradicts_explanation(task, WorldContents()))
    made = consistent_proposal(task, task.criteria[0], defects_of(findings, task.id))
    assert made is not None
    twice = [(made, "bo"), (made.model_copy(update={"id": "again"}), "bo")]
    with pytest.raises(InputError, match="no longer holds what the proposal changes"):
        apply({task.id: task}, twice, Path("p.toml"))


def test_the_proposals_file_keeps_hostile_text_exactly_and_shows_none_raw(tmp_path: Path) -> None:
    texts = [p.text for p in STORABLE] + ["two\nlines", "\nleading", 'quote"s """ and \\']
    proposal = Proposal(
        id="p", kind="unasked", task="t", task_name=texts[0], summary=texts[1],
        changes=[Change(field="criterion", criterion="c", before=t, proposed=t, after=t)
                 for t in texts],
        evidence=[Evidence(check="x", severity="error", message=texts[2], lines=texts)])
    written = Proposals(format=FORMAT, benchmark=texts[3], version="v", proposal=[proposal])
    path = tmp_path / "proposals.toml"
    write_proposals(path, written)
    assert read_proposals(path) == written
    raw = path.read_text()
    assert not UNSAFE.search(raw), "controls, bidi and zero-width characters only as escapes"
    assert tomllib.loads(raw)["benchmark"] == texts[3]


def test_a_malformed_proposals_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "proposals.toml"
    path.write_text("format = [")
    with pytest.raises(InputError, match="malformed TOML"):
        read_proposals(path)
    path.write_text(f'format = "{FORMAT}"\nbenchmark = "b"\nversion = "v"\n'
                    f'[[proposal]]\nid = "p"\nkind = "rewrite"\n')
    with pytest.raises(InputError, match=r"proposal\[0\]\.kind"):
        read_proposals(path)
