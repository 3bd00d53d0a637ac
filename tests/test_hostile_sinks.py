"""Every hostile payload (tests/hostile.py) through every sink, by the paths a user takes.

One benchmark and its runs carry each payload as a task's name, domain, prompt, criterion,
explanation, gold and expected output, as a world file's name and text, as a variant folder, a
model, a judge, an answer and a rationale (task t<i> holds payload i; task `tall` holds them all at
once). The audit of it is then read back through the CLI (terminal), the review app (Textual,
driven by Pilot), report.md (CommonMark), report.html and the site's task pages (Chromium), the
CSV exports, the plots and the store: stranger text must be shown as written, with what would
act made visible, and never act (no escape reaches a terminal, no markup or action runs, no
element or link is made, no formula starts, no mathtext is parsed) and never be altered where it
is kept.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.text import visible
from rubric_audit.report.html import SCRIPT
from tests.conftest import make_attempt, make_benchmark, make_task, write_json
from tests.hostile import (
    BY_NAME,
    FORMULA_PREFIXES,
    PAYLOADS,
    STORABLE,
    Payload,
    acting,
    file_name,
)
from tests.test_report import CHROMIUM, chromium

runner = CliRunner()
ALL = "\n".join(p.text for p in STORABLE)  # every payload at once, one a line


def squash(text: str) -> str:
    """`text` without whitespace: where a sink wraps, folds or expands tabs, the characters shown
    are still all there and in order."""
    return re.sub(r"\s+", "", text)


def task_id(i: int) -> str:
    return f"t{i:02d}"


def _task(tid: str, text: str, name: str) -> dict:
    return make_task(tid, task_name=name, domain=text, prompt=f"Prompt {tid}: {text}",
                     gold_response=text, expected_output=text, rubric=[
                         {"verifier_id": f"{tid}_c1", "criteria": text,
                          "criteria_explanation": text, "is_primary_objective": True},
                         {"verifier_id": f"{tid}_c2",
                          "criteria": "Mentions the budget review meeting"}])


def _variant(runs: Path, folder: str, task: dict, model: str, text: str, passes: bool) -> None:
    """A variant folder of one attempt on `task` by `model`, answering and rationalised `text`
    (recorded judge `model` too); it passes both criteria or fails the second."""
    tid = task["task_id"]
    attempt = make_attempt(runs / folder / tid, task, {
        f"{tid}_c1": "pass", f"{tid}_c2": "pass" if passes else "fail"}, answer=text)
    write_json(attempt / "orchestrator_config.json", {"model": model})
    grades = json.loads((attempt / "grades.json").read_text())
    for result in grades["verifier_results"]:
        result["verifier_result_values"]["grade_rationale"] = text
    write_json(attempt / "grades.json", grades)
    with (runs / folder / "results.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["task_id", "domain", "world_id", "status", "agent_status",
                         "agent_model", "judge_model"])
        writer.writerow([tid, task["domain"], "world_a", "completed", "completed", model, model])


def hostile_benchmark(root: Path) -> Path:
    """The benchmark and its runs (in BENCH/runs) carrying every storable payload: odd tasks
    pass, even ones fail their second criterion."""
    tasks = [_task(task_id(i), p.text, p.text) for i, p in enumerate(STORABLE)]
    tasks.append(_task("tall", ALL, "all payloads"))
    bench = make_benchmark(root, tasks)
    files = bench / "worlds" / "world_a" / "filesystem"
    (files / "all payloads.md").write_text(ALL)
    for i, (p, task) in enumerate(zip(STORABLE, tasks[:-1], strict=True)):
        name = file_name(p)
        if name is not None:
            (files / f"{i:02d} {name}.md").write_text(p.text)
        _variant(bench / "runs", f"v{i:02d} {name}" if name else f"v{i:02d}", task, p.text, p.text,
                 passes=i % 2 == 1)
    _variant(bench / "runs", "v-all", tasks[-1], "all-model", ALL, passes=False)
    return bench


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(benchmark, audit folder, what `audit` printed) for the hostile benchmark."""
    root = tmp_path_factory.mktemp("hostile")
    bench = hostile_benchmark(root / "bench")
    result = runner.invoke(app, ["audit", str(bench), "--out", str(root / "out")])
    assert result.exit_code == 0, (result.output, result.exception)
    return bench, root / "out", result.output


