"""Which of the world's apps an attempt opened, from its telemetry or, failing that, its tool calls."""

from __future__ import annotations

import json
from pathlib import Path

from rubric_audit.model import Attempt

APPS = ("mail", "chat", "calendar")


def _app(tool: str) -> str | None:
    return next((app for app in APPS if tool.startswith(app)), None)


def apps_opened(attempt: Attempt) -> set[str]:
    telemetry = Path(attempt.source) / "telemetry.jsonl" if attempt.source else None
    if telemetry is not None and telemetry.is_file():
        tools = [json.loads(line).get("tool", "") for line in
                 telemetry.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        calls = attempt.trajectory.calls() if attempt.trajectory else []
        tools = [call.name for _, call in calls]
    return {app for tool in tools if (app := _app(tool))}
