"""Shared by load.py and fuzz.py (not a benchmark itself): the mount as the
brief runs it (``python -P -m nasfs mount SRC MNT --foreground --node box
--tree t``), operations in flight with their ages (how a hang is seen), and
aborting a hung FUSE connection so that every process stuck on it is freed.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import _common as C

LAUNCHER = [str(C.PY), "-P", "-m", "nasfs"]
CONNECTIONS = Path("/sys/fs/fuse/connections")


def mount(source: Path, mountpoint: Path, log: Path, cache: Path) -> C.Mount:
    """A foreground daemon over ``source``, unmounted at exit whatever happens."""
    return C.Mount(source, mountpoint, C.child_env(NASFS_CACHE_DIR=str(cache)), log, "--node", "box", "--tree", "t",
                   launcher=LAUNCHER)


def fuse_minor(mountpoint: Path) -> int | None:
    """The FUSE connection number of a mount, from mountinfo (never stat a
    mount that may hang)."""
    target = os.path.abspath(mountpoint)  # not resolve(): it would stat the mount's root
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split(" - ")[0].split()
            if len(fields) > 4 and C._unescape(fields[4]) == target:
                return int(fields[2].split(":")[1])
    return None


def abort_connection(mountpoint: Path) -> str:
    """Write 1 to /sys/fs/fuse/connections/N/abort (mounting fusectl there
    first when it is empty): every request in flight fails with ENOTCONN, so
    whatever hung gets out. Says what it did."""
    minor = fuse_minor(mountpoint)
    if minor is None:
        return f"{mountpoint} is not mounted any more: nothing to abort"
    if not any(CONNECTIONS.iterdir()):
        subprocess.run(["mount", "-t", "fusectl", "fusectl", str(CONNECTIONS)], capture_output=True)
    abort = CONNECTIONS / str(minor) / "abort"
    if not abort.exists():
        return f"no {abort} (fusectl not mounted?): could not abort the connection"
    abort.write_text("1")
    return f"aborted the FUSE connection {minor} ({abort})"


class InFlight:
    """What each thread of a worker is doing and since when, so a watchdog
    (the worker's beat, read by the parent) sees an operation that never
    returns. ``with flight.op('read x'):`` around each operation."""

    def __init__(self) -> None:
        self._ops: dict[int, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def op(self, what: str) -> "_Op":
        return _Op(self, what)

    def oldest(self) -> tuple[float, str]:
        """(age in seconds, what) of the oldest operation in flight, (0, '') when none."""
        now = time.monotonic()
        with self._lock:
            ops = list(self._ops.values())
        if not ops:
            return 0.0, ""
        start, what = min(ops)
        return now - start, what


class _Op:
    def __init__(self, flight: InFlight, what: str) -> None:
        self.flight, self.what = flight, what

    def __enter__(self) -> "_Op":
        with self.flight._lock:
            self.flight._ops[threading.get_ident()] = (time.monotonic(), self.what)
        return self

    def __exit__(self, *exc: object) -> None:
        with self.flight._lock:
            self.flight._ops.pop(threading.get_ident(), None)


def kill(proc: subprocess.Popen, grace: float = 5.0) -> int:
    """End one process this script started: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
