"""What every writer of nasfs's commits and refs shares: the lock it holds
across processes (a mount, a CLI run and a server may write to one repository
at once), the name it signs with, and trees edited one path at a time."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pygit2

from .content import FILE_MODES
from .paths import git_key, tree_entry, tree_get
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

    def _tree_with(self, base: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid, mode: int | None = None,
                   repo: pygit2.Repository | None = None) -> pygit2.Oid:
        """``base`` with the file at ``parts`` set to ``blob`` (keeping its mode
        unless one is given), written to ``repo`` (a private store) or this one."""
        repo = repo or self.repo
        builder = repo.TreeBuilder(base.id) if base is not None else repo.TreeBuilder()
        name = parts[0]
        existing = tree_get(base, name)
        if len(parts) == 1:
            if mode is None:
                mode = pygit2.GIT_FILEMODE_BLOB
                if existing is not None and existing.filemode in FILE_MODES:
                    mode = existing.filemode
            builder.insert(name, blob, mode)
        else:
            is_tree = existing is not None and existing.filemode == pygit2.GIT_FILEMODE_TREE
            sub_tree = repo[existing.id] if is_tree else None
            builder.insert(name, self._tree_with(sub_tree, parts[1:], blob, mode, repo), pygit2.GIT_FILEMODE_TREE)
        return builder.write()

    def _tree_without(self, base: pygit2.Tree, parts: list[str], repo: pygit2.Repository | None = None) -> pygit2.Oid:
        repo = repo or self.repo
        builder = repo.TreeBuilder(base.id)
        if len(parts) == 1:
            builder.remove(git_key(parts[0]))
        else:
            sub = repo[tree_entry(base, parts[0]).id]
            builder.insert(parts[0], self._tree_without(sub, parts[1:], repo), pygit2.GIT_FILEMODE_TREE)
        return builder.write()
