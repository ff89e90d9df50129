"""The only module that imports pygit2: revisions, blobs, paths, snapshots.

Content is served from two places: the working tree (the real files, which
may differ from any commit) and commits (``--at REV``, ``.at/<rev>/``). Every
piece of content handed out names a commit that holds exactly those bytes at
that path, so every pointer verifies with plain ``git show``: working-tree
content that differs from HEAD is first recorded as a *snapshot commit*
(parent: HEAD) kept reachable under ``refs/nasfs/snapshots``. The user's
branch, index and working tree are never touched.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pygit2

from ..errors import BadPath, NotFound, NotServable
from .changes import BlobDiff, Changes, FileChange, diff_bytes
from .commit_paths import FOLDER_READS, CommitPaths
from .commit_trees import CommitTrees, TreeItem
from .content import FILE_MODES, LARGE_BYTES, Content
from .hashes import WorkingHashes
from .paths import clean_path, tree_entry
from .served import serving, work_tree_top
from .writing import SIGNATURE_EMAIL, SIGNATURE_NAME, Writing

__all__ = [
    "FOLDER_READS", "KEEP_REF", "LARGE_BYTES", "BlobDiff", "Content", "FileChange", "GitTree", "TreeItem",
    "clean_path", "diff_bytes", "work_tree_top",
]

KEEP_REF = "refs/nasfs/snapshots"


class GitTree(CommitPaths, CommitTrees, Changes, WorkingHashes, Writing):
    """One served tree: a git work tree, its node and tree names for pointers."""

    # -- the working tree --------------------------------------------------
    def real_path(self, path: str) -> tuple[str, Path]:
        """(tree-relative path, absolute path) with symlinks resolved inside the tree."""
        rel = clean_path(path)
        root = str(self.root)  # strings, not Path objects: this runs twice per view
        full = os.path.join(root, rel) if rel else root
        try:
            real = os.path.realpath(full, strict=True)
        except FileNotFoundError:
            real = os.path.realpath(full)  # absent: NotFound comes from the caller's stat
        except OSError as exc:  # ELOOP, ENAMETOOLONG, ENOTDIR, EACCES
            raise BadPath(f"{path!r} cannot be resolved: {exc.strerror.lower()}", "a path of a file in the tree") from None
        inside = root.rstrip("/") + "/"
        if real != root and not real.startswith(inside):
            raise BadPath(f"{path!r} resolves to {real}, outside the tree")
        rel_real = real[len(inside):] if real != root else ""
        if rel_real.split("/")[0] == ".git":
            raise BadPath(f"{path!r} resolves into .git, which is not served")
        return rel_real, Path(real)

    def exists(self, path: str, rev: str | None = None) -> bool:
        try:
            if rev is not None:
                return self.object_at(rev, path) is not None
            rel = clean_path(path)
            return os.path.lexists(self.root / rel)
        except (BadPath, NotFound):
            return False

    def is_file(self, path: str, rev: str | None = None) -> bool:
        try:
            if rev is not None:
                return isinstance(self.object_at(rev, path), pygit2.Blob)
            return self.real_path(path)[1].is_file()  # BadPath (an escape) is raised
        except (NotFound, OSError):
            return False

    def is_dir(self, path: str, rev: str | None = None) -> bool:
        """Whether ``path`` is a folder (in the working tree, or at ``rev``)."""
        try:
            if rev is not None:
                return isinstance(self.object_at(rev, path), pygit2.Tree)
            return self.real_path(path)[1].is_dir()  # BadPath (an escape) is raised
        except (NotFound, OSError):
            return False

    def working(self, path: str) -> Content:
        """The working-tree file at ``path``, with a commit that holds its bytes."""
        rel, real = self.real_path(path)
        try:
            st = real.stat()
        except FileNotFoundError:
            raise NotFound(f"{path!r} does not exist") from None
        if stat.S_ISDIR(st.st_mode):
            raise NotServable(f"{path!r} is a folder (a directory), not a file", FOLDER_READS)
        if not stat.S_ISREG(st.st_mode):
            raise NotServable(f"{path!r} is not a regular file")
        blob_id, data, st = self._hash(real, st)
        commit = self._commit_holding(rel, blob_id, real, data)
        return Content(rel, blob_id, st.st_size, commit, "worktree", self.repo, str(real), data)

    def _commit_holding(self, rel: str, blob_id: str, real: Path, data: bytes | None) -> str:
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
        return self.snapshot(rel, blob_id, real, head, data)

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

    @serving
    def snapshot_worktree(self) -> str:
        """A commit holding the whole working tree as it is now (HEAD itself
        when nothing differs): tracked changes, deletions and untracked files
        that are not ignored. Kept under refs/nasfs/snapshots like any snapshot."""
        head = self.head()
        changed: list[tuple[str, pygit2.Oid | None]] = []
        for path, flags in sorted(self.repo.status().items()):
            if flags & pygit2.GIT_STATUS_IGNORED:
                continue
            differs_from_head = flags & (
                pygit2.GIT_STATUS_WT_NEW | pygit2.GIT_STATUS_WT_MODIFIED | pygit2.GIT_STATUS_WT_DELETED
                | pygit2.GIT_STATUS_WT_TYPECHANGE | pygit2.GIT_STATUS_WT_RENAMED | pygit2.GIT_STATUS_INDEX_MODIFIED
                | pygit2.GIT_STATUS_INDEX_NEW | pygit2.GIT_STATUS_INDEX_DELETED)
            if not differs_from_head:
                continue
            real = self.root / path
            if real.is_file() and not real.is_symlink():
                with open(real, "rb") as fh:
                    changed.append((path, self.repo.create_blob_fromiobase(fh)))
            elif not real.exists():
                changed.append((path, None))
        if not changed and head is not None:
            return str(head.id)
        with self._lock, self._git_lock():
            tree = head.tree if head is not None else None
            tree_id = tree.id if tree is not None else self.repo.TreeBuilder().write()
            for path, blob in changed:
                base = self.repo[tree_id]
                if blob is None:
                    if path in base:
                        tree_id = self._tree_without(base, path.split("/"))
                else:
                    tree_id = self._tree_with(base, path.split("/"), blob)
            return self._record(head, tree_id, "the working tree")

    # -- autocommit: writes through the mount onto the checked-out branch ------
    @serving
    def commit_worktree_path(self, path: str, who: str) -> str | None:
        """Commit the working-tree state of one path (changed, added or removed)
        onto HEAD's branch, and stage the same in the index so ``git status``
        stays clean for it. Returns the new commit, or None when nothing changed.
        """
        rel = clean_path(path)
        real = self.root / rel
        with self._lock, self._git_lock():
            head = self.head()
            base = head.tree if head is not None else None
            index = self.repo.index
            index.read()
            if real.is_file() and not real.is_symlink():
                with open(real, "rb") as fh:
                    blob = self.repo.create_blob_fromiobase(fh)
                mode = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if os.access(real, os.X_OK) else pygit2.GIT_FILEMODE_BLOB
                if base is not None and rel in base and base[rel].id == blob and base[rel].filemode == mode:
                    return None
                tree = self._tree_with(base, rel.split("/"), blob, mode)
                index.add(pygit2.IndexEntry(rel, blob, mode))
                verb = "update"
            elif not real.exists() and base is not None and rel in base:
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

    # -- snapshot commits --------------------------------------------------
    def snapshot(self, rel: str, blob_id: str, real: Path, head: pygit2.Commit | None, data: bytes | None = None) -> str:
        """Record HEAD's tree with ``rel`` set to this blob as a commit under refs/nasfs.

        Deterministic (fixed author and time), so the same content over the same
        HEAD is the same commit, written once.
        """
        with self._lock, self._git_lock():
            oid = pygit2.Oid(hex=blob_id)
            if not self.repo.odb.exists(oid):  # ('in repo' would read the blob whole)
                if data is not None:
                    written = self.repo.create_blob(data)
                else:
                    with open(real, "rb") as fh:
                        written = self.repo.create_blob_fromiobase(fh)
                if written != oid:
                    raise NotServable(f"{rel!r} changed while it was being recorded; read it again")
            base = head.tree if head is not None else None
            return self._record(head, self._tree_with(base, rel.split("/"), oid), rel)

    def _record(self, head: pygit2.Commit | None, tree: pygit2.Oid, what: str) -> str:
        """Write a snapshot commit of ``tree`` over HEAD, once: author and time
        are fixed, so the same content over the same HEAD is the same commit."""
        when = head.commit_time if head is not None else 0
        offset = head.commit_time_offset if head is not None else 0
        sig = pygit2.Signature(SIGNATURE_NAME, SIGNATURE_EMAIL, when, offset)
        message = f"nasfs snapshot of {what}\n\nWorking-tree content of {what} over {head.id if head else 'no commit'}.\n"
        parents = [head.id] if head is not None else []
        raw = self.repo.create_commit_string(sig, sig, message, tree, parents)
        commit_id = _object_id(b"commit", raw.encode())
        if not self.repo.odb.exists(commit_id):  # new: write it and keep it reachable
            self.repo.odb.write(pygit2.GIT_OBJECT_COMMIT, raw)
            self._keep(commit_id)
        elif not self._is_kept(commit_id):  # the keep ref was removed, or a clone lacks it
            self._keep(commit_id)
        return str(commit_id)

    @serving
    def hold(self, commit: str) -> bool:
        """Whether the commit with this full id is in this repository, so that an
        answer remembered from earlier may still name it; a nasfs snapshot that
        the keep ref no longer holds is chained into it again, so ``git gc``
        keeps it."""
        try:
            oid = pygit2.Oid(hex=commit)
        except ValueError:
            return False
        if not self.repo.odb.exists(oid):  # asks the disk, not libgit2's memory of objects
            return False
        found = self.repo[oid]
        if not isinstance(found, pygit2.Commit):
            return False
        if found.author.email == SIGNATURE_EMAIL and found.message.startswith("nasfs snapshot of "):
            with self._lock, self._git_lock():
                if not self._is_kept(found.id):
                    self._keep(found.id)
        return True

    def _keep_target(self) -> pygit2.Oid | None:
        ref = self.repo.references.get(KEEP_REF)
        return ref.target if ref is not None else None

    def _is_kept(self, commit_id: pygit2.Oid) -> bool:
        """Whether ``refs/nasfs/snapshots`` holds a snapshot. Cheap when known:
        what was learnt stays valid while the ref points where it did, and its
        chain is read from the newest end only as far as needed."""
        tip = self._keep_target()
        if tip != self._kept_tip:  # moved or removed by someone else: learn again
            self._kept_tip, self._kept, self._unread = tip, set(), self._chain(tip)
        if commit_id in self._kept:
            return True
        for kept in self._unread:
            self._kept.add(kept)
            if kept == commit_id:
                return True
        return False

    def _chain(self, keeper: pygit2.Oid | None) -> Iterator[pygit2.Oid]:
        """The snapshots a keep chain holds, newest first: each keeper's parents
        are (the previous keeper, a snapshot), the first one's the snapshot alone."""
        while keeper is not None:
            parents = self.repo[keeper].parent_ids
            if not parents:
                return
            yield parents[-1]
            keeper = parents[0] if len(parents) == 2 else None

    def _keep(self, commit_id: pygit2.Oid) -> None:
        """Make a snapshot reachable: chain it into ``refs/nasfs/snapshots``."""
        tip = self._keep_target()
        parents = [tip, commit_id] if tip is not None else [commit_id]
        empty = self.repo.TreeBuilder().write()
        sig = pygit2.Signature(SIGNATURE_NAME, SIGNATURE_EMAIL)
        keeper = self.repo.create_commit(None, sig, sig, "nasfs: keep snapshots reachable\n", empty, parents)
        self.repo.references.create(KEEP_REF, keeper, force=True)
        if tip != self._kept_tip:  # what was known is of another chain
            self._kept, self._unread = set(), self._chain(tip)
        self._kept_tip = keeper
        self._kept.add(commit_id)


def _object_id(kind: bytes, raw: bytes) -> pygit2.Oid:
    """The id git gives an object, computed without writing it."""
    return pygit2.Oid(hex=hashlib.sha1(kind + b" %d\0" % len(raw) + raw).hexdigest())
