"""Read what a task's world holds: files, mailbox (mbox), calendar (ics) and chat (Takeout layout).

A world is a folder or a zip with `filesystem/` and `.apps_data/` (or `apps_data/`); the task's
overlay (`task_files/<task_id>/`) is laid on top. An Archipelago task package lays the same out
apart (`World.layout`): the world's `files/` and `tools/.apps_data/<app>/`, a task's
`tools/files/<task>/` and `tools/.apps_data/<task>/`. Corrupt mail, calendar or chat files are unusable
input and raise InputError naming the file.
"""

from __future__ import annotations

import email.policy
import io
import mailbox
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubric_audit.core.errors import (
    InputError,
    files_under,
    invalid,
    parse_json,
    read_bytes,
    too_big,
)
from rubric_audit.core.limits import MAX_ARCHIVE_BYTES, check_zip, read_zip, safe_member_name
from rubric_audit.core.model import (
    Benchmark,
    CalendarEvent,
    ChatMember,
    ChatMessage,
    ChatSpace,
    MailMessage,
    Task,
    World,
    WorldContents,
    WorldFile,
    WorldLayout,
)
from rubric_audit.load.task_package import APPS_DATA, TASK_FILES, task_slugs

M = TypeVar("M", bound=BaseModel)
APPS_DIRS = (".apps_data", "apps_data")
T = TypeVar("T")
TEXT_SUFFIXES = {".md", ".txt", ".csv", ".json", ".tsv", ".html", ".xml", ".yaml", ".yml"}


def _folder_tree(folder: Path) -> dict[str, bytes]:
    """Files of a world folder, each refused by size before it is read; symbolic links are
    skipped so nothing outside it is read."""
    if folder.is_symlink():
        raise InputError(folder, None, "is a symbolic link: a world or overlay must be a folder "
                                       "inside the benchmark")
    files = sorted(files_under(folder))
    total = sum(p.stat().st_size for p in files)
    if total > MAX_ARCHIVE_BYTES:
        raise InputError(folder, None, f"world too large: {too_big(total, MAX_ARCHIVE_BYTES)}")
    return {p.relative_to(folder).as_posix(): read_bytes(p) for p in files}


def _zip_tree(archive: Path) -> dict[str, bytes]:
    """Entries of a world zip, with a single wrapping folder (if any) stripped."""
    entries = read_zip(archive)
    tops = {PurePosixPath(name).parts[0] for name in entries}
    if len(tops) == 1 and not tops & {"filesystem", *APPS_DIRS}:
        top = tops.pop()
        entries = {name[len(top) + 1:]: data for name, data in entries.items()}
    return entries


def _under(prefix: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"{prefix}/{path}": data for path, data in files.items()}


def _world_tree(root: Path, world: World) -> dict[str, bytes]:
    """The world's shared files, laid out as filesystem/ and .apps_data/."""
    source = root / (world.source or "")
    if world.layout == "apex":
        return _zip_tree(source) if source.suffix == ".zip" else _folder_tree(source)
    tree = _under("filesystem", _folder_tree(source))
    apps, tasks = root / APPS_DATA, set(task_slugs(root))
    if apps.is_symlink():
        raise InputError(apps, None, "is a symbolic link: a world's app data must be a folder "
                                     "inside the benchmark")
    for entry in sorted(apps.iterdir()) if apps.is_dir() else []:
        if entry.name in tasks:  # a task's own data, which the package's start.sh skips too
            continue
        if entry.is_dir() or entry.is_symlink():
            tree.update(_under(f".apps_data/{entry.name}", _folder_tree(entry)))
        elif entry.is_file():
            tree[f".apps_data/{entry.name}"] = read_bytes(entry)
    return tree


def _overlay_tree(root: Path, overlay: str, layout: WorldLayout) -> dict[str, bytes]:
    """The task's own files, laid out as the world's are (a task package keeps them in
    tools/files/<task>/ and tools/.apps_data/<task>/; `overlay` names the first)."""
    if layout == "apex":
        return _folder_tree(root / overlay)
    slug = PurePosixPath(overlay).name
    tree = {}
    for prefix, folder in (("filesystem", root / TASK_FILES / slug),
                           (".apps_data", root / APPS_DATA / slug)):
        if folder.is_dir() or folder.is_symlink():
            tree.update(_under(prefix, _folder_tree(folder)))
    return tree


