"""Each commit read through its own objects only: a commit of ``.git/objects``
through ``.git/objects`` (and the alternates that folder names, as git reads
them), a private store's commit through that store's own objects and
``.git/objects``.

A process that may read several private stores (private_stores.py; root's
daemon reads them all) must not let an object of one place be reached from
another: an account that may write ``.git/objects`` (a repository its group
commits to) can write there a commit, tree or tag naming another account's
private snapshot blob, and a store's owner can write anything in their store.
Read through one handle that sees every store, such a commit would serve the
private bytes to whoever may read the commit. So each place gets a handle of
its own, opened once and kept while the repository is served, and a commit
is read through the handle of the place that holds it: what it names
elsewhere is not found, as plain ``git`` does not find it.

``.git/objects`` is read with the alternates it names only where every
reader of ``.git/objects`` may read them (:func:`shared_odb`): whoever may
write ``.git/objects/info/alternates`` (the owner of ``.git``, a group that
commits to it) could otherwise name a private store there, or any folder
only root reads, and its objects would be "shared" to root's daemon.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import NamedTuple

import pygit2

from ..acl import flat
from ..audience import _candidates, _inode, accounts_stamp, git_readers
from ..errors import NotFound
from ..tree_walk import Inode
from .served import ServedTree

log = logging.getLogger(__name__)
ALTERNATE_DEPTH = 5  # as git: an alternate's alternates are followed this deep
REJUDGE_SECONDS = 1.0  # what the shared alternates were judged by is looked at again this often at most

PRIVATE_DIR = "nasfs-private"
OWN_OBJECTS_ONLY = "a commit is read through its own objects only: .git/objects, and its private store's for a private snapshot"


class Place(NamedTuple):
    """Where a commit's objects are read: ``.git/objects`` and these stores' own objects."""

    stores: tuple[str, ...]  # private stores' object folders, sorted; () for .git/objects alone
    repo: pygit2.Repository  # a handle that reads those and nothing else


class OwnObjects(ServedTree):
    """The handles commits are read through, one per place."""

    def _serve(self, repo: pygit2.Repository) -> None:
        super()._serve(repo)  # self.repo: .git/objects and the alternates all its readers may read, no private store
        self._judged: list[Judged] = []
        self._shared = shared_odb(self.git_dir, self._judged)
        repo.set_odb(self._shared)
        head = ServedTree._identity(self)
        self._rejudged = (time.monotonic(), tuple(self._judged))
        self._seen = None if head is None else (head, self._rejudged[1])  # as judged: a change since reopens
        self._own: dict[str, pygit2.Odb] = {}  # a readable store's object folder -> its own objects
        self._places: dict[tuple[str, ...], Place] = {(): Place((), repo)}  # opened once, kept
        self._add_readable_stores()

    def _identity(self) -> tuple[object, ...] | None:
        """As ServedTree's, and what the shared alternates were judged by as
        it is now (:func:`rejudged`, asked again REJUDGE_SECONDS after the
        last time: 80 us with one alternate): an ACL, mode or owner changed
        on one, an alternates file written, an account's groups changed,
        and the repository is served anew, its alternates judged again."""
        head = super()._identity()
        judged = getattr(self, "_judged", None)
        if head is None or judged is None:
            return head
        now = time.monotonic()
        if not judged or now - self._rejudged[0] >= REJUDGE_SECONDS:
            self._rejudged = (now, rejudged(judged))
        return head, self._rejudged[1]

    def _stores_dir(self) -> Path:
        return self.git_dir / PRIVATE_DIR

    def _add_readable_stores(self) -> bool:
        """Learn every store this process may read; True when one was new
        (made by another process since)."""
        try:
            names = set(os.listdir(self._stores_dir()))
        except OSError:  # not listable (0711) by an account other than its maker: its own store only
            names = set()
        added = False
        for name in names | {f"{os.geteuid()}.git"}:
            objects = str(self._stores_dir() / name / "objects")
            if name.endswith(".git") and objects not in self._own and os.access(objects, os.R_OK | os.X_OK):
                # its own objects only: an alternate its owner names (another store, any repository on
                # the machine) must not become readable through this process
                self._own[objects] = own_objects(objects)
                added = True
        return added

    def _place_of(self, oid: pygit2.Oid) -> Place | None:
        """The place holding the object ``oid``: ``.git/objects`` when it has
        it, else the readable store that holds it in its own objects (a store
        made since is looked for); None when none does."""
        if self._shared.exists(oid):
            return self._places[()]
        for look_again in (False, True):
            if look_again and not self._add_readable_stores():
                break
            for objects in sorted(self._own):
                if self._own[objects].exists(oid):
                    return self._opened((objects,))
        return None

    def _reader(self, commit: str | pygit2.Oid) -> pygit2.Repository:
        """The handle the commit ``commit`` (a full id) is read through; NotFound when no place holds it."""
        try:
            oid = commit if isinstance(commit, pygit2.Oid) else pygit2.Oid(hex=commit)
        except ValueError:
            raise NotFound(f"{commit!r} is not a full commit id") from None
        place = self._place_of(oid)
        if place is None:
            raise NotFound(f"commit {str(oid)[:12]} is not in this repository")
        return place.repo

    def _joint(self, one: pygit2.Repository, other: pygit2.Repository) -> pygit2.Repository:
        """A handle reading what both handles read (a diff between commits of
        two places); what it reads of each side must be checked against that
        side's own handle before it is told."""
        stores = {s for place in self._places.values() if place.repo is one or place.repo is other for s in place.stores}
        return self._opened(tuple(sorted(stores))).repo

    def _opened(self, stores: tuple[str, ...]) -> Place:
        """The handle on ``.git/objects`` and these stores' own objects, opened once."""
        place = self._places.get(stores)
        if place is None:
            repo = pygit2.Repository(str(self.git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            repo.set_odb(shared_odb(self.git_dir))
            for objects in stores:
                repo.odb.add_backend(pygit2.OdbBackendLoose(objects, 0, False), 1)
                repo.odb.add_backend(pygit2.OdbBackendPack(objects), 2)
            place = self._places[stores] = Place(stores, repo)
        return place


def not_own(commit: str, oid: pygit2.Oid) -> NotFound:
    """The refusal of an object a commit names that is not among its own objects."""
    return NotFound(f"{commit[:12]} names object {str(oid)[:12]}, which is not among its own objects", OWN_OBJECTS_ONLY)


def own_objects(objects: str) -> pygit2.Odb:
    """The objects of one object folder, loose and packed, without the
    alternates it names."""
    odb = pygit2.Odb()
    odb.add_backend(pygit2.OdbBackendLoose(objects, 0, False), 1)
    odb.add_backend(pygit2.OdbBackendPack(objects), 2)
    return odb


Judged = tuple[str, str, object]  # what shared_odb's answer rests on: (kind, path, its state then)


def _mark(judged: list[Judged] | None, kind: str, path: str, state: object) -> None:
    if judged is not None:
        judged.append((kind, path, state))


def _inode_state(inode: Inode | None) -> object:
    """What an inode's judgement rests on: which inode, its owner, mode and ACL (None: none there)."""
    if inode is None:
        return None
    st, acl = inode
    return st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid, *flat(acl)


def _file_state(st: os.stat_result | None) -> object:
    """What an alternates file's list rests on: which file, its size and time (None: none there)."""
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def rejudged(judged: list[Judged]) -> tuple[Judged, ...]:
    """``judged`` as it is now: equal to what :func:`shared_odb` recorded
    while nothing its answer rests on changed (an owner, mode or ACL on the
    way to an alternate or of ``.git``, an alternates file, the account
    databases), whatever else changes there (a file made in a folder)."""
    states: dict[tuple[str, str], object] = {}  # each asked once (.git's folders come with every alternate)
    for kind, path, _ in judged:
        if (kind, path) in states:
            continue
        if kind == "accounts":
            states[kind, path] = accounts_stamp()
            continue
        try:
            states[kind, path] = _file_state(os.stat(path)) if kind == "file" else _inode_state(_inode(path))
        except (OSError, ValueError):
            states[kind, path] = None
    return tuple((kind, path, states[kind, path]) for kind, path, _ in judged)


def shared_odb(git_dir: Path, judged: list[Judged] | None = None) -> pygit2.Odb:
    """``.git/objects`` (loose and packed, written to) and the alternates it
    names that every reader of ``.git/objects`` may read, with all the
    alternates those name in turn; an alternate that some reader could not
    read (a private store, another account's repository), or that names one,
    is left out (logged): its objects are not "shared", though the root
    daemon could read them. ``judged`` (when given) gets each inode the
    answer rests on, as it was read (:func:`rejudged`)."""
    objects = str(Path(git_dir) / "objects")
    try:  # a linked worktree's git folder: the objects are its common folder's
        objects = os.path.join(git_dir, (Path(git_dir) / "commondir").read_text().strip(), "objects")
    except OSError:
        pass
    odb = pygit2.Odb()
    odb.add_backend(pygit2.OdbBackendLoose(objects, -1, False), 1)
    odb.add_backend(pygit2.OdbBackendPack(objects), 2)
    named = _alternates(objects, judged)
    if named:
        _mark(judged, "accounts", "", accounts_stamp())
    for folder in named:
        if _open_to_readers(Path(git_dir), folder, ALTERNATE_DEPTH, judged):
            odb.add_disk_alternate(folder)
        else:
            log.warning("%s names the alternate %s, which not every reader of it may read: not read", objects, folder)
    return odb


def _alternates(objects: str, judged: list[Judged] | None = None) -> list[str]:
    """The object folders ``objects/info/alternates`` names (relative ones
    from ``objects``, as git reads them); the file's stat (or its absence)
    goes to ``judged``."""
    path = os.path.join(objects, "info", "alternates")
    try:
        fh = open(path, encoding="utf-8", errors="surrogateescape")
    except OSError:
        _mark(judged, "file", path, None)
        return []
    with fh:
        _mark(judged, "file", path, _file_state(os.fstat(fh.fileno())))
        try:
            lines = fh.read().splitlines()
        except OSError:
            return []
    return [os.path.normpath(os.path.join(objects, line.strip())) for line in lines
            if line.strip() and not line.startswith("#")]


def _open_to_readers(git_dir: Path, folder: str, depth: int, judged: list[Judged] | None = None) -> bool:
    """Whether every reader of ``git_dir``'s objects may read the object
    folder ``folder`` (search each folder on its real path, read and search
    it), and every alternate it names, ``depth`` deep; never a folder of
    ``git_dir``'s private stores. Each inode asked goes to ``judged``."""
    try:
        real = os.path.realpath(folder)
        if Path(real).is_relative_to(os.path.realpath(git_dir / PRIVATE_DIR)):
            return False
    except (OSError, ValueError):
        return False
    parts = Path(real).parts
    paths = [str(git_dir), str(git_dir / "objects"), *(os.path.join(*parts[:i]) for i in range(1, len(parts))), real]
    inodes: list[Inode] = []  # each a (stat, ACL)
    for path in paths:
        try:
            inodes.append(_inode(path))
        except (OSError, ValueError):
            _mark(judged, "inode", path, None)  # (one made since is judged then)
            return False
        _mark(judged, "inode", path, _inode_state(inodes[-1]))
    ways, here = inodes[2:-1], inodes[-1]
    for reader in git_readers(git_dir, _candidates(inodes, accounts_stamp())):
        if not (all(reader.may(st, 0o1, acl) for st, acl in ways) and reader.may(here[0], 0o5, here[1])):
            return False
    named = _alternates(real, judged)
    return not named or (depth > 0 and all(_open_to_readers(git_dir, f, depth - 1, judged) for f in named))
