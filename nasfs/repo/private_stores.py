"""Private snapshot stores: where a snapshot goes when some reader of
``.git`` could not read its content at the source (nasfs/audience.py).

Each store is a bare repository ``.git/nasfs-private/<uid>.git``, mode 0700
and owned by that account, whose ``objects/info/alternates`` names the
shared ``.git/objects`` (so a snapshot stores only its own blob, trees and
commit) and whose refs ``refs/nasfs/private/<commit>`` keep its snapshots
from ``git gc``. The shared repository does not name the stores (git prints
an error line on every command for an alternate it cannot read): a process
reads the ones it can read, each through a handle of its own
(own_objects.py), so the owner's nasfs reads them and nobody else's does.
The owner's plain git reads them with
``git --git-dir=.git/nasfs-private/<uid>.git`` or
``GIT_ALTERNATE_OBJECT_DIRECTORIES=.git/nasfs-private/<uid>.git/objects``.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pygit2

from ..access import Trail
from ..cache import LRU
from .own_objects import OwnObjects, not_own
from .served import serving

PRIVATE_REFS = "refs/nasfs/private/"
NOWHERE = "(no store)"  # private_sources of a commit found in no store this process knows
TRAILS = "Nasfs-Readers: "  # the line of a private snapshot's message that keeps its sources' trails

_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def as_owner(uid: int) -> Iterator[None]:
    """This thread's file-system identity set to account ``uid`` (its own
    primary group) for the span of the block, when this process is root.

    A store belongs to its account, who may put a symlink or a folder of
    their own anywhere in it; what root writes there (objects, refs, folders)
    must land only where that account could write itself. ``setfsuid`` is
    per thread on Linux and drops the file capabilities (DAC override,
    chown) while it is not 0, so the kernel judges every open, mkdir and
    rename in the block as the account's. (Root's supplementary groups stay.)"""
    if os.geteuid() != 0 or uid == 0:
        yield
        return
    gid = _primary_group(uid)
    before_uid, before_gid = _libc.setfsuid(-1), _libc.setfsgid(-1)
    _libc.setfsgid(gid)
    _libc.setfsuid(uid)
    try:
        if _libc.setfsuid(-1) != uid or _libc.setfsgid(-1) != gid:
            raise OSError(errno.EPERM, f"could not write as uid {uid}, the owner of its private snapshot store")
        yield
    finally:
        _libc.setfsuid(before_uid)
        _libc.setfsgid(before_gid)


def _own_folder(path: Path, *uids: int) -> os.stat_result:
    """``path``'s lstat, when it is a real folder (not a symlink) of one of
    the accounts ``uids`` that no one else may write to; else OSError: nasfs
    writes no snapshot through a folder someone else could swap under it."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid not in uids or st.st_mode & 0o022:
        raise OSError(errno.EPERM, f"{path} is not a folder of uid {' or '.join(map(str, sorted(set(uids))))} "
                                   "closed to others: no private snapshot is written through it")
    return st


class PrivateSources(NamedTuple):
    """What a private snapshot records, for the decision of who may read it."""

    store: str  # its store's folder; NOWHERE when this process knows no store holding it
    paths: tuple[str, ...]  # the working-tree files whose content it records
    trails: Mapping[str, tuple[Trail, ...]]  # for each, who could read it when it was recorded (access.Trail)
    gone: tuple[str, ...] = ()  # the files it deletes from its parent (a working tree's snapshot): no content, but
    # the folders on the way to them are its own trees, written to its store (PrivateStores._takes)


def write_trails(trails: Mapping[str, Sequence[Trail]]) -> str:
    """The line of a private snapshot's commit message that keeps its
    sources' trails: one JSON object, ASCII, on one line (a path's odd bytes
    and newlines escaped), sorted so that the same snapshot is the same commit."""
    return TRAILS + json.dumps({path: [list(map(list, t)) for t in ts] for path, ts in trails.items()},
                               sort_keys=True, separators=(",", ":"))


def read_trails(message: str) -> dict[str, tuple[Trail, ...]]:
    """The trails a snapshot's message keeps, on its last line (its first
    lines name the file, whose name may hold a line of any text); none (its
    sources readable by their store's owner only) for a message without
    them or with a line that is not what :func:`write_trails` writes (its
    store's owner may write any message there): never an exception."""
    line = message.rstrip("\n").rpartition("\n")[2]
    if not line.startswith(TRAILS):
        return {}
    try:
        found = json.loads(line[len(TRAILS):])
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        return {}
    if not isinstance(found, dict) or not all(map(_are_trails, found.values())):
        return {}
    return {path: tuple(tuple(tuple(step) for step in trail) for trail in trails) for path, trails in found.items()}


