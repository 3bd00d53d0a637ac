"""Runner throughput against a fake OpenAI-compatible server with a fixed latency per call.

    python bench/runner_throughput.py [--tasks 200] [--latency 0.1] [--concurrency 20]

Every attempt makes three model calls (two tool calls, then final_answer). Prints the wall time,
the ideal (calls x latency / concurrency) and their ratio (target with --processes 2: at most
1.5), and the CPU the runner used per attempt (target: at most 20 ms) and per model call, worker
processes included: when that times the attempts exceeds the ideal, the run is CPU-bound and the
ratio is set by per-call work, not by waiting. The fake provider runs in a separate process so
that its work is not charged to the runner.

It also measures the model library alone on this machine: the same calls through `llm.complete`
(litellm) with the runner's tools and no workspace, the three requests of the warm-up attempt
(its conversation as it grew, tool results included) replayed. Three of those are the floor of an
attempt's CPU, whatever the runner does; the rest is the runner's own (workspace session, MCP,
files).
That difference is of two noisy figures on a shared machine, so the runner's own work is also
measured directly: the same attempts in this process with each model call answered at once by
the agent's script (`complete` replaced in the runner; no model library, no HTTP), best of three.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from unittest import mock

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rubric_audit.core.llm import Completion, ModelConfig, complete
from rubric_audit.core.model import Usage
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.run.runner import Budget, Runner
from rubric_audit.run.variants import make_variant
from tests.fakes.openai_server import FakeOpenAI, Reply, tool_call

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


def serve(latency: float, port: multiprocessing.Queue) -> None:
    """The fake provider in its own process, so its work does not compete with the runner's."""
    with FakeOpenAI(agent, latency=latency) as server:
        port.put(server.url)
        threading.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--processes", type=int, default=1,
                        help="worker processes for the runner (the machine's cores)")
    args = parser.parse_args()
    urls: multiprocessing.Queue = multiprocessing.Queue()
    provider = multiprocessing.Process(target=serve, args=(args.latency, urls), daemon=True)
    provider.start()
    url = urls.get(timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        bench = load_benchmark(make_bench(Path(tmp) / "bench", args.tasks))
        model = "openai/fake-agent"
        runner = Runner(bench, Path(tmp) / "runs", make_variant(model, "bench", None, [], []),
                        ModelConfig(model=model, api_base=url, api_key="sk-test"), Budget())
        todo, _ = runner.plan(bench.tasks, 1)
        anyio.run(runner.run, todo[:1], 1)  # warm up: imports and first connection
        recorded = runner.folder / todo[0][0].id / "attempt_1" / "trajectory.json"
        messages = json.loads(recorded.read_text())["messages"]
        requests = [messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"]
        per_call = _model_library_alone(runner, requests, len(todo) - 1, args.concurrency)
        start, cpu_start = time.perf_counter(), _cpu()
        states = runner.run_in_processes(todo[1:], args.concurrency, args.processes)
        wall, cpu = time.perf_counter() - start, _cpu() - cpu_start
        calls = 3 * (len(todo) - 1)
        alone = _runner_alone(bench, Path(tmp), runner, len(todo) - 1, args.concurrency)
    provider.terminate()
    ideal = calls * args.latency / args.concurrency
    print(f"attempts={len(todo) - 1} states={dict(states)} model_calls={calls} "
          f"processes={args.processes}")
    print(f"wall={wall:.2f}s ideal={ideal:.2f}s ratio={wall / ideal:.2f} (target <= 1.5 with "
          f"--processes 2)")
    attempts = len(todo) - 1
    print(f"runner cpu={cpu:.2f}s: {cpu / attempts * 1000:.1f} ms per attempt (target <= 20), "
          f"{cpu / calls * 1000:.1f} ms per model call, workspace included; the fake provider "
          f"runs in its own process")
    print(f"model library alone: {per_call * 1000:.1f} ms CPU per call, so {3 * per_call * 1000:.1f} "
          f"ms of each attempt; the runner's own work: "
          f"{(cpu / attempts - 3 * per_call) * 1000:.1f} ms per attempt")
    print(f"the runner's own work measured directly (model calls answered in process): "
          f"{alone * 1000:.2f} ms per attempt (target <= 5)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


def _model_library_alone(runner: Runner, requests: list[list[dict[str, Any]]], attempts: int,
                         concurrency: int) -> float:
    """CPU seconds per `llm.complete` call with the runner's tools: an attempt's `requests`
    (its conversation before each model call) sent `attempts` times, `concurrency` calls at a
    time, in this process (no workspace, no files)."""
    async def calls_at_once() -> None:
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(messages: list[dict[str, Any]]) -> None:
            async with limiter:
                await complete(runner.model, messages, tools=runner.tools)

        async with anyio.create_task_group() as group:
            for _ in range(attempts):
                for messages in requests:
                    group.start_soon(one, messages)

    start = _cpu()
    anyio.run(calls_at_once)
    return (_cpu() - start) / (attempts * len(requests))


def _runner_alone(bench: Any, tmp: Path, runner: Runner, attempts: int,
                  concurrency: int) -> float:
    """CPU seconds per attempt of the runner alone: `attempts` attempts in this process with
    `complete` answered at once from the agent's script, best of three runs into new folders."""
    async def scripted(config: ModelConfig, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **extra: Any) -> Completion:
        reply = agent({"messages": messages})
        assert isinstance(reply, Reply) and reply.message is not None
        return Completion(message=reply.message, usage=Usage(**reply.usage),
                          finish_reason="tool_calls")

    best = float("inf")
    with mock.patch("rubric_audit.run.runner.complete", scripted):
        for run in range(3):
            alone = Runner(bench, tmp / f"runs-alone-{run}", runner.variant, runner.model,
                           runner.budget)
            todo, _ = alone.plan(bench.tasks, 1)
            anyio.run(alone.run, todo[:1], 1)  # its server built, its first client connected
            start = _cpu()
            anyio.run(alone.run, todo[1:attempts + 1], concurrency)
            best = min(best, (_cpu() - start) / attempts)
    return best


def _cpu() -> float:
    """CPU seconds of this process and of its finished worker processes (not the provider's,
    which is still running)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
