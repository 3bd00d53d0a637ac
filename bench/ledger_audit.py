"""The offline audit of the sample with a 40 KB general-ledger CSV in a world, against the sample.

Real worlds hold dozens of ledgers: reading one must cost about what its size says (a quadratic
reading once made this 50x). Prints both audits' wall time (imports excluded, each in its own
process) and their ratio (target: within 2x).

    python bench/ledger_audit.py [--rows 600]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "rubrics" / "sample"
LEDGER = "worlds/world_halvorsen_lund/filesystem/Project_Nordlys/GL_2025.csv"
AUDIT_SECONDS = """
import sys, time
from pathlib import Path
from rubric_audit.audit.job import run_audit
started = time.perf_counter()
run_audit(Path(sys.argv[1]), None, Path(sys.argv[2]))
print(time.perf_counter() - started)
"""


def audit_seconds(bench: Path, out: Path) -> float:
    """Wall time of the audit alone, in its own process."""
    done = subprocess.run([sys.executable, "-c", AUDIT_SECONDS, str(bench), str(out)],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def ledger_csv(rows: int) -> str:
    """A general-ledger export: dates, account codes, amounts with separators and negatives."""
    lines = ["date,account,description,debit,credit,balance"]
    balance = 250_000.0
    for i in range(rows):
        debit, credit = (i * 7919) % 50_000 / 4, (i * 104_729) % 40_000 / 8
        balance += debit - credit
        day = f"2025-{i % 12 + 1:02d}-{i % 28 + 1:02d},{4000 + i % 90}"
        if i % 9 == 0:
            lines.append(f"{day},Invoice {10_000 + i} accrual,\"{debit:,.2f}\",\"{credit:,.2f}\","
                         f"\"({balance:,.2f})\"")
        else:
            lines.append(f"{day},Payment {20_000 + i},\"{debit:,.2f}\",\"{credit:,.2f}\","
                         f"\"{balance:,.2f}\"")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain = Path(shutil.copytree(SAMPLE, root / "plain"))
        with_ledger = Path(shutil.copytree(SAMPLE, root / "ledger"))
        csv = ledger_csv(args.rows)
        (with_ledger / LEDGER).write_text(csv)
        base = audit_seconds(plain, root / "out_plain")
        ledger = audit_seconds(with_ledger, root / "out_ledger")
    print(f"sample as it is: {base:.1f} s")
    print(f"with a {len(csv) / 1000:.0f} KB ledger CSV in its world: {ledger:.1f} s")
    print(f"ratio: {ledger / base:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