def _are_trails(trails: object) -> bool:
    """A list of trails, each a list of steps of four integers and three more
    for each ACL entry (access.Step; none in trails written before ACLs
    were judged), as :func:`write_trails` writes them."""
    return isinstance(trails, list) and all(
        isinstance(trail, list) and all(isinstance(step, list) and len(step) >= 4 and (len(step) - 4) % 3 == 0
                                        and all(type(v) is int for v in step)
                                        for step in trail)
        for trail in trails)


class PrivateStores(OwnObjects):
    """The private stores of this repository, and which commits are in them."""

    def _serve(self, repo: pygit2.Repository) -> None:
        super()._serve(repo)
        self._stores: dict[int, pygit2.Repository] = {}  # uid -> a handle on its store, to write, opened as needed
        self._sources: LRU[str, PrivateSources] = LRU(1024)  # commit -> what it records (store '': shared)

    def _store(self, uid: int) -> pygit2.Repository:
        """The private store of account ``uid`` (made if missing), readable by
        this process. A daemon that is not root keeps its own store only: it
        cannot give a folder to another account. A root daemon writes there
        as the store's account (:func:`as_owner`), and uses its own store
        when that account could not reach the shared objects (.git closed to
        it: its own git could not read the store either)."""
        if os.geteuid() != 0:
            uid = os.geteuid()
        elif uid != 0 and not self._reaches_objects(uid):
            uid = 0
        if uid not in self._stores:
            top = self._stores_dir() / f"{uid}.git"
            if not (top / "objects").is_dir():
                self._make_store(top, uid)
            self._stores[uid] = pygit2.Repository(str(top), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            self._add_readable_stores()
        self._check_store(uid)
        return self._stores[uid]

    def _reaches_objects(self, uid: int) -> bool:
        """Whether account ``uid`` may enter the stores' folder and read the
        shared objects (judged by the kernel, as that account)."""
        with as_owner(uid):
            return (os.access(self.git_dir / "objects", os.R_OK | os.X_OK, effective_ids=True)
                    and os.access(self.git_dir, os.X_OK, effective_ids=True))

    def _check_store(self, uid: int) -> None:
        """The stores' folder is this process's and the store ``uid``'s, both
        real folders no one else may write to (checked before each write)."""
        self._check_stores_dir()
        _own_folder(self._stores_dir() / f"{uid}.git", uid)

    def _check_stores_dir(self) -> None:
        """The stores' folder: made by root, by this account, or by .git's
        own (who may rename anything in .git anyway), open to no one else."""
        _own_folder(self._stores_dir(), 0, os.geteuid(), os.stat(self.git_dir).st_uid)

    def store_owner(self, store: pygit2.Repository) -> int:
        return os.lstat(store.path.rstrip("/")).st_uid

    def _make_store(self, top: Path, uid: int) -> None:
        """A bare repository that borrows the shared objects, 0700 and
        ``uid``'s, made aside and renamed into place (another process may
        make it at once). Its folder is made by this process and given to
        the account; what is inside it is written as that account."""
        base = self._stores_dir()
        try:
            base.mkdir(mode=0o711)  # enterable, not listable: the names say which accounts have one
        except FileExistsError:
            pass
        self._check_stores_dir()
        made = Path(tempfile.mkdtemp(dir=base, prefix=".new-"))  # 0700 from the start, ours: no one else reaches in
        try:
            pygit2.init_repository(str(made), bare=True)
            (made / "objects" / "info" / "alternates").write_text(f"{(self.git_dir / 'objects').resolve()}\n")
            if os.geteuid() == 0 and uid != 0:  # all of it is the account's, made here before anyone could enter
                gid = _primary_group(uid)
                for folder, _, files in os.walk(made):
                    for name in [folder, *(os.path.join(folder, f) for f in files)]:
                        os.lchown(name, uid, gid)
            os.rename(made, top)
        except OSError:  # made by another process first, or not ours to make
            shutil.rmtree(made, ignore_errors=True)
            if not (top / "objects").is_dir():
                raise

    def _keep_private(self, store: pygit2.Repository, commit_id: pygit2.Oid) -> None:
        """Keep a private snapshot from ``git gc`` with a ref of its own in its
        store, written as the store's account (a loose ref file, made aside and
        renamed: libgit2's own ref writer would read this process's global
        git config, which that account may not)."""
        name = f"{PRIVATE_REFS}{commit_id}"
        if store.references.get(name) is not None:
            return
        folder = Path(store.path) / PRIVATE_REFS.rstrip("/")
        owner = self.store_owner(store)
        self._check_stores_dir()
        _own_folder(Path(store.path), owner)
        with as_owner(owner):
            folder.mkdir(mode=0o755, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".new-")
            try:
                with os.fdopen(fd, "w") as out:
                    out.write(f"{commit_id}\n")
                os.rename(tmp, folder / str(commit_id))
            except BaseException:
                os.unlink(tmp)
                raise

    @serving
    def private_sources(self, commit: str) -> PrivateSources | None:
        """For a snapshot in a private store: its store's folder, the paths
        whose working-tree content it records (those changed from its
        parent) and the trails it recorded of them; None for a commit in the
        shared store; a store of NOWHERE for one this process has no store
        for (no one but root is served it). What a door asks the access
        decision about before serving the commit.

        A commit of a store is read through that store's own objects and
        the shared ones (own_objects.py), so what it names elsewhere is not
        found; one with a parent outside the shared store, or with two, is
        no snapshot nasfs wrote either (its store's owner may write any
        object there): what it does not record would be that parent's, whose
        readers were never asked. It counts as found nowhere (root's only)."""
        known = self._sources.get(commit)
        if known is None:
            place = self._place_of(pygit2.Oid(hex=commit))
            if place is None:
                known = PrivateSources(NOWHERE, (), {})
            elif not place.stores:
                known = PrivateSources("", (), {})
            else:
                known = _recorded(place.repo, place.repo[commit], os.path.dirname(place.stores[0]), self._shared)
            if place is not None:  # one found nowhere may yet appear in a store made since
                self._sources.put(commit, known)
        return known if known.store else None

    def _named(self, repo: pygit2.Repository, commit: str, path: str, oid: pygit2.Oid) -> pygit2.Object:
        """The object ``oid`` that commit ``commit`` names at ``path``, read
        through ``repo``, the commit's own handle (own_objects.py). NotFound
        when it is not among that handle's objects, or is a private store's
        own at a path its commit does not record (:meth:`_takes`)."""
        try:
            found = repo[oid]
        except KeyError:
            raise not_own(commit, oid) from None
        if not self._takes(commit, path, oid, folder=isinstance(found, pygit2.Tree)):
            raise not_own(commit, oid)
        return found

    def _named_size(self, repo: pygit2.Repository, commit: str, path: str, oid: pygit2.Oid) -> int:
        """The size of the blob :meth:`_named` would read (from its header only)."""
        try:
            size = repo.odb.read_header(oid)[1]
        except KeyError:
            raise not_own(commit, oid) from None
        if not self._takes(commit, path, oid):
            raise not_own(commit, oid)
        return size

    def _takes(self, commit: str, path: str, oid: pygit2.Oid, folder: bool = False) -> bool:
        """Whether an object ``commit`` names at ``path`` (a folder's tree when
        ``folder``) may be read through its handle: always for a commit of
        ``.git/objects``; for a private store's, an object of ``.git/objects``,
        or a file it records, or a folder on the way to one or to a file it
        deletes (a folder it wrote: each entry is asked in turn). What it does
        not record is its parent's, a commit of ``.git/objects`` that must
        hold it too: a HEAD a committer made name a private blob or folder,
        copied into a snapshot recorded over it, is no reason to serve it."""
        sources = self.private_sources(commit)
        if sources is None or self._shared.exists(oid):
            return True
        if folder:
            return not path or any(p.startswith(f"{path}/") for p in (*sources.paths, *sources.gone))
        return path in sources.paths

    def _store_holding(self, oid: pygit2.Oid) -> pygit2.Repository | None:
        """The private store (readable by this process) that holds ``oid`` in
        its own objects; None when the shared store has it, or no store this
        process reads does."""
        place = self._place_of(oid)
        if place is None or not place.stores:
            return None
        return pygit2.Repository(os.path.dirname(place.stores[0]), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)


def _recorded(repo: pygit2.Repository, snapshot: pygit2.Commit, store: str, shared: pygit2.Odb) -> PrivateSources:
    """What a commit of the store ``store`` records, read through ``repo``,
    its own handle: the paths that differ from its one parent, a commit of
    the shared store (none, the whole tree, when it has no parent). NOWHERE
    for any other parent, or a tree not among its own objects."""
    if len(snapshot.parent_ids) > 1 or any(not shared.exists(p) for p in snapshot.parent_ids):
        return PrivateSources(NOWHERE, (), {})
    try:
        if snapshot.parents:
            diff = repo.diff(snapshot.parents[0], snapshot)
        else:
            diff = snapshot.tree.diff_to_tree(swap=True)  # from nothing to its tree
        paths = {d.new_file.path for d in diff.deltas if d.status != pygit2.GIT_DELTA_DELETED}
        gone = {d.old_file.path for d in diff.deltas if d.status == pygit2.GIT_DELTA_DELETED}
    except (KeyError, pygit2.GitError):
        return PrivateSources(NOWHERE, (), {})
    return PrivateSources(store, tuple(sorted(paths)), read_trails(snapshot.message), tuple(sorted(gone)))


def _primary_group(uid: int) -> int:
    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return uid
