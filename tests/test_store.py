"""audit.db: schema versioning, idempotent imports, append-only reviews."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from rubric_audit.audit.job import import_runs, run_audit
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import FindingReview, Review
from rubric_audit.store.audit_store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    AuditStore,
    _ungraded_apart,
)
from tests.conftest import SAMPLE, SHARED_RUNS, make_task, make_variant, write_json


def test_new_store_is_at_current_schema(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        assert store.schema_version == SCHEMA_VERSION


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "audit.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(InputError, match="newer than this rubric-audit"):
        AuditStore(tmp_path / "audit.db")


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    (tmp_path / "audit.db").write_text("hello, not a database " * 100)
    with pytest.raises(InputError, match=r"not a usable audit\.db"):
        AuditStore(tmp_path / "audit.db")


def test_the_benchmark_read_is_named_with_its_folder(tmp_path: Path) -> None:
    from rubric_audit.load.benchmark import load_benchmark
    from tests.conftest import SAMPLE

    with AuditStore(tmp_path / "audit.db") as store:
        assert store.benchmark_root() is None, "an audit of runs alone read no benchmark"
        bench = load_benchmark(SAMPLE)
        with store.transaction():
            store.save_benchmark(bench)
        assert (store.benchmark_name(), store.benchmark_root()) == (bench.name, bench.root)


def test_import_twice_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    first = import_runs([SHARED_RUNS], db, None)
    assert (first.added_graded, first.added_unavailable) == (24, 4)
    with AuditStore(db) as store:
        before = (store.attempts(), store.grades(), store.findings(), store.tasks())
    second = import_runs([SHARED_RUNS / "grok43high-baseline"], db, None)
    assert (second.added, second.unchanged) == (0, 14)
    with AuditStore(db) as store:
        assert (store.attempts(), store.grades(), store.findings(), store.tasks()) == before
        assert len(store.grades()) == 50 and len(store.tasks()) == 14


def test_new_runs_add_only_themselves(tmp_path: Path) -> None:
    task = make_task()
    ok = {"task_1_c1": "pass", "task_1_c2": "pass"}
    make_variant(tmp_path / "runs", "v1", "m/one", [(task, 1, ok)])
    db = tmp_path / "audit.db"
    assert import_runs([tmp_path / "runs"], db, None).added == 1
    make_variant(tmp_path / "more", "v1", "m/one", [(task, 2, ok)])
    summary = import_runs([tmp_path / "more"], db, None)
    assert (summary.added, summary.conflicts) == (1, 0)
    with AuditStore(db) as store:
        assert [a.index for a in store.attempts()] == [1, 2]


def test_conflicting_attempt_is_kept_not_overwritten(tmp_path: Path) -> None:
    task = make_task()
    make_variant(tmp_path / "a", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    make_variant(tmp_path / "b", "v1", "m/one", [(task, 1, {"task_1_c1": "fail"})])
    db = tmp_path / "audit.db"
    import_runs([tmp_path / "a"], db, None)
    assert import_runs([tmp_path / "b"], db, None).conflicts == 1
    with AuditStore(db) as store:
        assert [g.verdict for g in store.grades()] == ["pass"]
        assert [f.check for f in store.findings()] == ["input_attempt_conflict"]


def test_reviews_are_append_only(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        review = Review(reviewer="ana", created_at="2026-01-01T00:00:00Z", task_id="t",
                        label="model_error")
        first = store.append_review(review)
        store.append_review(review.model_copy(update={"label": None, "retracts": first}))
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("UPDATE reviews SET label = 'sound'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("DELETE FROM reviews")
        assert [r.retracts for _, r in store.reviews()] == [None, first]
        judged = FindingReview(reviewer="ana", created_at="t", finding_key="k", task_id="t",
                               check="c", verdict="false_alarm")
        store.append_finding_review(judged)
        for statement in ("UPDATE finding_reviews SET verdict = 'confirmed'",
                          "DELETE FROM finding_reviews"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                store.db.execute(statement)
        assert [r.verdict for _, r in store.finding_reviews()] == ["false_alarm"]


@pytest.mark.parametrize("statement", [
    "REPLACE INTO reviews (id, reviewer, created_at, task_id, label, note, evidence_hash)"
    " VALUES (1, 'eve', 't', 't', 'sound', '', '')",
    "INSERT OR REPLACE INTO reviews (id, reviewer, created_at, task_id, label, note,"
    " evidence_hash) VALUES (1, 'eve', 't', 't', 'sound', '', '')",
    "INSERT INTO reviews (id, reviewer, created_at, task_id, label, note, evidence_hash)"
    " VALUES (1, 'eve', 't', 't', 'sound', '', '') ON CONFLICT (id) DO UPDATE SET label = 'sound'",
])
def test_a_review_cannot_be_replaced(tmp_path: Path, statement: str) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        store.append_review(Review(reviewer="ana", created_at="2026-01-01T00:00:00Z",
                                   task_id="t", label="model_error"))
    db = sqlite3.connect(tmp_path / "audit.db")  # a separate connection, as any tool would open
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(statement)
    db.execute("INSERT INTO reviews (reviewer, created_at, task_id, label, note, evidence_hash)"
               " VALUES ('bo', 't', 't', 'sound', '', '')")
    db.commit()
    assert list(db.execute("SELECT id, reviewer, label FROM reviews ORDER BY id")) == [
        (1, "ana", "model_error"), (2, "bo", "sound")]
    db.close()


def test_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.db.execute("INSERT INTO worlds VALUES ('w', '{}')")
            raise RuntimeError("boom")
        assert store.worlds() == []


def _real_store(folder: Path) -> Path:
    """An audit.db with attempts, trajectories and the full schema."""
    import_runs([SHARED_RUNS / "grok43high-dc-rs"], folder / "audit.db", None)
    return folder / "audit.db"


@pytest.mark.parametrize("tamper", [
    "CREATE TABLE other_programs_data (x)",
    "CREATE TRIGGER relabel AFTER INSERT ON reviews BEGIN "
    "UPDATE meta SET value = value WHERE key = 'x'; END",
    "DROP TRIGGER reviews_no_update",
    "CREATE VIEW loop AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT n FROM r",
], ids=["foreign table", "added trigger", "dropped trigger", "recursive view"])
def test_a_store_with_a_schema_of_its_own_is_refused_untouched(tmp_path: Path,
                                                               tamper: str) -> None:
    """A store another hand added to, or took from, is refused before anything is written."""
    db_path = _real_store(tmp_path)
    db = sqlite3.connect(db_path)
    db.execute(tamper)
    db.commit()
    db.close()
    before = db_path.read_bytes()
    with pytest.raises(InputError, match=r"not an audit\.db made by rubric-audit"):
        AuditStore(db_path)
    assert db_path.read_bytes() == before


def test_a_view_named_reviews_is_refused(tmp_path: Path) -> None:
    """A view in the place of the review log (labels written to it would vanish) is refused."""
    db_path = _real_store(tmp_path)
    db = sqlite3.connect(db_path)
    db.executescript("""
        DROP TABLE reviews;
        CREATE VIEW reviews AS SELECT 1 AS id, '' AS reviewer, '' AS created_at, '' AS task_id,
            NULL AS label, '' AS note, '' AS evidence_hash, NULL AS retracts;
        CREATE TRIGGER swallow INSTEAD OF INSERT ON reviews BEGIN SELECT 1; END;""")
    db.close()
    with pytest.raises(InputError, match="reviews"):
        AuditStore(db_path)


def test_another_programs_sqlite_file_is_never_migrated(tmp_path: Path) -> None:
    db_path = tmp_path / "audit.db"
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE contacts (name TEXT)")
    db.execute("INSERT INTO contacts VALUES ('ana')")
    db.commit()
    db.close()
    before = db_path.read_bytes()
    with pytest.raises(InputError, match=r"not an audit\.db made by rubric-audit"):
        AuditStore(db_path)
    assert db_path.read_bytes() == before
    db = sqlite3.connect(tmp_path / "other.db")
    db.execute("PRAGMA application_id = 1234")
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(InputError, match="another program"):
        AuditStore(tmp_path / "other.db")


def test_a_linked_store_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = _real_store(tmp_path)
    before = target.read_bytes()
    link = tmp_path / "elsewhere" / "audit.db"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        AuditStore(link)
    assert target.read_bytes() == before


def test_a_trajectory_that_would_inflate_past_the_cap_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zlib bomb in a trajectory blob is refused with one line, never inflated whole."""
    import zlib

    import rubric_audit.store.audit_store as store_module

    db_path = _real_store(tmp_path)
    monkeypatch.setattr(store_module, "MAX_TRAJECTORY_JSON_BYTES", 1_000_000)
    db = sqlite3.connect(db_path)
    attempt_id = db.execute("SELECT attempt_id FROM trajectories LIMIT 1").fetchone()[0]
    db.execute("UPDATE trajectories SET data = ? WHERE attempt_id = ?",
               (zlib.compress(b" " * 20_000_000, 9), attempt_id))
    db.commit()
    db.close()
    with AuditStore(db_path) as store, pytest.raises(InputError, match="expands beyond"):
        store.trajectory(attempt_id)


