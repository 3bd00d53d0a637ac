"""Tool-call latency of mock_workspace through the real mcp Client, in memory and over stdio.

    python bench/workspace_latency.py [--calls N]

Prints median and p99 per transport, and the p99/median ratio (how heavy the tail is).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from mock_workspace.server import build_server
from mock_workspace.session import Session
from rubric_audit.load.benchmark import load_benchmark

SAMPLE = Path(__file__).resolve().parents[1] / "rubrics" / "sample"
TASK = "nordlys_06"
MIX = [
    ("mail_list", {"limit": 5}),
    ("mail_search", {"text": "net debt"}),
    ("files_read", {"path": "Project_Nordlys/Deal_Memo.md"}),
    ("files_read_sheet", {"path": "Project_Nordlys/Nordlys_Model.xlsx", "sheet": "DCF",
                          "cell_range": "A18:B22"}),
    ("calendar_list", {}),
    ("chat_get_history", {"space": "Project Nordlys deal team"}),
    ("files_list", {}),
]


async def measure(client: Client, calls: int) -> list[float]:
    await client.call_tool(*MIX[3])  # first workbook read computes its formulas once
    times = []
    for i in range(calls):
        name, args = MIX[i % len(MIX)]
        start = time.perf_counter()
        result = await client.call_tool(name, args)
        times.append(time.perf_counter() - start)
        assert not result.is_error, result
    return times


def report(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    median = statistics.median(ordered)
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    print(f"{label:10s} calls={len(times):5d} median={median * 1e3:7.3f} ms "
          f"p99={p99 * 1e3:7.3f} ms p99/median={p99 / median:5.2f} "
          f"throughput={len(times) / sum(times):8.0f} calls/s")


async def main(calls: int) -> None:
    bench = load_benchmark(SAMPLE)
    with Session(bench, bench.task(TASK)) as session:
        async with Client(build_server(session)) as client:
            report("in-memory", await measure(client, calls))
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "rubric_audit", "serve", str(SAMPLE), TASK])
    async with Client(params) as client:
        report("stdio", await measure(client, calls))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    anyio.run(main, parser.parse_args().calls)
