"""mock_workspace through the real mcp Client: in memory, over a stdio subprocess and over HTTP."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_MODERN_VERSION

from mock_workspace.attempts import KeyedSessions
from mock_workspace.files import MAX_WRITE_BYTES
from mock_workspace.server import ON_A_WORKER_THREAD, _compiled_tools, build_server
from mock_workspace.session import MAX_MESSAGE_BYTES, MAX_SESSION_WRITE_BYTES, Session
from mock_workspace.sessions import MAX_SESSIONS
from mock_workspace.telemetry import MAX_ARGUMENT_CHARS, Telemetry
from rubric_audit.core.errors import InputError
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.world import WorldReader, read_mbox
from tests.conftest import SAMPLE, make_benchmark

pytestmark = pytest.mark.anyio
MODEL_XLSX = "Project_Nordlys/Nordlys_Model.xlsx"


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(SAMPLE)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            digest.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return digest.hexdigest()


async def call(client: Client, tool: str, **args):
    """A tool's result: (is_error, parsed JSON or the error text)."""
    result = await client.call_tool(tool, args)
    text = result.content[0].text
    return result.is_error, (text if result.is_error else json.loads(text))


async def ok(client: Client, tool: str, **args):
    is_error, value = await call(client, tool, **args)
    assert not is_error, value
    return value


async def test_every_tool_works_on_the_sample_worlds(sample, tmp_path: Path) -> None:
    before = tree_digest(SAMPLE)
    telemetry = tmp_path / "telemetry.jsonl"
    with Session(sample, sample.task("nordlys_06")) as session:
        async with Client(build_server(session, Telemetry(telemetry))) as c:
            tools = (await c.list_tools()).tools
            names = {t.name for t in tools}
            assert len(names) == 21 and all(t.description for t in tools)
            listed = await ok(c, "files_list")
            assert {e["path"] for e in listed["items"]} >= {MODEL_XLSX,
                                                             "Project_Nordlys/Deal_Memo.md"}
            memo = await ok(c, "files_read", path="Project_Nordlys/Deal_Memo.md")
            assert memo["text"].startswith("# Project Nordlys")
            letter = await ok(c, "files_read", path="Project_Nordlys/Engagement_Letter.docx")
            assert "1.25%" in letter["text"]
            cells = await ok(c, "files_read_sheet", path=MODEL_XLSX, sheet="DCF",
                             cell_range="B18:B21")
            values = {r["cell"]: r for r in cells["items"]}
            assert values["B18"]["value"] == pytest.approx(2360.0309, abs=1e-3)
            assert values["B21"]["formula"] == "=B20/Assumptions!B12"
            assert cells["sheets"] == ["Assumptions", "DCF", "Comps"]

            inbox = await ok(c, "mail_list", limit=2)
            assert inbox["total"] == 5 and inbox["next_offset"] == 2
            found = await ok(c, "mail_search", sender="solheim", text="revolving")
            [hit] = found["items"]
            message = await ok(c, "mail_read", message_id=hit["message_id"])
            assert "455.0m" in message["body"]
            assert (await ok(c, "mail_search", date_from="2025-03-07",
                             date_to="2025-03-07T23:59:59+01:00"))["total"] == 2
            await ok(c, "mail_reply", message_id=hit["message_id"], body="Thanks, updated.")
            await ok(c, "mail_reply_all", message_id="<nordlys-ic-1@halvorsenlund.no>",
                     body="Draft attached.")
            await ok(c, "mail_forward", message_id=hit["message_id"],
                     to=["ingrid.halvorsen@halvorsenlund.no"], body="FYI")
            await ok(c, "mail_send", to=["kari.solheim@nordlysfoods.no"], subject="Bridge",
                     body="Equity value per share is NOK 47.63.")
            assert (await ok(c, "mail_list", folder="sent"))["total"] == 4

            events = await ok(c, "calendar_list", start="2025-03-12T00:00:00+00:00")
            assert [e["summary"] for e in events["items"]] == [
                "Investment Committee: Project Nordlys", "Arctic Table board call"]
            ic = await ok(c, "calendar_read", uid="nordlys-ic@halvorsenlund.no")
            assert "mari.dahl@halvorsenlund.no" in ic["attendees"]
            made = await ok(c, "calendar_create", summary="Prep", start="2025-03-12T09:00:00Z",
                            end="2025-03-12T10:00:00Z")
            await ok(c, "calendar_update", uid=made["uid"], location="Room 2")
            await ok(c, "calendar_update", uid="nordlys-board@halvorsenlund.no",
                     summary="Board call (moved)")
            await ok(c, "calendar_delete", uid="nordlys-mp@halvorsenlund.no")

            spaces = await ok(c, "chat_list_spaces")
            space = spaces["items"][0]["space"]
            history = await ok(c, "chat_get_history", space=space, limit=2)
            assert history["total"] == 3 and history["items"][0]["author"] == "Mari Dahl"
            members = await ok(c, "chat_list_members", space=space)
            assert len(members["items"]) == 3
            await ok(c, "chat_post", space=space, text="Bridge updated.")
            await ok(c, "chat_reply", space=space, message_id=history["items"][0]["message_id"],
                     text="Yes, end-of-year.")
            await ok(c, "files_write", path="Out/answer.md", content="NOK 47.63 per share\n")
            await ok(c, "files_write", path="Project_Nordlys/Deal_Memo.md", content="edited",
                     overwrite=True)

        copy = session.files.root
        assert (copy / "Out/answer.md").read_text() == "NOK 47.63 per share\n"
        written = session.export(tmp_path / "artifacts")
    assert sorted(written) == ["calendar/changes.json", "chat/posts.json",
                               "files/Out/answer.md", "files/Project_Nordlys/Deal_Memo.md",
                               "mail/sent.mbox"]
    changes = json.loads((tmp_path / "artifacts/calendar/changes.json").read_text())
    assert (len(changes["created"]), len(changes["updated"]), changes["deleted"]) == (
        1, 1, ["nordlys-mp@halvorsenlund.no"])
    sent = read_mbox("sent.mbox", (tmp_path / "artifacts/mail/sent.mbox").read_bytes())
    assert [m.subject for m in sent] == [
        "Re: Updated net debt at 28 February", "Re: IC materials",
        "Fwd: Updated net debt at 28 February", "Bridge"]
    assert sent[0].in_reply_to == "<nordlys-netdebt@nordlysfoods.no>"
    assert sent[1].cc == ["mari.dahl@halvorsenlund.no"], "reply-all keeps the other recipients"
    posts = json.loads((tmp_path / "artifacts/chat/posts.json").read_text())
    assert [p["text"] for p in posts] == ["Bridge updated.", "Yes, end-of-year."]
    assert posts[1]["topic_id"] == "t1"
    assert tree_digest(SAMPLE) == before, "the benchmark folder is never modified"
    assert not copy.exists(), "the session copy is removed at the end"
    lines = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert {line["tool"] for line in lines} == names, "every tool was called and recorded"
    assert all(line["error"] is None and line["result_chars"] > 0 for line in lines)


