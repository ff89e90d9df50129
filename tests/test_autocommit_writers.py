"""Autocommit (``--autocommit``) against writers that do not wait for it:
another process rewriting the file while a close commits it, a writer
killed with SIGKILL, and an unmount while their releases are on their way.
A commit must hold bytes the file held at one moment, never the start of
one version joined to the end of the next. Real mounts,
real processes; the writers run in a child process with a deadline, so a
hung mount fails the test (its FUSE connection aborted) instead of hanging it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import git
from .mounts import Mount, abort_connection, run_on_mount

BIG = "big.txt"
# two versions over several read() calls of a commit's read, told apart at every offset
VERSIONS = [b"x" * (3 << 20), b"y" * (2 << 20) + b"z" * (1 << 20) + b"w" * 4096]

REWRITE_AND_CLOSE = """
import os, sys, threading, time
path, seconds = sys.argv[1], float(sys.argv[2])
versions = [b"x" * (3 << 20), b"y" * (2 << 20) + b"z" * (1 << 20) + b"w" * 4096]
stop = time.monotonic() + seconds
def rewrite():
    i = 0
    while time.monotonic() < stop:
        with open(path, "wb") as fh:  # O_TRUNC, then one write
            fh.write(versions[i % 2])
        i += 1
writer = threading.Thread(target=rewrite)
writer.start()
closes = 0
while time.monotonic() < stop:
    with open(path, "r+b"):  # opened for writing: its close commits the file as it is
        closes += 1
writer.join()
with open(path, "wb") as fh:  # the last version, once nobody else writes
    fh.write(versions[0])
print(closes)
"""


def commits_of(home: Path, rel: str) -> list[bytes]:
    """The file's content in every commit that changed it, newest first."""
    ids = git(home, "log", "--format=%H", "--", rel).split()
    return [subprocess.run(["git", "show", f"{c}:{rel}"], cwd=home, capture_output=True, check=True).stdout for c in ids]


def test_a_commit_at_close_holds_one_version_of_a_file_rewritten_meanwhile(home: Path, tmp_path: Path) -> None:
    """One thread rewrites a 3 MiB file in place through the mount while
    another opens it for writing and closes it, over and over: every close
    commits the file, and every commit is a moment of it (one version, or a
    part of one being written). Reading the file in one pass committed, at
    load 20, 43 files in 2,486 that were one version's start and the next
    one's end."""
    m = Mount(home, tmp_path / "mnt", "--autocommit")
    try:
        (m.mountpoint / BIG).write_bytes(VERSIONS[1])
        closes = int(run_on_mount(m.mountpoint, [sys.executable, "-c", REWRITE_AND_CLOSE, str(m.mountpoint / BIG), "8"],
                                  8 + 60, "a rewriter and a closer of one file"))
        contents = commits_of(home, BIG)
        assert closes > 0 and len(contents) > 1
        torn = sum(not any(v.startswith(c) for v in VERSIONS) for c in contents)
        assert torn == 0, f"{torn} of {len(contents)} commits hold no moment of the file"
        assert contents[0] == VERSIONS[0] == (home / BIG).read_bytes()
        assert git(home, "status", "--porcelain") == ""
    finally:
        assert m.stop() == 0


def test_a_writer_killed_mid_write_leaves_a_commit_of_what_the_file_holds(home: Path, tmp_path: Path) -> None:
    """SIGKILL ends a writer between two writes: the kernel closes its file,
    which commits what it holds then, and nothing else."""
    m = Mount(home, tmp_path / "mnt", "--autocommit")
    try:
        ready = tmp_path / "ready"
        writer = subprocess.Popen([sys.executable, "-c", f"""
import os, time
fd = os.open({str(m.mountpoint / 'notes' / 'journal.md')!r}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(200):
    os.write(fd, b'line %04d\\n' % i)
open({str(ready)!r}, 'w').close()
time.sleep(120)
"""])
        deadline = time.monotonic() + 60
        while not ready.exists() and writer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the writer did not get through its writes"
        writer.send_signal(signal.SIGKILL)
        try:
            writer.wait(timeout=60)
        except subprocess.TimeoutExpired:
            abort_connection(m.mountpoint)
            pytest.fail("the killed writer hung in its close (connection aborted)")
        written = b"".join(b"line %04d\n" % i for i in range(200))
        assert (home / "notes" / "journal.md").read_bytes() == written
        assert commits_of(home, "notes/journal.md")[0] == written
        assert git(home, "status", "--porcelain") == ""
    finally:
        assert m.stop() == 0


def test_an_unmount_with_requests_in_flight_ends_the_daemon_cleanly(home: Path, tmp_path: Path) -> None:
    """Writers' last closes leave RELEASEs (each an autocommit) on their way
    when the mount is unmounted at once. The kernel may then end the
    connection as aborted (a read of /dev/fuse fails with ECONNABORTED, not
    ENODEV: the read that raced the unmount); the daemon took that for a
    crash: a traceback and exit 1, in about one unmount in four after 8 s
    of writers here. It is the end of the mount like any other."""
    for cycle in range(4):
        m = Mount(home, tmp_path / f"mnt{cycle}", "--autocommit", "--no-warm")
        try:
            (m.mountpoint / BIG).write_bytes(VERSIONS[cycle % 2])
            run_on_mount(m.mountpoint, [sys.executable, "-c", REWRITE_AND_CLOSE, str(m.mountpoint / BIG), "6"],
                         6 + 60, "a rewriter and a closer of one file")
        finally:
            code = m.stop()
        log = m.log.read_text()
        assert code == 0 and "Traceback" not in log, f"cycle {cycle}: exit {code}\n{log[-1500:]}"
