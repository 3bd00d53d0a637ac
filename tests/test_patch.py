"""From finding to fix on the bundled sample: the planted defects reviewed in an audit.db (as a
reviewer's labels and a confirmed finding), a proposal per defect, the author's acceptance
written into the proposals file, the patched benchmark written, verified and audited again."""

from __future__ import annotations

import filecmp
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.model import FindingReview, Review
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.lineage import PatchRecord
from rubric_audit.review.labels import finding_key
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import SAMPLE
from tests.fakes.openai_server import FakeOpenAI, Reply, text

runner = CliRunner()
LABELS = {"nordlys_02": "defective_task", "nordlys_03": "defective_task",
          "nordlys_04": "defective_task", "meridian_02": "unearned", "meridian_03": "unearned",
          "meridian_05": "defective_task", "kestrel_02": "defective_task",
          "kestrel_03": "defective_task", "kestrel_04": "defective_task",
          "kestrel_05": "grader_error"}
"""The sample's planted defects as a reviewer labels them (DEFECTS.md); nordlys_05, which both
models pass, gets its finding confirmed instead."""
PATCHED = {"nordlys_02", "nordlys_03", "nordlys_04", "nordlys_05", "meridian_02", "kestrel_02",
           "kestrel_03", "kestrel_04"}
TWO_READINGS = "What was the Southern region's revenue growth in FY2025?"


def lint_model(body: dict[str, Any]) -> Reply:
    """A lint model that finds kestrel_04's prompt has two readings, and nothing else."""
    content = body["messages"][-1]["content"]
    applies = "two reasonable readings" in content and TWO_READINGS in content
    return text(json.dumps({"applies": applies, "criterion_ids": [], "source": "prompt",
                            "quote": TWO_READINGS,
                            "explanation": "growth in GBP or in percent; the rubric takes percent"}))


def review(out: Path) -> None:
    """Label the planted defects and confirm nordlys_05's recomputation, in the review log."""
    with AuditStore(out / "audit.db") as store, store.transaction():
        tasks = {t.name: t for t in store.tasks()}
        for name, label in LABELS.items():
            store.append_review(Review(reviewer="ana", created_at="2026-12-02T00:00:00Z",
                                       task_id=tasks[name].id, label=label))
        [recomputed] = [f for f in store.findings() if f.task_id == tasks["nordlys_05"].id
                        and f.check == "gold_recompute_mismatch"]
        store.append_finding_review(FindingReview(
            reviewer="ana", created_at="2026-12-02T00:00:00Z", finding_key=finding_key(recomputed),
            task_id=recomputed.task_id, check=recomputed.check, verdict="confirmed"))


def accept_all(path: Path) -> None:
    """The author's edit of the proposals file: every proposal accepted, by ana."""
    doc = tomlkit.parse(path.read_text())
    doc["author"] = "ana"
    for proposal in doc["proposal"]:
        proposal["decision"] = "accept"
    path.write_text(tomlkit.dumps(doc))


@pytest.fixture(scope="module")
def flow(tmp_path_factory) -> dict[str, Any]:
    """The sample audited (with a lint model), reviewed, proposed, accepted, patched, audited."""
    root = tmp_path_factory.mktemp("patch")
    out, new, again = root / "out", root / "sample-v2", root / "out-v2"
    with FakeOpenAI(lint_model) as server:
        audited = runner.invoke(app, ["audit", str(SAMPLE), "--out", str(out), "--lint-model",
                                      "openai/lint", "--api-base", server.url, "--cache",
                                      str(root / "cache.db")], env={"OPENAI_API_KEY": "sk-test"})
    assert audited.exit_code == 0, audited.output
    review(out)
    proposed = runner.invoke(app, ["patch", str(out), "--propose"])
    assert proposed.exit_code == 0, proposed.output
    first = (out / "proposals.toml").read_text()
    accept_all(out / "proposals.toml")
    patched = runner.invoke(app, ["patch", str(out), "--out", str(new)])
    assert patched.exit_code == 0, patched.output
    reaudited = runner.invoke(app, ["audit", str(new), "--runs", str(SAMPLE / "runs"), "--out",
                                    str(again)])
    assert reaudited.exit_code == 0, reaudited.output
    return {"root": root, "out": out, "new": new, "again": again, "proposed": proposed.stdout,
            "first": first, "patched": patched.stdout, "reaudited": reaudited.stdout}