async def test_refusals_are_tool_errors_and_the_session_goes_on(sample, tmp_path: Path) -> None:
    telemetry = tmp_path / "t.jsonl"
    with Session(sample, sample.task("meridian_01")) as session:
        outside = tmp_path / "secret.txt"
        outside.write_text("secret")
        async with Client(build_server(session, Telemetry(telemetry))) as c:
            # what the agent wrote, swapped for a link out of the session's folder
            await ok(c, "files_write", path="link.txt", content="mine")
            (session.files.root / "link.txt").unlink()
            (session.files.root / "link.txt").symlink_to(outside)
            refused = [
                ("files_read", {"path": "../../tasks_and_rubrics.json"}),
                ("files_read", {"path": "/etc/passwd"}),
                ("files_read", {"path": "Meridian/../../world_descriptions.json"}),
                ("files_read", {"path": "link.txt"}),
                ("files_list", {"path": ".."}),
                ("files_write", {"path": "../escape.md", "content": "x"}),
                ("files_write", {"path": "big.txt", "content": "x" * 1_000_001}),
                ("files_read", {"path": "Meridian/Fee_Schedule.xlsx"}),
                ("files_read_sheet", {"path": "Meridian/Fee_Schedule.xlsx", "sheet": "Nope"}),
                ("files_read_sheet", {"path": "Meridian/Fee_Schedule.xlsx",
                                      "cell_range": "not a range"}),
                ("files_read", {"path": "Meridian/Fee_Schedule.xlsx", "limit": 10**9}),
                ("mail_read", {"message_id": "<nope@x>"}),
                ("mail_list", {"folder": "spam"}),
                ("mail_search", {"date_from": "yesterday"}),
                ("calendar_read", {"uid": "nope"}),
                ("calendar_create", {"summary": "x", "start": "2025-03-02T10:00:00Z",
                                     "end": "2025-03-01T10:00:00Z"}),
                ("chat_get_history", {"space": "Nowhere"}),
                ("files_read", {"path": 5}),
                ("mail_send", {"to": "not-a-list", "subject": 1}),
                ("no_such_tool", {}),
            ]
            for tool, args in refused:
                is_error, _ = await call(c, tool, **args)
                assert is_error, (tool, args)
            still = await ok(c, "files_read", path="Meridian/Master_Services_Agreement.md")
            assert "Limitation of liability" in still["text"]
            task_files = await ok(c, "files_list")
            paths = {e["path"] for e in task_files["items"]}
            assert "Meridian/Claim_Notice_2025-03-03.md" in paths, "the task overlay is there"
        lines = telemetry.read_text().splitlines()
        assert len(lines) == len(refused) + 3
        assert sum(json.loads(line)["error"] is not None for line in lines) == len(refused)


