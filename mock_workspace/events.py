"""The calendar: list events in a date range, read, create, update and delete them.

A recurring event is listed once per occurrence when the range has an end (dateutil expands its
rule, scanning at most MAX_SCANNED occurrences of a series), otherwise once, with its rule.
"""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

from mock_workspace.errors import WorkspaceError
from mock_workspace.mail import iso_datetime
from mock_workspace.paging import page
from rubric_audit.core.model import CalendarEvent

EDITABLE = ("summary", "description", "location", "start", "end", "attendees")
MAX_SCANNED = 10_000


def _expanded(e: CalendarEvent, begin: datetime | None, finish: datetime) -> list[CalendarEvent]:
    """The occurrences of a recurring event that start inside [begin, finish]; the event itself
    when its rule cannot be read (a guess is never listed)."""
    from dateutil.rrule import rrulestr

    def shown(moment: datetime) -> str:  # an all-day event stays a date
        return moment.date().isoformat() if len(e.start) == len("2025-01-01") else moment.isoformat()

    try:
        first = datetime.fromisoformat(e.start)
        length = datetime.fromisoformat(e.end) - first if e.end else None
        if first.tzinfo is None:  # floating or all-day: compare wall-clock times
            begin = begin.replace(tzinfo=None) if begin else begin
            finish = finish.replace(tzinfo=None)
        rule = rrulestr("\n".join(e.recurrence), forceset=True, dtstart=first)
        starts = [s for s in itertools.takewhile(lambda s: s <= finish,
                                                 itertools.islice(rule, MAX_SCANNED))
                  if begin is None or s >= begin]
    except (ValueError, TypeError, OverflowError):
        return [e]
    return [e.model_copy(update={"start": shown(s),
                                 "end": shown(s + length) if length is not None else ""})
            for s in starts]


def _check_times(start: str, end: str) -> None:
    begin, finish = iso_datetime(start), iso_datetime(end)
    if begin and finish and finish < begin:
        raise WorkspaceError("an event cannot end before it starts")


class Calendar:
    def __init__(self, events: list[CalendarEvent]) -> None:
        self.events = {e.uid: e for e in events}
        self.original = dict(self.events)
        self.deleted: list[str] = []

    def list_events(self, start: str | None = None, end: str | None = None, offset: int = 0,
                    limit: int = 50) -> dict[str, Any]:
        begin, finish = iso_datetime(start), iso_datetime(end)

        def inside(e: CalendarEvent) -> bool:
            when = iso_datetime(e.start)
            return (not begin or (when is not None and when >= begin)) and \
                   (not finish or (when is not None and when <= finish))

        listed = [o for e in self.events.values()
                  for o in (_expanded(e, begin, finish) if e.recurrence and finish else [e])]
        found = sorted((e for e in listed if inside(e)), key=lambda e: (e.start, e.uid))
        result = page(found, offset, limit)
        result["items"] = [{"uid": e.uid, "start": e.start, "end": e.end, "summary": e.summary,
                            **({"recurrence": e.recurrence} if e.recurrence else {})}
                           for e in result["items"]]
        return result

    def read(self, uid: str) -> dict[str, Any]:
        return self._find(uid).model_dump(exclude={"calendar"})

    def _find(self, uid: str) -> CalendarEvent:
        if uid not in self.events:
            raise WorkspaceError(f"no event with uid {uid!r}")
        return self.events[uid]

    def create(self, summary: str, start: str, end: str, description: str = "",
               location: str = "", attendees: list[str] | None = None) -> dict[str, Any]:
        _check_times(start, end)
        uid = f"created-{len(self.events) + len(self.deleted) + 1}@workspace.local"
        self.events[uid] = CalendarEvent(uid=uid, calendar="workspace", summary=summary,
                                         description=description, location=location,
                                         start=start, end=end, attendees=attendees or [])
        return {"uid": uid, "status": "created"}

    def update(self, uid: str, changes: dict[str, Any]) -> dict[str, Any]:
        event = self._find(uid)
        unknown = sorted(set(changes) - set(EDITABLE))
        if unknown:
            raise WorkspaceError(f"cannot change {unknown}; editable fields: {list(EDITABLE)}")
        if "start" in changes and changes["start"] != event.start:
            # The series now starts where the agent moved it: its rule counts from the new start.
            changes = {**changes, "recurrence": [line for line in event.recurrence
                                                 if not line.startswith("DTSTART")]}
        updated = event.model_copy(update=changes)
        _check_times(updated.start, updated.end)
        self.events[uid] = CalendarEvent.model_validate(updated.model_dump())
        return {"uid": uid, "status": "updated"}

    def delete(self, uid: str) -> dict[str, Any]:
        self._find(uid)
        del self.events[uid]
        self.deleted.append(uid)
        return {"uid": uid, "status": "deleted"}

    def changes(self) -> dict[str, Any]:
        """What the agent created, changed or deleted."""
        created = [e for uid, e in self.events.items() if uid not in self.original]
        updated = [e for uid, e in self.events.items()
                   if uid in self.original and self.original[uid] != e]
        return {"created": [e.model_dump() for e in created],
                "updated": [e.model_dump() for e in updated],
                "deleted": [uid for uid in self.deleted if uid in self.original]}