def proposals_of(path: Path) -> list[dict[str, Any]]:
    import tomllib

    return tomllib.loads(path.read_text())["proposal"]


def test_a_proposal_of_a_known_kind_for_each_planted_defect(flow) -> None:
    import tomllib

    written = tomllib.loads(flow["first"])
    kinds = {(p["task_name"], p["kind"]) for p in written["proposal"]}
    assert {("nordlys_02", "regold"), ("nordlys_03", "regold"), ("nordlys_04", "regold"),
            ("nordlys_05", "regold"), ("meridian_02", "unasked"), ("kestrel_02", "unasked"),
            ("kestrel_03", "regold"), ("kestrel_04", "prompt")} <= kinds
    assert {p["decision"] for p in written["proposal"]} == {"pending"}, "nothing decided for you"
    assert {u["task_name"] for u in written["unpatched"]} == {"meridian_03", "meridian_05",
                                                              "kestrel_05"}
    for p in written["proposal"]:
        assert p["evidence"] and all(e["confirmed_by"] for e in p["evidence"]), p["id"]
    regold = next(p for p in written["proposal"] if p["task_name"] == "nordlys_02")
    lines = [line for e in regold["evidence"] for line in e["lines"]]
    assert "input: Assumptions!B9 = 0.09 (prompt: Assume a WACC of 9.0%)" in lines, \
        "a recomputation names the recipe's inputs and where each comes from"
    assert "regold nordlys_02" in flow["proposed"] and "kestrel_05" in flow["proposed"]


def test_each_kind_changes_what_it_names(flow) -> None:
    before, after = load_benchmark(SAMPLE), load_benchmark(flow["new"])
    old, new = before.task("nordlys_02"), after.task("nordlys_02")
    assert new.criteria[0].text == "States an implied equity value per share of NOK 44.21"
    assert "NOK 44.21 per share" in new.gold.text and "DCF!B21 = NOK 44.21" in \
        new.criteria[0].explanation
    assert after.task("nordlys_03").criteria[0].text.endswith("8.9x")
    assert after.task("nordlys_04").criteria[0].text == "States a success fee of NOK 29.5m"
    assert after.task("nordlys_05").gold.text.startswith("Base-case FY2027 EBITDA is NOK 268.0m")
    assert after.task("nordlys_05").criteria == before.task("nordlys_05").criteria
    assert [c.id for c in after.task("meridian_02").criteria] == \
        [c.id for c in before.task("meridian_02").criteria[1:]], "the restated premise removed"
    assert len(after.task("kestrel_02").criteria) == 2, "the carbon-offset criterion removed"
    assert after.task("kestrel_02").criteria[0].text.endswith(
        "(accept GBP 16.75m to GBP 16.85m)"), "a tolerance stated"
    assert after.task("kestrel_03").criteria[1].text.startswith(
        "States total FY2025 revenue of GBP 45.3m")
    assert after.task("kestrel_04").prompt == f"{TWO_READINGS} Give the figure as a percentage."
    assert old.prompt == new.prompt


