"""The patched benchmark as a folder of the same format: every file copied byte for byte, but
tasks_and_rubrics.json (its untouched tasks as they were, in the file's own JSON style) and the
recipes (`regold/`) of tasks that lost a criterion, renumbered; plus patch.json and CHANGELOG.md.
The audited version's recorded runs (`runs/`) are left out: they graded the tasks before.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import tomlkit

from rubric_audit import __version__
from rubric_audit.checks.regold import RECIPES
from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.errors import InputError, read_bytes, read_text
from rubric_audit.core.model import Benchmark, Task
from rubric_audit.core.text import stranger
from rubric_audit.core.words import pct
from rubric_audit.load.apex import TASKS_FILE
from rubric_audit.load.lineage import PATCH_FILE, PATCH_FORMAT, PatchChange, PatchParent, PatchRecord
from rubric_audit.patch.verify import Verification
from rubric_audit.report.describe import criterion_numbers
from rubric_audit.report.document import Block, Bullets, Section, Table, Text
from rubric_audit.report.markdown import render_sections

LEFT_OUT = ("runs",)
CHANGELOG = "CHANGELOG.md"
JSON_STYLES: list[dict[str, Any]] = [{"indent": indent, "ensure_ascii": ascii_}
                                     for indent in (2, 4, 1, "\t", None) for ascii_ in (False, True)]


def copy_benchmark(root: Path, into: Path) -> None:
    """Every regular file under `root` but the recorded runs, copied byte for byte into the
    empty folder `into`; a symbolic link or special file is refused (copied, it would lead out
    of the new folder, or read what is not the benchmark's)."""
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        relative = here.relative_to(root)
        if relative == Path("."):
            folders[:] = [f for f in folders if f not in LEFT_OUT]
        for name in folders + files:
            path = here / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                raise InputError(path, None, "a symbolic link or special file: patch copies "
                                             "regular files and folders only")
        for name in folders:
            (into / relative / name).mkdir()
        for name in files:
            shutil.copyfile(here / name, into / relative / name)


def _json_style(text: str, data: Any) -> tuple[dict[str, Any], str]:
    """The json.dumps arguments (and the text after the JSON) that wrote `text`, if any did;
    else two-space indents and a final line break."""
    for style in JSON_STYLES:
        dumped = json.dumps(data, **style)
        if text.startswith(dumped) and text[len(dumped):] in ("", "\n", "\r\n"):
            return style, text[len(dumped):]
    return {"indent": 2, "ensure_ascii": False}, "\n"


def _raw_task(raw: dict[str, Any], task: Task) -> dict[str, Any]:
    """The task's JSON entry with its prompt, gold and rubric as `task` has them; every other
    key, and every value that did not change, as it was."""
    entry = dict(raw)
    entry["prompt"] = task.prompt
    gold = task.gold.text if task.gold else ""
    if gold != (raw.get("gold_response") or ""):
        entry["gold_response"] = gold
    kept = {c.id: c for c in task.criteria}
    rubric = []
    for item in raw.get("rubric", []):
        criterion = kept.get(item.get("verifier_id"))
        if criterion is None:
            continue
        item = dict(item, criteria=criterion.text)
        if criterion.explanation != (item.get("criteria_explanation") or ""):
            item["criteria_explanation"] = criterion.explanation
        rubric.append(item)
    entry["rubric"] = rubric
    return entry


def write_tasks(root: Path, into: Path, patched: dict[str, Task]) -> bytes:
    """tasks_and_rubrics.json with the patched tasks, in the original's JSON style; its bytes."""
    source = root / TASKS_FILE
    text = read_text(source)
    data = json.loads(text)
    style, tail = _json_style(text, data)
    out = [_raw_task(raw, patched[raw["task_id"]]) if raw.get("task_id") in patched else raw
           for raw in data]
    written = json.dumps(out, **style) + tail
    write_atomic(into / TASKS_FILE, written)
    return written.encode()


def renumber_recipes(root: Path, into: Path, before: dict[str, Task], patched: dict[str, Task],
                     records: list[PatchChange]) -> list[PatchChange]:
    """Each recipe of a task that lost criteria, its `criterion` entries renumbered to the
    rubric as patched (the removed ones' dropped); one record per recipe changed."""
    out = []
    for task_id, task in sorted(patched.items()):
        recipe = root / RECIPES / f"{task_id}.toml"
        old = [c.id for c in before[task_id].criteria]
        new = [c.id for c in task.criteria]
        if not recipe.is_file() or old == new:
            continue
        text = read_text(recipe)
        doc = tomlkit.parse(text)
        entries = doc.get("criterion", [])
        for i in reversed(range(len(entries))):
            index = int(entries[i]["index"])
            criterion = old[index - 1] if 1 <= index <= len(old) else None
            if criterion in new:
                entries[i]["index"] = new.index(criterion) + 1
            elif criterion is not None:
                del entries[i]
        after = tomlkit.dumps(doc)
        if after == text:
            continue
        write_atomic(into / RECIPES / recipe.name, after)
        removal = next(r for r in records if r.task == task_id and r.field == "criterion"
                       and r.after == "")
        out.append(PatchChange(proposal=removal.proposal, kind=removal.kind, task=task_id,
                               task_name=task.name, field="recipe", before=text, after=after,
                               decision="derived", accepted_by=removal.accepted_by,
                               written_by="rubric-audit",
                               evidence=[{"message": f"{RECIPES}/{recipe.name} renumbered to "
                                                     f"the rubric as patched"}]))
    return out


def patch_record(bench: Benchmark, version: str, records: list[PatchChange],
                 verification: Verification) -> PatchRecord:
    assert bench.version is not None
    return PatchRecord(format=PATCH_FORMAT, tool_version=__version__,
                       parent=PatchParent(name=bench.name, version=bench.version.sha256,
                                          lineage=bench.version.lineage,
                                          changed_tasks=bench.version.changed_tasks),
                       version=version, changes=records,
                       verification=verification.model_dump())


def _quoted(text: str) -> str:
    return f"“{stranger(text)}”" if text else "(nothing: removed)"


def verification_section(verification: Verification) -> Section:
    """What verification found: the controls, each model's score before and after, the
    attempts whose verdict changed."""
    broken = [c for c in verification.controls if c.after is not None]
    blocks: list[Block] = [Text(
        f"{len(verification.controls)} controls of the patched tasks graded in code: "
        f"{len(verification.controls) - len(broken)} hold"
        + (f"; {len(broken)} broken before the patch as after it: "
           + "; ".join(f"{stranger(c.task_name)} {c.control}" for c in broken) if broken else "")
        + ".")]
    if verification.scores:
        blocks.append(Table(["model", "variant", "graded by", "graded", "pass@1 before",
                             "pass@1 after", "change", "unscored after"],
                            [[stranger(s.model), stranger(s.variant), stranger(s.grader),
                              str(s.graded), pct(s.before), pct(s.after), s.change(),
                              str(s.unscored_after)] for s in verification.scores]))
    if verification.changed:
        blocks += [Text("Attempts whose verdict changed:"), Bullets([
            f"{stranger(c.attempt)} ({stranger(c.grader)}): {c.before} → {c.after}; "
            + "; ".join(stranger(why) for why in c.criteria) for c in verification.changed])]
    return Section("Verification", blocks)


def _change_line(r: PatchChange, tasks: dict[str, Task]) -> str:
    """One change for a reader: what, of which criterion (as C1, C2 ... of the rubric before),
    who accepted and wrote it, and the text before and after."""
    task = tasks.get(r.task)
    number = criterion_numbers(task).get(r.criterion or "", r.criterion) if task else r.criterion
    where = f"{r.field} of {stranger(number or '')}" if r.criterion else r.field
    who = f"accepted by {stranger(r.accepted_by)}" + (
        "" if r.written_by == "rubric-audit" else f", written by {stranger(r.written_by)}")
    if r.field == "recipe":
        return f"{r.kind}, {where} ({who}): {stranger(r.evidence[0]['message'])}"
    return f"{r.kind}, {where} ({who}): {_quoted(r.before)} → {_quoted(r.after)}"


def changelog(name: str, record: PatchRecord, verification: Verification,
              tasks: dict[str, Task]) -> str:
    """CHANGELOG.md: each change by task (`tasks`: as they were), then what verification
    found."""
    sections = [Section(f"{stranger(name)}: version {record.version[:12]}", [Text(
        f"Patched from {stranger(record.parent.name)} version {record.parent.version[:12]} by "
        f"rubric-audit {__version__}: {len({r.proposal for r in record.changes})} proposals "
        f"accepted, {len(record.changes)} changes to {len({r.task for r in record.changes})} "
        f"tasks. patch.json holds each change with its evidence and what verification found.")])]
    for task in dict.fromkeys(r.task for r in record.changes):
        own = [r for r in record.changes if r.task == task]
        items = [_change_line(r, tasks) for r in own]
        evidence = list(dict.fromkeys(stranger(e["message"]) for r in own if r.field != "recipe"
                                      for e in r.evidence if e.get("message")))
        sections.append(Section(stranger(own[0].task_name), [
            Bullets(items), Text("Evidence:"), Bullets(evidence)]))
    return render_sections([*sections, verification_section(verification)])


def write_record(into: Path, record: PatchRecord, log: str) -> None:
    write_atomic(into / PATCH_FILE, record.model_dump_json(indent=2) + "\n")
    write_atomic(into / CHANGELOG, log)


def tasks_bytes(root: Path) -> bytes:
    return read_bytes(root / TASKS_FILE)
