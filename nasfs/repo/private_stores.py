"""Private snapshot stores: where a snapshot goes when some reader of
``.git`` could not read its content at the source (nasfs/audience.py).

Each store is a bare repository ``.git/nasfs-private/<uid>.git``, mode 0700
and owned by that account, whose ``objects/info/alternates`` names the
shared ``.git/objects`` (so a snapshot stores only its own blob, trees and
commit) and whose refs ``refs/nasfs/private/<commit>`` keep its snapshots
from ``git gc``. The shared repository does not name the stores (git prints
an error line on every command for an alternate it cannot read): a process
adds the ones it can read to its own handle, so the owner's nasfs reads
them and nobody else's does. The owner's plain git reads them with
``git --git-dir=.git/nasfs-private/<uid>.git`` or
``GIT_ALTERNATE_OBJECT_DIRECTORIES=.git/nasfs-private/<uid>.git/objects``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pygit2

from ..cache import LRU
from .served import ServedTree, serving

PRIVATE_DIR = "nasfs-private"
PRIVATE_REFS = "refs/nasfs/private/"


class PrivateStores(ServedTree):
    """The private stores of this repository, and which commits are in them."""

    def _serve(self, repo: pygit2.Repository) -> None:
        super()._serve(repo)
        self._stores: dict[int, pygit2.Repository] = {}  # uid -> a handle on its store, opened as needed
        self._added: set[str] = set()  # stores' object folders this process's handle reads
        self._shared = pygit2.Odb(str(self.git_dir / "objects"))  # .git/objects and the alternates it names
        self._sources: LRU[str, tuple[str, tuple[str, ...]]] = LRU(1024)  # commit -> store, paths ('': shared)
        self._add_readable_stores()

    def _stores_dir(self) -> Path:
        return self.git_dir / PRIVATE_DIR

    def _add_readable_stores(self) -> bool:
        """Read every store this process may read through its handle on the
        repository; True when one was new (made by another process since)."""
        try:
            names = set(os.listdir(self._stores_dir()))
        except OSError:  # not listable (0711) by an account other than its maker: its own store only
            names = set()
        added = False
        for name in names | {f"{os.geteuid()}.git"}:
            objects = str(self._stores_dir() / name / "objects")
            if name.endswith(".git") and objects not in self._added and os.access(objects, os.R_OK | os.X_OK):
                self.repo.odb.add_disk_alternate(objects)
                self._added.add(objects)
                added = True
        return added

    def _store(self, uid: int) -> pygit2.Repository:
        """The private store of account ``uid`` (made if missing), readable by
        this process. A daemon that is not root keeps its own store only: it
        cannot give a folder to another account."""
        if os.geteuid() != 0:
            uid = os.geteuid()
        if uid not in self._stores:
            top = self._stores_dir() / f"{uid}.git"
            if not (top / "objects").is_dir():
                self._make_store(top, uid)
            self._stores[uid] = pygit2.Repository(str(top), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            self._add_readable_stores()
        return self._stores[uid]

    def _make_store(self, top: Path, uid: int) -> None:
        """A bare repository that borrows the shared objects, 0700 and
        ``uid``'s, made aside and renamed into place (another process may
        make it at once)."""
        base = self._stores_dir()
        base.mkdir(mode=0o711, exist_ok=True)  # enterable, not listable: the names say which accounts have one
        made = Path(tempfile.mkdtemp(dir=base, prefix=".new-"))  # 0700 from the start
        pygit2.init_repository(str(made), bare=True)
        (made / "objects" / "info" / "alternates").write_text(f"{(self.git_dir / 'objects').resolve()}\n")
        self._hand_over(made, uid)  # all of it
        try:
            os.rename(made, top)
        except OSError:  # made by another process first
            shutil.rmtree(made, ignore_errors=True)

    @staticmethod
    def _hand_over(top: Path, uid: int, folders: list[Path] | None = None) -> None:
        """Give the store's folders (all it holds when ``folders`` is None) to
        its account: a root daemon writes objects and refs there, and the
        owner's own ``git gc`` must be able to remove them (unlinking needs
        the folder only; the files stay readable, 0444 and 0644)."""
        if os.geteuid() != 0 or uid == 0:
            return
        try:
            gid = pwd.getpwuid(uid).pw_gid
        except KeyError:
            gid = uid
        if folders is None:
            folders = [Path(f) / n for f, _, files in os.walk(top) for n in [".", *files]]
        for name in folders:
            try:
                if os.lstat(name).st_uid != uid:
                    os.lchown(name, uid, gid)
            except FileNotFoundError:
                continue

    def _keep_private(self, store: pygit2.Repository, commit_id: pygit2.Oid,
                      written: list[pygit2.Oid] | None = None) -> None:
        """Keep a private snapshot from ``git gc`` with a ref of its own in its
        store, and give its account the folders that the ref and the objects
        ``written`` (every object folder when None) went to."""
        name = f"{PRIVATE_REFS}{commit_id}"
        if store.references.get(name) is None:
            store.references.create(name, commit_id, force=True)
        top = Path(store.path)
        objects = top / "objects"
        folders = [top / "refs" / "nasfs", top / "refs" / "nasfs" / "private"]
        if written is None:
            folders += [f for f in objects.iterdir() if len(f.name) == 2]
        else:
            folders += [objects / str(oid)[:2] for oid in [commit_id, *written]]
        self._hand_over(top, os.stat(top).st_uid, folders)

    @serving
    def private_sources(self, commit: str) -> tuple[str, tuple[str, ...]] | None:
        """For a snapshot in a private store: (its store's folder, the paths
        whose working-tree content it records, i.e. those changed from its
        parent); None for a commit in the shared store (or nowhere). What a
        door asks the access decision about before serving the commit."""
        known = self._sources.get(commit)
        if known is None:
            store = self._store_holding(pygit2.Oid(hex=commit))
            known = ("", ())
            if store is not None:
                snapshot = self.repo[commit]
                if snapshot.parents:
                    diff = self.repo.diff(snapshot.parents[0], snapshot)
                else:
                    diff = snapshot.tree.diff_to_tree(swap=True)  # from nothing to its tree
                known = (store.path.rstrip("/"),
                         tuple(sorted({d.new_file.path for d in diff.deltas if d.status != pygit2.GIT_DELTA_DELETED})))
            self._sources.put(commit, known)
        return known if known[0] else None

    def _store_holding(self, oid: pygit2.Oid) -> pygit2.Repository | None:
        """The private store (readable by this process) that holds ``oid``;
        None when the shared store has it, or no store this process reads does."""
        if self._shared.exists(oid):
            return None
        self._add_readable_stores()
        for objects in sorted(self._added):
            if pygit2.Odb(objects).exists(oid):
                return pygit2.Repository(os.path.dirname(objects), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        return None
