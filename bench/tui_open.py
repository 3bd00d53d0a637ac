"""Review app speed on a large audit: time to open 10,000 attempts and to move between tasks, and
to open the Trajectory tab on a 5,000-step attempt.

    python bench/tui_open.py [--tasks 2500] [--attempts 4] [--moves 100] [--steps 5000] [--mb 3]

Targets: open < 1 s, move < 50 ms, Trajectory tab < 200 ms; a task with a 3 MB prompt and 3 MB
answers opens, and its Answers tab opens, in < 1 s with < 300 MB RSS. The audit.db is generated in a
temporary folder. A move is timed two ways: key press to idle through Pilot (which also waits out
the list's scroll animation and its own settling pauses), and the app's move handler with the
repaint it schedules. The Trajectory tab is timed from its key to its first line of steps drawn (the
trajectory read from audit.db and decompressed), to idle, and to the apps, files and answer's
numbers traced (in a thread), on an attempt whose every step calls a tool with a 1 kB result
(5 MB of tool output at 5,000 steps); the Findings tab's key to idle is the app's own cost of a
tab switch.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from rubric_audit.core.model import Attempt, Criterion, CriterionGrade, Gold, Step, Task, ToolCall, Trajectory
from rubric_audit.load.runs import RecordedRuns
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.review.session import ReviewData
from rubric_audit.store.audit_store import AuditStore
from rubric_audit.store.run_import import add_runs
from tui.app import ReviewApp


def build(db: Path, tasks: int, attempts: int) -> None:
    runs = RecordedRuns()
    for i in range(tasks):
        task = Task(id=f"task_{i:05d}", name=f"task {i}", domain=f"domain {i % 3}",
                    world_id="w", prompt=f"What is the value of item {i}? " * 5,
                    criteria=[Criterion(id=f"c{i}_{j}", text=f"States value {j} is {i}.{j}m")
                              for j in range(3)], gold=Gold(text=f"It is {i}.0m."))
        runs.tasks[task.id] = task
        for k in range(1, attempts + 1):
            attempt = Attempt(id=Attempt.make_id(f"v{k % 2}", task.id, k), task_id=task.id,
                              model=f"m{k % 2}", variant=f"v{k % 2}", index=k, state="graded",
                              answer=f"The value is {i}.0m.", fingerprint=f"{i}-{k}",
                              trajectory=normalise_trajectory(
                                  [{"role": "user", "content": "x" * 2000}], "archipelago"))
            runs.attempts.append(attempt)
            runs.grades += [CriterionGrade(attempt_id=attempt.id, criterion_id=c.id,
                                           grader="recorded", verdict="fail" if i % 4 else "pass",
                                           rationale="r" * 300) for c in task.criteria]
    with AuditStore(db) as store, store.transaction():
        add_runs(store, runs)


async def measure(out: Path, moves: int) -> tuple[float, float, float]:
    start = time.perf_counter()
    data = ReviewData(out, "bench")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        opened = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(moves):
            await pilot.press("j")
            await pilot.pause()
        pressed = (time.perf_counter() - start) / moves
        start = time.perf_counter()
        for _ in range(moves):
            await app.action_move(1)
            app.screen.refresh()
            await asyncio.sleep(0)
        handled = (time.perf_counter() - start) / moves
    data.close()
    return opened, pressed, handled


def build_long(db: Path, steps: int) -> None:
    """One task whose attempt has `steps` steps, each a sheet read returning 1 kB of cells."""
    task = Task(id="task_long", name="long", world_id="w", prompt="What is Q3 revenue?",
                criteria=[Criterion(id="c", text="States Q3 revenue of 151.2m")])
    cells = " ".join(f"B{row}={row * 1.37:.2f}" for row in range(1, 80))[:1000]
    trajectory = Trajectory(format="archipelago", steps=[
        Step(role="assistant", text=f"Reading block {i}.", tool_calls=[ToolCall(
            id=f"c{i}", name="files_read_sheet", arguments=f'{{"path": "Q3.xlsx", "range": "{i}"}}',
            result=f"Q3!block {i}: {cells}" + (" Q3!B12=151.2" if i == steps // 2 else ""))])
        for i in range(steps)])
    attempt = Attempt(id="v/task_long/1", task_id=task.id, model="m", variant="v", index=1,
                      state="graded", answer="Q3 revenue was $151.2m; $731.9m overall.",
                      fingerprint="long", trajectory=trajectory)
    runs = RecordedRuns(attempts=[attempt], tasks={task.id: task}, grades=[CriterionGrade(
        attempt_id=attempt.id, criterion_id="c", grader="recorded", verdict="fail")])
    with AuditStore(db) as store, store.transaction():
        add_runs(store, runs)


async def measure_trajectory(out: Path, repeats: int = 5) -> dict[str, float]:
    """Medians of: the Trajectory tab's key to idle (steps drawn), the key to the apps, files and
    answer's numbers traced and marked, unfolding a result, and, as the app's own cost of
    switching to a tab that takes the keys, the Findings tab's key to idle."""
    from tui.widgets.trajectory import StepsView

    drawn: list[float] = []
    render_line = StepsView.render_line

    def timed_render_line(view: StepsView, y: int):  # the first line of steps drawn, timed
        if view.trajectory is not None and not drawn:
            drawn.append(time.perf_counter())
        return render_line(view, y)

    StepsView.render_line = timed_render_line  # type: ignore[method-assign]
    data = ReviewData(out, "bench")
    app = ReviewApp(data)
    times: dict[str, list[float]] = {"open": [], "drawn": [], "traced": [], "unfold": [],
                                     "findings": []}
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(repeats):
            await app.refresh_all()  # the task shown afresh: its trajectory is read again
            await pilot.pause()
            start = time.perf_counter()
            await pilot.press("f3")
            await pilot.pause()
            times["findings"].append(time.perf_counter() - start)
            start = time.perf_counter()
            drawn.clear()
            await pilot.press("f6")
            await pilot.pause()
            times["open"].append(time.perf_counter() - start)
            times["drawn"].append(drawn[0] - start)
            await app.workers.wait_for_complete()
            await pilot.pause()
            times["traced"].append(time.perf_counter() - start)
            start = time.perf_counter()
            await pilot.press("down", "enter")
            await pilot.pause()
            times["unfold"].append(time.perf_counter() - start)
            await pilot.press("f1")
            await pilot.pause()
        view = app.query_one(StepsView)
        assert view.marks, "the answer's numbers were traced"
        lines = len(view.rows)
    data.close()
    return {"lines": lines} | {k: sorted(v)[len(v) // 2] for k, v in times.items()}


def build_big(db: Path, mb: int, attempts: int = 2) -> None:
    """One task whose prompt, rationales and each of `attempts` answers hold `mb` MB of prose."""
    prose = "Revenue for Q3 was NOK 151.2m per cell `<B12>` [draft]; see [$100] below.\n"
    big = (prose * (mb * 1_000_000 // len(prose) + 1))[:mb * 1_000_000]
    task = Task(id="task_big", name="big", world_id="w", prompt=big, gold=Gold(text=big),
                criteria=[Criterion(id="c", text="States Q3 revenue of 151.2m")])
    runs = RecordedRuns(tasks={task.id: task})
    for k in range(1, attempts + 1):
        attempt = Attempt(id=Attempt.make_id("v", task.id, k), task_id=task.id, model="m",
                          variant="v", index=k, state="graded", answer=big, fingerprint=f"b{k}")
        runs.attempts.append(attempt)
        runs.grades.append(CriterionGrade(attempt_id=attempt.id, criterion_id="c",
                                          grader="recorded", verdict="fail", rationale=big))
    with AuditStore(db) as store, store.transaction():
        add_runs(store, runs)


def rss_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


async def measure_big(out: Path) -> dict[str, float]:
    """Seconds from start to the app idle on the big task's Overview, and from the Answers tab's
    key to idle (the answers drawn); RSS after each and the peak."""
    import resource

    from tui.widgets.document import DocumentView

    start = time.perf_counter()
    data = ReviewData(out, "bench")
    app = ReviewApp(data)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        opened, opened_rss = time.perf_counter() - start, rss_mb()
        start = time.perf_counter()
        await pilot.press("f2")
        await pilot.pause()
        answers = time.perf_counter() - start
        drawn = [v.plain(40) for v in app.query(".answer").results(DocumentView)]
        assert drawn and all("`<B12>` [draft]; see [$100]" in text for text in drawn), drawn
        answers_rss = rss_mb()
    data.close()
    return {"open": opened, "open_rss": opened_rss, "answers": answers,
            "answers_rss": answers_rss,
            "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6}  # KiB


def run_measure(out: Path, moves: int, animations: bool) -> tuple[float, float, float]:
    os.environ["TEXTUAL_ANIMATIONS"] = "full" if animations else "none"
    return asyncio.run(measure(out, moves))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2500)
    parser.add_argument("--attempts", type=int, default=4)
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--mb", type=int, default=3)
    args = parser.parse_args()
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    with tempfile.TemporaryDirectory() as tmp:
        build_big(Path(tmp) / "audit.db", args.mb)
        before = rss_mb()
        b = asyncio.run(measure_big(Path(tmp)))
        print(f"big text {args.mb} MB prompt, gold, rationales and 2 answers: open="
              f"{b['open']:.3f}s ({b['open_rss']:.0f} MB RSS) answers-tab={b['answers']:.3f}s "
              f"(target < 1 s, ratio {b['answers']:.2f}) RSS={b['answers_rss']:.0f} MB, peak "
              f"{b['peak_rss']:.0f} MB (target < 300 MB, ratio {b['peak_rss'] / 300:.2f}; "
              f"{before:.0f} MB before the app)")
    with tempfile.TemporaryDirectory() as tmp:
        build_long(Path(tmp) / "audit.db", args.steps)
        t = asyncio.run(measure_trajectory(Path(tmp)))
        print(f"trajectory steps={args.steps} lines={t['lines']:.0f} "
              f"steps-drawn={t['drawn'] * 1000:.0f}ms (target < 200 ms, ratio "
              f"{t['drawn'] / 0.2:.2f}) key-to-idle={t['open'] * 1000:.0f}ms (Findings tab "
              f"{t['findings'] * 1000:.0f}ms) traced={t['traced'] * 1000:.0f}ms "
              f"unfold={t['unfold'] * 1000:.0f}ms")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        build(out / "audit.db", args.tasks, args.attempts)
        for animations in (True, False):
            opened, pressed, handled = run_measure(out, args.moves, animations)
            print(f"attempts={args.tasks * args.attempts} animations="
                  f"{'on ' if animations else 'off'} open={opened:.3f}s (target < 1 s, ratio "
                  f"{opened:.2f}) key-to-idle={pressed * 1000:.1f}ms (Pilot.press, ratio "
                  f"{pressed / 0.05:.2f}) move-handler={handled * 1000:.1f}ms (target < 50 ms, "
                  f"ratio {handled / 0.05:.2f})")


if __name__ == "__main__":
    main()
