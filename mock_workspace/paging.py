"""Paging for every list the workspace returns, so no reply grows without bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mock_workspace.errors import WorkspaceError

MAX_PAGE = 100


def page(items: Sequence[Any], offset: int, limit: int, cap: int = MAX_PAGE) -> dict[str, Any]:
    """One page of `items`: {items, total, offset, next_offset (None at the end)}."""
    if offset < 0 or limit < 1:
        raise WorkspaceError("offset must be >= 0 and limit >= 1")
    limit = min(limit, cap)
    chunk = list(items[offset:offset + limit])
    end = offset + len(chunk)
    return {"items": chunk, "total": len(items), "offset": offset,
            "next_offset": end if end < len(items) else None}