@pytest.fixture
def out(audited: tuple[Path, Path, str], tmp_path: Path) -> Path:
    """A copy of the hostile audit for a test that records reviews in it."""
    copy = tmp_path / "out"
    shutil.copytree(audited[1], copy)
    return copy


def as_one_line(text: str) -> str:
    """How a line that must stay one (an error, a source's summary) shows `text`: controls and
    line breaks visible."""
    return visible(text).replace("\n", "\\n")


def column(output: str, index: int) -> str:
    """The text of one column of the Rich tables in `output`, row after row (a cell folded over
    several lines is whole again once squashed)."""
    return "".join(line.split("│")[index + 1] for line in output.splitlines()
                   if line.startswith("│") and line.count("│") > index + 1)


def assert_terminal_safe(output: str, where: str) -> None:
    assert not acting(output), (where, acting(output)[:10])


def test_payload_names_are_unique_and_each_is_seen_in_its_text() -> None:
    assert len({p.name for p in PAYLOADS}) == len(PAYLOADS)
    assert all(p.seen in p.text for p in PAYLOADS)
    assert {p.name for p in PAYLOADS} - {p.name for p in STORABLE} == {"lone_surrogates"}


def test_the_terminal_shows_every_payload_as_text(audited: tuple[Path, Path, str],
                                                  tmp_path: Path) -> None:
    """`audit` (its import summaries and tables), `import`, `tasks`, `show`, `search` and error
    lines print every payload with controls visible and markup as written: no escape, C1, bidi
    or NUL character reaches the terminal, and the payload's text is there."""
    bench, out_dir, printed = audited
    assert_terminal_safe(printed, "audit")
    assert [p.name for p in STORABLE if p.seen not in printed] == []
    imported = runner.invoke(app, ["import", str(bench / "runs"), "--db", str(tmp_path / "a.db"),
                                   "--bench", str(bench)])
    assert imported.exit_code == 0, (imported.output, imported.exception)
    assert_terminal_safe(imported.output, "import")
    summaries = [line for line in imported.output.splitlines() if line.startswith("Read ")]
    for p in STORABLE:
        if (name := file_name(p)) is not None:  # the variant folder's name, in its summary
            assert any(squash(as_one_line(name)) in squash(line) for line in summaries), p.name

    listed = runner.invoke(app, ["tasks", str(bench)])
    assert listed.exit_code == 0, listed.output
    assert_terminal_safe(listed.output, "tasks")
    names, domains = squash(column(listed.output, 0)), squash(column(listed.output, 2))
    for p in STORABLE:
        assert squash(visible(p.text)) in names and squash(visible(p.text)) in domains, p.name

    for i, p in enumerate(STORABLE):
        shown = runner.invoke(app, ["show", str(bench), task_id(i)])
        assert shown.exit_code == 0, (p.name, shown.output, shown.exception)
        assert_terminal_safe(shown.output, f"show {p.name}")
        # domain, expected output, prompt, criterion, explanation and gold as written, and the
        # name heading the task (cut to the width where it is longer)
        assert squash(shown.output).count(squash(visible(p.text))) >= 6, (p.name, shown.output)
        assert p.seen in shown.output.splitlines()[0], p.name
        if (name := file_name(p)) is not None:
            assert squash(visible(name)) in squash(shown.output), p.name

    found = runner.invoke(app, ["search", str(out_dir), "Prompt", "--limit", "1000"])
    assert found.exit_code == 0, found.output
    assert_terminal_safe(found.output, "search")
    assert [p.name for p in STORABLE if p.seen not in found.output] == []

    for p in STORABLE:
        missing = tmp_path / "missing" / (file_name(p) or p.name)
        failed = runner.invoke(app, ["tasks", str(missing)])
        assert failed.exit_code == 2, (p.name, failed.output)
        [line] = failed.stderr.strip().splitlines()
        assert_terminal_safe(line, f"error line {p.name}")
        assert squash(as_one_line(str(missing))) in squash(line), (p.name, line)
        unknown = runner.invoke(app, ["show", str(bench), f"no such task {p.text}"])
        assert unknown.exit_code == 2, (p.name, unknown.output)
        assert_terminal_safe(unknown.stderr, f"show error {p.name}")
        assert p.seen in unknown.stderr, (p.name, unknown.stderr)


