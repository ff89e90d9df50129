"""Every file below a folder at a commit, as a folder map at a revision reads
them: listed in one walk with their blob ids and sizes, and each one's head
read by blob id, with no lookup by path."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pygit2

from .commit_paths import CommitPaths
from .content import FILE_MODES


class FilesAt(NamedTuple):
    """The files below a folder at a commit."""

    folder: str  # the folder's path, in-tree symlinks followed
    tree_id: str  # its tree's id: the same id, the same files
    files: list[tuple[str, int, str]]  # (tree-relative path, size, blob id), in no set order


class CommitFiles(CommitPaths):
    """The files of a folder at a revision, for folder maps (``--at REV``)."""

    def files_at(self, rev: str, path: str, keep: Callable[[str], bool]) -> FilesAt:
        """The regular files (executable or not) below the folder ``path`` at
        ``rev``, at any depth; links and submodules are skipped, and so is
        every entry whose name ``keep`` refuses, with all below it."""
        repo, commit = self._read_at(rev)
        folder, sub = self.folder_at(str(commit.id), path)
        files: list[tuple[str, int, str]] = []
        stack: list[tuple[str, pygit2.Tree]] = [(folder, sub)]
        while stack:
            rel, tree = stack.pop()
            for e in tree:
                if e.name is None or not keep(e.name):
                    continue
                where = f"{rel}/{e.name}" if rel else e.name
                if e.filemode == pygit2.GIT_FILEMODE_TREE:
                    stack.append((where, self._named(repo, str(commit.id), where, e.id)))
                elif e.filemode in FILE_MODES:
                    files.append((where, self._named_size(repo, str(commit.id), where, e.id), str(e.id)))
        return FilesAt(folder, str(sub.id), files)

    def blob_head(self, rev: str, path: str, blob_id: str, n: int) -> bytes:
        """The first ``n`` bytes of the blob ``blob_id`` at ``path`` (as
        :meth:`files_at` of ``rev`` gave them; read through that commit's own
        handle): a file's head at a revision, read by id, as the path was
        looked up once by the walk. libgit2 reads the blob whole."""
        repo, commit = self._read_at(rev)
        return self._named(repo, str(commit.id), path, pygit2.Oid(hex=blob_id)).data[:n]
