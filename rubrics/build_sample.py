"""Build rubrics/sample/ (the sample APEX benchmark and its illustrative runs) byte for byte.

    python rubrics/build_sample.py [--out DIR]

Everything is derived from sample_worlds.py, sample_tasks.py and sample_numbers.py. Output is
deterministic: zip entries and document properties carry fixed timestamps, JSON is written with
sorted keys where order carries no meaning. A test rebuilds the folder and compares it with the
committed one.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import shutil
import sys
import tempfile
import zipfile
from datetime import UTC, datetime
from email.utils import parseaddr, parsedate_to_datetime
from pathlib import Path

from sample_tasks import JUDGE, MODEL_CHECKS, MODELS, TASKS, Answer, TaskSpec
from sample_worlds import APPS, WORLDS, Mail, WorldSpec

HERE = Path(__file__).resolve().parent
FIXED_TIME = (2025, 1, 1, 0, 0, 0)
FIXED_DATETIME = datetime(2025, 1, 1, tzinfo=UTC)
SYSTEM_PROMPT = ("You are an AI assistant working inside a firm's workspace. Use the tools to read "
                 "files, mail, calendar and chat, then submit your answer with final_answer.")
TOOL_RESULT_LIMIT = 1500


def stable_id(prefix: str, key: str) -> str:
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def task_id(spec: TaskSpec) -> str:
    return stable_id("task", spec.key)


def verifier_id(spec: TaskSpec, index: int) -> str:
    return stable_id("ver", f"{spec.key}/{index}")


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, data: object) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def normalized_zip(data: bytes) -> bytes:
    """Rewrite an OOXML zip with fixed timestamps so the same content gives the same bytes."""
    out = io.BytesIO()
    stamp = FIXED_DATETIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            content = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)",
                                 rb"\g<1>" + stamp + rb"\g<2>", content)
            entry = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            dst.writestr(entry, content)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.properties.creator = "rubric-audit sample"
    book.properties.created = FIXED_DATETIME.replace(tzinfo=None)
    buffer = io.BytesIO()
    book.save(buffer)
    return normalized_zip(buffer.getvalue())


def docx_bytes(paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading(paragraphs[0], level=1)
    for text in paragraphs[1:]:
        document.add_paragraph(text)
    props = document.core_properties
    props.author = props.last_modified_by = "rubric-audit sample"
    props.created = props.modified = FIXED_DATETIME.replace(tzinfo=None)
    props.revision = 1
    buffer = io.BytesIO()
    document.save(buffer)
    return normalized_zip(buffer.getvalue())


def mbox_text(mails: list[Mail]) -> str:
    """Standard mbox: a `From ` separator line, headers, a blank line, the body."""
    chunks = []
    for m in mails:
        when = parsedate_to_datetime(m.date).astimezone(UTC)
        headers = [f"From {parseaddr(m.sender)[1]} {when.strftime('%a %b %d %H:%M:%S %Y')}",
                   f"Message-ID: {m.message_id}", f"Date: {m.date}", f"From: {m.sender}",
                   f"To: {m.to}"]
        headers += [f"Cc: {m.cc}"] if m.cc else []
        headers.append(f"Subject: {m.subject}")
        if m.in_reply_to:
            headers += [f"In-Reply-To: {m.in_reply_to}", f"References: {m.in_reply_to}"]
        headers += ["MIME-Version: 1.0", 'Content-Type: text/plain; charset="utf-8"',
                    "Content-Transfer-Encoding: 8bit"]
        chunks.append("\n".join(headers) + "\n\n" + m.body + "\n\n")
    return "".join(chunks)


def ics_bytes(world: WorldSpec) -> bytes:
    import icalendar

    cal = icalendar.Calendar()
    cal.add("prodid", f"-//{world.name}//rubric-audit sample//EN")
    cal.add("version", "2.0")
    for e in world.events:
        event = icalendar.Event()
        event.add("uid", e.uid)
        event.add("dtstamp", FIXED_DATETIME)
        event.add("dtstart", datetime.strptime(e.start, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC))
        event.add("dtend", datetime.strptime(e.end, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC))
        event.add("summary", e.summary)
        if e.description:
            event.add("description", e.description)
        if e.location:
            event.add("location", e.location)
        for attendee in e.attendees:
            event.add("attendee", f"mailto:{attendee}")
        cal.add_component(event)
    return cal.to_ical()


def write_world(world: WorldSpec, folder: Path) -> None:
    files = folder / "filesystem"
    for rel, text in world.text_files.items():
        write_text(files / rel, text)
    for rel, paragraphs in world.docx_files.items():
        write_bytes(files / rel, docx_bytes(paragraphs))
    for rel, sheets in world.workbooks.items():
        write_bytes(files / rel, xlsx_bytes(sheets))
    apps = folder / ".apps_data"
    write_text(apps / "mail" / "inbox.mbox", mbox_text(world.mail))
    write_bytes(apps / "calendar" / "calendar.ics", ics_bytes(world))
    for space in world.spaces:
        group = apps / "chat" / "Groups" / space.folder
        write_json(group / "group_info.json", {"name": space.name, "members": [
            {"name": name, "email": email, "user_type": "Human"} for name, email in space.members]})
        write_json(group / "messages.json", {"messages": [
            {"creator": {"name": p.author, "email": p.email, "user_type": "Human"},
             "created_date": p.created, "text": p.text, "topic_id": p.topic_id,
             "message_id": f"{space.folder}/{i}", "reactions": [], "annotations": [],
             "message_state": "ACTIVE"} for i, p in enumerate(space.posts)]})


def apex_task(spec: TaskSpec) -> dict:
    return {
        "task_id": task_id(spec), "task_name": spec.key, "domain": spec.domain,
        "world_id": spec.world_id, "prompt": spec.prompt,
        "rubric": [{"verifier_id": verifier_id(spec, i), "criteria": text,
                    "criteria_explanation": why, "is_primary_objective": i == 0}
                   for i, (text, why) in enumerate(spec.criteria)],
        "gold_response": spec.gold, "gold_response_type": "text",
        "expected_output": spec.expected_output, "task_input_files": bool(spec.overlay_files),
    }


def toml_value(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def recipe_toml(spec: TaskSpec) -> str:
    """The task's gold-recomputation recipe (see rubric_audit/checks/regold.py)."""
    recipe = spec.recipe or {}
    lines = [f"# Gold recomputation for {spec.key}.", f"workbook = {toml_value(recipe['workbook'])}"]
    for cell, value, source in recipe.get("override", []):
        lines += ["", "[[override]]", f"cell = {toml_value(cell)}", f"value = {toml_value(value)}",
                  f"source = {toml_value(source)}"]
    for index, expr in recipe["criterion"]:
        lines += ["", "[[criterion]]", f"index = {index}", f"expr = {toml_value(expr)}"]
    return "\n".join(lines) + "\n"


