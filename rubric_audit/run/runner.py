"""The agent runner: any litellm model against the workspace, writing Archipelago run folders.

Each (task, attempt) gets a fresh workspace session, the workspace tools plus `final_answer`
through litellm tool calling, and a loop that ends at final_answer or when a budget (steps,
tokens, wall time) runs out. One workspace server serves all of a runner's sessions, each call
naming its attempt's (`mock_workspace.attempts`), through one MCP client while `run` runs.
Attempts are written to a hidden temporary folder and renamed to
`<runs>/<variant>/<task_id>/attempt_<k>/` when complete, so an interrupted run leaves no
half-written attempt and a rerun skips what is finished.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import multiprocessing
import multiprocessing.connection
import os
import random
import shutil
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, Field

from rubric_audit.core.atomic import staging_folder, write_atomic
from rubric_audit.core.errors import InputError, input_error_in, read_model
from rubric_audit.core.llm import AGENT_OUTPUT_CAP, ModelConfig, ModelUnavailable, complete
from rubric_audit.core.model import Benchmark, Task, Usage
from rubric_audit.load.runs import (
    AgentConfig,
    RecordedTrajectory,
    RecordedUsage,
    RecordedVerifier,
    Verifiers,
    VerifierValues,
)
from rubric_audit.load.world import WorldReader
from rubric_audit.run.shard import Shard
from rubric_audit.run.variants import Variant

if TYPE_CHECKING:  # imported where used: a Runner that only plans never loads mcp
    from mock_workspace.attempts import KeyedSessions

NUDGE = "No tool was called. Use the tools, or call final_answer to submit your answer."
CUT_NUDGE = ("Your reply ran into the output cap of {cap} tokens and was cut. Reply shorter: "
             "call one tool, or call final_answer.")
FINAL_ANSWER_TOOL = {"type": "function", "function": {
    "name": "final_answer",
    "description": "Submit your complete answer to the task. Call it once, when you are done.",
    "parameters": {"type": "object", "required": ["answer"], "properties": {
        "answer": {"type": "string", "description": "Your complete answer."}}}}}
RESULT_COLUMNS = ["task_id", "domain", "world_id", "status", "agent_status", "steps_used",
                  "wall_time_seconds", "agent_prompt_tokens", "agent_completion_tokens",
                  "agent_total_tokens", "agent_cost", "agent_model", "variant", "attempt"]

State = Literal["completed", "budget_exhausted", "unavailable"]


class Budget(BaseModel):
    max_steps: int = Field(50, ge=1)
    max_tokens: int | None = Field(None, ge=1, description="total tokens over the attempt")
    timeout: float = Field(1800.0, gt=0, description="wall seconds for the attempt")


class AttemptResult(BaseModel):
    """How one attempt ended (`run_result.json` in its folder)."""

    task_id: str
    attempt: int
    model: str
    variant: str
    state: State
    reason: str | None = None
    steps: int = 0
    usage: Usage = Field(default_factory=Usage.zero)
    wall_time: float = 0.0


class RunSummary(BaseModel):
    planned: int
    skipped: int
    states: dict[str, int]


def select_tasks(bench: Benchmark, ids: list[str] | None, sample: int | None,
                 seed: int) -> list[Task]:
    """The tasks named (by id or name), or a seeded random sample, in benchmark order."""
    if ids:
        return [bench.named(key, "--tasks") for key in ids]
    if sample is not None:
        picked = set(t.id for t in random.Random(seed).sample(bench.tasks,
                                                              min(sample, len(bench.tasks))))
        return [t for t in bench.tasks if t.id in picked]
    return list(bench.tasks)


def existing_attempts(task_dir: Path) -> list[int]:
    return sorted(int(p.name.removeprefix("attempt_")) for p in task_dir.glob("attempt_*")
                  if p.is_dir() and p.name.removeprefix("attempt_").isdecimal())


def _tool_text(result: Any) -> str:
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return f"ERROR: {text}" if result.is_error else text


def _json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _write_new_files(folder: Path, files: dict[str, str]) -> None:
    """Write each text (UTF-8) as a new file in `folder`, an attempt's staging folder: one open,
    write and close a file, without the layers of Python's buffered text files (an attempt
    writes seven). A file already there is an error, never written through."""
    for name, text in files.items():
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            data = memoryview(text.encode("utf-8"))
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)


class Runner:
    """Runs attempts of one model and variant on a benchmark into a runs folder."""

    def __init__(self, bench: Benchmark, runs: Path, variant: Variant, model: ModelConfig,
                 budget: Budget) -> None:
        self.bench = bench
        self.runs = Path(runs)
        self.variant = variant
        self.model = model
        self.budget = budget
        self.folder = Path(runs) / variant.name
        # The workspace tools and final_answer as model tools, known after the first session.
        self.tools: list[dict[str, Any]] | None = None
        # The server answers the protocol handshake alike for every client: the first client's
        # answer is adopted by the rest instead of asking again.
        self._discovered: Any = None
        # Each world read and parsed once per process, not once per attempt.
        self._worlds = WorldReader(bench, with_text=False)
        # One workspace server for every attempt, built for the first: each attempt opens its
        # session in `_sessions` under a key its calls name. `_shared` is the client `run` keeps
        # open for its attempts.
        self._sessions: KeyedSessions | None = None
        self._server: Any = None
        self._shared: Any = None

    def _keyed_sessions(self) -> KeyedSessions:
        """The sessions open on the runner's workspace server, the server built at first."""
        from mock_workspace.attempts import KeyedSessions
        from mock_workspace.server import build_server

        if self._sessions is None:
            self._sessions = KeyedSessions()
            self._server = build_server(self._sessions)
        return self._sessions

    async def _agent_loop(self, client: Any, meta: dict[str, Any],
                          messages: list[dict[str, Any]], result: AttemptResult) -> str | None:
        if self.tools is None:  # every session serves the same tools: convert them once
            self.tools = [{"type": "function", "function": {
                "name": t.name, "description": t.description or "",
                "parameters": t.input_schema}} for t in (await client.list_tools()).tools]
            self.tools.append(FINAL_ANSWER_TOOL)
        tools = self.tools
        while True:
            if result.steps >= self.budget.max_steps:
                raise _BudgetExhausted(f"step budget of {self.budget.max_steps} used up")
            if self.budget.max_tokens and (result.usage.total_tokens or 0) >= self.budget.max_tokens:
                raise _BudgetExhausted(f"token budget of {self.budget.max_tokens} used up")
            reply = await complete(self.model, messages, tools=tools)
            result.steps += 1
            result.usage = result.usage.plus(reply.usage)
            messages.append(reply.message)
            calls = reply.message.get("tool_calls") or []
            if not calls:
                cut = reply.finish_reason == "length"
                messages.append({"role": "user", "content": CUT_NUDGE.format(
                    cap=self.output_cap) if cut else NUDGE})
                continue
            answer = None
            for call in calls:
                name, raw = call["function"]["name"], call["function"]["arguments"]
                try:
                    args = json.loads(raw or "{}")
                    if not isinstance(args, dict):
                        raise ValueError("arguments must be a JSON object")
                except ValueError as exc:
                    content = f"ERROR: the arguments are not valid JSON ({exc}); try again."
                else:
                    if name == "final_answer" and isinstance(given := args.get("answer"), str):
                        answer = content = given
                    elif name == "final_answer":
                        content = "ERROR: final_answer needs an 'answer' string."
                    else:
                        content = _tool_text(await client.call_tool(name, args, meta=meta))
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": name,
                                 "content": content})
            if answer is not None:
                return answer

    @property
    def output_cap(self) -> int:
        """The output cap of each of the agent's steps."""
        return self.model.max_output_tokens or AGENT_OUTPUT_CAP

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        """A new mcp client of the workspace server, adopting the first client's handshake."""
        from mcp import Client

        self._keyed_sessions()  # builds the server at first
        client = Client(self._server) if self._discovered is None else Client(
            self._server, mode=self._discovered.supported_versions[0],
            prior_discover=self._discovered)
        async with client:
            self._discovered = client.session.discover_result
            yield client

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """The client `run` keeps open, or, for an attempt run on its own (a Ray actor's), a
        client of its own."""
        if self._shared is not None:
            yield self._shared
            return
        async with self._client() as client:
            yield client

    async def run_attempt(self, task: Task, index: int) -> AttemptResult:
        """One attempt, written atomically to attempt_<index>/."""
        from mock_workspace.session import Session
        from mock_workspace.telemetry import Telemetry

        task_dir = self.folder / task.id
        task_dir.mkdir(parents=True, exist_ok=True)
        staging = staging_folder(task_dir, f".attempt_{index}.partial-")
        result = AttemptResult(task_id=task.id, attempt=index, model=self.model.model,
                               variant=self.variant.name, state="completed")
        messages = [{"role": "system", "content": self.variant.system_prompt},
                    {"role": "user", "content": task.prompt}]
        initial = [dict(m) for m in messages]
        answer = None
        telemetry = Telemetry()  # its lines are written with the attempt's other files
        started = time.monotonic()
        try:
            with Session(self.bench, task, self._worlds) as session, \
                    self._keyed_sessions().opened(session, telemetry) as meta:
                try:
                    with anyio.fail_after(self.budget.timeout):
                        async with self._connection() as client:
                            # Handled inside: the client's task group would wrap them in a group.
                            try:
                                answer = await self._agent_loop(client, meta, messages, result)
                            except _BudgetExhausted as exc:
                                result.state, result.reason = "budget_exhausted", str(exc)
                            except ModelUnavailable as exc:
                                result.state, result.reason = "unavailable", exc.reason
                except TimeoutError:
                    result.state = "budget_exhausted"
                    result.reason = f"wall-time budget of {self.budget.timeout:g} s used up"
                session.export(staging / "artifacts")
            result.wall_time = round(time.monotonic() - started, 3)
            self._write_attempt(staging, task, result, initial, messages, answer,
                                telemetry.lines)
            staging.rename(task_dir / f"attempt_{index}")
        finally:
            if staging.exists():
                shutil.rmtree(staging)
        return result

    def _write_attempt(self, folder: Path, task: Task, result: AttemptResult,
                       initial: list[dict[str, Any]], messages: list[dict[str, Any]],
                       answer: str | None, telemetry: list[str]) -> None:
        status = {"completed": "completed", "budget_exhausted": "budget_exhausted",
                  "unavailable": "failed"}[result.state]
        files = {"initial_messages.json": _json_text(initial),
                 "verifiers.json": _json_text(Verifiers.dump_python([
                     RecordedVerifier(verifier_id=c.id, verifier_version=1,
                                      world_id=task.world_id, task_id=task.id,
                                      eval_config_id="ec_output_llm",
                                      verifier_values=VerifierValues(
                                          criteria=c.text, is_primary_objective=c.primary),
                                      verifier_index=i)
                     for i, c in enumerate(task.criteria)], mode="json")),
                 "trajectory.json": _json_text(RecordedTrajectory(
                     messages=messages, output=answer, status=status,
                     time_elapsed=result.wall_time,
                     usage=RecordedUsage(**result.usage.model_dump())).model_dump(mode="json")),
                 **self._run_files,
                 "run_result.json": _json_text(result.model_dump())}
        if telemetry:  # as the server wrote it: a file only once a tool was called
            files["telemetry.jsonl"] = "".join(telemetry)
        _write_new_files(folder, files)

    @functools.cached_property
    def _run_files(self) -> dict[str, str]:
        """The files every attempt of this runner writes alike, made once."""
        return {"agent_config.json": _json_text(AgentConfig(
                    agent_config_id="rubric_audit_agent", agent_name="rubric-audit runner",
                    agent_config_values=self.budget.model_dump()).model_dump(mode="json")),
                "orchestrator_extra_args.json": _json_text({
                    "model": self.model.model, "api_base": self.model.api_base,
                    "temperature": self.model.temperature, "max_tokens": self.output_cap})}

    def write_results(self) -> None:
        """results.csv and results.failures.jsonl, rebuilt from the finished attempt folders.

        Written when a run ends (or is interrupted); the attempt folders are the record, so a
        rerun rebuilds these files if a kill left them behind.
        """
        rows, failures = [], []
        for path in sorted(self.folder.glob("*/attempt_*/run_result.json")):
            r = read_model(path, AttemptResult)
            task = self.bench.task(r.task_id)
            common = {"task_id": r.task_id, "domain": task.domain if task else "",
                      "world_id": task.world_id if task else "", "agent_model": r.model,
                      "variant": r.variant, "attempt": r.attempt}
            if r.state == "unavailable":
                failures.append({**common, "status": "skipped", "scope": "task",
                                 "error": r.reason})
                continue
            rows.append({**common, "status": "ungraded", "agent_status": r.state,
                         "steps_used": r.steps, "wall_time_seconds": r.wall_time,
                         "agent_prompt_tokens": r.usage.prompt_tokens,
                         "agent_completion_tokens": r.usage.completion_tokens,
                         "agent_total_tokens": r.usage.total_tokens, "agent_cost": r.usage.cost})
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(self.folder / "results.csv", buffer.getvalue())
        write_atomic(self.folder / "results.failures.jsonl",
                 "".join(json.dumps(f, sort_keys=True) + "\n" for f in failures))

    def plan(self, tasks: list[Task], attempts: int, shard: Shard | None = None
             ) -> tuple[list[tuple[Task, int]], int]:
        """(task, k) pairs still to run for attempts 1..attempts (those of `shard` only, when
        given), and how many of them are done."""
        todo, done = [], 0
        for task in tasks:
            finished = set(existing_attempts(self.folder / task.id))
            for k in range(1, attempts + 1):
                if shard is not None and not shard.holds(task.id, k):
                    continue
                if k in finished:
                    done += 1
                else:
                    todo.append((task, k))
        return todo, done

    def plan_one_more(self, tasks: list[Task]) -> list[tuple[Task, int]]:
        """One attempt beyond the last finished one, for each task."""
        return [(t, max(existing_attempts(self.folder / t.id), default=0) + 1) for t in tasks]

    def clear_partials(self) -> None:
        """Remove staging folders an interrupted run left behind (never finished attempts)."""
        for partial in self.folder.glob("*/.attempt_*.partial-*"):
            shutil.rmtree(partial, ignore_errors=True)

    async def run(self, todo: list[tuple[Task, int]], concurrency: int,
                  on_done: Callable[[AttemptResult], None] | None = None) -> Counter[str]:
        states: Counter[str] = Counter()
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(task: Task, index: int) -> None:
            async with limiter:
                result = await self.run_attempt(task, index)
            states[result.state] += 1
            if on_done:
                on_done(result)

        try:
            async with self._client() as client:
                self._shared = client
                try:
                    async with anyio.create_task_group() as group:
                        for task, index in todo:
                            group.start_soon(one, task, index)
                finally:
                    self._shared = None
        except ExceptionGroup as group_error:  # unusable input in one attempt: say it as it is
            if (unusable := input_error_in(group_error)) is None:
                raise
            raise unusable from None
        finally:
            self.write_results()
        return states


    def run_in_processes(self, todo: list[tuple[Task, int]], concurrency: int, processes: int,
                         on_done: Callable[[AttemptResult], None] | None = None
                         ) -> Counter[str]:
        """`run` split over worker processes: litellm's per-call work is CPU-bound, so one event
        loop saturates one core long before the provider does. Each worker runs its share with
        its part of the concurrency and reports every finished attempt back.

        A worker starts from a clean state: it is forked from a server process that has only
        imported the modules (`WORKER_MODULES`), never from this one, which by then has checked
        the model, run its event loops and kept litellm's HTTP clients, their pooled sockets and
        the bookkeeping of threads a fork does not copy (issue #29 measured two workers forked
        from it at concurrency 500 taking 134 s where one process took 38 s). The worker builds
        its own Runner from this one's settings (`_worker`)."""
        if processes <= 1 or len(todo) < 2:
            return anyio.run(self.run, todo, concurrency, on_done)
        context = worker_context()
        shares = [share for i in range(processes) if (share := todo[i::processes])]
        # one pipe per worker (a worker killed while writing to a shared queue would hold its
        # lock forever), watched with the worker's sentinel, so a dead worker is seen at once
        pipes = [context.Pipe(duplex=False) for _ in shares]
        settings = (self.bench, self.runs, self.variant, self.model, self.budget)
        workers = [context.Process(target=_worker, args=(settings, [(t.id, k) for t, k in share],
                                                         max(1, concurrency // processes),
                                                         sender))
                   for share, (_, sender) in zip(shares, pipes, strict=True)]
        for worker in workers:
            worker.start()
        for _, sender in pipes:
            sender.close()  # the workers' copies are theirs
        # what each worker has still to report, by (task id, attempt)
        owed = [{(task.id, index) for task, index in share} for share in shares]
        states: Counter[str] = Counter()

        def record(result: AttemptResult) -> None:
            states[result.state] += 1
            if on_done:
                on_done(result)

        finished = False
        try:
            while any(owed):
                watched = [c for n, (reader, _) in enumerate(pipes) if owed[n]
                           for c in (reader, workers[n].sentinel)]
                for ready in multiprocessing.connection.wait(watched):
                    number = next(n for n, (reader, _) in enumerate(pipes)
                                  if ready in (reader, workers[n].sentinel))
                    for result in self._reported(pipes[number][0], workers[number],
                                                 owed[number]):
                        for left in owed:
                            left.discard((result.task_id, result.attempt))
                        record(result)
            finished = True
        finally:
            for worker in workers:
                worker.join(timeout=5 if finished else 0)
                if worker.is_alive():
                    worker.terminate()
                    worker.join()
            self.write_results()
        return states

    def _reported(self, reader: Connection, worker: multiprocessing.process.BaseProcess,
                  owed: set[tuple[str, int]]) -> list[AttemptResult]:
        """What a worker's pipe holds now: its finished attempts and, once it has exited, the
        attempts it still owed, as unavailable (`_lost`). Unusable input that stopped the worker
        is raised here as the InputError it was."""
        exited = not worker.is_alive()  # asked first: all it sent before exiting is in the pipe
        reported = []
        try:
            while reader.poll():
                kind, payload = json.loads(reader.recv_bytes())
                if kind == "input_error":
                    raise InputError(*payload)
                reported.append(AttemptResult.model_validate(payload))
        except EOFError:
            pass
        if exited:
            reported += self._lost(owed - {(r.task_id, r.attempt) for r in reported}, worker)
        return reported

    def _lost(self, owed: set[tuple[str, int]],
              worker: multiprocessing.process.BaseProcess) -> list[AttemptResult]:
        """The attempts a worker process died before reporting: unavailable (the failure is
        this machine's, not the model's), with no folder written, so a rerun runs them."""
        how = (f"killed by signal {-worker.exitcode}" if worker.exitcode and worker.exitcode < 0
               else f"exit code {worker.exitcode}")
        return [AttemptResult(task_id=task_id, attempt=index, model=self.model.model,
                              variant=self.variant.name, state="unavailable",
                              reason=f"the worker process running it died ({how})")
                for task_id, index in sorted(owed)]


WORKER_MODULES = ["litellm", "mock_workspace.server", "rubric_audit.run.runner"]
"""What the worker server imports before it forks a worker: only imports, no calls."""


def worker_context() -> multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext:
    """Worker processes forked from a clean server process that has imported WORKER_MODULES
    (POSIX's forkserver), or started anew where the platform has no forkserver."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_MODULES)
    return context


RunnerSettings = tuple[Benchmark, Path, Variant, ModelConfig, Budget]


def _worker(settings: RunnerSettings, todo: list[tuple[str, int]], concurrency: int,
            results: Connection) -> None:
    """Run a share (task ids and attempt numbers) with a Runner of its own and report each
    attempt, or the unusable input that stopped the share."""
    def send(kind: str, payload: Any) -> None:
        results.send_bytes(json.dumps([kind, payload]).encode())

    runner = Runner(*settings)
    tasks = {task.id: task for task in runner.bench.tasks}
    try:
        anyio.run(runner.run, [(tasks[task_id], k) for task_id, k in todo], concurrency,
                  lambda r: send("result", r.model_dump(mode="json")))
    except InputError as exc:
        send("input_error", [exc.file, exc.field, exc.problem])


class _BudgetExhausted(Exception):
    """The agent used up a step or token budget without calling final_answer."""