def task_tree(bench: Benchmark, task: Task,
              worlds: dict[str, dict[str, bytes]] | None = None) -> dict[str, bytes]:
    """Every file of the task's world with its overlay applied, by relative path.

    `worlds` keeps each world's files by world id, so a world is read once for all its tasks.
    """
    root = Path(bench.root)
    world = bench.world(task.world_id)
    tree: dict[str, bytes] = {}
    if world and world.source:
        if worlds is not None and world.id in worlds:
            tree = dict(worlds[world.id])
        else:
            tree = _world_tree(root, world)
            if worlds is not None:
                worlds[world.id] = dict(tree)
    if task.overlay:
        tree.update(_overlay_tree(root, task.overlay, world.layout if world else "apex"))
    tree = {_normal_apps_path(k): v for k, v in tree.items()}
    folders = {parent.as_posix() for path in tree for parent in PurePosixPath(path).parents}
    clash = sorted(folders & tree.keys())
    if clash:
        source = root / (world.source if world and world.source else task.overlay or "")
        raise InputError(source, clash[0], "is both a file and a folder")
    return tree


def _normal_apps_path(path: str) -> str:
    head, _, rest = path.partition("/")
    return f".apps_data/{rest}" if head in APPS_DIRS else path


def file_text(path: str, data: bytes) -> str | None:
    """Plain text of a file where the format has one (text, xlsx cells and formulas, docx)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return data.decode("utf-8", errors="replace")
    if suffix not in (".xlsx", ".docx"):
        return None
    check_zip(data, path)
    try:
        if suffix == ".xlsx":
            return _xlsx_text(data)
        import docx

        return "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)
    except Exception as exc:  # openpyxl and python-docx raise zip, XML, key and type errors
        raise InputError(path, None, f"unreadable {suffix} file: {exc}") from None


def _xlsx_text(data: bytes) -> str:
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data), data_only=False)
    lines = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.value is not None:
                    lines.append(f"{sheet.title}!{cell.coordinate} = {cell.value}")
    return "\n".join(lines)


def _addresses(value: str | None) -> list[str]:
    return [addr for _, addr in getaddresses([value])] if value else []


def _body(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    return part.get_content() if part is not None else ""


def read_mbox(name: str, data: bytes) -> list[MailMessage]:
    """Messages of one mbox file, via the standard library's mailbox reader."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "box.mbox"
        path.write_bytes(data)
        box = mailbox.mbox(path, factory=None, create=False)
        out = []
        try:
            for i, raw in enumerate(box):
                msg = email.message_from_bytes(raw.as_bytes(), policy=email.policy.default)
                date = msg.get("Date")
                out.append(MailMessage(
                    message_id=(msg.get("Message-ID") or f"<{name}#{i}>").strip(),
                    mailbox=name,
                    date=parsedate_to_datetime(date).isoformat() if date else "",
                    sender=str(msg.get("From", "")),
                    to=_addresses(msg.get("To")),
                    cc=_addresses(msg.get("Cc")),
                    subject=str(msg.get("Subject", "")),
                    in_reply_to=(msg.get("In-Reply-To") or None),
                    body=_body(msg),
                ))
        except (ValueError, TypeError, LookupError) as exc:
            raise InputError(name, f"message {len(out) + 1}", f"unreadable mail: {exc}") from None
        finally:
            box.close()
    if data.strip() and not out:
        raise InputError(name, None, "not an mbox file (no 'From ' separator line)")
    return out


RECURRENCE = ("DTSTART", "RRULE", "RDATE", "EXDATE")