def write_benchmark(out: Path) -> None:
    for world in WORLDS:
        write_world(world, out / "worlds" / world.world_id)
    write_json(out / "world_descriptions.json", [
        {"world_id": w.world_id, "world_name": w.name, "world_description": w.description,
         "domain": w.domain, "apps": APPS} for w in WORLDS])
    write_json(out / "tasks_and_rubrics.json", [apex_task(t) for t in TASKS])
    for spec in TASKS:
        for rel, text in spec.overlay_files.items():
            write_text(out / "task_files" / task_id(spec) / "filesystem" / rel, text)
        if spec.recipe:
            write_text(out / "regold" / f"{task_id(spec)}.toml", recipe_toml(spec))


def defects_md() -> str:
    """DEFECTS.md: for every task, what is planted and which check should catch it."""
    lines = [
        "# What is planted in the sample benchmark", "",
        "Generated by `rubrics/build_sample.py` from `rubrics/sample_tasks.py`. One row per task. "
        "*Expected checks* names the checks that should catch the planted defect; a check marked "
        "(model) needs a model (`--lint-model`), so offline audits are not expected to catch "
        "that task (none expected offline). Sound tasks have nothing planted and should get no "
        "finding above info.", "",
        "| task_id | name | kind | what is planted | expected checks | what the runs show |",
        "|---|---|---|---|---|---|",
    ]
    for spec in TASKS:
        if spec.checks:
            checks = ", ".join(f"`{c}`" + (" (model)" if c in MODEL_CHECKS else "")
                               for c in spec.checks)
            if all(c in MODEL_CHECKS for c in spec.checks):
                checks += "; none expected offline"
        else:
            checks = "none expected"
        lines.append(f"| {task_id(spec)} | {spec.key} | {spec.kind} | {spec.planted} | "
                     f"{checks} | {spec.runs_show} |")
    sound = sum(t.kind == "sound" for t in TASKS)
    lines += ["", f"{len(TASKS)} tasks: {sound} sound, {len(TASKS) - sound} defective."]
    return "\n".join(lines) + "\n"


