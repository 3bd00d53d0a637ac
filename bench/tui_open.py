"""Review app speed on a large audit: time to open 10,000 attempts and to move between tasks.

    python bench/tui_open.py [--tasks 2500] [--attempts 4] [--moves 100]

Targets: open < 1 s, move < 50 ms. The audit.db is generated in a temporary folder. A move is
timed two ways: key press to idle through Pilot (which also waits out the list's scroll animation
and its own settling pauses), and the app's move handler with the repaint it schedules.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from rubric_audit.load.runs import RecordedRuns
from rubric_audit.load.trajectory import normalise_trajectory
from rubric_audit.model import Attempt, Criterion, CriterionGrade, Gold, Task
from rubric_audit.store import AuditStore
from tui.app import ReviewApp
from tui.data import ReviewData


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
        store.add_runs(runs)


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


def run_measure(out: Path, moves: int, animations: bool) -> tuple[float, float, float]:
    os.environ["TEXTUAL_ANIMATIONS"] = "full" if animations else "none"
    return asyncio.run(measure(out, moves))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2500)
    parser.add_argument("--attempts", type=int, default=4)
    parser.add_argument("--moves", type=int, default=100)
    args = parser.parse_args()
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
