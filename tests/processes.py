"""Ending the processes a test started, and only those."""

from __future__ import annotations

import os
import subprocess


def end(proc: subprocess.Popen, grace: float = 10.0) -> int:
    """SIGTERM, then SIGKILL if it has not exited within ``grace`` seconds;
    returns the exit code."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def spawned_workers(parent: int) -> list[int]:
    """The multiprocessing workers (spawned: ``spawn_main`` in their command
    line) whose parent is ``parent``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if ppid == parent and b"spawn_main" in cmdline:
            found.append(int(entry))
    return found
