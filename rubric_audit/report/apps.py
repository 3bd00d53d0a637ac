"""Which of the world's apps an attempt opened, from its telemetry or, failing that, its tool calls;
and, from a trajectory, the calls per app and the files it opened."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from pathlib import Path

from rubric_audit.core.errors import parse_json, read_text
from rubric_audit.core.model import Attempt, Trajectory

APPS = ("mail", "chat", "calendar")
WORLD_APPS = ("mail", "calendar", "chat", "files")
FILE_TOOLS = ("file", "sheet", "docs", "pdf", "slides")  # our files_*, Archipelago's *_server_*
PATH_KEYS = ("path", "file_path", "filename", "file")
PATH_ARGUMENT = re.compile(rf'"(?:{"|".join(PATH_KEYS)})"\s*:\s*"((?:[^"\\]|\\.)*)"')
FILE_NAME = re.compile(r"\.[A-Za-z0-9]{1,5}$")  # a file, not a folder such as "4. Model"


def _app(tool: str) -> str | None:
    return next((app for app in APPS if tool.startswith(app)), None)


def apps_opened(attempt: Attempt) -> set[str]:
    telemetry = Path(attempt.source) / "telemetry.jsonl" if attempt.source else None
    if telemetry is not None and telemetry.is_file():
        lines = [parse_json(telemetry, line) for line in read_text(telemetry).splitlines()
                 if line.strip()]
        tools = [str(line.get("tool", "")) for line in lines if isinstance(line, dict)]
    else:
        calls = attempt.trajectory.calls() if attempt.trajectory else []
        tools = [call.name for _, call in calls]
    return {app for tool in tools if (app := _app(tool))}


@functools.lru_cache(maxsize=1024)
def tool_app(tool: str) -> str:
    """The app a tool belongs to: mail, calendar, chat, files, code, or other (planning, meta)."""
    name = tool.lower()
    if app := _app(name):
        return app
    if any(word in name for word in FILE_TOOLS):
        return "files"
    return "code" if "code" in name or "python" in name or "bash" in name else "other"


def trajectory_apps(trajectory: Trajectory) -> dict[str, int]:
    """Calls per app, most used first."""
    return dict(Counter(tool_app(call.name) for _, call in trajectory.calls()).most_common())


def files_opened(trajectory: Trajectory) -> list[str]:
    """The files (paths with an extension, not folders listed) the attempt's file tools were
    called on, in the order first opened. Read from the arguments' text (a path key and its
    string), so a long trajectory is not parsed call by call."""
    seen: dict[str, None] = {}
    for _, call in trajectory.calls():
        if tool_app(call.name) == "files":
            for match in PATH_ARGUMENT.finditer(call.arguments):
                try:
                    path = json.loads(f'"{match.group(1)}"')
                except json.JSONDecodeError:
                    continue
                if FILE_NAME.search(path):
                    seen[path] = None
    return list(seen)
