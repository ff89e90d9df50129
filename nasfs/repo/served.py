"""The state every part of a served tree works on: the work tree, the names
pointers carry, and its repository, checked before each call
(:func:`serving`) and reopened when its ``.git`` is made anew under a
long-running process, remembering nothing of the old one."""

from __future__ import annotations

import functools
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

import pygit2

from ..cache import LRU
from ..errors import BadPath, NotFound, Unavailable

if TYPE_CHECKING:
    from ..cache import DiskCache as HashCache

# The daemon often runs as root over trees its users own; the admin named the
# tree explicitly, so libgit2's owner check would only refuse a legitimate use.
pygit2.option(pygit2.GIT_OPT_SET_OWNER_VALIDATION, 0)
HASHES_HELD = 200_000  # working files whose blob id is kept in memory (about 70 MB); the disk cache keeps all


def _discover(folder: str | os.PathLike[str]) -> pygit2.Repository:
    """The repository with a work tree that ``folder`` is in."""
    try:
        repo = pygit2.Repository(str(folder))
    except pygit2.GitError as exc:
        raise NotFound(f"{folder} is not inside a git work tree ({exc})", "a folder of a git repository with a work tree") from None
    if repo.is_bare or repo.workdir is None:
        raise NotFound(f"{folder} is a bare repository", "a git repository with a work tree")
    return repo


def work_tree_top(folder: str | os.PathLike[str]) -> Path:
    """The top folder of the git work tree ``folder`` is in: what to serve
    when a folder is named only to say which repository is meant (the CLI's
    current folder)."""
    return Path(_discover(folder).workdir).resolve()


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T", bound="ServedTree")


def serving(method: Callable[Concatenate[T, P], R]) -> Callable[Concatenate[T, P], R]:
    """Check the repository first (:meth:`ServedTree.check`): one that vanished
    under a long-running process is said, not met as a KeyError or ENOENT."""

    @functools.wraps(method)
    def checked(self: T, *args: P.args, **kwargs: P.kwargs) -> R:
        self.check()
        return method(self, *args, **kwargs)

    return checked


class ServedTree:
    """A git work tree and the names pointers carry for it: the base of
    :class:`~nasfs.repo.GitTree`, whose parts each add one concern. The state
    they all work on is set here; what is remembered of the repository is set
    in :meth:`_serve`, so a repository made anew is served with none of it."""

    def __init__(self, workdir: str | os.PathLike[str], node: str | None = None, tree: str | None = None,
                 hashes: HashCache | None = None) -> None:
        """Serve the work tree whose top folder is ``workdir``. A folder inside
        one is refused: serving it would serve the whole repository around it."""
        repo = _discover(workdir)
        self.root = Path(repo.workdir).resolve()
        if Path(workdir).resolve() != self.root:
            raise BadPath(f"{workdir} is a folder inside the git repository {self.root}; "
                          f"serve the repository's top folder, or make {workdir} a repository of its own")
        self.git_dir = Path(repo.path)  # the repository's folder (.git): stat it, open a handle of your own on it
        self._head_file = str(self.git_dir / "HEAD")
        self.node = node or socket.gethostname().split(".")[0]
        self.tree = tree or self.root.name
        self._lock = threading.Lock()
        # real path -> stat key, blob id, settled; bounded: a daemon over a million files views only some
        self._hashes: LRU[str, tuple[tuple[int, int, int, int], str, bool]] = LRU(HASHES_HELD)
        self._hash_store = hashes
        self._serve(repo)

    def _serve(self, repo: pygit2.Repository) -> None:
        """Serve ``repo``, remembering nothing of one served before."""
        self.repo = repo
        self._seen = self._identity()
        self._head_tree: tuple[pygit2.Oid, pygit2.Tree, dict[str, pygit2.Tree]] | None = None  # and its folders
        # What refs/nasfs/snapshots is known to hold, learnt for its target last seen.
        self._kept_tip: pygit2.Oid | None = None
        self._kept: set[pygit2.Oid] = set()
        self._unread: Iterator[pygit2.Oid] = iter(())  # the rest of its chain, read as needed

    # -- the repository itself, under a long-running process -------------------
    def health(self) -> str | None:
        """None when the repository can be served, else one line saying what is
        wrong, for a long-running door to log and show (``.nas/errors``,
        ``nasfs status``).

        Cheap (one stat), and run before every call here that reads the
        repository. A ``.git`` made anew under the process (deleted and
        re-created, or put back) is reopened, so the repository as it is now
        is served and nothing remembered of the old one is. Call it from the
        thread that makes the other calls on this tree.
        """
        seen = self._identity()
        if seen is None:
            self._seen = None  # whatever comes back is opened anew
            if not self.git_dir.is_dir():
                return (f"the repository {self.git_dir} is gone (deleted while serving); "
                        "views, .at/ and pointers are unavailable until it is back")
            return f"the repository {self.git_dir} has no HEAD; views, .at/ and pointers are unavailable until it has"
        if seen != self._seen:
            try:
                repo = pygit2.Repository(str(self.git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            except pygit2.GitError as exc:
                return f"the repository {self.git_dir} cannot be opened ({exc}); views, .at/ and pointers are unavailable"
            if repo.workdir is None or Path(repo.workdir).resolve() != self.root:
                return f"the repository {self.git_dir} no longer has {self.root} as its work tree; views, .at/ and pointers are unavailable"
            self._serve(repo)
        return None

    def check(self) -> None:
        """Raise :class:`Unavailable` with the line :meth:`health` gives, if any."""
        problem = self.health()
        if problem is not None:
            raise Unavailable(problem)

    def _identity(self) -> tuple[int, int, int] | None:
        """What tells this repository from one made anew in its place: its HEAD
        file (None: there is none). ``git init`` writes HEAD anew, so even when
        a new ``.git`` gets the old one's inode number back (it does, on ext4)
        its HEAD has another inode or time. A HEAD rewritten by a checkout
        only costs a reopen."""
        try:
            st = os.stat(self._head_file)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_mtime_ns)