def test_a_store_made_before_application_ids_opens_and_gets_one(tmp_path: Path) -> None:
    db_path = _real_store(tmp_path)
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA application_id = 0")
    db.close()
    with AuditStore(db_path) as store:
        assert len(store.attempts()) == 14
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == 0x52415544
    db.close()


UNDO = {"CREATE TABLE measurements": "DROP TABLE measurements; DROP TABLE source_metrics;",
        "CREATE TABLE unchecked": "DROP INDEX findings_by_attempt; ALTER TABLE findings DROP "
                                  "COLUMN attempt_id; DROP TABLE unchecked; DROP TABLE sources;"
                                  " DROP TABLE intervals;"}


def _as_before(db: Path, migration: str | Callable[[sqlite3.Connection], None]) -> None:
    """The store as it was before `migration` (a function, or the one whose SQL holds it), and
    the migrations after it."""
    before = (MIGRATIONS.index(migration) if callable(migration) else
              next(i for i, m in enumerate(MIGRATIONS) if isinstance(m, str) and migration in m))
    raw = sqlite3.connect(db)
    for m in reversed(MIGRATIONS[before:]):
        if isinstance(m, str):  # a function rewrote rows: nothing of the schema to undo
            raw.executescript(next(undo for made, undo in UNDO.items() if made in m))
    raw.execute(f"PRAGMA user_version = {before}")
    raw.commit()
    raw.close()


