"""Autocommit: a write through the mount becomes a commit on the checked-out
branch, staged in the index too so ``git status`` stays clean for it."""

from __future__ import annotations

import os
import stat

import pygit2

from ..tree_walk import lstat_in_tree
from .one_version import blob_of_one_version
from .paths import clean_path, tree_get
from .revisions import Revisions
from .served import serving
from .writing import SIGNATURE_EMAIL, SIGNATURE_NAME, Writing


class Autocommit(Revisions, Writing):
    """Commits of the working tree's state, one path at a time."""

    @serving
    def commit_worktree_path(self, path: str, who: str) -> str | None:
        """Commit the working-tree state of one path (changed, added or removed)
        onto HEAD's branch, and stage the same in the index so ``git status``
        stays clean for it. Returns the new commit, or None when nothing
        changed (or the file changed during each read of it: no commit is
        better than a torn one).
        """
        rel = clean_path(path)
        real = self.root / rel
        with self._lock, self._git_lock():
            head = self.head()
            base = head.tree if head is not None else None
            committed = tree_get(base, rel)
            index = self.repo.index
            index.read()
            st = lstat_in_tree(self.root, rel)  # no link followed on the way: under a linked folder, no file
            if st is not None and stat.S_ISREG(st.st_mode):
                try:
                    blob = blob_of_one_version(self.repo, real, self.root)  # another writer may be rewriting it
                except FileNotFoundError:  # a folder on the way swapped for a link since: a later close commits it
                    return None
                if blob is None:
                    return None
                mode = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if st.st_mode & stat.S_IXUSR else pygit2.GIT_FILEMODE_BLOB  # as git: the lstat, its owner x bit
                if committed is not None and committed.id == blob and committed.filemode == mode:
                    return None
                tree = self._tree_with(base, rel.split("/"), blob, mode)
                index.add(pygit2.IndexEntry(rel, blob, mode))
                verb = "update"
            elif st is None and committed is not None:
                tree = self._tree_without(base, rel.split("/"))
                if rel in index:
                    index.remove(rel)
                verb = "remove"
            else:
                return None
            sig = pygit2.Signature(SIGNATURE_NAME, SIGNATURE_EMAIL)
            message = f"nasfs: {verb} {rel}\n\nWritten through the nasfs mount by {who}.\n"
            commit = self.repo.create_commit("HEAD", sig, sig, message, tree, [head.id] if head else [])
            index.write()
            return str(commit)