async def test_large_text_is_paged(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    (root / "worlds/world_a/filesystem/big.md").write_text("0123456789" * 5000)
    bench = load_benchmark(root)
    with Session(bench, bench.tasks[0]) as session:
        async with Client(build_server(session)) as c:
            first = await ok(c, "files_read", path="big.md")
            assert (len(first["text"]), first["total_chars"], first["next_offset"]) == (
                20_000, 50_000, 20_000)
            last = await ok(c, "files_read", path="big.md", offset=40_000)
            assert len(last["text"]) == 10_000 and last["next_offset"] is None


async def test_pdf_text_is_read(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Expert finding: the outage lasted five days.")
    root = make_benchmark(tmp_path / "b")
    pdf.output(str(root / "worlds/world_a/filesystem/report.pdf"))
    bench = load_benchmark(root)
    with Session(bench, bench.tasks[0]) as session:
        async with Client(build_server(session)) as c:
            read = await ok(c, "files_read", path="report.pdf")
    assert "outage lasted five days" in read["text"]


async def test_two_sessions_on_one_world_do_not_see_each_other(sample) -> None:
    task = sample.task("kestrel_01")
    with Session(sample, task) as one, Session(sample, task) as two:
        async with Client(build_server(one)) as a, Client(build_server(two)) as b:
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(ok, a, "files_write", path="notes.md",
                                                content="from session one"))
                tg.start_soon(functools.partial(ok, b, "chat_post", space="Kestrel network review",
                                                text="from two"))
            assert (await call(b, "files_read", path="notes.md"))[0] is True
            history = await ok(a, "chat_get_history", space="Kestrel network review")
            assert all(m["text"] != "from two" for m in history["items"])
            await ok(b, "files_write", path="notes.md", content="from session two")
            assert (await ok(a, "files_read", path="notes.md"))["text"] == "from session one"
        assert one.files.root != two.files.root, "each writes into a folder of its own"


async def test_a_written_file_is_the_sessions_own_and_the_world_stays_as_it_is(
        sample, tmp_path: Path) -> None:
    task = sample.task("meridian_01")
    worlds = WorldReader(sample, with_text=False)
    with Session(sample, task, worlds) as one, Session(sample, task, worlds) as two:
        async with Client(build_server(one)) as a, Client(build_server(two)) as b:
            listed = (await ok(a, "files_list", limit=100))["items"]
            path = next(e["path"] for e in listed if e["path"].endswith(".md"))
            before = await ok(a, "files_read", path=path)
            assert one.files.root is None, "reading the world makes no folder"
            await ok(a, "files_write", path=path, content="replaced", overwrite=True)
            await ok(a, "files_write", path="drafts/new.md", content="new")
            assert (await ok(a, "files_read", path=path))["text"] == "replaced"
            sizes = {e["path"]: e["size"] for e in (await ok(a, "files_list"))["items"]}
            assert sizes[path] == len("replaced") and sizes["drafts/new.md"] == 3
            assert (await ok(a, "files_list", path="drafts"))["items"] == [
                {"path": "drafts/new.md", "size": 3}]
            assert await ok(b, "files_read", path=path) == before, "the other session's world"
            assert (await call(b, "files_read", path="drafts/new.md"))[0] is True
            under_a_file = await call(a, "files_write", path=f"{path}/inside.md", content="x")
            assert under_a_file[0] is True and under_a_file[1].endswith(
                f"{path} is a file, not a folder")
            assert (await call(a, "files_write", path="drafts", content="x"))[0] is True
        assert one.export(tmp_path / "export") == [f"files/{path}", "files/drafts/new.md"]
        assert two.files.root is None
    assert not one.files.root.exists(), "what the session wrote goes with it"
    with Session(sample, task, worlds) as three:
        async with Client(build_server(three)) as c:
            assert await ok(c, "files_read", path=path) == before, "a new session, the world"


async def test_one_server_serves_each_call_the_session_it_names(sample) -> None:
    """The runner's one server: a call reaches the session (and telemetry) its `_meta` names,
    and none once that session is closed; a call naming none is a tool error."""
    task = sample.task("kestrel_01")
    sessions = KeyedSessions()
    one_log, two_log = Telemetry(), Telemetry()
    with Session(sample, task) as one, Session(sample, task) as two:
        async with Client(build_server(sessions)) as client:
            with sessions.opened(one, one_log) as one_meta:
                with sessions.opened(two, two_log) as two_meta:
                    async def on(meta: dict[str, Any], tool: str, **args: Any) -> tuple[bool, str]:
                        result = await client.call_tool(tool, args, meta=meta)
                        return result.is_error, result.content[0].text

                    assert (await on(one_meta, "files_write", path="notes.md",
                                     content="one's"))[0] is False
                    assert (await on(two_meta, "files_read", path="notes.md"))[0] is True
                    is_error, text = await on(one_meta, "files_read", path="notes.md")
                    assert not is_error and json.loads(text)["text"] == "one's"
                    refused = await call(client, "files_list")
                    assert refused[0] is True and "no workspace session" in refused[1]
                assert (await on(two_meta, "files_list"))[0] is True, "two is closed"
                assert (await on(one_meta, "files_list"))[0] is False
    assert [json.loads(line)["tool"] for line in one_log.lines] == [
        "files_write", "files_read", "files_list"]
    assert [json.loads(line)["tool"] for line in two_log.lines] == ["files_read"]


def test_only_tools_that_parse_or_expand_run_on_a_worker_thread(sample) -> None:
    """The rest run in the server's event loop; the runner's server drops the SDK's tracing
    middleware, the servers others connect to keep it."""
    with Session(sample, sample.task("kestrel_01")) as session:
        served = build_server(session)
        keyed = build_server(KeyedSessions())
    tools = {t.name: t for t in _compiled_tools()}
    assert {name for name, t in tools.items() if not t.is_async} == ON_A_WORKER_THREAD
    assert len(tools) == 21
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in served.middleware)
    assert not any(isinstance(m, OpenTelemetryMiddleware) for m in keyed.middleware)


