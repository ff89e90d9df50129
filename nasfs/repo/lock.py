"""The lock every writer of nasfs's commits and refs holds, across processes:
a mount, a CLI run and a server may write to one repository at once."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class GitDirLock:
    """An flock on a file in the git dir: snapshots from several processes serialize."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> GitDirLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