def test_json_output_keeps_every_payload_exact_and_the_terminal_safe(
        audited: tuple[Path, Path, str]) -> None:
    """`--json` of tasks, show and search: nothing acts on a terminal, and each payload parses
    back exactly as written (controls and bidi characters as JSON escapes)."""
    bench, out_dir, _ = audited
    listed = runner.invoke(app, ["tasks", str(bench), "--json"])
    assert listed.exit_code == 0, listed.output
    assert_terminal_safe(listed.stdout, "tasks --json")
    names = {t["name"] for t in json.loads(listed.stdout)["tasks"]}
    assert [p.name for p in STORABLE if p.text not in names] == []
    for i, p in enumerate(STORABLE):
        shown = runner.invoke(app, ["show", str(bench), task_id(i), "--json"])
        assert shown.exit_code == 0, (p.name, shown.output)
        assert_terminal_safe(shown.stdout, f"show --json {p.name}")
        task = json.loads(shown.stdout)["task"]
        assert (task["name"], task["domain"], task["criteria"][0]["text"]) == (p.text,) * 3
    found = runner.invoke(app, ["search", str(out_dir), "Prompt", "--limit", "1000", "--json"])
    assert found.exit_code == 0, found.output
    assert_terminal_safe(found.stdout, "search --json")
    tasks = {h["task"] for h in json.loads(found.stdout)["hits"]}
    assert [p.name for p in STORABLE if p.text not in tasks] == []