@pytest.mark.parametrize(("rel", "content", "expected"), [
    (".apps_data/mail/inbox.mbox", b"this is not mail\n", "inbox.mbox"),
    (".apps_data/calendar/work.ics", b"BEGIN:VCALENDAR\nbroken", "work.ics"),
    (".apps_data/chat/Groups/Space AAA/messages.json", b"{not json", "messages.json"),
])
def test_corrupt_world_files_are_named_at_start(tmp_path: Path, rel: str, content: bytes,
                                                 expected: str) -> None:
    root = make_benchmark(tmp_path / "b")
    (root / "worlds/world_a" / rel).write_bytes(content)
    bench = load_benchmark(root)
    with pytest.raises(InputError) as caught:
        Session(bench, bench.tasks[0])
    assert expected in str(caught.value)


async def test_stdio_subprocess(tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "rubric_audit", "serve", str(SAMPLE), "kestrel_06",
        "--telemetry", str(tmp_path / "t.jsonl"), "--export", str(tmp_path / "out")])
    async with Client(params) as c:
        events = await ok(c, "calendar_list")
        assert "Kestrel steering committee" in [e["summary"] for e in events["items"]]
        assert (await call(c, "files_read", path="../tasks_and_rubrics.json"))[0]
        await ok(c, "chat_post", space="Kestrel network review", text="Steerco is 2 April.")
    for _ in range(50):
        if (tmp_path / "out/chat/posts.json").exists():
            break
        time.sleep(0.1)
    assert "Steerco is 2 April." in (tmp_path / "out/chat/posts.json").read_text()
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.asynccontextmanager
async def serving_http(tmp_path: Path, task: str, *options: str,
                       stop: signal.Signals = signal.SIGTERM) -> AsyncIterator[str]:
    """`serve --http` in its own process, its workspace copies in tmp_path/tmp: yields the URL;
    stopped with `stop` on the way out."""
    port = _free_port()
    (tmp_path / "tmp").mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), task, "--http", str(port),
         *options], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await anyio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(stop)
        proc.wait(timeout=30)