def test_an_older_store_gains_the_measurement_tables_and_keeps_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    import_runs([SHARED_RUNS], db, None)
    _as_before(db, "CREATE TABLE measurements")
    with AuditStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert (store.measurements(), store.source_metrics()) == ([], [])
        assert len(store.attempts()) == 28


def test_an_older_store_gains_the_tables_of_archive_audits_and_keeps_its_rows(
        tmp_path: Path) -> None:
    """A store made before checks ran per attempt opens, and its next audit checks every
    attempt (nothing recorded says which were checked)."""
    out = tmp_path / "out"
    run_audit(SAMPLE, None, out)
    findings = (out / "findings.jsonl").read_text()
    _as_before(out / "audit.db", "CREATE TABLE unchecked")
    with AuditStore(out / "audit.db") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.meta("stages") and store.db.execute(
            "SELECT count(*) FROM findings WHERE attempt_id IS NOT NULL").fetchone() == (0,)
        store.set_meta("stages", {})  # as such a store has none
        store.set_meta("inputs", None)  # and changed inputs: not reused whole
    (out / "findings.jsonl").unlink()
    assert not run_audit(SAMPLE, None, out).reused
    assert (out / "findings.jsonl").read_text() == findings
    with AuditStore(out / "audit.db") as store:
        assert store.db.execute("SELECT count(*) FROM findings WHERE attempt_id IS NOT NULL"
                                ).fetchone()[0] > 0