RUNS_README = """# Illustrative recorded runs

**These runs are hand-written illustrations, not real model output.** The two models,
`fictional/atlas-1` and `fictional/cirrus-2`, do not exist, and neither does the judge
`fictional/judge-1`. Every answer, tool call and verdict here was scripted in
`rubrics/sample_tasks.py` to show, in the Archipelago run layout, the situations an audit must
tell apart:

- tasks both models fail on every attempt because the task is defective;
- a task both models fail on every attempt because of a genuine model error (`meridian_04`);
- passes, including one where the judge credited a hedged answer (`nordlys_07`, cirrus-2
  attempt 1);
- a criterion where the judge failed an answer inside the stated tolerance (`kestrel_05`,
  atlas-1 attempt 1);
- an attempt that never reached grading (`meridian_06`, cirrus-2 attempt 2): unavailable, not a
  fail.

Layout: `<variant>/<task_id>/attempt_<k>/` holds one attempt; each variant folder has
`results.csv` (graded attempts) and `results.failures.jsonl` (attempts that never produced a
grade). `../DEFECTS.md` says, task by task, what each run illustrates.
"""


def tool_call(source: str, world: WorldSpec, texts: dict[str, str]) -> tuple[str, dict, str]:
    """The tool an agent would call to read a source, and what the workspace returns."""
    kind, _, ref = source.partition(":")
    if kind == "file":
        return "files_read", {"path": ref}, texts[ref][:TOOL_RESULT_LIMIT]
    if kind == "mail":
        mail = next(m for m in world.mail if m.message_id == ref)
        return "mail_read", {"message_id": ref}, (
            f"From: {mail.sender}\nDate: {mail.date}\nSubject: {mail.subject}\n\n{mail.body}")
    return "calendar_list", {}, "\n".join(
        f"{e.start} {e.summary} @ {e.location} ({', '.join(e.attendees)})" for e in world.events)


def trajectory(spec: TaskSpec, answer: Answer | None, world: WorldSpec,
               texts: dict[str, str]) -> dict:
    messages: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT},
                            {"role": "user", "content": spec.prompt}]
    sources = (answer.sources if answer and answer.sources is not None else spec.sources)
    for j, source in enumerate(sources if answer else sources[:1]):
        name, args, result = tool_call(source, world, texts)
        call = f"call_{j + 1}"
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": call, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": call, "name": name, "content": result}]
    if answer is not None:
        call = f"call_{len(sources) + 1}"
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": call, "type": "function", "function": {
                    "name": "final_answer",
                    "arguments": json.dumps({"answer": answer.text, "status": "completed"})}}]},
            {"role": "tool", "tool_call_id": call, "name": "final_answer", "content": answer.text}]
    prompt_tokens = sum(len(m["content"]) for m in messages) // 4 * max(1, len(messages) // 2)
    completion = (len(answer.text) // 4 if answer else 0) + 40 * (len(messages) // 2)
    return {"messages": messages, "output": None,
            "status": "completed" if answer else "failed",
            "time_elapsed": round(9.5 + 6.25 * len(messages) + len(spec.prompt) / 40, 2),
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                      "total_tokens": prompt_tokens + completion}}


def judge_rationale(criterion: str, answer: Answer, index: int) -> str:
    if index in answer.rationales:
        return answer.rationales[index]
    met = answer.verdicts[index] == "pass"
    return (f"## Evidence\nThe final answer says: \"{answer.text}\"\n\n## Assessment\n"
            f"- Criterion requirement: \"{criterion}\"\n- Conclusion: the criterion is "
            f"{'met' if met else 'not met'}.")


def grades(spec: TaskSpec, answer: Answer) -> dict:
    results = [{
        "verifier_id": verifier_id(spec, i), "verifier_version": 1,
        "score": 1.0 if verdict == "pass" else 0.0, "status": "ok", "message": "",
        "verifier_result_values": {"judge_grade": verdict,
                                   "grade_rationale": judge_rationale(spec.criteria[i][0],
                                                                      answer, i),
                                   "evaluated_artifacts": ""},
    } for i, verdict in enumerate(answer.verdicts)]
    passed = sum(v == "pass" for v in answer.verdicts)
    return {"grading_run_id": stable_id("gr", f"{spec.key}/{answer.text}")[:11],
            "grading_run_status": "completed", "verifier_results": results,
            "scoring_results": {"final_score": float(passed == len(answer.verdicts)),
                                "scoring_method_result_values": {}}}