def test_the_patched_benchmark_round_trips_through_the_loaders(flow) -> None:
    new = flow["new"]
    before, after = load_benchmark(SAMPLE), load_benchmark(new)
    assert after.worlds == before.worlds
    assert [t.id for t in after.tasks] == [t.id for t in before.tasks]
    untouched = [t for t in before.tasks if t.name not in PATCHED]
    assert all(after.task(t.id) == t for t in untouched)
    assert {t.name for t in after.tasks if t != before.task(t.id)} == PATCHED
    recipe = f"regold/{before.task('meridian_02').id}.toml"
    changed = {"tasks_and_rubrics.json", recipe}
    files = {p.relative_to(SAMPLE).as_posix() for p in SAMPLE.rglob("*") if p.is_file()
             and p.relative_to(SAMPLE).parts[0] != "runs"}
    written = {p.relative_to(new).as_posix() for p in new.rglob("*") if p.is_file()}
    assert written == files | {"patch.json", "CHANGELOG.md"}, "the runs stay with their version"
    assert all(filecmp.cmp(SAMPLE / f, new / f, shallow=False) for f in files - changed)
    assert "index = 1" in (new / recipe).read_text(), "the recipe follows the removed criterion"
    record = PatchRecord.model_validate_json((new / "patch.json").read_text())
    data = (new / "tasks_and_rubrics.json").read_bytes()
    assert record.version == hashlib.sha256(data).hexdigest() == after.version.sha256
    assert after.version.lineage == [before.version.sha256]
    assert set(after.version.changed_tasks) == {t.id for t in after.tasks if t.name in PATCHED
                                                 and t.name != "nordlys_05"}, "what graders read"
    assert {c.accepted_by for c in record.changes} == {"ana"}
    assert json.loads(data) and data.decode().startswith("[\n  {"), "the original's JSON style"


def test_the_new_version_audited_has_no_error_on_patched_tasks(flow) -> None:
    findings = [json.loads(line) for line in
                (flow["again"] / "findings.jsonl").read_text().splitlines()]
    patched = {t.id for t in load_benchmark(flow["new"]).tasks if t.name in PATCHED}
    assert not [f for f in findings if f["task_id"] in patched and f["severity"] == "error"]
    assert [f for f in findings if f["severity"] == "error"], "unpatched defects remain"
    summary = json.loads((flow["again"] / "audit.json").read_text())
    assert not set(summary["achievable"]["excluded"].get("broken_oracle", [])) & patched
    assert summary["benchmark_version"]["lineage"] == [load_benchmark(SAMPLE).version.sha256]
    assert "patched from" in (flow["again"] / "report.md").read_text()
    regraded = {t.id for t in load_benchmark(flow["new"]).tasks if t.name in PATCHED - {
        "nordlys_05"}}  # its gold alone changed, which no grader reads
    earlier = [f for f in findings if f["check"] == "input_graded_under_earlier_version"]
    assert {f["task_id"] for f in earlier} == regraded
    scores = {s["model"]: s for s in summary["scores"]}
    assert all(s["ungraded_attempts"] == 2 * len(regraded) for s in scores.values()), \
        "recorded grades of the tasks changed are of the earlier version: in no score"


def test_the_patch_shows_each_models_delta_and_the_attempts_that_changed(flow) -> None:
    record = PatchRecord.model_validate_json((flow["new"] / "patch.json").read_text())
    scores = record.verification["scores"]
    assert {s["model"] for s in scores} == {"fictional/atlas-1", "fictional/cirrus-2"}
    assert all(s["after"] > s["before"] for s in scores)
    changed = record.verification["changed"]
    assert any(c["attempt"] == "cirrus-2/nordlys_02/1" and (c["before"], c["after"]) == (
        "fail", "pass") for c in changed)
    assert "Scores before and after the patch" in flow["patched"]
    assert "fictional/atlas-1" in flow["patched"] and "points" in flow["patched"]
    controls = record.verification["controls"]
    assert controls and all(c["after"] is None for c in controls), "every control holds"
    log = (flow["new"] / "CHANGELOG.md").read_text()
    assert "## nordlys_02" in log and "accepted by ana" in log and "## Verification" in log


