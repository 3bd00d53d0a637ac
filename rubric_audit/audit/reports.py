"""An audit's reports (findings.jsonl, audit.json, report.md, report.html) and their site (a page
per task): built from the store, placed whole, and built again only when what they show changed.

Every row is read before any report is placed, so a row that cannot be read places none of them;
findings.jsonl is written a finding at a time into a hidden file beside its place, so an archive's
findings are never all in memory. The store records which of its generations the placed reports
show and what each file held (its digest): reports whose store has not changed since (no audit,
import, review or label written) and whose files are as placed are not built again. The site's
pages are written a page at a time into a hidden folder that takes the previous site's place after
the reports; the site is made again only when what it shows changed (`SITE_KEY`), or a page is
missing or one too many, and then each page only where what it shows changed (its digest): the
others are the previous site's files, linked in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubric_audit import __version__
from rubric_audit.audit.inputs import CODE, INPUTS_META, TreeDigests
from rubric_audit.core.atomic import (
    remove_stale_staging,
    replace_folder,
    staging_folder,
    temporary_sibling,
    write_atomic,
)
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Finding
from rubric_audit.report.document import task_page
from rubric_audit.report.html import render_html
from rubric_audit.report.markdown import render_markdown
from rubric_audit.report.site import site_pages
from rubric_audit.report.stats import Interval, remembered
from rubric_audit.report.summary import AuditSummary, build_summary
from rubric_audit.store.audit_store import AuditStore

FINDINGS = "findings.jsonl"
SUMMARY = "audit.json"
REPORTS_META = "reports"
"""The generation of the store the placed reports show, with their files' digests."""
SITE = "site"  # the report's site: a page per task beside report.html
SITE_KEY = ".built"  # in the site: what it was made from, and each page's digest


@dataclass
class Reports:
    """Reports built and not yet placed: the summary, the texts by file name, findings.jsonl
    already written to a hidden file in the output folder, and the site's pages in a hidden
    folder beside the site (None: the site in place shows what these reports show)."""

    summary: AuditSummary
    texts: dict[str, str]
    findings: Path
    digests: dict[str, str]
    site: Path | None = None

    def place(self, folder: Path) -> None:
        for name, text in self.texts.items():
            write_atomic(folder / name, text)
        os.replace(self.findings, folder / FINDINGS)
        if self.site is not None:
            replace_folder(self.site, folder / SITE)

    def discard(self) -> None:
        self.findings.unlink(missing_ok=True)
        if self.site is not None and self.site.exists():
            shutil.rmtree(self.site)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class SkippedStep(BaseModel):
    """A step the audit did not run, and the option (`enable_with`) that runs it."""

    step: str
    enable_with: str
    needs: str = "a model"


def build_reports(store: AuditStore, folder: Path) -> Reports:
    """Every report from what the store holds, findings.jsonl written beside its place, and the
    site's pages where they do not show what the reports show (`_site_key`)."""
    check_site(folder)
    settings = store.meta("audit", {})
    with remembered(_intervals(store)) as used:
        summary = build_summary(store, settings.get("unavailable_threshold", 0.5),
                                [SkippedStep(**s) for s in settings.get("skipped", [])],
                                settings.get("model_failures", []),
                                settings.get("models_used", []))
    store.replace_intervals({key: i.model_dump_json() for key, i in used.items()})
    findings = temporary_sibling(folder / FINDINGS)
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(findings, "x", encoding="utf-8") as fh:
            for finding in store.iter_findings():
                line = finding.model_dump_json() + "\n"
                fh.write(line)
                digest.update(line.encode())
        every = store.findings()
        tasks = {t.id: t for t in store.tasks()}
        texts = {SUMMARY: json.dumps(summary.model_dump(), indent=2) + "\n",
                 "report.md": render_markdown(summary, every, tasks),
                 "report.html": render_html(summary, every, tasks)}
    except BaseException:
        findings.unlink(missing_ok=True)
        raise
    digests = {name: _digest(text.encode()) for name, text in texts.items()}
    reports = Reports(summary, texts, findings, digests | {FINDINGS: digest.hexdigest()})
    try:
        key = _site_key(store, reports.digests)
        if not _site_shows(folder, key, summary):
            reports.site = staging_folder(folder, f".{SITE}.{os.getpid()}.")
            _write_site(store, summary, every, reports.site, key, folder / SITE)
    except BaseException:
        reports.discard()
        raise
    return reports


def check_site(folder: Path) -> None:
    """Refuse, before anything is written, a `site` that is not a folder of ours (a file, a
    symbolic link); remove what a killed run left of a site being made."""
    target = folder / SITE
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError(target, None, "is not the site folder rubric-audit writes (a file or "
                                       "a symbolic link): move it away")
    remove_stale_staging(target)


