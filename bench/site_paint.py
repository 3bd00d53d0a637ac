"""The report and its site at 1,000 tasks: time to first paint in headless Chromium.

    python bench/site_paint.py [--tasks 1000] [--variants 2] [--attempts 2] [--loads 3]

Builds a benchmark of --tasks tasks from `rubrics/sample` (bench/audit_scale.py's copies), audits
it offline in its own process, then writes its reports and site again (`rubric-audit report`),
and opens report.html and the largest task page in Debian's headless Chromium (driven over the
DevTools protocol, tests/browser.py) --loads times each. Prints the audit's and the report's wall
times, the sizes written, and per page the median time from navigation to first contentful paint
and to the load event, with the slowest (target for report.html at 1,000 tasks: first paint
under 2 s), the load average and what filtering the Tasks table by a word takes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.audit_scale import audit_in_process, build_benchmark  # noqa: E402
from tests.browser import CHROMIUM, Browser  # noqa: E402

TIMINGS = """(() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const navigation = performance.getEntriesByType("navigation")[0];
  return [paint ? paint.startTime : null, navigation.loadEventEnd];
})()"""
FILTER = """(() => {
  const box = document.querySelector("input[data-filter=tasks]");
  const start = performance.now();
  box.value = "kestrel_05";
  box.dispatchEvent(new Event("input", {bubbles: true}));
  return [performance.now() - start, document.getElementById("tasks-count").textContent];
})()"""


def paint(browser: Browser, page: Path, loads: int) -> tuple[list[float], list[float]]:
    """Milliseconds from navigation to first contentful paint and to the load event, per load."""
    painted, loaded = [], []
    for _ in range(loads):
        browser.open("about:blank")
        browser.open(page)
        first, load = browser.evaluate(TIMINGS)
        if first is None:  # painted after the load event: wait for the entry
            time.sleep(0.5)
            first = browser.evaluate(TIMINGS)[0]
        painted.append(float(first))
        loaded.append(float(load))
    return painted, loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    if CHROMIUM is None:
        raise SystemExit("needs Debian's chromium on PATH (apt-get install chromium)")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        bench, out = Path(tmp) / "bench", Path(tmp) / "out"
        attempts = build_benchmark(bench, args.tasks, args.variants, args.attempts)
        wall, cpu, rss = audit_in_process(bench, out)
        print(f"audit of {args.tasks} tasks, {attempts} attempts: {wall:.1f}s wall, {cpu:.1f}s "
              f"CPU, peak RSS {rss} MB")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rubric_audit", "report", str(out)], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
        print(f"report (reports and site written again): {time.perf_counter() - start:.1f}s")
        pages = sorted((out / "site" / "tasks").iterdir(), key=lambda p: p.stat().st_size)
        site = sum(p.stat().st_size for p in pages)
        report = out / "report.html"
        print(f"report.html {report.stat().st_size / 1e6:.2f} MB; site: {len(pages)} pages, "
              f"{site / 1e6:.1f} MB, the largest {pages[-1].stat().st_size / 1e3:.0f} kB")
        with Browser(Path(tmp)) as browser:
            for name, page in (("report.html", report), ("largest task page", pages[-1])):
                painted, loaded = paint(browser, page, args.loads)
                print(f"{name}: first contentful paint {statistics.median(painted):.0f} ms "
                      f"(slowest {max(painted):.0f}), load event {statistics.median(loaded):.0f} "
                      f"ms (slowest {max(loaded):.0f}) over {args.loads} loads")
            browser.open(report)
            took, shown = browser.evaluate(FILTER)
            print(f"filtering the Tasks table by a word: {took:.0f} ms ({shown})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