def copies(tmp_path: Path) -> list[Path]:
    """The workspace copies a server started by `serving_http` holds now."""
    return list((tmp_path / "tmp").iterdir())


async def until(condition: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return condition()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_streamable_http(tmp_path: Path, stop: signal.Signals) -> None:
    async with serving_http(tmp_path, "meridian_04", "--export", str(tmp_path / "out"),
                            stop=stop) as url, Client(url) as c:
        amendment = await ok(c, "files_read", path="Meridian/Amendment_No1.md")
        assert "forty-five (45) days" in amendment["text"]
        assert (await call(c, "files_read", path="/etc/passwd"))[0]
        await ok(c, "files_write", path="memo.md", content="45 days")
        assert len(copies(tmp_path)) == 1, "the workspace copy"
    assert (tmp_path / "out/1/files/memo.md").read_text() == "45 days"
    assert copies(tmp_path) == []


async def test_http_sessions_each_have_their_own_workspace(sample, tmp_path: Path) -> None:
    telemetry = tmp_path / "t.jsonl"
    async with serving_http(tmp_path, "kestrel_01", "--telemetry", str(telemetry)) as url, \
            Client(url) as a, Client(url) as b:
        await ok(a, "files_write", path="notes.md", content="from session A")
        await ok(a, "mail_send", to=["cfo@firm.com"], subject="From A", body="only A sent this")
        assert (await call(b, "files_read", path="notes.md")) == (
            True, "Error executing tool files_read: no such file or folder: 'notes.md'")
        assert (await ok(b, "mail_list", folder="sent"))["items"] == []
        assert (await ok(b, "mail_search", text="only A sent this"))["items"] == []
        assert (await ok(a, "mail_list", folder="sent"))["items"][0]["subject"] == "From A"
        assert len(copies(tmp_path)) == 1, "a folder for the session that wrote a file only"

        async def fill(client: Client, name: str) -> int:
            """Write 1 MB files until the session's budget refuses one; how many it took."""
            written = 0
            while not (result := await call(client, "files_write", path=f"{name}{written}.txt",
                                            content="y" * MAX_WRITE_BYTES))[0]:
                written += 1
            assert "in all" in result[1]
            return written

        budget = MAX_SESSION_WRITE_BYTES // MAX_WRITE_BYTES
        assert await fill(a, "a") < budget, "A's earlier writes count against A"
        assert await fill(b, "b") == budget, "A's writes take nothing from B"
        assert len(copies(tmp_path)) == 2
    lines = [json.loads(line) for line in telemetry.read_text().splitlines()]
    by_session = {n: [line["tool"] for line in lines if line["session"]["number"] == n]
                  for n in (1, 2)}
    assert by_session[1][:2] == ["files_write", "mail_send"]
    assert by_session[2][:3] == ["files_read", "mail_list", "mail_search"]
    assert len({line["session"]["id"] for line in lines}) == 2


async def test_http_session_ends_alone_and_each_is_exported_apart(tmp_path: Path) -> None:
    out = tmp_path / "out"
    space = "Kestrel network review"
    async with serving_http(tmp_path, "kestrel_06", "--export", str(out)) as url, \
            Client(url) as first:
        async with Client(url) as second:
            await ok(second, "files_write", path="memo.md", content="the second's memo")
            await ok(second, "chat_post", space=space, text="the second posted this")
            await ok(first, "files_write", path="memo.md", content="the first's memo")
            assert len(copies(tmp_path)) == 2
        assert await until(lambda: len(copies(tmp_path)) == 1), "a copy is removed when it ends"
        assert (out / "2/files/memo.md").read_text() == "the second's memo", "exported then"
        assert not (out / "1").exists()
        await ok(first, "chat_post", space=space, text="the first posted this")
        assert (await ok(first, "files_read", path="memo.md"))["text"] == "the first's memo"
    # The first was still open when the server stopped: exported and removed then.
    assert (out / "1/files/memo.md").read_text() == "the first's memo"
    posts = {n: [p["text"] for p in json.loads((out / n / "chat/posts.json").read_text())]
             for n in ("1", "2")}
    assert posts == {"1": ["the first posted this"], "2": ["the second posted this"]}
    assert sorted(p.name for p in out.iterdir()) == ["1", "2"]
    assert copies(tmp_path) == []


async def test_http_sessions_over_the_cap_are_refused(tmp_path: Path) -> None:
    async with serving_http(tmp_path, "meridian_04") as url, contextlib.AsyncExitStack() as stack:
        for _ in range(MAX_SESSIONS - 1):  # each writes a file, so its session has a folder
            client = await stack.enter_async_context(Client(url))
            await ok(client, "files_write", path="memo.md", content="open")
        async with Client(url) as last:
            await ok(last, "files_write", path="memo.md", content="open")
            assert len(copies(tmp_path)) == MAX_SESSIONS
            refused = pytest.RaisesExc(MCPError, match=f"at most {MAX_SESSIONS} sessions at once")
            with pytest.RaisesGroup(refused, flatten_subgroups=True):
                async with Client(url):
                    pass
            assert len(copies(tmp_path)) == MAX_SESSIONS
            await ok(last, "files_list")
        assert await until(lambda: len(copies(tmp_path)) == MAX_SESSIONS - 1)
        async with Client(url) as again:
            await ok(again, "files_list")


async def test_http_requests_without_a_session_are_refused(tmp_path: Path) -> None:
    async with serving_http(tmp_path, "meridian_04") as url, \
            Client(url, mode=LATEST_MODERN_VERSION) as stateless:
        with pytest.raises(MCPError, match="per MCP session: connect with the initialize"):
            await stateless.call_tool("files_list", {})
    assert copies(tmp_path) == []


def test_http_export_folder_must_be_new_or_empty(tmp_path: Path) -> None:
    """Sessions are exported to numbered folders: one already there (or a link planted as one)
    would be written into."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "1").symlink_to(tmp_path, target_is_directory=True)
    done = subprocess.run(
        [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), "meridian_04", "--http",
         str(_free_port()), "--export", str(tmp_path / "out")], capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 2
    assert "not empty" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@contextlib.contextmanager
def serving_stdio(tmp_path: Path, *options: str) -> Iterator[subprocess.Popen[bytes]]:
    """`serve` over stdio in its own process, its workspace copy in tmp_path/tmp, a file written
    through it (memo.md); killed on the way out if it still runs."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), "kestrel_06", *options],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    try:
        for message in [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "files_write", "arguments": {"path": "memo.md", "content": "done"}}}]:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                assert b'"result"' in proc.stdout.readline()
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_on_stdio_exports_and_removes_the_copy(tmp_path: Path) -> None:
    with serving_stdio(tmp_path, "--export", str(tmp_path / "out")) as proc:
        assert len(list((tmp_path / "tmp").iterdir())) == 1, "the workspace copy"
        proc.send_signal(signal.SIGTERM)  # stdin stays open, as a client that hangs would keep it
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert (tmp_path / "out/files/memo.md").read_text() == "done"
    assert list((tmp_path / "tmp").iterdir()) == []


