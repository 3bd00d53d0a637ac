"""The reports in an audit's folder and whether they still show its store.

The store records which of its generations the placed reports show and what each file held (its
digest); the site records what it was made from (`SITE_KEY`). Reports whose store has not changed
since and whose files are as placed are not built again: reading them back needs the summary's
models and nothing that builds them (no checks, no numpy), so an audit that reuses a stored one
stays a matter of start-up and a walk of its inputs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from rubric_audit import __version__
from rubric_audit.audit.inputs import CODE, INPUTS_META, TreeDigests
from rubric_audit.report.summary import AuditSummary
from rubric_audit.store.audit_store import AuditStore

FINDINGS = "findings.jsonl"
SUMMARY = "audit.json"
REPORTS = (SUMMARY, "report.md", "report.html", FINDINGS)
REPORTS_META = "reports"
"""The generation of the store the placed reports show, with their files' digests."""
SITE = "site"  # the report's site: a page per task beside report.html
SITE_KEY = ".built"  # in the site: what it was made from, and each page's digest


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def site_key(store: AuditStore, digests: dict[str, str]) -> str | None:
    """What the site's pages are made from, as a hash: an offline audit's inputs (their
    fingerprint holds rubric-audit's own code) and what the reports say of them (outcomes,
    findings, reviewers' labels and notes). None for an audit without a fingerprint (one that
    called a model): its pages are always made again."""
    stored = store.meta(INPUTS_META)
    if not stored or not stored.get("fingerprint"):
        return None
    return hashlib.sha256("\0".join([stored["fingerprint"], digests[SUMMARY],
                                      digests[FINDINGS]]).encode()).hexdigest()


def built(site: Path) -> dict[str, Any]:
    """What the site in place was made from (`SITE_KEY`: its key, rubric-audit's code and each
    page's digest; {} for none, or one this tool cannot read)."""
    record = site / SITE_KEY
    try:
        if site.is_symlink() or not record.is_file():
            return {}
        made = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return made if isinstance(made, dict) else {}


def site_shows(folder: Path, key: str | None) -> bool:
    """Whether the site in `folder` was made from `key` and has every page its record lists, no
    more (the key holds the summary, so the record lists a page for each of its tasks)."""
    site = folder / SITE
    made = built(site)
    pages = made.get("pages")
    return (key is not None and made.get("key") == key and isinstance(pages, dict)
            and {p.relative_to(folder).as_posix() for p in site.rglob("*.html")} == set(pages))


def code_digest() -> str:
    """The digest of rubric-audit's own files: reports and pages made by other code are made
    again."""
    return TreeDigests().digest(CODE).hex()


def state(store: AuditStore, generation: int) -> dict[str, Any]:
    """What the reports show besides the store's rows: its generation, schema and the code."""
    return {"generation": generation, "schema": store.schema_version, "version": __version__,
            "code": code_digest()}


def placed_summary(store: AuditStore, folder: Path) -> AuditSummary | None:
    """The summary of the reports in `folder` if they show the store as it is, else None."""
    placed = store.meta(REPORTS_META)
    if not isinstance(placed, dict) or {k: placed.get(k) for k in ("generation", "schema",
                                                                   "version", "code")} \
            != state(store, store.generation()):
        return None
    files = placed.get("files", {})
    try:
        if any(file_digest((folder / name).read_bytes()) != files.get(name) for name in REPORTS):
            return None
        if not site_shows(folder, site_key(store, files)):
            return None
        return AuditSummary.model_validate_json((folder / SUMMARY).read_bytes())
    except (OSError, ValueError):
        return None