def read_ics(name: str, data: bytes) -> list[CalendarEvent]:
    """VEVENTs of one iCalendar file. icalendar works out the end (DTEND, or DTSTART plus
    DURATION); a recurring event keeps its rule lines, expanded when the calendar is listed."""
    import icalendar

    try:
        cal = icalendar.Calendar.from_ical(data)
    except ValueError as exc:
        raise InputError(name, None, f"not a valid iCalendar file: {exc}") from None

    def when(event: icalendar.Event, attribute: str) -> str:
        try:
            moment: date = getattr(event, attribute)  # Event.start and .end: a date or a datetime
            return moment.isoformat()
        except icalendar.IncompleteComponent:  # no such property: an event without an end
            return ""
        except icalendar.InvalidCalendar as exc:  # a property that is not a date
            raise InputError(name, f"DT{attribute.upper()}", f"{exc} (event "
                                                             f"{str(event.get('UID', ''))!r})"
                             ) from None

    def recurrence(event: icalendar.Event) -> list[str]:
        if "RRULE" not in event and "RDATE" not in event:
            return []
        return [event.content_line(key, value).to_ical().decode()
                for key in RECURRENCE for value in _as_list(event.get(key))]

    return [
        CalendarEvent(
            uid=str(ev.get("UID", "")),
            calendar=name,
            summary=str(ev.get("SUMMARY", "")),
            description=str(ev.get("DESCRIPTION", "")),
            location=str(ev.get("LOCATION", "")),
            start=when(ev, "start"),
            end=when(ev, "end"),
            attendees=[str(a).removeprefix("mailto:").removeprefix("MAILTO:")
                       for a in _as_list(ev.get("ATTENDEE"))],
            recurrence=recurrence(ev),
        )
        for ev in cal.walk("VEVENT") if isinstance(ev, icalendar.Event)  # every VEVENT reads as one
    ]


def _as_list(value: object) -> list[object]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


class _Takeout(BaseModel):
    """Google Chat Takeout files: fields rubric-audit reads are typed, others ignored."""

    model_config = ConfigDict(extra="ignore")


class TakeoutUser(_Takeout):
    name: str = ""
    email: str = ""


class TakeoutGroupInfo(_Takeout):
    name: str | None = None
    members: list[TakeoutUser] = Field(default_factory=list)


class TakeoutMessage(_Takeout):
    creator: TakeoutUser | None = None
    created_date: str = ""
    text: str = ""
    topic_id: str | None = None
    message_id: str | int | None = None


class TakeoutMessages(_Takeout):
    messages: list[TakeoutMessage] = Field(default_factory=list)


def _takeout(model: type[M], name: str, data: bytes) -> M:
    try:
        return model.model_validate(parse_json(name, data))
    except ValidationError as exc:
        raise invalid(Path(name), "", exc) from None


def read_chat_space(folder: str, info: bytes | None, messages: bytes | None) -> ChatSpace:
    """One Google Chat Takeout space: group_info.json and messages.json."""
    space_name = PurePosixPath(folder).name
    members: list[ChatMember] = []
    if info is not None:
        meta = _takeout(TakeoutGroupInfo, f"{folder}/group_info.json", info)
        space_name = meta.name or space_name
        members = [ChatMember(name=m.name, email=m.email) for m in meta.members]
    out: list[ChatMessage] = []
    if messages is not None:
        raw = _takeout(TakeoutMessages, f"{folder}/messages.json", messages)
        for i, m in enumerate(raw.messages):
            creator = m.creator or TakeoutUser()
            out.append(ChatMessage(message_id=str(m.message_id or f"{space_name}#{i}"),
                                   author=creator.name, author_email=creator.email,
                                   created=m.created_date, text=m.text, topic_id=m.topic_id))
    return ChatSpace(name=space_name, members=members, messages=out)


Parsed = dict[tuple[object, ...], object]
"""Parses of world files by (parser, path, bytes): a file met again in another task is not parsed
again (bytes keep their hash, so a lookup costs one comparison of the same object)."""


def _parse(parsed: Parsed | None, parse: Callable[..., T], *args: object) -> T:
    if parsed is None:
        return parse(*args)
    key = (parse, *args)
    if key not in parsed:
        parsed[key] = parse(*args)
    return parsed[key]  # type: ignore[return-value]


