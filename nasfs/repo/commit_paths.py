"""Paths in a commit as views read them: in-tree symlinks followed, a folder
told from a file."""

from __future__ import annotations

import posixpath

import pygit2

from ..errors import BadPath, NotFound, NotServable
from .content import Content
from .paths import clean_path, tree_entry
from .revisions import Revisions

FOLDER_READS = "a file in it, or the folder's map: DIR@outline or DIR@N (e.g. src@2000, .@2000 for the root)"


class CommitPaths(Revisions):
    """Files and folders at a revision, for views (``--at REV``)."""

    def _tree_entry(self, repo: pygit2.Repository, commit: pygit2.Commit, path: str) -> tuple[str, pygit2.Object | None]:
        """(resolved path, object) at ``path`` in ``commit``, in-tree symlinks
        followed, read through ``repo``, the commit's own handle."""
        for _ in range(16):
            if not path:
                return path, commit.tree
            try:
                entry = tree_entry(commit.tree, path)
            except KeyError:
                return path, None
            if entry.filemode != pygit2.GIT_FILEMODE_LINK:
                return path, self._named(repo, str(commit.id), path, entry.id)
            target = self._named(repo, str(commit.id), path, entry.id).data.decode("utf-8", "replace")
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if target.startswith("/") or joined == ".." or joined.startswith("../"):
                raise BadPath(f"{path!r} is a symlink to {target!r}, outside the tree")
            path = clean_path(joined)
        raise BadPath(f"{path!r}: too many levels of symlinks")

    def folder_at(self, rev: str, path: str) -> tuple[str, pygit2.Tree]:
        """(resolved path, tree) of a folder in ``rev``, in-tree symlinks followed."""
        resolved, obj = self._tree_entry(*self._read_at(rev), clean_path(path))
        if not isinstance(obj, pygit2.Tree):
            raise NotFound(f"{path!r} is not a folder at {rev}")
        return resolved, obj

    def object_at(self, rev: str, path: str) -> pygit2.Object | None:
        return self._tree_entry(*self._read_at(rev), clean_path(path))[1]

    def at(self, rev: str, path: str) -> Content:
        repo, commit = self._read_at(rev)
        resolved, obj = self._tree_entry(repo, commit, clean_path(path))
        if obj is None:
            raise NotFound(f"{path!r} does not exist at {rev}")
        if not isinstance(obj, pygit2.Blob):
            raise NotServable(f"{path!r} is a folder (a directory) at {rev}, not a file", FOLDER_READS)
        return Content(resolved, str(obj.id), obj.size, str(commit.id), repo)
