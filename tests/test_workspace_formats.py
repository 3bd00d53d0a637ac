"""The workspace's own formats through the real mcp Client: sent mail written as an mbox by the
standard library, calendar events with DURATION and RRULE, and tools that refuse unknown arguments."""

from __future__ import annotations

import mailbox
from pathlib import Path

import pytest
from mcp import Client

from mock_workspace.server import build_server
from mock_workspace.session import Session
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.world import read_mbox
from tests.conftest import SAMPLE, make_benchmark
from tests.test_workspace import call, ok

pytestmark = pytest.mark.anyio


RECURRING_ICS = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//EN\r
BEGIN:VEVENT\r
UID:standup@firm.test\r
DTSTAMP:20250301T000000Z\r
DTSTART;TZID=Europe/Oslo:20250317T090000\r
DURATION:PT15M\r
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4\r
EXDATE;TZID=Europe/Oslo:20250324T090000\r
SUMMARY:Monday stand-up\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:review@firm.test\r
DTSTAMP:20250301T000000Z\r
DTSTART:20250305T140000Z\r
DURATION:PT1H30M\r
SUMMARY:Budget review\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:close@firm.test\r
DTSTAMP:20250301T000000Z\r
DTSTART;VALUE=DATE:20250331\r
RRULE:FREQ=MONTHLY;COUNT=3\r
SUMMARY:Month-end close\r
END:VEVENT\r
END:VCALENDAR\r
"""


def session_of(tmp_path: Path, ics: bytes | None = None) -> Session:
    root = make_benchmark(tmp_path / "bench")
    if ics is not None:
        (root / "worlds" / "world_a" / ".apps_data" / "calendar" / "work.ics").write_bytes(ics)
    bench = load_benchmark(root)
    return Session(bench, bench.tasks[0])


async def test_sent_mail_with_a_from_line_stays_one_message(tmp_path: Path) -> None:
    body = "The numbers:\nFrom the desk of the CFO: budget 1.2m.\nFrom now on use v2.\n"
    with session_of(tmp_path) as session:
        async with Client(build_server(session)) as c:
            await ok(c, "mail_send", to=["alice@firm.test"], subject="Budget", body=body)
            await ok(c, "mail_send", to=["bob@firm.test"], subject="Second", body="Noted.")
        written = session.export(tmp_path / "export")
    assert "mail/sent.mbox" in written
    path = tmp_path / "export" / "mail" / "sent.mbox"
    box = mailbox.mbox(path, create=False)
    assert len(box) == 2, "a body line starting 'From ' is quoted, not a new message"
    box.close()
    first, second = read_mbox("sent.mbox", path.read_bytes())
    assert (first.subject, second.subject) == ("Budget", "Second")
    assert ">From the desk of the CFO: budget 1.2m." in first.body.splitlines()
    assert first.to == ["alice@firm.test"] and second.body.strip() == "Noted."


async def test_events_given_by_duration_and_rrule_are_read(tmp_path: Path) -> None:
    with session_of(tmp_path, RECURRING_ICS) as session:
        async with Client(build_server(session)) as c:
            review = await ok(c, "calendar_read", uid="review@firm.test")
            assert (review["start"], review["end"]) == ("2025-03-05T14:00:00+00:00",
                                                        "2025-03-05T15:30:00+00:00")
            march = await ok(c, "calendar_list", start="2025-03-01T00:00:00+00:00",
                             end="2025-04-30T00:00:00+00:00", limit=100)
            standups = [(e["start"], e["end"]) for e in march["items"]
                        if e["summary"] == "Monday stand-up"]
            assert standups == [
                ("2025-03-17T09:00:00+01:00", "2025-03-17T09:15:00+01:00"),
                # 24 March is an EXDATE; Oslo moves to summer time on 30 March.
                ("2025-03-31T09:00:00+02:00", "2025-03-31T09:15:00+02:00"),
                ("2025-04-07T09:00:00+02:00", "2025-04-07T09:15:00+02:00")]
            closes = [e["start"] for e in march["items"] if e["summary"] == "Month-end close"]
            assert closes == ["2025-03-31"], "an all-day series stays in dates; May is outside"
            once = await ok(c, "calendar_list")
            [series] = [e for e in once["items"] if e["uid"] == "standup@firm.test"]
            assert series["start"] == "2025-03-17T09:00:00+01:00"
            assert "RRULE:FREQ=WEEKLY;COUNT=4;BYDAY=MO" in series["recurrence"]
            await ok(c, "calendar_update", uid="standup@firm.test",
                     start="2025-03-17T10:00:00+01:00", end="2025-03-17T10:15:00+01:00")
            moved = await ok(c, "calendar_list", start="2025-03-01T00:00:00+00:00",
                             end="2025-03-30T00:00:00+00:00")
            assert [e["start"] for e in moved["items"] if e["uid"] == "standup@firm.test"] == [
                "2025-03-17T10:00:00+01:00", "2025-03-24T10:00:00+01:00"], "the series moved"


async def test_unknown_arguments_are_refused_by_every_tool() -> None:
    sample = load_benchmark(SAMPLE)
    with Session(sample, sample.task("nordlys_06")) as session:
        async with Client(build_server(session)) as c:
            path = "Project_Nordlys/Nordlys_Model.xlsx"
            is_error, message = await call(c, "files_read_sheet", path=path, range="B3:B4")
            assert is_error and "not an argument of this tool: range;" in message
            assert "cell_range" in message, "the error names the arguments the tool takes"
            cells = await ok(c, "files_read_sheet", path=path, cell_range="B3:B4")
            assert [r["cell"] for r in cells["items"]] == ["B3", "B4"]
            is_error, message = await call(c, "mail_list", folders="sent")
            assert is_error and "not an argument of this tool: folders;" in message
            tools = (await c.list_tools()).tools
            assert all(t.input_schema.get("additionalProperties") is False for t in tools)
            assert (await ok(c, "mail_list"))["items"], "the session goes on"
