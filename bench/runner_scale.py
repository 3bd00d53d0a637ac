"""The runner at scale: marginal time per attempt against the ideal, and peak memory, beside
inspect_ai on the same fake provider.

    python bench/runner_scale.py [--latency 3] [--concurrency 1000] [--attempts 2000]
                                 [--processes 2] [--no-inspect]

Each attempt makes three model calls (two tool calls, then the answer) against the fake
OpenAI-compatible server of `runner_throughput.py`, in a process of its own. The runner runs a
small batch (a fifth of the concurrency) and then the full number of attempts, each with
`--processes` fresh workers, after an untimed run that starts the server they are forked from
(inspect_ai likewise after an untimed sample); the marginal time is what the extra attempts added,
`(wall(N) - wall(n)) / ideal(N - n)` with `ideal(k) = 3 k latency / concurrency`, so start-up
costs that do not grow with the run are not counted (target at 3 s, concurrency 1,000, 2,000
attempts, two processes: at most 1.15). Peak RSS is the largest sum of resident memory over this
process and all its children (the workers, the server they are forked from), sampled every 0.2
s; the provider is not counted. inspect_ai runs the same two batches in a process of its own
(its own generate loop over chat completions, tools answered in memory, max_connections and max_samples at the
concurrency), timed and sampled the same way.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from runner_throughput import make_bench, serve  # the same benchmark, agent and provider

from rubric_audit.core.llm import ModelConfig
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.run.runner import Budget, Runner
from rubric_audit.run.variants import make_variant

CALLS = 3


class PeakRSS:
    """The largest sum of RSS over a process tree (the provider's process excluded), sampled."""

    def __init__(self, root: int, excluded: set[int]) -> None:
        self.root, self.excluded, self.peak = psutil.Process(root), excluded, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            total = 0
            for proc in [self.root, *self.root.children(recursive=True)]:
                if proc.pid in self.excluded:
                    continue
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += proc.memory_info().rss
            self.peak = max(self.peak, total)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def marginal(walls: dict[int, float], latency: float, concurrency: int) -> float:
    (small, first), (large, second) = sorted(walls.items())
    return (second - first) / (CALLS * (large - small) * latency / concurrency)


def run_ours(url: str, sizes: list[int], args: argparse.Namespace, tmp: Path) -> dict[int, float]:
    bench = load_benchmark(make_bench(tmp / "bench", max(sizes)))
    model = "openai/fake-agent"
    walls = {}
    for size in [args.processes, *sizes]:  # the first, untimed, starts the workers' server
        runner = Runner(bench, tmp / f"runs-{size}", make_variant(model, "bench", None, [], []),
                        ModelConfig(model=model, api_base=url, api_key="sk-test"), Budget())
        todo, _ = runner.plan(bench.tasks[:size], 1)
        start = time.perf_counter()
        states = runner.run_in_processes(todo, args.concurrency, args.processes)
        if size == args.processes:
            continue
        walls[size] = time.perf_counter() - start
        print(f"  rubric-audit {size} attempts: {walls[size]:.1f} s {dict(states)}", flush=True)
    return walls


INSPECT_RUN = """
import json, sys, time
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, execute_tools, get_model
from inspect_ai.solver import solver
from inspect_ai.tool import tool

def listing(reply, summary):
    async def execute() -> str:
        return reply
    execute.__doc__ = summary
    return execute

mail_list = tool(name="mail_list")(lambda: listing("1 message: Budget", "List mail."))
files_list = tool(name="files_list")(lambda: listing("notes.md", "List files."))

@tool
def final_answer():
    async def execute(answer: str) -> str:
        \"\"\"Submit the answer.

        Args:
            answer: The answer.
        \"\"\"
        return answer
    return execute

@solver
def agent():
    async def solve(state, generate):
        tools = [mail_list(), files_list(), final_answer()]
        for _ in range(3):
            output = await get_model().generate(state.messages, tools)
            state.messages.append(output.message)
            calls = output.message.tool_calls or []
            state.messages.extend((await execute_tools([output.message], tools)).messages)
            if any(c.function == "final_answer" for c in calls):
                break
        return state
    return solve

url, concurrency, sizes, logs = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
walls = {}
for size in [1, *sizes]:  # the first, untimed, warms up imports and the connection
    task = Task(dataset=[Sample(input="What is the budget?", id=i) for i in range(size)],
                solver=agent())
    start = time.perf_counter()
    [log] = eval(task, model="openai/fake-agent", model_base_url=url,
                 model_args={"responses_api": False}, max_connections=concurrency,
                 max_samples=concurrency, display="none", log_dir=logs, score=False)
    if size == 1:
        continue
    walls[size] = time.perf_counter() - start
    print(f"  inspect_ai {size} samples: {walls[size]:.1f} s ({log.status})", flush=True)
print(json.dumps(walls))
"""


def run_inspect(url: str, sizes: list[int], concurrency: int, tmp: Path,
                provider: int) -> tuple[dict[int, float], int]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "INSPECT_LOG_LEVEL": "warning"}
    proc = subprocess.Popen([sys.executable, "-c", INSPECT_RUN, url, str(concurrency),
                             json.dumps(sizes), str(tmp / "inspect-logs")],
                            stdout=subprocess.PIPE, text=True, env=env)
    with PeakRSS(proc.pid, {provider}) as memory:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("  "):
                print(line, end="", flush=True)
        proc.wait()
    walls = {int(k): v for k, v in json.loads(lines[-1]).items()}
    return walls, memory.peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--attempts", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--no-inspect", action="store_true", help="skip inspect_ai's run")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    sizes = [max(1, args.concurrency // 5), args.attempts]
    urls: multiprocessing.Queue[str] = multiprocessing.Queue()
    provider = multiprocessing.Process(target=serve, args=(args.latency, urls), daemon=True)
    provider.start()
    url = urls.get(timeout=30)
    print(f"{CALLS} calls per attempt at {args.latency:g} s, concurrency {args.concurrency}, "
          f"{sizes[0]} then {sizes[1]} attempts, --processes {args.processes}")
    assert provider.pid is not None
    with tempfile.TemporaryDirectory() as tmp:
        with PeakRSS(os.getpid(), {provider.pid}) as memory:
            ours = run_ours(url, sizes, args, Path(tmp))
        ratio = marginal(ours, args.latency, args.concurrency)
        print(f"rubric-audit: marginal/ideal {ratio:.2f} (target <= 1.15), peak RSS of all "
              f"processes {memory.peak / 2**20:,.0f} MB (target <= 2,048)")
        if not args.no_inspect:
            theirs, peak = run_inspect(url, sizes, args.concurrency, Path(tmp), provider.pid)
            print(f"inspect_ai: marginal/ideal {marginal(theirs, args.latency, args.concurrency):.2f}"
                  f", peak RSS {peak / 2**20:,.0f} MB (one process)")
    provider.terminate()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
