"""Atomic writes: processes writing the same file at once, and the user's umask on outputs."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.atomic import write_atomic, write_folder
from tests.conftest import make_benchmark

WRITERS, WRITES = 4, 200


def write_many(path: str, writer: int) -> None:
    text = f"writer {writer}\n" * 500
    for _ in range(WRITES):
        write_atomic(Path(path), text)


def test_processes_writing_one_file_never_collide(tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    with ProcessPoolExecutor(WRITERS) as pool:
        for done in [pool.submit(write_many, str(target), w) for w in range(WRITERS)]:
            done.result()  # a shared temporary name fails here: a rename finds it gone
    lines = target.read_text().splitlines()
    assert len(lines) == 500 and len(set(lines)) == 1, "one writer's whole text"
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"], "no temporary left"


def test_outputs_follow_the_umask(tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path / "bench")
    previous = os.umask(0o022)
    try:
        result = CliRunner().invoke(app, ["audit", str(bench), "--out", str(tmp_path / "out")])
        write_atomic(tmp_path / "note.txt", "x")
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "report.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "note.txt").stat().st_mode) == 0o644


def test_a_folder_written_whole_replaces_the_old_one_or_leaves_it(tmp_path: Path) -> None:
    folder = tmp_path / "defects"
    assert write_folder(folder, {"01-a.md": "a", "02-b.md": "b"}) == [folder / "01-a.md",
                                                                      folder / "02-b.md"]
    write_folder(folder, {"defects.json": "[]"})
    assert sorted(p.name for p in folder.iterdir()) == ["defects.json"], "nothing stale left"
    with pytest.raises(FileNotFoundError):
        write_folder(folder, {"ok.md": "x", "no/such/folder.md": "y"})
    assert sorted(p.name for p in folder.iterdir()) == ["defects.json"], "the old one stands"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["defects"], "no staging left"