def world_contents(tree: dict[str, bytes], with_text: bool = True,
                   parsed: Parsed | None = None) -> WorldContents:
    """Sort a task tree into files, mail, calendar events and chat spaces."""
    contents = WorldContents()
    spaces: dict[str, dict[str, bytes]] = {}
    for path, data in sorted(tree.items()):
        parts = PurePosixPath(path).parts
        if parts[0] == "filesystem" and len(parts) > 1:
            rel = "/".join(parts[1:])
            text = _parse(parsed, file_text, path, data) if with_text else None
            contents.files.append(WorldFile(path=rel, size=len(data), text=text))
        elif parts[:2] == (".apps_data", "mail") and path.endswith(".mbox"):
            contents.mail.extend(_parse(parsed, read_mbox, path, data))
        elif parts[:2] == (".apps_data", "calendar") and path.endswith(".ics"):
            contents.events.extend(_parse(parsed, read_ics, path, data))
        elif parts[:3] == (".apps_data", "chat", "Groups") and len(parts) == 5:
            spaces.setdefault("/".join(parts[:4]), {})[parts[4]] = data
    for folder, files in sorted(spaces.items()):
        contents.chat.append(_parse(parsed, read_chat_space, folder,
                                    files.get("group_info.json"), files.get("messages.json")))
    contents.mail.sort(key=lambda m: (m.date, m.message_id))
    contents.events.sort(key=lambda e: (e.start, e.uid))
    return contents


class WorldReader:
    """Task worlds read and parsed once per world and per overlay, shared by the tasks using them.

    A world's files are read once; a task without an overlay gets the one WorldContents of its
    world (treat it as read-only), and a task with one re-parses only the files its overlay adds
    or replaces.
    """

    def __init__(self, bench: Benchmark, with_text: bool = True) -> None:
        self.bench = bench
        self.with_text = with_text
        self._files: dict[str, dict[str, bytes]] = {}
        self._parsed: Parsed = {}
        self._contents: dict[tuple[str, str | None], WorldContents] = {}
        self._filesystems: dict[tuple[str, str | None], Mapping[str, bytes]] = {}

    def tree(self, task: Task) -> dict[str, bytes]:
        """task_tree, reading the task's world only the first time."""
        with in_world(task):
            return task_tree(self.bench, task, self._files)

    def filesystem(self, task: Task) -> Mapping[str, bytes]:
        """The files under the task's `filesystem/` (its overlay applied) by path relative to
        it: made once per world and overlay and shared, read-only. A path that would leave the
        folder is refused (the loaders refuse them first)."""
        key = (task.world_id, task.overlay)
        if key not in self._filesystems:
            files = {}
            for path, data in self.tree(task).items():
                if not path.startswith("filesystem/"):
                    continue
                if safe_member_name(path) != path:
                    raise InputError(task.world_id, path, "path leaves the workspace")
                files[path.removeprefix("filesystem/")] = data
            self._filesystems[key] = MappingProxyType(files)
        return self._filesystems[key]

    def contents(self, task: Task) -> WorldContents:
        key = (task.world_id, task.overlay)
        if key not in self._contents:
            with in_world(task):
                tree = task_tree(self.bench, task, self._files)
                self._contents[key] = world_contents(tree, self.with_text, self._parsed)
        return self._contents[key]


@contextmanager
def in_world(task: Task) -> Iterator[None]:
    """Name the world and task in an InputError about one of the world's files."""
    try:
        yield
    except InputError as exc:
        raise InputError(exc.file, exc.field, f"{exc.problem} (world {task.world_id!r}, task "
                                              f"{task.id!r})") from None


def load_task_world(bench: Benchmark, task: Task, with_text: bool = True) -> WorldContents:
    """What the task's agent can see: its world with the task overlay applied."""
    with in_world(task):
        return world_contents(task_tree(bench, task), with_text=with_text)


def load_worlds(bench: Benchmark, with_text: bool = True) -> dict[str, WorldContents]:
    """Every task's world by task id (empty where the world is unknown), each world parsed once."""
    reader = WorldReader(bench, with_text)
    return {t.id: reader.contents(t) if bench.world(t.world_id) else WorldContents()
            for t in bench.tasks}
