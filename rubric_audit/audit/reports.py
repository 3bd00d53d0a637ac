"""An audit's reports (findings.jsonl, audit.json, report.md, report.html) and their site (a page
per task): built from the store, placed whole, and built again only when what they show changed.

Every row is read before any report is placed, so a row that cannot be read places none of them;
findings.jsonl is written a finding at a time into a hidden file beside its place, so an archive's
findings are never all in memory. The store records which of its generations the placed reports
show and what each file held (its digest), so that reports whose store has not changed since (no
audit, import, review or label written) and whose files are as placed are not built again
(`placed`: what reads that record back needs nothing of this module's). The site's
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

from pydantic import BaseModel

from rubric_audit.audit.placed import (
    FINDINGS,
    REPORTS_META,
    SITE,
    SITE_KEY,
    SUMMARY,
    built,
    code_digest,
    file_digest,
    site_key,
    site_shows,
    state,
)
from rubric_audit.core.atomic import (
    remove_stale_staging,
    replace_folder,
    staging_folder,
    temporary_sibling,
    write_atomic,
)
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Finding
from rubric_audit.report.html import render_html
from rubric_audit.report.markdown import render_markdown
from rubric_audit.report.site import site_pages
from rubric_audit.report.stats import Interval, remembered
from rubric_audit.report.summarise import build_summary
from rubric_audit.report.summary import AuditSummary
from rubric_audit.store.audit_store import AuditStore


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
    digests = {name: file_digest(text.encode()) for name, text in texts.items()}
    reports = Reports(summary, texts, findings, digests | {FINDINGS: digest.hexdigest()})
    try:
        key = site_key(store, reports.digests)
        if not site_shows(folder, key):
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


def _write_site(store: AuditStore, summary: AuditSummary, findings: list[Finding], site: Path,
                key: str | None, previous: Path) -> None:
    """Every page of the site (report/site.py) into the staging folder `site`, and what they
    were made from (`SITE_KEY`), last. A page whose digest the previous site's record holds, by
    the same code, is that site's file linked in (its bytes and modification time kept), not
    made again: adding a variant or a review makes again only the pages that show it."""
    code = code_digest()
    before = built(previous)
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


def record(store: AuditStore, reports: Reports) -> None:
    """Note in the store (inside the transaction that built them, or alone) which generation the
    reports show, once committed: writing the note changes no generation."""
    store.set_meta(REPORTS_META, {**state(store, store.committed_generation()),
                                  "files": reports.digests}, counted=False)


def write_reports(store: AuditStore, folder: Path) -> AuditSummary:
    """The reports of the store into `folder`."""
    reports = build_reports(store, folder)
    try:
        reports.place(folder)
    finally:
        reports.discard()
    record(store, reports)
    return reports.summary