def test_measurements_and_source_metrics_are_stored_once(measured_logs,
                                                         tmp_path: Path) -> None:
    from rubric_audit.load.sources import load_sources

    db = tmp_path / "audit.db"
    first = import_runs(measured_logs, db, None)
    assert (first.added_graded, first.added_ungraded, first.added_unavailable) == (16, 4, 4)
    runs = load_sources(measured_logs)
    again = import_runs(measured_logs, db, None)
    assert (again.added, again.unchanged) == (0, len(runs.attempts))
    with AuditStore(db) as store:
        assert store.measurements() == sorted(
            runs.measurements, key=lambda m: (m.attempt_id, m.scorer, m.key))
        assert sorted(store.source_metrics(), key=repr) == sorted(runs.metrics, key=repr)


def _judge_graded(attempt_folder: Path, verdicts: dict[str, str]) -> None:
    """What `rubric-audit grade` writes beside the attempt: grades/<judge>.json."""
    write_json(attempt_folder / "grades" / "openai-judge-2.json", {
        "grading_run_id": "gr_j", "grading_run_status": "completed",
        "judge_model": "openai/judge-2",
        "verifier_results": [
            {"verifier_id": vid, "score": float(v == "pass"), "status": "ok",
             "verifier_result_values": {"judge_grade": v, "grade_rationale": "because"}}
            for vid, v in verdicts.items()]})


def test_an_ungraded_attempt_is_counted_and_moves_to_graded_once_a_judge_grades_it(
        tmp_path: Path) -> None:
    task = make_task()
    variant = make_variant(tmp_path / "runs", "v1", "m/one", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "pass"}), (task, 2, None)])
    db = tmp_path / "audit.db"
    first = import_runs([variant], db, None)
    assert (first.added_graded, first.added_ungraded, first.added_unavailable) == (1, 1, 0)
    assert first.added == 2 and first.sources[0].ungraded == 1
    with AuditStore(db) as store:
        assert [r[4] for r in store.attempt_rows()] == ["graded", "ungraded"]
    _judge_graded(variant / "task_1" / "attempt_2", {"task_1_c1": "pass", "task_1_c2": "fail"})
    again = import_runs([variant], db, None)
    assert (again.added, again.unchanged, again.now_graded) == (0, 2, 1)
    with AuditStore(db) as store:
        assert [r[4] for r in store.attempt_rows()] == ["graded", "graded"]
        [attempt] = [a for a in store.attempts() if a.index == 2]
        assert (attempt.state, attempt.unavailable_reason) == ("graded", None)
        assert {g.grader for g in store.grades_for_attempts([attempt.id])} == {
            "judge:openai/judge-2"}


def test_an_older_store_s_never_graded_attempts_become_ungraded(tmp_path: Path) -> None:
    """Earlier versions stored an attempt no grader had graded as unavailable, with a reason
    of their own; the migration makes it ungraded, and only it."""
    task = make_task()
    variant = make_variant(tmp_path / "runs", "v1", "m/one", [
        (task, 1, None), (task, 2, None), (task, 3, None)])
    db = tmp_path / "audit.db"
    import_runs([variant], db, None)
    old = {1: ("no grades.json: the attempt never reached grading", "completed"),
           2: ("no grades.json: the attempt never reached grading", "failed"),
           3: ("provider unavailable after 3 tries: 503", "completed")}
    with AuditStore(db) as store, store.transaction():
        for a in store.attempts():
            reason, status = old[a.index]
            row = a.model_copy(update={"state": "unavailable", "unavailable_reason": reason,
                                       "agent_status": status})
            store.db.execute("UPDATE attempts SET state = 'unavailable', json = ? WHERE "
                             "attempt_id = ?", (row.model_dump_json(), a.id))
    _as_before(db, _ungraded_apart)
    with AuditStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        states = {a.index: (a.state, a.unavailable_reason) for a in store.attempts()}
        assert [r[4] for r in store.attempt_rows()] == [states[k][0] for k in (1, 2, 3)]
    assert states == {1: ("ungraded", None), 2: ("unavailable", old[2][0]),
                      3: ("unavailable", old[3][0])}