def test_a_lone_surrogate_is_refused_at_the_door_in_one_line(tmp_path: Path) -> None:
    """No file can hold a lone surrogate as UTF-8: a benchmark whose JSON escapes one in a task
    name is unusable input, one line that shows it escaped, and nothing is written."""
    for p in PAYLOADS:
        if p in STORABLE:
            continue
        bench = make_benchmark(tmp_path / p.name, [_task("t00", "text", p.text)])
        result = runner.invoke(app, ["audit", str(bench), "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, (result.output, result.exception)
        [line] = result.stderr.strip().splitlines()
        assert "[0].task_name" in line and not acting(line), line
        assert not (tmp_path / "out").exists()


def _record_reviews(out_dir: Path) -> None:
    """Every payload as a reviewer who labels the first two failures (the label alternating, so
    reviewers disagree) and notes the payload on the first."""
    from rubric_audit.review.session import ReviewData

    for i, p in enumerate(STORABLE):
        data = ReviewData(out_dir, p.text)
        first, second = data.queues["failures"][:2]
        data.record(first, data.labels_for(first)[i % 2])
        data.record(first, None, p.text)
        data.record(second, data.labels_for(second)[0])
        data.close()


def _strings(value: object) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _csv_cells(paths: list[Path]) -> list[str]:
    cells = []
    for path in paths:
        with path.open(newline="") as f:
            cells += [cell for row in csv.reader(f) for cell in row]
    return cells


def test_exports_and_reviews_keep_payloads_as_text(out: Path) -> None:
    """`export --format csv` and `reviews --format csv`: no cell starts a formula or holds a
    control, and every payload (as a name, answer, rationale, reviewer or note) is there, its
    controls visible; `reviews` prints reviewer names and notes as text; the JSON exports hold
    every payload exactly."""
    _record_reviews(out)
    for args in (["export", str(out), "--format", "csv"], ["export", str(out), "--format", "json"],
                 ["reviews", str(out), "--format", "csv"], ["reviews", str(out), "--format",
                                                             "json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        assert_terminal_safe(result.output, " ".join(args[2:]))
    started = time.perf_counter()
    printed = runner.invoke(app, ["reviews", str(out)]).output
    # Rich's highlighter, run over printed names, took minutes on the 5,000-digit one
    assert time.perf_counter() - started < 30, "printing reviewers' names is linear"
    assert [p.name for p in STORABLE if squash(visible(p.text)) not in squash(printed)] == []

    cells = _csv_cells([*(out / "export").glob("*.csv")])
    assert [c[:40] for c in cells if c.startswith(FORMULA_PREFIXES)] == []
    assert [c[:40] for c in cells if acting(c)] == []
    reviewed = _csv_cells([out / "export" / "labels.csv"])
    for p in STORABLE:
        shown = visible(p.text)
        wanted = "'" + shown if shown.startswith(FORMULA_PREFIXES) else shown
        assert wanted in cells, p.name
        assert reviewed.count(wanted) >= 2, f"{p.name}: as a reviewer and as a note"

    exported = json.loads((out / "export" / "labels.json").read_text())
    assert {r["reviewer"] for r in exported["labels"]} == {p.text for p in STORABLE}
    assert {n for r in exported["labels"] for n in r["notes"]} == {p.text for p in STORABLE}
    texts = {t for path in (out / "export").glob("*.json") for t in _strings(json.loads(
        path.read_text()))}
    assert [p.name for p in STORABLE if p.text not in texts] == []


def test_the_store_keeps_every_payload_byte_for_byte(out: Path) -> None:
    """What a stranger wrote and what a reviewer recorded reads back from audit.db exactly."""
    from rubric_audit.store.audit_store import open_audit

    _record_reviews(out)
    store = open_audit(out / "audit.db")
    try:
        tasks = {t.id: t for t in store.tasks()}
        attempts = {a.task_id: a for a in store.attempts()}
        rationales = {g.attempt_id: g.rationale for g in store.grades()
                      if g.criterion_id.endswith("_c1")}
        reviews = [r for _, r in store.reviews()]
    finally:
        store.close()
    for i, p in enumerate(STORABLE):
        task, attempt = tasks[task_id(i)], attempts[task_id(i)]
        assert (task.name, task.domain, task.prompt, task.criteria[0].text,
                task.criteria[0].explanation, task.gold.text if task.gold else None) == (
            p.text, p.text, f"Prompt {task_id(i)}: {p.text}", p.text, p.text, p.text), p.name
        assert (attempt.model, attempt.answer, rationales[attempt.id]) == (
            p.text, p.text, p.text), p.name
        assert attempt.variant == (f"v{i:02d} {file_name(p)}" if file_name(p) else f"v{i:02d}")
    assert {r.reviewer for r in reviews} == {p.text for p in STORABLE}
    assert {r.note for r in reviews if r.note} == {p.text for p in STORABLE}
    assert tasks["tall"].prompt == "Prompt tall: " + ALL


ALLOWED_TAGS = {"h1", "h2", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code",
                "strong", "em"}
SVG_TAGS = {"svg", "g", "path", "defs", "use", "text", "clippath", "rect", "style", "metadata",
            "rdf:rdf", "cc:work", "dc:type", "dc:date", "dc:format", "dc:creator", "cc:agent",
            "dc:title", "polyline", "line", "circle", "tspan"}
# report.html's and the site's own elements: the page, figures, links, the filter box, folds
PAGE_TAGS = ALLOWED_TAGS | SVG_TAGS | {
    "html", "head", "meta", "title", "style", "body", "figure", "figcaption", "div", "a", "nav",
    "script", "p", "label", "input", "output", "pre", "details", "summary"}
# Our own links: a task's page (from the report or from a page beside it), the report, one of
# its sections; and a plot's references to its own parts (matplotlib's SVG)
OWN_LINK = re.compile(r"(?:(?:\.\./\.\./)?(?:site/tasks/[\w-]+-[0-9a-f]{12}\.html|report\.html))?"
                      r"(?:#[\w-]+)?", re.ASCII)


class _Page(HTMLParser):
    """Tags, attributes and text of an HTML page (its <style>, <title> and SVG kept apart)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.svg_text: list[str] = []
        self.scripts: list[str] = []
        self.title = ""
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if "title" in self._open:
            self.title += data
        elif "script" in self._open:
            self.scripts.append(data)
        elif "svg" in self._open:
            if "text" in self._open:
                self.svg_text.append(data)
        elif "style" not in self._open:
            self.text.append(data)


def _parsed(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _shown_in_tables(p: Payload) -> str:
    """A payload as a report's table cell shows it: controls visible, whitespace squashed."""
    return squash(visible(p.text))


def _task_column(page: str) -> list[str]:
    """The first cell of each row of a rendered report's Tasks table, squashed."""
    table = re.split(r"<h2[^>]*>Tasks</h2>", page, maxsplit=1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>\s*<td>(.*?)</td>", table, re.S)
    return sorted(squash(html.unescape(re.sub(r"<[^>]*>", "", cell))) for cell in rows)


def _task_names() -> list[str]:
    return sorted([*(_shown_in_tables(p) for p in STORABLE), "allpayloads"])


def _lax_markdown():
    """markdown-it as CommonMark with GitHub's tables, following every link (as a lax viewer
    would)."""
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark").enable("table")
    renderer.validateLink = lambda url: True
    return renderer


def test_report_md_renders_stranger_text_as_text(audited: tuple[Path, Path, str]) -> None:
    """report.md through markdown-it (CommonMark, every link allowed, as a lax viewer would):
    stranger text makes no element (no tag, image, link, heading, list, quote, code or
    emphasis of its own) and every payload's text is shown, as written."""
    report = (audited[1] / "report.md").read_text()
    assert not acting(report), acting(report)[:10]
    rendered = _lax_markdown().render(report)
    page = _parsed(rendered)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS, {tag for tag, _ in page.tags}
    assert [attrs for _, attrs in page.tags if attrs] == []
    text = squash("".join(page.text))
    assert [p.name for p in STORABLE if _shown_in_tables(p) not in text] == []
    assert _task_column(rendered) == _task_names(), "each name in its own cell"


def test_report_html_shows_stranger_text_and_plain_plot_labels(
        audited: tuple[Path, Path, str]) -> None:
    """report.html: stranger text makes no element or attribute, every payload is shown as
    written; plots are drawn (mathtext in a variant's name is plain text in its label)."""
    page_text = (audited[1] / "report.html").read_text()
    assert "could not be drawn" not in page_text and page_text.count("<svg") >= 3
    page = _our_page(page_text)
    text = squash("".join(page.text))
    assert [p.name for p in STORABLE if _shown_in_tables(p) not in text] == []
    assert _task_column(page_text) == _task_names()
    mathtext = BY_NAME["mathtext"]
    labels = "".join(page.svg_text)
    assert f"v{STORABLE.index(mathtext):02d} {mathtext.text}" in labels, "drawn as written"


def _our_page(page_text: str) -> _Page:
    """A page of ours (report.html or a task's page), parsed: nothing in it acts on a terminal,
    every element is one we write, no attribute runs script or loads anything, every link is
    our own and the one script is ours."""
    assert not acting(page_text), acting(page_text)[:10]
    page = _parsed(page_text)
    assert {tag for tag, _ in page.tags} <= PAGE_TAGS, {tag for tag, _ in page.tags} - PAGE_TAGS
    assert not any(k.startswith("on") or k == "src" for _, a in page.tags for k in a)
    hrefs = [a.get("href") or "" for _, a in page.tags if "href" in a]
    assert [h for h in hrefs if not OWN_LINK.fullmatch(h)] == []
    assert page.scripts == [SCRIPT]
    return page


def test_site_pages_show_stranger_text_and_make_no_element(
        audited: tuple[Path, Path, str]) -> None:
    """Each task's page: its name (every payload is one) shown as written in its heading, in a
    file name made of plain characters; the page of the task holding every payload shows each
    in its prompt, rubric, gold, answer and rationale; no stranger text makes an element, an
    attribute or a link on any page."""
    pages = sorted((audited[1] / "site" / "tasks").iterdir())
    assert len(pages) == len(STORABLE) + 1
    assert all(re.fullmatch(r"[\w-]+-[0-9a-f]{12}\.html", p.name, re.ASCII) for p in pages)
    headings = []
    for path in pages:
        page_text = path.read_text()
        _our_page(page_text)
        headings.append(squash(html.unescape(re.sub(
            r"<[^>]*>", "", page_text.split("<h1>", 1)[1].split("</h1>", 1)[0]))))
    assert sorted(headings) == _task_names()
    [tall] = [p for p in pages if p.name.startswith("all-payloads-")]
    text = squash("".join(_parsed(tall.read_text()).text))
    shown = squash(visible(ALL))
    assert text.count(shown) >= 4, "prompt, gold, answer, rationale"


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
                    reason="chromium is not on PATH, so report.html was not opened in a browser: "
                           "install Debian's chromium (apt-get install chromium; .ci/run does)")
def test_report_html_in_chromium_runs_no_stranger_script(audited: tuple[Path, Path, str]) -> None:
    """report.html opened in headless Chromium: no payload's script ran (its onerror would set
    the title, its <script> would add an element) and the page shows every payload."""
    assert CHROMIUM, "REQUIRE_CHROMIUM is set but chromium is not installed"
    report = audited[1] / "report.html"
    planted = report.with_name("planted.html")
    planted.write_text("<title>planted</title>" + BY_NAME["html_img_onerror"].text
                       + BY_NAME["html_script"].text)
    rendered = report.with_name("report.md.html")
    rendered.write_text("<!DOCTYPE html><html><head><title>report.md</title></head><body>"
                        + _lax_markdown().render((audited[1] / "report.md").read_text())
                        + "</body></html>")
    [tall] = (audited[1] / "site" / "tasks").glob("all-payloads-*.html")
    for page, ran in ((planted, True), (report, False), (rendered, False), (tall, False)):
        done = chromium(page, "--dump-dom", "--virtual-time-budget=2000")
        assert "</html>" in done.stdout, done.stderr[-2000:]
        dom = _parsed(done.stdout)
        scripted = dom.title == "PWNED" or any(a.get("id") == "pwned" for _, a in dom.tags)
        assert scripted == ran, (page.name, dom.title)
        if page != planted:
            assert dom.title in ("rubric-audit: bench", "report.md",
                                 "all payloads: rubric-audit"), dom.title
            text = squash("".join(dom.text))
            assert [p.name for p in STORABLE if _shown_in_tables(p) not in text] == [], page


def _segments(widget):
    return [segment for y in range(widget.size.height) for segment in widget.render_line(y)]


def _drawn(widget) -> str:
    return "".join(segment.text for segment in _segments(widget))


def _linked(widgets) -> list[str]:
    """The text of every segment these widgets draw that carries a link or a click action."""
    return [segment.text for widget in widgets for segment in _segments(widget)
            if segment.style and (segment.style.link or "@click" in segment.style.meta)]


# What the note box keeps of a paste is its first line (Textual's Input): every payload, its line
# breaks (as str.splitlines has them) made spaces, pasted at once.
PASTED_NOTE = " ".join(re.sub("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", " ", p.text)
                       for p in STORABLE)


@pytest.mark.anyio
async def test_the_review_app_shows_every_payload_and_runs_none(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One session over every task, by a reviewer named with every payload.
    Each task's queue row is one line, the screen holds nothing that acts, its overview shows its
    payload as written (prompt, criterion, gold); the label pressed is the one recorded, its
    toast fits the screen and shows the name literally with no link or action (clicking it runs
    nothing: no screenshot written, the app still running). A note pasted with every payload is
    saved as the note box holds it and shown as written; the tabs of the task holding every
    payload, and every world file, show each."""
    from textual import events
    from textual.widgets import Input, OptionList

    from rubric_audit.review.session import ReviewData
    from tests.test_tui_trajectory import screen_text
    from tui.app import ReviewApp
    from tui.widgets.document import DocumentView

    monkeypatch.chdir(out)
    reviewer = " ".join(p.text for p in STORABLE)
    data = ReviewData(out, reviewer)
    app = ReviewApp(data)
    pressed: dict[str, str] = {}
    problems: list[str] = []
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await pilot.press("a")
        noted_on = task_id(STORABLE.index(BY_NAME["long_name"]))
        app.position = app.task_ids.index(noted_on)
        await app.show_task()
        await pilot.press("m")
        await pilot.pause()
        box = app.screen.query_one(Input)
        assert app.screen.region.contains_region(box.region), "the note box is on the screen"
        box.post_message(events.Paste(PASTED_NOTE))
        await pilot.pause()
        noted = box.value.strip()
        await pilot.press("enter")
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert f"reviewer {visible(reviewer)[:30]}" in header and not acting(header), header
        overview = squash(app.query_one("#overview", DocumentView).plain())
        assert squash(visible(f"{reviewer}: {noted}")) in overview, "the note as written"
        queue = app.query_one("#tasks", OptionList)
        assert queue.virtual_size.height == queue.option_count, "one line per task"
        for _ in app.task_ids:
            tid, name = app.current_task, data.tasks[app.current_task].name
            if acting(screen := screen_text(app)):
                problems.append(f"{tid} screen: {acting(screen)[:4]}")
            overview = squash(app.query_one("#overview", DocumentView).plain())
            if tid != "tall" and overview.count(squash(visible(name))) < 3:
                problems.append(f"{tid}: the overview lacks the name in prompt, criterion, gold")
            await pilot.press("1")
            await pilot.pause()
            pressed[tid] = data.labels_for(tid)[0]
            problems += [f"{tid}: queue link {text!r}" for text in _linked([queue])]
            toast = list(app.screen.query("Toast"))[-1]
            if not app.screen.region.contains_region(toast.region):
                problems.append(f"{tid}: the toast leaves the screen ({toast.region})")
                continue
            if squash(visible(name))[:40] not in squash(_drawn(toast)):
                problems.append(f"{tid}: the toast shows {_drawn(toast)[:60]!r}")
            problems += [f"{tid}: toast link {text!r}" for text in _linked([toast])]
            await pilot.click(offset=(toast.region.x + 2, toast.region.y + 1))  # its first words
            assert app.is_running, f"the app closed on {tid}"
        app.position = app.task_ids.index("tall")
        await app.show_task()
        shown: dict[str, list[str]] = {}
        for key, views in (("f1", "#overview"), ("f2", ".answer"), ("f4", "#gold"), ("f6", "")):
            await pilot.press(key)
            await pilot.pause()
            await app.workers.wait_for_complete()
            if acting(screen := screen_text(app)):
                problems.append(f"tab {key}: {acting(screen)[:4]}")
            shown[key] = [squash(v.plain()) for v in app.query(views)] if views else []
        await pilot.press("f5")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        items = app.query_one("#world-items", OptionList)
        assert items.virtual_size.height == items.option_count, "one line per world item"
        shown["world"] = []
        for index in range(items.option_count):
            items.highlighted = index
            await pilot.pause()
            if acting(screen := screen_text(app)):
                problems.append(f"world item {index}: {acting(screen)[:4]}")
            shown["world"].append(squash(app.query_one("#world", DocumentView).plain()))
        assert app.is_running
    problems += [f"{tab} lacks {p.name}" for tab, views in shown.items() if views
                 for p in STORABLE if not any(squash(visible(p.text)) in v for v in views)]
    assert problems == []
    assert {t: r.label for t, r in data.mine().items()} == pressed, "only the labels pressed"
    notes = [(r.task_id, r.note) for _, r in data.store.reviews() if r.note]
    data.close()
    assert notes == [(noted_on, noted)] and len(noted) > 15_000, "the note as its box held it"
    assert list(out.rglob("hostile-shot*")) == []
