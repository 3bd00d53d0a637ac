"""Defect packets and the CHANGELOG through the markdown sink: every hostile payload, as a task's
name, prompt, gold, finding and fix, renders as text and makes no element of its own."""

from __future__ import annotations

import json

from rubric_audit.core.text import visible
from rubric_audit.load.lineage import PatchChange, PatchParent, PatchRecord
from rubric_audit.patch.packets import Packet, packet_files
from rubric_audit.patch.proposals import Change, Evidence, Proposal
from rubric_audit.patch.verify import ControlCheck, ScoreMove, VerdictChange, Verification
from rubric_audit.patch.write import changelog
from tests.hostile import STORABLE, acting
from tests.test_hostile_sinks import ALLOWED_TAGS, _lax_markdown, _parsed, squash


def _shown(rendered: str) -> str:
    page = _parsed(_lax_markdown().render(rendered))
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS, {tag for tag, _ in page.tags}
    assert [attrs for _, attrs in page.tags if attrs] == []
    return squash("".join(page.text))


def _packet(text: str) -> Packet:
    return Packet(
        task="t1", task_name=text, domain=text, criterion="c1", criterion_title=f"C1 {text}",
        explanation=text, prompt=text, gold=text,
        findings=[Evidence(check="criterion_restates_premise", severity="warning", message=text,
                           confirmed_by=[text], lines=[text])],
        also=[Evidence(check="gold_contradicts_criterion", severity="warning", message=text)],
        controls_checked=3, controls=[ControlCheck(task="t1", task_name=text, control="gold",
                                                   criterion=None, before=text, after=None)],
        attempts=[text],
        scores=[ScoreMove(model=text, variant=text, grader=text, graded=2, before=0.5,
                          after=1.0, unscored_after=0)],
        fix=text,
        proposal=Proposal(id=text, kind="unasked", task="t1", task_name=text, summary=text,
                          changes=[Change(field="criterion", criterion="c1", before=text,
                                          proposed="", after="")],
                          evidence=[], by=text, decision="accept"))


def test_a_packet_shows_every_payload_as_text() -> None:
    for payload in STORABLE:
        [(name, rendered)] = packet_files([_packet(payload.text)], "markdown").items()
        assert name.startswith("01-") and "/" not in name, name
        assert not acting(rendered), payload.name
        assert squash(visible(payload.text)) in _shown(rendered), payload.name
    as_json = json.loads(packet_files([_packet(p.text) for p in STORABLE], "json")["defects.json"])
    assert [p["prompt"] for p in as_json] == [p.text for p in STORABLE], "JSON keeps text exactly"


def test_the_changelog_shows_every_payload_as_text() -> None:
    for payload in STORABLE:
        text = payload.text
        change = PatchChange(proposal=text, kind="unasked", task="t1", task_name=text,
                             criterion="c1", field="criterion", before=text, after="",
                             evidence=[{"message": text}], decision="edit", accepted_by=text,
                             written_by=f"author:{text}")
        record = PatchRecord(format="rubric-audit patch 1", parent=PatchParent(
            name=text, version="a" * 64), version="b" * 64, changes=[change])
        verification = Verification(
            controls=[], scores=[ScoreMove(model=text, variant=text, grader=text, graded=1,
                                           before=0.0, after=1.0, unscored_after=0)],
            changed=[VerdictChange(attempt=text, model=text, task_name=text, grader=text,
                                   before="fail", after="pass", criteria=[text])])
        rendered = changelog(text, record, verification, {})
        assert not acting(rendered), payload.name
        assert squash(visible(text)) in _shown(rendered), payload.name