def test_world_zip_that_escapes_writes_nothing_outside(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_benchmark(tmp_path / "b", zipped=True)
    archive = root / "world_files_zipped" / "world_a.zip"
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr(zipfile.ZipInfo("filesystem/../../../ESCAPED"), b"pwned")
        zf.writestr(zipfile.ZipInfo(str(tmp_path / "ABSOLUTE")), b"pwned")
    sessions = tmp_path / "a" / "b" / "c"
    sessions.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(sessions))
    bench = load_benchmark(root)
    with pytest.raises(InputError, match="outside"):
        Session(bench, bench.tasks[0])
    assert not [p for p in tmp_path.rglob("*") if p.name in ("ESCAPED", "ABSOLUTE")]
    assert list(sessions.iterdir()) == []


async def test_export_does_not_follow_links(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0")
    bench = load_benchmark(root)
    with Session(bench, bench.tasks[0]) as session:
        async with Client(build_server(session)) as c:
            for name in ("passwd", "outside/notes.md", "answer.md"):
                await ok(c, "files_write", path=name, content="done")
        # what the agent wrote, swapped for links out of the session's folder
        (session.files.root / "passwd").unlink()
        (session.files.root / "passwd").symlink_to(secret)
        shutil.rmtree(session.files.root / "outside")
        (tmp_path / "notes.md").write_text("not the agent's")
        (session.files.root / "outside").symlink_to(tmp_path, target_is_directory=True)
        written = session.export(tmp_path / "export")
    assert written == ["files/answer.md"]
    exported = [p for p in (tmp_path / "export").rglob("*") if p.is_file()]
    assert exported == [tmp_path / "export/files/answer.md"]


async def test_what_a_session_writes_is_capped_per_message_and_in_all(
        sample, tmp_path: Path) -> None:
    telemetry = tmp_path / "t.jsonl"
    with Session(sample, sample.task("kestrel_01")) as session:
        async with Client(build_server(session, Telemetry(telemetry))) as c:
            space = "Kestrel network review"
            refused = [("chat_post", {"space": space, "text": "x" * MAX_MESSAGE_BYTES + "x"}),
                       ("mail_send", {"to": ["a@b.c"], "subject": "s",
                                      "body": "x" * (20 * 10**6)}),
                       ("calendar_create", {"summary": "s", "start": "2025-03-12T09:00:00Z",
                                            "end": "2025-03-12T10:00:00Z",
                                            "description": "x" * MAX_MESSAGE_BYTES})]
            for tool, args in refused:
                is_error, text = await call(c, tool, **args)
                assert is_error and "the limit is" in text, (tool, text)
            await ok(c, "chat_post", space=space, text="x" * MAX_MESSAGE_BYTES)
            files = 0
            while not (result := await call(c, "files_write", path=f"f{files}.txt",
                                            content="y" * MAX_WRITE_BYTES))[0]:
                files += 1
            assert "in all" in result[1]
            assert files == (MAX_SESSION_WRITE_BYTES - MAX_MESSAGE_BYTES) // MAX_WRITE_BYTES
            await ok(c, "chat_post", space=space, text="short")
        assert session.written <= MAX_SESSION_WRITE_BYTES
    lines = telemetry.read_text().splitlines()
    assert len(lines) == len(refused) + files + 3
    assert max(len(line) for line in lines) < 3 * MAX_ARGUMENT_CHARS
    big = json.loads(lines[1])
    assert big["tool"] == "mail_send" and big["arguments"]["chars"] > 20 * 10**6


def test_stdio_says_it_serves_in_one_stderr_line(tmp_path: Path) -> None:
    with serving_stdio(tmp_path) as proc:
        _, stderr = proc.communicate(timeout=60)  # stdin closed: the client went away
    assert proc.returncode == 0
    [line] = stderr.decode().strip().splitlines()
    assert line == ("Serving kestrel_06 over stdio: an MCP client speaks on stdin and stdout "
                    "(Ctrl-C or closing stdin stops it)")


def test_an_export_path_that_is_a_file_is_refused_before_serving(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("mine")
    for transport in ([], ["--http", str(_free_port())]):
        done = subprocess.run(
            [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), "kestrel_06",
             "--export", str(tmp_path / "x.txt"), *transport], capture_output=True, text=True,
            timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == (f"error: {tmp_path / 'x.txt'}: --export: a file, not a "
                                       f"folder: the agent's changes are written into a folder "
                                       f"(files/, mail/, calendar/, chat/); give a new or empty "
                                       f"one")
    assert (tmp_path / "x.txt").read_text() == "mine"
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "earlier.md").write_text("an earlier export")
    done = subprocess.run(
        [sys.executable, "-m", "rubric_audit", "serve", str(SAMPLE), "kestrel_06", "--export",
         str(tmp_path / "full")], capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "--export: not empty" in done.stderr


def test_an_export_that_fails_at_shutdown_keeps_the_agents_changes(tmp_path: Path) -> None:
    """The export folder taken by a file while serving: the changes go to a new folder, said on
    stderr, instead of being lost with the workspace copy."""
    with serving_stdio(tmp_path, "--export", str(tmp_path / "out")) as proc:
        (tmp_path / "out").write_text("taken")
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0
    said = stderr.decode().strip().splitlines()[-1]
    assert said.startswith(f"could not export to {tmp_path / 'out'} (")
    rescue = Path(said.rsplit("the agent's changes are in ", 1)[1])
    assert (rescue / "files" / "memo.md").read_text() == "done"
    assert (tmp_path / "out").read_text() == "taken"