def test_a_patch_that_makes_a_gold_fail_is_refused_with_one_line(flow, tmp_path: Path) -> None:
    proposals = tmp_path / "proposals.toml"
    shutil.copy(flow["out"] / "proposals.toml", proposals)
    doc = tomlkit.parse(proposals.read_text())
    regold = next(p for p in doc["proposal"] if p["task_name"] == "nordlys_02")
    for change in regold["changes"]:
        if change["field"] == "gold":
            change["after"] = change["before"]
    regold["decision"] = "edit"
    proposals.write_text(tomlkit.dumps(doc))
    new = tmp_path / "refused"
    result = runner.invoke(app, ["patch", str(flow["out"]), "--out", str(new), "--proposals",
                                 str(proposals)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert "refused: the patch breaks a control of nordlys_02" in line and "gold" in line
    assert not new.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["proposals.toml"]


@pytest.mark.parametrize(("edit", "says"), [
    (lambda doc: doc.update(author=""), "accepted without a name"),
    (lambda doc: doc["proposal"][0]["changes"][0].update(after="my own text"),
     "set decision = \"edit\""),
    (lambda doc: doc["proposal"][0].update(decision="perhaps"), "decision"),
])
def test_a_proposals_file_that_cannot_apply_is_refused(flow, tmp_path: Path, edit,
                                                        says: str) -> None:
    proposals = tmp_path / "proposals.toml"
    shutil.copy(flow["out"] / "proposals.toml", proposals)
    doc = tomlkit.parse(proposals.read_text())
    edit(doc)
    proposals.write_text(tomlkit.dumps(doc))
    result = runner.invoke(app, ["patch", str(flow["out"]), "--out", str(tmp_path / "new"),
                                 "--proposals", str(proposals)])
    assert result.exit_code == 2 and says in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "new").exists()


def test_an_existing_folder_or_a_changed_benchmark_is_refused(flow, tmp_path: Path) -> None:
    result = runner.invoke(app, ["patch", str(flow["out"]), "--out", str(flow["new"])])
    assert result.exit_code == 2 and "exists" in result.stderr
    changed = tmp_path / "bench"
    shutil.copytree(SAMPLE, changed, ignore=shutil.ignore_patterns("runs"))
    tasks = json.loads((changed / "tasks_and_rubrics.json").read_text())
    tasks[0]["prompt"] += " Be brief."
    (changed / "tasks_and_rubrics.json").write_text(json.dumps(tasks))
    result = runner.invoke(app, ["patch", str(flow["out"]), "--out", str(tmp_path / "new"),
                                 "--bench", str(changed)])
    assert result.exit_code == 2 and "is not the version audited" in result.stderr


def test_one_audit_db_holds_one_version(flow) -> None:
    """Auditing the patched benchmark into the first audit's folder would mix two versions'
    scores: refused (its folder name differs too, so copy it under the sample's name)."""
    result = runner.invoke(app, ["audit", str(flow["new"]), "--out", str(flow["out"])])
    assert result.exit_code == 2 and "choose another output folder" in result.stderr
    renamed = flow["root"] / "renamed" / "sample"
    shutil.copytree(flow["new"], renamed)
    result = runner.invoke(app, ["audit", str(renamed), "--out", str(flow["out"])])
    assert result.exit_code == 2 and "scores of two versions are never mixed" in result.stderr


def test_proposing_again_keeps_the_authors_decisions(flow, tmp_path: Path) -> None:
    proposals = tmp_path / "proposals.toml"
    shutil.copy(flow["out"] / "proposals.toml", proposals)
    doc = tomlkit.parse(proposals.read_text())
    doc["proposal"][0]["decision"] = "reject"
    doc["proposal"][0]["note"] = "we keep this one"
    removed = doc["proposal"][1]["id"]
    del doc["proposal"][1]
    doc["proposal"][0].add(tomlkit.comment("my own comment"))
    proposals.write_text(tomlkit.dumps(doc))
    result = runner.invoke(app, ["patch", str(flow["out"]), "--propose", "--proposals",
                                 str(proposals)])
    assert result.exit_code == 0, result.output
    assert "1 new proposals" in result.stdout
    kept = proposals.read_text()
    assert "# my own comment" in kept and 'note = "we keep this one"' in kept
    again = proposals_of(proposals)
    assert again[0]["decision"] == "reject" and again[-1]["id"] == removed


def test_a_model_rewords_only_when_given_and_a_judge_grades_the_changed_criteria(
        flow, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RUBRIC_AUDIT_CACHE", str(tmp_path / "cache.db"))

    def model(body: dict[str, Any]) -> Reply:
        """A writer of rewordings, and a judge that passes every criterion."""
        content = body["messages"][-1]["content"]
        if not content.startswith("You help the author"):
            return text(json.dumps({"rationale": "states the value", "verdict": "pass"}))
        if "two reasonable readings" in content:
            return text(json.dumps({"text": "Give the growth as a percentage of FY2024 "
                                            "revenue.", "explanation": ""}))
        return text(json.dumps({"text": "States the Northern region's FY2025 revenue",
                                "explanation": "The prompt asks for revenue."}))

    proposals = tmp_path / "proposals.toml"
    with FakeOpenAI(model) as server:
        result = runner.invoke(app, ["patch", str(flow["out"]), "--propose", "--proposals",
                                     str(proposals), "--model", "openai/writer", "--api-base",
                                     server.url], env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
        written = {p["id"]: p for p in proposals_of(proposals)}
        prompt = next(p for p in written.values() if p["kind"] == "prompt")
        assert prompt["written_by"] == "model:openai/writer" and prompt["decision"] == "pending"
        assert prompt["changes"][0]["proposed"].endswith("percentage of FY2024 revenue.")
        unasked = next(p for p in written.values() if p["kind"] == "unasked")
        assert unasked["changes"][0]["proposed"] == "States the Northern region's FY2025 revenue"
        assert all(p["written_by"] == "rubric-audit" for p in written.values()
                   if p["kind"] not in ("prompt", "unasked"))
        doc = tomlkit.parse(proposals.read_text())
        next(p for p in doc["proposal"] if p["kind"] == "prompt").update(decision="accept",
                                                                          by="ana")
        proposals.write_text(tomlkit.dumps(doc))
        judged = runner.invoke(app, ["patch", str(flow["out"]), "--out", str(tmp_path / "new"),
                                     "--proposals", str(proposals), "--judge", "openai/judge",
                                     "--api-base", server.url], env={"OPENAI_API_KEY": "sk-test"})
    assert judged.exit_code == 0, judged.output
    record = PatchRecord.model_validate_json((tmp_path / "new" / "patch.json").read_text())
    assert [c.written_by for c in record.changes] == ["model:openai/writer"]
    graders = {s["grader"] for s in record.verification["scores"]}
    assert graders == {"recorded, changed criteria by the code checker",
                       "recorded, changed criteria by judge:openai/judge"}


def test_defect_packets_name_the_evidence_of_each_planted_defect(flow) -> None:
    from tests.test_defects import rows

    result = runner.invoke(app, ["defects", str(flow["out"])])
    assert result.exit_code == 0, result.output
    packets = {p.name: p.read_text() for p in (flow["out"] / "defects").iterdir()}
    assert all(name.endswith(".md") for name in packets)
    for _, name, kind, offline, _ in rows():  # the lint model found kestrel_04's two readings
        own = [text for file, text in packets.items() if f"-{name}-" in file]
        if kind == "sound":
            assert not own or name == "kestrel_05", name  # a grader error is a defect too
            continue
        assert own, name
        for check in offline + (["prompt_has_two_readings"] if name == "kestrel_04" else []):
            assert any(f"`{check}`" in text for text in own), (name, check)
    [nordlys_02] = [t for f, t in packets.items() if "-nordlys_02-" in f]
    assert "Assume a WACC of 9.0%, with every other base-case assumption" in nordlys_02, \
        "the prompt quoted as written: plain text, not escaped markup"
    assert "input: Assumptions!B9 = 0.09 (prompt: Assume a WACC of 9.0%)" in nordlys_02
    assert "| fictional/atlas-1 | atlas-1 | 40 | 57.5% | 62.5% | +5.0 points |" in nordlys_02
    assert "with the fix: pass" in nordlys_02 and "## Proposed fix" in nordlys_02
    assert not any(re.search(r"(?<!\\)<", text) or "\x1b" in text for text in packets.values()), \
        "no markup of a stranger's: a mail's <message id> is escaped"
    as_json = runner.invoke(app, ["defects", str(flow["out"]), "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert [p.name for p in (flow["out"] / "defects").iterdir()] == ["defects.json"]
    found = json.loads((flow["out"] / "defects" / "defects.json").read_text())
    assert len(found) == len(packets)
    assert {(p["task_name"], p["criterion"] is None) for p in found} >= {("meridian_03", True)}
    assert all(p["findings"] or "no finding says" in p["fix"] for p in found)
