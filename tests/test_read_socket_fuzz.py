"""The read socket under abuse (fuse/read_socket.py): random bytes, deep JSON,
1,000 idle connections, a client that never reads a large answer, a cwd in
``.at/HEAD/``, and a daemon out of descriptors. Throughout, another reader
of the mount gets each answer within a second, and the mount is still up
afterwards (the daemon exits 0 at the unmount)."""

from __future__ import annotations

import json
import os
import random
import resource
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .mounts import Mount, abort_connection
from .test_read_socket import ACME, NAMES, answered, ask, one_line, read, request, socket_of, wedge_fails

SEED = 20261204


@contextmanager
def watched(mnt: Path) -> Iterator[list[float]]:
    """Another reader of the mount meanwhile: ``stat`` and a whole read of a
    view, again and again; yields the seconds each took. A read that takes
    over 10 s is a hang: the connection is aborted and the test fails."""
    took: list[float] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        view = mnt / f"{ACME}@outline"
        while not done.is_set():
            started = time.monotonic()
            try:
                os.stat(view)
                with open(view, "rb") as fh:
                    assert fh.read().startswith(b"nasfs ")
            except BaseException as exc:
                errors.append(exc)
                return
            took.append(time.monotonic() - started)
            done.wait(0.1)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        yield took
    finally:
        done.set()
        thread.join(10)
        if thread.is_alive():
            abort_connection(mnt)
            raise AssertionError("a reader of the mount hung (connection aborted)")
    assert not errors, errors
    assert took and max(took) < 1.0, f"slowest of {len(took)} reads of the mount: {max(took):.2f} s"


def idle(sock: Path, count: int) -> list[socket.socket]:
    """``count`` connections that send nothing (some are refused at once: busy)."""
    held = []
    deadline = time.monotonic() + 60
    while len(held) < count:
        conn = socket.socket(socket.AF_UNIX)
        conn.settimeout(10)
        try:
            conn.connect(str(sock))
        except BlockingIOError:  # the backlog is full: the daemon takes them as it can
            conn.close()
            assert time.monotonic() < deadline, f"the socket took {len(held)} connections in 60 s"
            time.sleep(0.005)
            continue
        held.append(conn)
    return held


def test_the_socket_neither_ends_nor_wedges_the_mount(home: Path, tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))
    (home / "big.txt").write_text(('"\\' * 60 + "\n") * 2000)  # 242 kB, under the size left to the CLI:
    rng = random.Random(SEED)
    m = Mount(home, tmp_path / "mnt")
    sock = socket_of(home)
    try:
        (m.mountpoint / f"{ACME}@outline").read_bytes()  # made once before: what is timed is the answer, not its first making
        with wedge_fails(m.mountpoint), watched(m.mountpoint) as took:
            held = idle(sock, 1000)
            answers: list[bytes] = []

            def fuzz() -> None:
                for _ in range(100):
                    answers.append(ask(sock, rng.randbytes(rng.choice([1, 100, 5000, 70_000])) + b"\n"))

            thread = threading.Thread(target=fuzz)
            thread.start()
            thread.join(120)
            assert not thread.is_alive(), "random bytes hung the socket"
            said = [str(one_line(conn.recv(4096))["error"]) for conn in held]  # each gets one line
            for conn in held:
                conn.close()
            assert len(answers) == 100 and all(one_line(a)["error"] for a in answers)
            busy = sum(e.startswith("busy: 32 connections") for e in said)  # past the 32 served at once
            assert busy >= 500 and busy + sum(e == "no request line within 5 s" for e in said) == 1000, said
            for payload in (b"[" * 10**5, b"[" * 30000 + b"]" * 30000 + b"\n"):
                assert one_line(ask(sock, payload))["error"]

            never = socket.socket(socket.AF_UNIX)  # asks for its 484 kB JSON envelope and reads nothing
            never.connect(str(sock))
            never.sendall(request(home, "big.txt", cwd=str(home), json=True))
            at_head = json.loads(ask(sock, request(home, f"{ACME}@outline", cwd=str(m.mountpoint / ".at" / "HEAD" / "notes"))))
            assert at_head["exit"] == 2 and "virtual .at/" in at_head["stderr"]
            time.sleep(12)  # past the send timeout (10 s)
            never.settimeout(10)
            got = b""
            while part := never.recv(1 << 20):
                got += part
            never.close()
            header, _, body = got.partition(b"\n")
            assert 0 < len(body) < json.loads(header)["size"], len(body)  # dropped: what the buffers held, then the end
            before = answered(m)
            assert read(*NAMES, f"{ACME}@L1", cwd=home) == (0, b"# Acme Corp\n", b"") and answered(m) == before + 1
        assert len(took) > 50 and m.alive()
    finally:
        assert m.stop() == 0


def test_a_daemon_out_of_descriptors_keeps_its_mount(home: Path, tmp_path: Path) -> None:
    """EMFILE on accept (on main it ended the mount): the socket retries,
    the mount answers meanwhile, and the socket answers again once
    descriptors are free."""
    m = Mount(home, tmp_path / "mnt")
    sock = socket_of(home)
    pid = m.proc.pid
    limit = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    try:
        assert read(*NAMES, f"{ACME}@outline", cwd=home)[0] == 0  # what a read opens is open once already
        subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={len(os.listdir(f'/proc/{pid}/fd')) + 4}:{limit[1]}"], check=True)
        held = idle(sock, 40)
        deadline = time.monotonic() + 10
        while "accept failed (Too many open files)" not in m.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "accept failed (Too many open files)" in m.log.read_text()
        started = time.monotonic()
        os.statvfs(m.mountpoint)  # answered (a lookup may say EMFILE meanwhile: the daemon has no descriptor left)
        assert m.alive() and time.monotonic() - started < 1
        for conn in held:
            conn.close()
        subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={limit[0]}:{limit[1]}"], check=True)
        time.sleep(2)  # the next accept, after a pause of a second at most
        before = answered(m)
        assert read(*NAMES, f"{ACME}@L1", cwd=home) == (0, b"# Acme Corp\n", b"") and answered(m) == before + 1
        assert "read socket: accepting again after" in m.log.read_text()
    finally:
        assert m.stop() == 0
