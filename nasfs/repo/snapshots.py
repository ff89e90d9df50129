"""Snapshot commits: working-tree content that differs from HEAD is recorded
as a commit over HEAD, written once (fixed author and time) and kept
reachable under ``refs/nasfs/snapshots``, so every pointer verifies with
plain ``git show``; the user's branch, index and working tree are never
touched.

A read never widens who can read content: a snapshot of content that some
reader of ``.git`` could not read at its source goes to a private store
(private_stores.py) instead of ``.git/objects``, and a request made for a
caller snapshots only what that caller may see."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pygit2

from ..acl import of_fd
from ..access import NOTHING, Caller, Decider, Identity, Seen, Trail, decider, identity, trail_of
from ..audience import narrower_than_git
from ..errors import FileChanged, NotFound, NotServable, settled
from ..tree_walk import lstat_in_tree
from .one_version import READ_TRIES, Way, open_regular, readers_key, stat_key, way_in_tree
from .paths import tree_get
from .private_stores import PrivateStores, as_owner, write_trails
from .revisions import Revisions
from .served import serving
from .writing import SIGNATURE_EMAIL, SIGNATURE_NAME, Writing

KEEP_REF = "refs/nasfs/snapshots"


class Snapshots(Revisions, PrivateStores, Writing):
    """Commits holding working-tree content, and the refs that keep them."""

    @serving
    def in_shared_store(self, commit: str) -> bool:
        """Whether the commit ``commit`` (an id or a unique prefix of 7+) is in
        ``.git/objects`` (or an alternate the repository itself names), where
        every reader of ``.git`` reads it: a snapshot that may be published
        (pushed with the evidence). False for one in a private store, and for
        a commit that is nowhere this process can read."""
        try:
            oid = self.resolve(commit).id
        except NotFound:
            return False
        return self._shared.exists(oid)

    @serving
    def snapshot_worktree(self, caller: Caller | None = None, keep: Callable[[str], bool] | None = None) -> str:
        """A commit holding the whole working tree as it is now (HEAD itself
        when nothing differs): tracked changes, deletions and untracked files
        that are not ignored. Kept under refs/nasfs/snapshots like any snapshot.
        For a ``caller``, only the changes that caller may see: a file it may
        not read is left as HEAD has it (a new one left out), so its content is
        not recorded on that caller's request. ``keep``: besides, only the
        changed paths it accepts are recorded (an answer made for a reader
        records only what that reader could find: the commit's tree is
        listed to whoever may read it in ``.at/``). A file replaced between
        the caller's decision and its read (an editor saves by rename) is
        FileChanged: the tree is looked at again (errors.settled)."""
        return settled(lambda: self._snapshot_worktree(caller, keep))

    def _snapshot_worktree(self, caller: Caller | None, keep: Callable[[str], bool] | None) -> str:
        head = self.head()
        seen = decider(self.root, caller) if caller is not None else None
        changed: list[tuple[str, Path | None, Identity | None, Way]] = []  # and the inode the caller's decision
        # allowed, and who may read it (one_version.way_in_tree: its folders and itself) when the store is chosen
        for path, flags in sorted(self.repo.status().items()):
            if flags & pygit2.GIT_STATUS_IGNORED:
                continue
            differs_from_head = flags & (
                pygit2.GIT_STATUS_WT_NEW | pygit2.GIT_STATUS_WT_MODIFIED | pygit2.GIT_STATUS_WT_DELETED
                | pygit2.GIT_STATUS_WT_TYPECHANGE | pygit2.GIT_STATUS_WT_RENAMED | pygit2.GIT_STATUS_INDEX_MODIFIED
                | pygit2.GIT_STATUS_INDEX_NEW | pygit2.GIT_STATUS_INDEX_DELETED)
            if not differs_from_head or not _utf8(path) or (keep is not None and not keep(path)):
                continue  # a name that is not UTF-8 is served by no view (and git's tree builder refuses it)
            # no symlink followed anywhere on the way (a folder swapped for a link out of the tree, or
            # into the mount itself): a path whose folders are not real directories is no file of the
            # working tree (git status too reports it deleted), neither read nor recorded as content
            found = way_in_tree(self.root, path)
            st = found[0] if found is not None else None
            if seen is not None:
                allowed = _seen_change(seen, path, st is not None)
                if allowed is None:
                    continue  # not this caller's to record
            else:
                allowed = identity(st) if st is not None else None  # the read must find this very inode
            if st is not None and stat.S_ISREG(st.st_mode):
                changed.append((path, self.root / path, allowed, found[1]))
            elif st is None:
                changed.append((path, None, None, ()))
        if not changed and head is not None:
            return str(head.id)
        store = self._store_for([(path, real) for path, real, _, _ in changed if real is not None], caller)
        repo = store or self.repo
        owner = self.store_owner(store) if store is not None else 0
        blobs: list[tuple[str, pygit2.Oid | None]] = []
        trails = _Trails(self.root, store is not None)
        for path, real, allowed, version in changed:
            if real is None:
                blobs.append((path, None))
            else:
                trails.take(path)
                blobs.append((path, self._one_version(repo, owner, path, real, allowed, version)))
                trails.take(path)
        with self._lock, self._git_lock(), as_owner(owner):
            tree = head.tree if head is not None else None
            tree_id = tree.id if tree is not None else repo.TreeBuilder().write()
            for path, blob in blobs:
                base = repo[tree_id]
                if blob is None:
                    if tree_get(base, path) is not None:
                        tree_id = self._tree_without(base, path.split("/"), repo)
                else:
                    tree_id = self._tree_with(base, path.split("/"), blob, repo=repo)
            return self._record(head, tree_id, "the working tree", store, trails.taken)

    def _one_version(self, repo: pygit2.Repository, owner: int, path: str, real: Path, allowed: Identity | None,
                     version: Way) -> pygit2.Oid:
        """The blob of a working file's bytes for a whole-tree snapshot, as
        one version (as one_version.read_one_version: read again while a
        writer in place changed it during the read, never a version's start
        joined to the next one's end), read while who may read it is
        ``version``, which chose its store; FileChanged otherwise."""
        for attempt in range(READ_TRIES):
            try:
                fh = open_regular(real, root=self.root)  # no symlink followed on the way
            except (FileNotFoundError, NotServable):
                raise FileChanged(f"{path!r} changed while it was read", "read it again") from None
            with fh, as_owner(owner):  # read as this process, written as the store's account
                # the owners and modes of the file and its folders that chose the store and gave the trail,
                # before and after the read: a chmod to 0600 (or of its folder to 0700) and a secret written
                # in place since must not go where 0644 content goes (a writer in place keeps them all:
                # every version read is one the same accounts may read)
                before = os.fstat(fh.fileno())
                if ((allowed is not None and identity(before) != allowed) or readers_key(before, of_fd(fh.fileno())) != version[-1]
                        or _way(self.root, path) != version):
                    raise FileChanged(f"{path!r} changed while it was read", "read it again")
                blob = repo.create_blob_fromiobase(fh)
                read = fh.tell()
                after = os.fstat(fh.fileno())
                if readers_key(after, of_fd(fh.fileno())) != version[-1] or _way(self.root, path) != version:
                    raise FileChanged(f"{path!r} changed while it was read", "read it again")
            if read == before.st_size and stat_key(before) == stat_key(after):
                return blob
            time.sleep(0.001 * attempt)
        raise FileChanged(f"{path!r} changed during each of {READ_TRIES} reads of it", "read it again")

    def snapshot(self, rel: str, blob_id: str, real: Path, head: pygit2.Commit | None, data: bytes | None = None,
                 caller: Caller | None = None, source: Identity | None = None,
                 version: Way | None = None) -> str:
        """Record HEAD's tree with ``rel`` set to this blob as a commit under refs/nasfs.

        Deterministic (fixed author and time), so the same content over the same
        HEAD is the same commit, written once. Refused (AccessDenied) for a
        ``caller`` who may not see ``rel``; written to a private store when some
        reader of ``.git`` could not read it. ``source``: the inode the blob id
        is of; bytes read again by path are of it or are not written.
        ``version``: who could read the file (one_version.way_in_tree: the
        owners and modes of the root, its folders and itself) when the blob
        id was read from it (``data``, or a blob id known by stat), before
        this call: it must still be so once its audience and trail are taken
        (FileChanged otherwise), since a version read under 0600, or in a
        0700 folder, and given public text and 0644 (or an open folder) since
        must not be recorded as the public file's (in .git/objects, or with a
        trail its old readers never had). A write in place since changes
        nothing of that: the version read is one those readers could read.
        """
        if caller is not None:
            decider(self.root, caller).check(rel)
        store = self._store_for([(rel, real)], caller)
        repo = store or self.repo
        owner = self.store_owner(store) if store is not None else 0
        trails = _Trails(self.root, store is not None)
        trails.take(rel)
        if version is not None and _way(self.root, rel) != version:  # a chmod or a chown since, of it or a folder
            raise FileChanged(f"{rel!r} changed since it was read", "read it again")
        with self._lock, self._git_lock():
            oid = pygit2.Oid(hex=blob_id)
            if not (store.odb if store is not None else self._shared).exists(oid):  # ('in repo' would read the blob whole)
                if data is not None:
                    with as_owner(owner):
                        written = repo.create_blob(data)
                else:
                    try:
                        fh = open_regular(real, root=self.root)  # no symlink followed on the way
                    except (FileNotFoundError, NotServable):  # a folder on the way is gone, or a link now; or the file
                        raise FileChanged(f"{rel!r} changed while it was read", "read it again") from None
                    with fh, as_owner(owner):  # read as this process, written as the store's account
                        if source is not None and identity(os.fstat(fh.fileno())) != source:
                            raise FileChanged(f"{rel!r} changed while it was read", "read it again")
                        written = repo.create_blob_fromiobase(fh)
                if written != oid:
                    raise NotServable(f"{rel!r} changed while it was being recorded; read it again")
            trails.take(rel)
            base = head.tree if head is not None else None
            with as_owner(owner):
                tree = self._tree_with(base, rel.split("/"), oid, repo=repo)
                return self._record(head, tree, rel, store, trails.taken)

    def _store_for(self, files: list[tuple[str, Path]], caller: Caller | None) -> pygit2.Repository | None:
        """Where a snapshot of these working files goes: None for
        ``.git/objects``, when every reader of ``.git`` may read them all at
        their source; else the private store of their owner (of the caller,
        or of this process, when they have several)."""
        if not narrower_than_git(self.root, self.git_dir, [rel for rel, _ in files]):
            return None
        owners = set()
        for rel, _ in files:
            try:
                st = lstat_in_tree(self.root, rel)  # no link followed on the way (nor at the end)
            except OSError:
                continue
            if st is not None:
                owners.add(st.st_uid)
        if len(owners) == 1:
            uid = owners.pop()
        else:
            uid = caller.uid if caller is not None and not caller.is_root else os.geteuid()
        return self._store(uid)

    def _record(self, head: pygit2.Commit | None, tree: pygit2.Oid, what: str,
                store: pygit2.Repository | None = None, trails: Mapping[str, Sequence[Trail]] | None = None) -> str:
        """Write a snapshot commit of ``tree`` over HEAD, once: author and time
        are fixed, so the same content over the same HEAD is the same commit.
        In ``store`` (a private one) when given, kept there by a ref of its own
        (the caller writes there as the store's account: :func:`as_owner`),
        with the ``trails`` of the files it records in its message: who could
        read them then (snapshot_access.py asks it)."""
        when = head.commit_time if head is not None else 0
        offset = head.commit_time_offset if head is not None else 0
        sig = pygit2.Signature(SIGNATURE_NAME, SIGNATURE_EMAIL, when, offset)
        message = f"nasfs snapshot of {what}\n\nWorking-tree content of {what} over {head.id if head else 'no commit'}.\n"
        if store is not None:
            message += f"\n{write_trails(trails or {})}\n"
        parents = [head.id] if head is not None else []
        raw = (store or self.repo).create_commit_string(sig, sig, message, tree, parents)  # (checks the tree is there)
        commit_id = _object_id(b"commit", raw.encode())
        if store is not None:
            if not store.odb.exists(commit_id):
                store.odb.write(pygit2.GIT_OBJECT_COMMIT, raw)
            self._keep_private(store, commit_id)
        elif not self._shared.exists(commit_id):  # new: write it and keep it reachable
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
        place = self._place_of(oid)  # (exists asks the disk, not libgit2's memory of objects)
        if place is None:
            return False
        found = place.repo[oid]
        if not isinstance(found, pygit2.Commit):
            return False
        if found.author.email == SIGNATURE_EMAIL and found.message.startswith("nasfs snapshot of "):
            store = self._store_holding(oid)
            with self._lock, self._git_lock():
                if store is not None:
                    self._keep_private(store, oid)  # its ref only
                elif not self._is_kept(found.id):
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


def _seen_change(seen: Decider, path: str, exists: bool) -> Identity | None:
    """What the caller's decision allows of this change, None if nothing:
    the file itself (its inode, the only one recorded for them), or for a
    deletion, the listing of the nearest folder above it that is still there
    (``NOTHING``: no file is read)."""
    if exists:
        verdict, allowed = seen.judge(path)
        return allowed if verdict is Seen.ALLOWED else None
    folder = os.path.dirname(path)
    while folder and not _real_dir(seen.root, folder):  # a link to a folder is not one (not followed)
        folder = os.path.dirname(folder)
    return NOTHING if seen.decide(folder, want_dir=True) is Seen.ALLOWED else None


def _way(root: Path, rel: str) -> Way | None:
    """Who may read ``rel`` now (one_version.way_in_tree), None when it is gone."""
    found = way_in_tree(root, rel)
    return found[1] if found is not None else None


def _real_dir(root: Path, folder: str) -> bool:
    """Whether ``folder`` is a real directory of the tree, reached with no link followed."""
    st = lstat_in_tree(root, folder)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _object_id(kind: bytes, raw: bytes) -> pygit2.Oid:
    """The id git gives an object, computed without writing it."""
    return pygit2.Oid(hex=hashlib.sha1(kind + b" %d\0" % len(raw) + raw).hexdigest())


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Trails:
    """The trails of a private snapshot's files, each taken before its
    content is read and again after (access.Trail): a mode changed in
    between (an owner's chmod, a folder opened) keeps both, and a reader
    must pass both. None taken of a file not reachable as a regular file
    (its snapshot is then told to its store's owner only)."""

    def __init__(self, root: Path, private: bool) -> None:
        self.root, self.private = root, private
        self.taken: dict[str, list[Trail]] = {}

    def take(self, rel: str) -> None:
        if not self.private:
            return
        now = trail_of(self.root, rel)
        held = self.taken.setdefault(rel, [])
        if now is None:
            held.append(())  # unknown: a trail no reader passes
        elif now not in held:
            held.append(now)
