"""Ending the processes a test started, and only those."""

from __future__ import annotations

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
