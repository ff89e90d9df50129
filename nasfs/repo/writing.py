"""What every writer of nasfs's commits and refs shares: the lock it holds
across processes (a mount, a CLI run and a server may write to one repository
at once), the name it signs with, and trees edited one path at a time."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pygit2

from .content import FILE_MODES
from .served import ServedTree

SIGNATURE_NAME = "nasfs"
SIGNATURE_EMAIL = "nasfs@localhost"


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


class Writing(ServedTree):
    """The lock and tree edits of :mod:`.snapshots` and :mod:`.autocommit`."""

    def _git_lock(self) -> GitDirLock:
        """The lock every writer of nasfs's commits and refs holds, across processes."""
        return GitDirLock(Path(self.repo.path) / "nasfs.lock")

    def _tree_with(self, base: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid, mode: int | None = None) -> pygit2.Oid:
        """``base`` with the file at ``parts`` set to ``blob`` (keeping its mode
        unless one is given)."""
        builder = self.repo.TreeBuilder(base) if base is not None else self.repo.TreeBuilder()
        name = parts[0]
        if len(parts) == 1:
            if mode is None:
                mode = pygit2.GIT_FILEMODE_BLOB
                if base is not None and name in base and base[name].filemode in FILE_MODES:
                    mode = base[name].filemode
            builder.insert(name, blob, mode)
        else:
            sub = base[name] if base is not None and name in base else None
            sub_tree = self.repo[sub.id] if sub is not None and sub.filemode == pygit2.GIT_FILEMODE_TREE else None
            builder.insert(name, self._tree_with(sub_tree, parts[1:], blob, mode), pygit2.GIT_FILEMODE_TREE)
        return builder.write()

    def _tree_without(self, base: pygit2.Tree, parts: list[str]) -> pygit2.Oid:
        builder = self.repo.TreeBuilder(base)
        if len(parts) == 1:
            builder.remove(parts[0])
        else:
            sub = self.repo[base[parts[0]].id]
            builder.insert(parts[0], self._tree_without(sub, parts[1:]), pygit2.GIT_FILEMODE_TREE)
        return builder.write()