def attempt_files(spec: TaskSpec, answer: Answer | None, folder: Path, world: WorldSpec,
                  texts: dict[str, str]) -> dict:
    """Write one attempt folder; returns its results.csv row (or its failure record)."""
    tid = task_id(spec)
    write_json(folder / "initial_messages.json", [{"role": "system", "content": SYSTEM_PROMPT},
                                                  {"role": "user", "content": spec.prompt}])
    write_json(folder / "verifiers.json", [
        {"verifier_id": verifier_id(spec, i), "verifier_version": 1, "world_id": spec.world_id,
         "task_id": tid, "eval_config_id": "ec_output_llm",
         "verifier_values": {"criteria": text, "is_primary_objective": i == 0},
         "verifier_index": i, "verifier_dependencies": None}
        for i, (text, _) in enumerate(spec.criteria)])
    write_json(folder / "agent_config.json", {
        "agent_config_id": "react_toolbelt_agent", "agent_name": "React Toolbelt Agent",
        "agent_config_values": {"timeout": 3600, "max_steps": 50}})
    write_json(folder / "eval_configs.json", [{
        "eval_config_id": "ec_output_llm", "eval_config_name": "Output LLM Verifier",
        "eval_defn_id": "output_llm", "eval_config_values": {}}])
    write_json(folder / "scoring_config.json", {
        "scoring_config_id": "sc_default", "scoring_config_name": "Default Scoring",
        "scoring_defn_id": "template", "scoring_config_values": {}})
    write_json(folder / "orchestrator_extra_args.json", {"temperature": 0.7, "timeout": 1800})
    write_json(folder / "grading_settings.json", {"llm_judge_model": JUDGE,
                                                  "llm_judge_extra_args": None})
    traj = trajectory(spec, answer, world, texts)
    write_json(folder / "trajectory.json", traj)
    if answer is None:
        return {}
    graded = grades(spec, answer)
    write_json(folder / "grades.json", graded)
    passed = sum(v == "pass" for v in answer.verdicts)
    return {"criteria_passed": passed, "criteria_total": len(answer.verdicts),
            "final_score": graded["scoring_results"]["final_score"],
            "steps_used": sum(m["role"] == "assistant" for m in traj["messages"]),
            "wall_time_seconds": traj["time_elapsed"], **{
                f"agent_{k}": v for k, v in traj["usage"].items()}}


RESULT_COLUMNS = ["task_id", "domain", "world_id", "status", "agent_status", "final_score",
                  "criteria_passed", "criteria_total", "steps_used", "wall_time_seconds",
                  "agent_prompt_tokens", "agent_completion_tokens", "agent_total_tokens",
                  "agent_model", "judge_model", "trajectory_path", "grades_path"]


def world_texts(out: Path) -> dict[str, dict[str, str]]:
    """Text of every world file, as the workspace would return it, by world and path."""
    from rubric_audit.load.world import file_text

    texts: dict[str, dict[str, str]] = {}
    for world in WORLDS:
        root = out / "worlds" / world.world_id / "filesystem"
        texts[world.world_id] = {p.relative_to(root).as_posix(): file_text(p.name, p.read_bytes())
                                 or "" for p in sorted(root.rglob("*")) if p.is_file()}
    return texts


def write_runs(out: Path) -> None:
    runs = out / "runs"
    write_text(runs / "README.md", RUNS_README)
    worlds = {w.world_id: w for w in WORLDS}
    texts = world_texts(out)
    for variant, model in MODELS.items():
        rows, failures = [], []
        for spec in TASKS:
            tid = task_id(spec)
            for k, key in enumerate(spec.plan[variant], start=1):
                folder = runs / variant / tid / f"attempt_{k}"
                answer = spec.answers[key] if key else None
                row = attempt_files(spec, answer, folder, worlds[spec.world_id],
                                    texts[spec.world_id])
                machine = f"/srv/archipelago/runs/{variant}/{tid}/attempt_{k}"
                if answer is None:
                    failures.append({"agent_model": model, "domain": spec.domain,
                                     "error": "agent_status='failed'", "judge_model": JUDGE,
                                     "scope": "task", "status": "skipped", "task_id": tid,
                                     "world_id": spec.world_id})
                    continue
                rows.append({"task_id": tid, "domain": spec.domain, "world_id": spec.world_id,
                             "status": "completed", "agent_status": "completed", **row,
                             "agent_model": model, "judge_model": JUDGE,
                             "trajectory_path": f"{machine}/trajectory.json",
                             "grades_path": f"{machine}/grades.json"})
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_text(runs / variant / "results.csv", buffer.getvalue())
        write_text(runs / variant / "results.failures.jsonl",
                   "".join(json.dumps(f, sort_keys=True) + "\n" for f in failures))


def build(out: Path) -> None:
    """Write the whole sample into `out`, replacing what was there."""
    out = out.resolve()
    staging = Path(tempfile.mkdtemp(prefix=".sample-build-", dir=out.parent))
    try:
        write_benchmark(staging)
        write_text(staging / "DEFECTS.md", defects_md())
        write_runs(staging)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "sample")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    build(args.out)
    print(f"wrote {args.out} ({len(TASKS)} tasks, {len(WORLDS)} worlds, "
          f"{len(MODELS)} models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