def _site_key(store: AuditStore, digests: dict[str, str]) -> str | None:
    """What the site's pages are made from, as a hash: an offline audit's inputs (their
    fingerprint holds rubric-audit's own code) and what the reports say of them (outcomes,
    findings, reviewers' labels and notes). None for an audit without a fingerprint (one that
    called a model): its pages are always made again."""
    stored = store.meta(INPUTS_META)
    if not stored or not stored.get("fingerprint"):
        return None
    return hashlib.sha256("\0".join([stored["fingerprint"], digests[SUMMARY],
                                      digests[FINDINGS]]).encode()).hexdigest()


def _built(site: Path) -> dict[str, Any]:
    """What the site in place was made from (`SITE_KEY`: its key, rubric-audit's code and each
    page's digest; {} for none, or one this tool cannot read)."""
    built = site / SITE_KEY
    try:
        if site.is_symlink() or not built.is_file():
            return {}
        made = json.loads(built.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return made if isinstance(made, dict) else {}


def _site_shows(folder: Path, key: str | None, summary: AuditSummary) -> bool:
    """Whether the site in `folder` was made from `key` and has every task's page, no more."""
    site = folder / SITE
    pages = {task_page(t, name) for t, name in summary.task_names.items()}
    return (key is not None and _built(site).get("key") == key
            and {p.relative_to(folder).as_posix() for p in site.rglob("*.html")} == pages)


def _write_site(store: AuditStore, summary: AuditSummary, findings: list[Finding], site: Path,
                key: str | None, previous: Path) -> None:
    """Every page of the site (report/site.py) into the staging folder `site`, and what they
    were made from (`SITE_KEY`), last. A page whose digest the previous site's record holds, by
    the same code, is that site's file linked in (its bytes and modification time kept), not
    made again: adding a variant or a review makes again only the pages that show it."""
    code = TreeDigests().digest(CODE).hex()
    before = _built(previous)
    kept = before.get("pages", {}) if before.get("code") == code else {}
    pages: dict[str, str] = {}
    for page in site_pages(store, summary, findings):
        parts = page.path.split("/")[1:]  # paths start with site/
        target, earlier = site.joinpath(*parts), previous.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not (kept.get(page.path) == page.digest and _linked(earlier, target)):
            target.write_text(page.render(), encoding="utf-8")
        pages[page.path] = page.digest
    (site / SITE_KEY).write_text(json.dumps({"key": key, "code": code, "pages": pages}),
                                 encoding="utf-8")


def _linked(earlier: Path, target: Path) -> bool:
    """`earlier`, a page of the previous site, linked in as `target` (copied where the file
    system has no hard links); False where it is not a file of its own to keep."""
    if earlier.is_symlink() or not earlier.is_file():
        return False
    try:
        os.link(earlier, target)
    except OSError:
        shutil.copy2(earlier, target)
    return True


def _intervals(store: AuditStore) -> dict[str, Interval]:
    """The intervals the store kept (one it cannot read is computed again)."""
    known = {}
    for key, raw in store.intervals().items():
        try:
            known[key] = Interval.model_validate_json(raw)
        except ValueError:
            continue
    return known


def _state(store: AuditStore, generation: int) -> dict[str, Any]:
    """What the reports show besides the store's rows: its generation, schema and the code."""
    return {"generation": generation, "schema": store.schema_version, "version": __version__,
            "code": TreeDigests().digest(CODE).hex()}


def record(store: AuditStore, reports: Reports) -> None:
    """Note in the store (inside the transaction that built them, or alone) which generation the
    reports show, once committed: writing the note changes no generation."""
    store.set_meta(REPORTS_META, {**_state(store, store.committed_generation()),
                                  "files": reports.digests}, counted=False)


def placed_summary(store: AuditStore, folder: Path) -> AuditSummary | None:
    """The summary of the reports in `folder` if they show the store as it is, else None."""
    placed = store.meta(REPORTS_META)
    if not isinstance(placed, dict) or {k: placed.get(k) for k in ("generation", "schema",
                                                                   "version", "code")} \
            != _state(store, store.generation()):
        return None
    files = placed.get("files", {})
    try:
        if any(_digest((folder / name).read_bytes()) != files.get(name)
               for name in (SUMMARY, "report.md", "report.html", FINDINGS)):
            return None
        summary = AuditSummary.model_validate_json((folder / SUMMARY).read_bytes())
        return summary if _site_shows(folder, _site_key(store, files), summary) else None
    except (OSError, ValueError):
        return None


def current_reports(store: AuditStore, folder: Path) -> AuditSummary:
    """The reports of the store into `folder`, unless those there already show it."""
    summary = placed_summary(store, folder)
    return summary if summary is not None else write_reports(store, folder)


def write_reports(store: AuditStore, folder: Path) -> AuditSummary:
    """The reports of the store into `folder`."""
    reports = build_reports(store, folder)
    try:
        reports.place(folder)
    finally:
        reports.discard()
    record(store, reports)
    return reports.summary
