"""A deterministic part of a run (`run --shard K/N`), for schedulers that start N copies of one
command (a Kubernetes Indexed Job, a SLURM array): attempt k of a task belongs to the shard a
stable hash of the task id and k picks, whatever machine or order runs it, and each shard writes
its own folder, which `import` and `audit` read together as they read several run folders."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, Field

from rubric_audit.core.errors import InputError

MAX_SHARDS = 100_000


class Shard(BaseModel):
    """Shard `index` of `count` (1-based, as K/N is written)."""

    index: int = Field(ge=1)
    count: int = Field(ge=1, le=MAX_SHARDS)

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]) <= MAX_SHARDS:
            raise InputError("--shard", None, f"{text!r} is not K/N with 1 <= K <= N <= "
                                              f"{MAX_SHARDS:,}")
        return cls(index=int(match[1]), count=int(match[2]))

    def holds(self, task_id: str, attempt: int) -> bool:
        """Whether attempt `attempt` of the task is this shard's (sha256 of both, mod N)."""
        digest = hashlib.sha256(f"{task_id}\0{attempt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def folder(self, runs: Path) -> Path:
        """The runs folder this shard writes: `RUNS/shard-K-of-N/`."""
        return Path(runs) / f"shard-{self.index}-of-{self.count}"
