"""An attempt's artifacts: the files it left for the judge, as names and, when asked, their bytes.

Two kinds of name are recorded in `Attempt.artifacts`, both relative to the attempt folder:
- `artifacts/<path>`: a file our runner (or a harness like it) exported beside the attempt;
- `final_snapshot.zip!<entry>`: an entry of the workspace snapshot Archipelago saves after the
  agent ran, which its judge grades. Only the files the agent created or changed are artifacts:
  those whose CRC-32 and size differ from the same file in `original_snapshot.zip` (every file,
  when there is no original), under `filesystem/` or `.apps_data/`, leaving out what Archipelago's
  own grader leaves out (grading/runner/helpers/snapshot_diff: hidden files, the environment
  coordinator's `.apps_data/.coordinator/`, `__pycache__` and compiled Python, `__MACOSX`).

Snapshot entries are never extracted: they are listed from the zip's directory once the zip passed
the checks a world zip passes (`limits.check_zip`), and read in memory through `limits.read_zip`
when a judge or a reader wants them. A symbolic link is no artifact (it could name any file here).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from rubric_audit.core.errors import InputError, files_under, read_bytes
from rubric_audit.core.limits import ZIP_ERRORS, check_zip, read_zip, safe_member_name

ARTIFACTS_DIR = "artifacts"
FINAL_SNAPSHOT = "final_snapshot.zip"
ORIGINAL_SNAPSHOT = "original_snapshot.zip"
SEPARATOR = "!"
SUBSYSTEMS = ("filesystem/", ".apps_data/")
HARNESS_DIRS = (".coordinator",)
NEVER_DELIVERABLE_DIRS = ("__pycache__", "__MACOSX")
NEVER_DELIVERABLE_SUFFIXES = (".pyc", ".pyo")


def exported_files(folder: Path) -> list[Path]:
    """The files under an attempt's `artifacts/` folder; a symbolic link is none of them."""
    artifacts = folder / ARTIFACTS_DIR
    if not artifacts.is_dir() or artifacts.is_symlink():
        return []
    return sorted(files_under(artifacts))


def _graded_path(name: str) -> str | None:
    """The snapshot path the judge sees an entry as (from its first `filesystem/` or
    `.apps_data/` on, so a wrapping folder does not matter), or None when the grader skips it."""
    starts = [(name.find(prefix), prefix) for prefix in SUBSYSTEMS if prefix in name]
    if not starts:
        return None
    start, prefix = min(starts)
    if start and name[start - 1] != "/":
        return None
    parts = name[start + len(prefix):].split("/")
    if not parts[-1]:
        return None
    hidden = parts if prefix == "filesystem/" else parts[-1:]
    if (any(part.startswith(".") for part in hidden)
            or (prefix == ".apps_data/" and parts[0] in HARNESS_DIRS)
            or any(part in NEVER_DELIVERABLE_DIRS for part in name.split("/"))
            or name.endswith(NEVER_DELIVERABLE_SUFFIXES)):
        return None
    return prefix + "/".join(parts)


def _listing(archive: Path) -> dict[str, tuple[str, int, int]]:
    """Graded path -> (entry name, CRC-32, size) of a zip's file entries, from its directory."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
    except ZIP_ERRORS as exc:
        raise InputError(archive, None, f"unreadable zip: {exc}") from None
    listing: dict[str, tuple[str, int, int]] = {}
    for info in infos:
        name = safe_member_name(info.filename)
        graded = _graded_path(name) if name else None
        if name and graded:
            listing.setdefault(graded, (name, info.CRC, info.file_size))
    return listing


def snapshot_artifacts(folder: Path) -> list[str]:
    """The final snapshot's entries the agent created or changed, as `final_snapshot.zip!entry`
    (none without a final snapshot). The final snapshot is checked like a world zip first."""
    final = folder / FINAL_SNAPSHOT
    if not final.is_file() or final.is_symlink():
        return []
    check_zip(final, final)
    original = folder / ORIGINAL_SNAPSHOT
    before = (_listing(original) if original.is_file() and not original.is_symlink() else {})
    return sorted(f"{FINAL_SNAPSHOT}{SEPARATOR}{name}"
                  for graded, (name, crc, size) in _listing(final).items()
                  if before.get(graded, ("", None, None))[1:] != (crc, size))


def attempt_artifacts(folder: Path) -> list[str]:
    """Every artifact of the attempt folder: exported files, then snapshot entries."""
    return ([p.relative_to(folder).as_posix() for p in exported_files(folder)]
            + snapshot_artifacts(folder))


def shown_name(artifact: str) -> str:
    """An artifact's name as a reader sees it: inside its container (the artifacts folder or the
    snapshot), without the container's name."""
    _, separator, entry = artifact.partition(SEPARATOR)
    if separator:
        return entry
    return artifact.removeprefix(f"{ARTIFACTS_DIR}/")


def read_artifacts(source: Path, artifacts: list[str]) -> dict[str, bytes]:
    """The bytes of each artifact that is still there, by its recorded name: exported files read
    size-capped (never through a link), snapshot entries read in memory from their zip after
    the zip's checks. What no longer exists is left out."""
    out: dict[str, bytes] = {}
    entries: dict[str, list[str]] = {}
    for artifact in artifacts:
        container, separator, entry = artifact.partition(SEPARATOR)
        if safe_member_name(container) is None:  # absolute or climbing out: not ours to read
            continue
        if separator:
            entries.setdefault(container, []).append(entry)
            continue
        path = source / artifact
        if path.is_file() and not path.is_symlink():
            out[artifact] = read_bytes(path)
    for container, names in entries.items():
        archive = source / container
        if not archive.is_file() or archive.is_symlink():
            continue
        found = read_zip(archive, set(names))
        out.update({f"{container}{SEPARATOR}{name}": found[name] for name in names
                    if name in found})
    return out
