"""Debian's headless Chromium driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: JSON messages ended by a NUL byte on file descriptors 3 and 4), for
the tests that click, type and navigate in report.html and the site's pages, and for
bench/site_paint.py. No library: the protocol's few commands used here need none, and no other
browser is fetched. Script evaluated through the protocol is not the page's, so the page's
content security policy (our one script, by its hash) stays as it ships.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TIMEOUT = 60.0


class BrowserError(RuntimeError):
    pass


def _above_four(fd: int) -> int:
    """The same pipe end as a descriptor numbered 10 or more (the original closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium with a profile of its own and one page (tab) to drive."""

    def __init__(self, profile_parent: Path, width: int = 1400, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="profile-", dir=profile_parent)
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()
        # bash puts the two pipe ends on the descriptors Chromium reads and writes, from numbers
        # above them (a pipe end that is itself 3 or 4 would be overwritten first; dash takes
        # no descriptor over 9)
        commands_read, replies_write = (_above_four(fd) for fd in (commands_read, replies_write))
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{commands_read} 4>&{replies_write}',
             CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(commands_read, replies_write), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Runtime.enable", session=True)
        # the page's viewport exactly (a headless window's size includes its frame)
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)  # type: ignore[no-any-return]

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = False
             ) -> dict[str, Any]:
        """Send a command and wait for its reply; events that come first are kept."""
        self.next_id += 1
        command: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = self.session
        os.write(self.commands, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})  # type: ignore[no-any-return]
            self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        """The next event of that name (one that came already counts)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for i, message in enumerate(self.events):
                if message.get("method") == event:
                    return self.events.pop(i)
            self.events.append(self._message(deadline))

    def open(self, page: Path | str) -> None:
        """Load a page (a file, or a URL) and wait for its load event."""
        self.events.clear()
        url = page.as_uri() if isinstance(page, Path) else page
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression in the page (promises awaited)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True}, session=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """Click the element's centre with the mouse, as a reader would."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            f" e.scrollIntoView({{block: 'center'}});"
                            f" const r = e.getBoundingClientRect();"
                            f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1},
                      session=True)

    def type(self, text: str) -> None:
        """Type into the focused element, a key at a time."""
        for char in text:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": char}, session=True)
            self.send("Input.dispatchKeyEvent", {"type": "keyUp"}, session=True)

    def console_errors(self) -> list[str]:
        """Messages the page logged as errors, and exceptions it threw, so far."""
        found = []
        for message in self.events:
            params = message.get("params", {})
            if message.get("method") == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(" ".join(str(a.get("value", a.get("description")))
                                      for a in params.get("args", [])))
            elif message.get("method") == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(f"{details.get('text')} "
                             f"{details.get('exception', {}).get('description', '')}")
        return found

    def close(self) -> None:
        with contextlib.suppress(BrowserError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.commands)
        os.close(self.replies)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
