"""Runner throughput against a fake OpenAI-compatible server with a fixed latency per call.

    python bench/runner_throughput.py [--tasks 200] [--latency 0.1] [--concurrency 20]

Every attempt makes three model calls (two tool calls, then final_answer). Prints the wall time,
the ideal (calls x latency / concurrency) and their ratio (target: at most 1.25), and the CPU the
run used per model call: when that times the calls exceeds the ideal, the run is CPU-bound and
the ratio is set by litellm's per-call work, not by waiting.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rubric_audit.llm import ModelConfig
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.runner import Budget, Runner
from rubric_audit.variants import make_variant
from tests.fakes.openai_server import FakeOpenAI, tool_call

MBOX = ("From a@firm.test Mon Mar 03 09:00:00 2025\nMessage-ID: <m1@firm.test>\n"
        "Date: Mon, 03 Mar 2025 09:00:00 +0000\nFrom: a@firm.test\nTo: b@firm.test\n"
        "Subject: Budget\n\nThe budget is 1.2m.\n\n")


def make_bench(root: Path, tasks: int) -> Path:
    world = root / "worlds" / "w"
    (world / "filesystem").mkdir(parents=True)
    (world / "filesystem" / "notes.md").write_text("Budget notes.\n")
    (world / ".apps_data" / "mail").mkdir(parents=True)
    (world / ".apps_data" / "mail" / "inbox.mbox").write_text(MBOX)
    (root / "world_descriptions.json").write_text(json.dumps([{"world_id": "w"}]))
    (root / "tasks_and_rubrics.json").write_text(json.dumps([
        {"task_id": f"task_{i:04d}", "world_id": "w", "prompt": "What is the budget?",
         "rubric": [{"verifier_id": f"v{i}", "criteria": "States 1.2m"}]}
        for i in range(tasks)]))
    return root


def agent(body: dict) -> object:
    turn = sum(m["role"] == "tool" for m in body["messages"])
    return [tool_call("mail_list", {}), tool_call("files_list", {}),
            tool_call("final_answer", {"answer": "1.2m"})][min(turn, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(agent, latency=args.latency) as server:
        bench = load_benchmark(make_bench(Path(tmp) / "bench", args.tasks))
        model = "openai/fake-agent"
        runner = Runner(bench, Path(tmp) / "runs", make_variant(model, "bench", None, [], []),
                        ModelConfig(model=model, api_base=server.url, api_key="sk-test"),
                        Budget())
        todo, _ = runner.plan(bench.tasks, 1)
        anyio.run(runner.run, todo[:1], 1)  # warm up: imports and first connection
        start, cpu_start = time.perf_counter(), time.process_time()
        states = anyio.run(runner.run, todo[1:], args.concurrency)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        calls = len(server.requests) - 3
    ideal = calls * args.latency / args.concurrency
    print(f"attempts={len(todo) - 1} states={dict(states)} model_calls={calls}")
    print(f"wall={wall:.2f}s ideal={ideal:.2f}s ratio={wall / ideal:.2f} (target <= 1.25)")
    print(f"cpu={cpu:.2f}s ({cpu / calls * 1000:.1f} ms per model call, including the "
          f"workspace and the fake server's threads)")


if __name__ == "__main__":
    main()
