"""What an audit need not do again: the keys of what each of its stages reads.

A stage stores the key of its inputs when it runs (`STAGES_META`); an audit whose inputs have the
key the stage stored does not run it again. The keys are fingerprints (`inputs.TreeDigests`: the
files' names, sizes and modification times) of the benchmark and of each Archipelago variant
folder, with rubric-audit's own code, and digests of the stored rows a stage reads: the tasks'
versions, the workbooks gold recomputation computed, the controls' recorded verdicts. Checks per
attempt also run on the attempts an import added or changed (the store's `unchecked`), so an audit
of an archive with a variant added checks that variant and nothing else.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rubric_audit.audit.inputs import CODE, TreeDigests, combined, inputs_fingerprint
from rubric_audit.core.model import Benchmark
from rubric_audit.load.sources import Source
from rubric_audit.store.audit_store import AuditStore, SourceRecord

STAGES_META = "stages"
"""The key of the inputs each stage last ran on, by stage."""


class Freshness:
    """The keys of one audit's inputs, each file stat'ed once (one walk of the inputs)."""

    def __init__(self, bench_path: Path | None, run_paths: list[Path], out: Path) -> None:
        self.bench_path, self.run_paths, self.out = bench_path, run_paths, out.resolve()
        self.digests = TreeDigests(self.out)
        self.code = self.digests.digest(CODE).hex()

    def inputs(self, settings: dict[str, object]) -> str:
        """Every input file, the settings and the code: an audit of the same is reused whole."""
        return inputs_fingerprint([p for p in [self.bench_path, *self.run_paths]
                                   if p is not None], settings, self.out, self.digests)

    def _bench(self) -> str | None:
        """The benchmark's files but its run folders (each a source of its own)."""
        if self.bench_path is None:
            return None
        root = self.bench_path.resolve()
        runs = {p.resolve() for p in self.run_paths}
        if not any(r.is_relative_to(root) for r in runs):
            return combined([(str(root), self.digests.digest(root))])
        if any(r.parent != root for r in runs if r.is_relative_to(root)):
            return combined([(str(root), self.digests.digest(root))])  # deeper: all of it
        return combined([(str(child), self.digests.digest(child))
                         for child in sorted(root.iterdir())
                         if child not in runs and child != self.out])

    def lints_key(self, bench: Benchmark | None) -> str | None:
        """The benchmark's static checks and gold recomputation read its files and nothing else
        (None without a benchmark: they read the tasks the runs recorded)."""
        files = self._bench() if bench is not None else None
        return combined([], {"code": self.code, "bench": files}) if files else None

    def tasks_key(self, store: AuditStore) -> str:
        """Checks that read the stored tasks (every attempt's, when a task changed)."""
        return combined([], {"code": self.code, "tasks": store.tasks_digest()})

    def workbooks_key(self, store: AuditStore, tasks: str) -> str:
        """Answer provenance reads the tasks and what their workbooks compute."""
        return combined([], {"tasks": tasks, "workbooks": store.workbooks_digest()})

    def controls_key(self, store: AuditStore) -> str:
        """The controls in code read the tasks and every verdict on a control not theirs."""
        return combined([], {"tasks": self.tasks_key(store),
                             "verdicts": store.control_verdicts_digest()})

    def unread_sources(self, store: AuditStore, sources: list[Source], bench: Benchmark | None
                       ) -> tuple[dict[Path, SourceRecord], dict[str, str]]:
        """The Archipelago variant folders unchanged since the store's last import of them (not
        read again: their attempts are stored as they are), and the key of every variant folder.

        Only where every source is an Archipelago variant folder of a name no other has: an
        attempt's id is its variant folder's name, task and number, so a folder not read could
        hold a recording of an id another source reads (`input_id_collision`) only then."""
        keys = {str(v): combined([(str(v), self.digests.digest(v))],
                                 {"code": self.code, "bench": self._bench() if bench else None})
                for source in sources for v in source.variants}
        names = Counter(v.name for source in sources for v in source.variants)
        if any(source.format != "archipelago" for source in sources):
            return {}, keys
        unread = {}
        for source in sources:
            for variant in source.variants:
                record = store.source(str(variant))
                if record is not None and record.key == keys[str(variant)] \
                        and names[variant.name] == 1:
                    unread[variant] = record
        return unread, keys
