"""The working tree: paths resolved inside it, and its files served with a
commit that holds their exact bytes (HEAD when they match it, else a
snapshot)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2

from ..access import Caller, Identity, Seen, decider, identity
from ..errors import BadPath, FileChanged, NotFound, NotServable
from .commit_paths import FOLDER_READS, CommitPaths
from .content import FILE_MODES, Content
from .hashes import WorkingHashes
from .one_version import MODES, Way, readers_key, way_in_tree
from .paths import clean_path, tree_entry
from .snapshots import Snapshots


class WorkingFiles(CommitPaths, WorkingHashes, Snapshots):
    """Files of the working tree (or, given a revision, of a commit)."""

    def real_path(self, path: str) -> tuple[str, Path]:
        """(tree-relative path, absolute path) with symlinks resolved inside
        the tree, by string (access.py): the core thread walks no path the
        OS would follow a folder swapped for a link on (into the mount
        itself, whose request loop may be waiting for this very thread)."""
        rel, _ = self._resolve(path)
        return rel, self.root / rel if rel else self.root

    def _resolve(self, path: str) -> tuple[str, os.stat_result | None]:
        """``real_path``'s tree-relative path, and the stat of what it names
        (None: missing); BadPath for an escape."""
        seen, rel, st = decider(self.root, Caller.root()).resolve(clean_path(path))
        if seen is Seen.OUTSIDE:
            raise BadPath(f"{path!r} resolves outside the tree")
        if seen is Seen.DENIED:
            raise BadPath(f"{path!r} cannot be resolved: more than 40 links, or a folder the daemon may not search",
                          "a path of a file in the tree")
        if rel.split("/")[0] == ".git":
            raise BadPath(f"{path!r} resolves into .git, which is not served")
        return rel, st

    def exists(self, path: str, rev: str | None = None) -> bool:
        try:
            if rev is not None:
                return self.object_at(rev, path) is not None
            return decider(self.root, Caller.root()).lstat(clean_path(path)) is not None  # a link at the end: not followed
        except (BadPath, NotFound):
            return False

    def is_file(self, path: str, rev: str | None = None) -> bool:
        try:
            if rev is not None:
                return isinstance(self.object_at(rev, path), pygit2.Blob)
            st = self._resolve(path)[1]  # BadPath (an escape) is raised
            return st is not None and stat.S_ISREG(st.st_mode)
        except NotFound:
            return False

    def is_dir(self, path: str, rev: str | None = None) -> bool:
        """Whether ``path`` is a folder (in the working tree, or at ``rev``)."""
        try:
            if rev is not None:
                return isinstance(self.object_at(rev, path), pygit2.Tree)
            st = self._resolve(path)[1]  # BadPath (an escape) is raised
            return st is not None and stat.S_ISDIR(st.st_mode)
        except NotFound:
            return False

    def working(self, path: str, caller: Caller | None = None, allowed: Identity | None = None) -> Content:
        """The working-tree file at ``path``, with a commit that holds its bytes
        (a snapshot is made only for a ``caller`` who may see it). ``allowed``:
        the inode the access decision allowed (access.py), the only one whose
        bytes may be used (FileChanged for another); None: any (root's)."""
        rel, real = self.real_path(path)
        # lstat'ed again from the root, no link followed on the way: a folder swapped for a link since it
        # was resolved (out of the tree, or into the mount itself) is not stat'ed or read through; and who may
        # read it (the modes of its folders and its own) before a byte is read: a snapshot records the bytes
        # read with the audience and trail it takes later only if these held in between (snapshots.py)
        found = way_in_tree(self.root, rel) if rel else (real.stat(), ())
        if found is None:
            raise NotFound(f"{path!r} does not exist")
        st, way = found
        _same(path, allowed, st)  # before a byte is read: a folder or a fifo swapped in is never opened
        if stat.S_ISDIR(st.st_mode):
            raise NotServable(f"{path!r} is a folder (a directory), not a file", FOLDER_READS)
        if not stat.S_ISREG(st.st_mode):
            raise NotServable(f"{path!r} is not a regular file")
        blob_id, data, st = self._hash(real, st)
        _same(path, allowed, st)  # what was read (its fd's stat), or the stat a known blob id is keyed on
        if readers_key(st) != way[-1][:MODES]:  # another inode read, or its owner or modes changed since the walk (its
            # ACL, as its folders', is walked again before a snapshot records it: snapshots.py)
            raise FileChanged(f"{path!r} changed while it was read", "read it again")
        commit = self._commit_holding(rel, blob_id, real, data, caller, identity(st), way)
        return Content(rel, blob_id, st.st_size, commit, self._reader(commit), str(real), data, identity(st), str(self.root))

    def _commit_holding(self, rel: str, blob_id: str, real: Path, data: bytes | None, caller: Caller | None,
                        source: Identity, version: Way | None = None) -> str:
        head = self.head()
        if head is not None:
            if self._head_tree is None or self._head_tree[0] != head.id:
                self._head_tree = (head.id, head.tree, {})  # parsed once per HEAD, not per file
            try:
                entry = self._head_entry(rel)
                if str(entry.id) == blob_id and entry.filemode in FILE_MODES:
                    return str(head.id)
            except KeyError:
                pass
        return self.snapshot(rel, blob_id, real, head, data, caller, source, version)

    def _head_entry(self, rel: str) -> pygit2.Object:
        """HEAD's entry at ``rel`` (KeyError when absent), looked up in its
        folder's tree, which is kept: a path lookup from the root re-reads every
        folder on the way, a tenth of a millisecond per file of a whole-tree pass."""
        _, tree, folders = self._head_tree
        folder, _, name = rel.rpartition("/")
        sub = folders.get(folder)
        if sub is None:
            sub = self.repo[tree_entry(tree, folder).id] if folder else tree
            if not isinstance(sub, pygit2.Tree):
                raise KeyError(rel)  # a file or a link where a folder would be
            if len(folders) >= 4096:
                folders.clear()
            folders[folder] = sub
        return tree_entry(sub, name)


def _same(path: str, allowed: Identity | None, st: os.stat_result) -> None:
    """FileChanged unless ``st`` is of the inode the decision allowed."""
    if allowed is not None and identity(st) != allowed:
        raise FileChanged(f"{path!r} changed while it was read (it names another file than the one this account "
                          "was allowed to read)", "read it again")
