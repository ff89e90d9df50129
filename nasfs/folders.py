"""The files of a folder, and their order of importance, for folder maps.

A folder's files are found as git sees the tree: in the working tree every
regular file that git does not ignore (a tracked file counts even when an
ignore rule matches it), never ``.git``, never through a symlink (links are
skipped, so nothing outside the tree is reached), never a name that is not
UTF-8 (no view can spell it); at a revision, the blobs of its tree. The walk stats every file (that is how a change is seen); which
entries of a folder git serves is decided once per state of the folder and
of its ignore rules, and remembered (:class:`_Rules`).

Nothing of the working tree is reached through a symlink, not even a folder
on the way swapped for one after the walk saw it: each folder is opened from
its parent's descriptor (the walk), each file head from the tree's root one
folder at a time (``open_in_tree``), so the daemon never reads a private
folder out of the tree, nor its own mount (which can wedge it).

Ranking (docs/views.md "Folder maps"), cheap and explainable: a file scores
``log2(1 + references)``, where a reference is another file of the folder
that names it (its name without the extension, written as code and paths
write one: after ``.``, ``/``, ``:`` or ``\\``, or before ``.`` and a
letter; the credit is split when several files share a name), plus a bonus
for READMEs, manifests and entry points, minus half a point per folder level
below the mapped folder and a penalty for binary, empty and lock files; ties
go by path. References need every file's words, so the order is cached on
disk by the listing's signature (paths, sizes, times, inodes; a revision's
tree id), and in memory each file's mentions are kept by its stat, so after
an edit only the changed files are read again.
"""

from __future__ import annotations

import bisect
import errno
import hashlib
import json
import math
import os
import re
import stat
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import __version__
from .access import Caller, Identity, decider
from .cache import LRU
from .errors import FileChanged
from .progress import Task
from .tree_walk import lstat_in_tree, open_in_tree

if TYPE_CHECKING:
    from .reader import Reader

WORDS_BYTES = 32 << 10  # the head of a file searched for mentions of other files (imports are at the top)
# A name as code and paths use it: after '.', '/', ':' or '\\' (``.service``,
# ``docs/views``, ``crate::repo``), or before '.' and a letter (``service.py``,
# ``os.path``); prose rarely writes a word so, and ``the index`` is no reference.
_AFTER = re.compile(rb"[./:\\]([a-z_][a-z0-9_-]*)")
_BEFORE = re.compile(rb"(?<![a-z0-9_-])([a-z_][a-z0-9_-]*)\.[a-z]")
README = re.compile(r"readme(\..*)?", re.IGNORECASE)
MANIFESTS = frozenset({
    "pyproject.toml", "setup.py", "setup.cfg", "package.json", "cargo.toml", "go.mod", "pom.xml", "build.gradle",
    "build.gradle.kts", "makefile", "cmakelists.txt", "dockerfile", "gemfile", "composer.json", "meson.build",
})
ENTRY_STEMS = frozenset({"__main__", "__init__", "main", "index", "app", "cli", "lib", "mod", "server"})
LOCKS = (".lock", "-lock.json", ".min.js", ".min.css", ".map", ".sum")
SETTLED_NS = 2_000_000_000  # a file untouched this long is not being rewritten within its timestamp
PARALLEL_FILES = 20_000  # unread files of one ranking from which worker processes read them
READERS = 4  # at most this many reader processes (and no more than the cores)
READ_CHUNK = 2048  # files per reader task


class Item(NamedTuple):
    """One file of a listing: its tree-relative path and what the walk saw."""

    path: str
    size: int
    stamp: tuple[int, ...]  # (inode, mtime, ctime) in the working tree; () at a revision
    oid: str = ""  # the blob id at a revision
    device: int = 0  # st_dev in the working tree: kept out of ``stamp``, which signatures, caches and ``Known`` compare

    @property
    def identity(self) -> Identity | None:
        """The file the walk saw as an access decision names one (device,
        inode): an inode number alone may be another device's file. None at
        a revision."""
        return (self.device, self.stamp[0]) if self.stamp else None


@dataclass(frozen=True, slots=True)
class Listing:
    """The files under ``folder`` (tree-relative, ``""`` for the root), sorted by path."""

    folder: str
    items: tuple[Item, ...]
    signature: str
    settled: bool  # no file was touched in the last two seconds (safe to cache by stat)

    def relative(self, path: str) -> str:
        return path[len(self.folder) + 1:] if self.folder else path


def _stamp(path: Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


def _ignore_stamp(root: Path, rel: str) -> str:
    """A ``.gitignore``'s stamp in the tree, as the walk takes it: reached
    with no link followed (git reads none through one), "-" unless a regular file."""
    try:
        st = lstat_in_tree(root, rel)
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}" if st is not None and stat.S_ISREG(st.st_mode) else "-"


# Which entries of a folder git serves: ALL (the common case), or the names.
# ALL keeps no name: a million kept names, made while the walk's own objects
# were, would hold their memory pages after the walk (1.8 GB of RSS at 10^6).
Decided = frozenset[str] | None
ALL: Decided = None


def _served(kept: list[str] | None) -> Decided:
    return ALL if kept is None else frozenset(kept)


def _kept(served: Decided) -> list[str] | None:
    return None if served is ALL else sorted(served)


_DECIDED: LRU[tuple[str, str, str], tuple[Decided, Decided]] = LRU(100_000)


class _Rules:
    """Which entries of a folder git serves (files, folders), decided once per
    state of the folder and of everything that decides it: the folder's own
    entries (its mtime), the .gitignore files from the root down to it, the
    index (tracked files are served even when ignored) and the repository's
    exclude files. Kept in memory, and on disk as one record per walked folder,
    so a warm walk only stats."""

    @staticmethod
    def excludes(nas: Reader) -> str:
        """The stamps of the index and the exclude files outside the tree."""
        return "|".join(_stamp(p) for p in nas.tree.rule_files())

    def __init__(self, nas: Reader, folder: str) -> None:
        self.nas = nas
        self.base = self.excludes(nas)
        self.served = nas.tree.served_entries()  # the index read once per walk
        self.key = "fmap-dirs:" + hashlib.blake2b(f"{__version__}\0{self.base}\0{folder}".encode("utf-8", "surrogateescape"),
                                                  digest_size=16).hexdigest()
        raw = nas.disk.get(self.key) if nas.disk is not None else None
        self.stored: dict[str, list] = json.loads(raw) if raw else {}
        self.used: dict[str, tuple[str, Decided, Decided]] = {}
        self.changed = False

    def chain(self, rel: str) -> str:
        """The .gitignore stamps from the root down to ``rel`` (included)."""
        root = self.nas.tree.root
        parts = rel.split("/") if rel else []
        return "|".join(_ignore_stamp(root, "/".join([*parts[:i], ".gitignore"])) for i in range(len(parts) + 1))

    def decide(self, rel: str, state: str, files: list[str], dirs: list[str]) -> tuple[Decided, Decided]:
        """(files, folders) of ``rel`` that git serves; ``state`` is what decides it."""
        found = _DECIDED.get((self.base, rel, state))
        if found is None:
            kept = self.stored.get(rel)
            if kept is not None and kept[0] == state:
                found = (_served(kept[1]), _served(kept[2]))
            else:
                ok_files, ok_dirs = self.served.of_folder(rel, files, dirs)
                found = (ALL if len(ok_files) == len(files) else ok_files, ALL if len(ok_dirs) == len(dirs) else ok_dirs)
                self.changed = True
            _DECIDED.put((self.base, rel, state), found)
        self.used[rel] = (state, *found)
        return found

    def save(self, settled_before: int) -> None:
        """Store this walk's decisions when any was new, leaving out folders
        changed too recently to trust their mtime."""
        if not self.changed or self.nas.disk is None:
            return
        kept = {rel: [state, _kept(f), _kept(d)] for rel, (state, f, d) in self.used.items()
                if int(state.rsplit(":", 1)[1]) < settled_before}
        self.nas.disk.put(self.key, json.dumps(kept).encode())


def _nameable(name: str) -> bool:
    """Whether a view can name this entry: UTF-8 (a name that is not is
    still a plain file, but no view or pointer can spell it)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def worktree_state(nas: Reader) -> str:
    """A digest of what the working tree holds, as cheaply as git can say it:
    the index and exclude files, and every path ``git status`` reports (with
    its stat). libgit2 compares each tracked file's stat with the index in C,
    so this costs a fraction of a walk; a map cached under it is valid while
    the digest is the same (and HEAD, which the caller adds)."""
    parts = [_Rules.excludes(nas)]
    for path, flags in sorted(nas.tree.status_paths().items()):
        try:
            st = lstat_in_tree(nas.tree.root, path)  # under a folder made a link: no file (git's view), nothing stat'ed
        except OSError:
            st = None
        seen = "-" if st is None else f"{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}"
        parts.append(f"{path}\0{flags}\0{seen}")
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
HELD = 32  # folders a walk holds open at most, the shallowest levels: a deeper one is reopened from the deepest held
PATH_MAX = 4096  # Linux's: a folder whose path is as long is not walked (no view can name what it holds)
_SHORT = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)  # the walk's own want, not the tree's: raised, no folder skipped
# folders being walked, one per level: (its descriptor, -1 past HELD levels; its path; its .gitignore chain; its
# subfolders left to walk)
_Open = list[tuple[int, str, str, Iterator[str]]]


def walk_worktree(nas: Reader, path: str) -> Listing:
    """The files under a working-tree folder that git does not ignore. Each
    folder is opened from its parent's descriptor with O_NOFOLLOW, not by
    path: one swapped for a symlink since its parent was listed is not walked.
    At most HELD folders are held open, however deep the tree (a process may
    be allowed few descriptors, and the daemon's other requests need theirs);
    a folder that cannot be opened for want of descriptors or memory raises,
    so no walk (nor the map cached from it) is silently short of a folder."""
    tree = nas.tree
    folder = tree.real_path(path)[0]  # an in-tree symlink to a folder: the folder it names
    rules = _Rules(nas, folder)
    items: list[Item] = []
    above = rules.chain(folder.rsplit("/", 1)[0] if "/" in folder else "") if folder else ""
    try:
        top = open_in_tree(tree.root, folder, _FOLDER) if folder else os.open(tree.root, _FOLDER & ~os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise
        raise FileChanged(f"{folder or '.'!r} is no folder of the tree since it was resolved", "read it again") from None
    longest = PATH_MAX - 2 - len(str(tree.root).encode("utf-8", "surrogateescape"))  # of a folder's tree path
    stack: _Open = []
    try:
        _enter(rules, top, folder, above, items, stack)
        while stack:
            parent, rel, chain, left = stack[-1]
            name = next(left, None)
            if name is None:
                stack.pop()
                if parent >= 0:
                    os.close(parent)
                continue
            sub = f"{rel}/{name}" if rel else name
            if len(sub.encode()) > longest:
                continue  # past PATH_MAX, as when folders were opened by path: nothing under it can be named
            fd = _open_below(stack, name)
            if fd >= 0:
                _enter(rules, fd, sub, chain, items, stack)
    finally:
        for parent, *_ in stack:
            if parent >= 0:
                os.close(parent)
    items.sort()
    listing = _worktree_listing(folder, items)
    rules.save(time.time_ns() - SETTLED_NS)
    return listing


def _enter(rules: _Rules, fd: int, rel: str, above: str, items: list[Item], stack: _Open) -> None:
    """One open folder walked (_walk_folder), then closed, or held on
    ``stack`` while the subfolders git serves are walked (HELD at most: past
    them its place is kept with no descriptor)."""
    try:
        chain, subs = _walk_folder(rules, fd, rel, above, items)
    except BaseException:
        os.close(fd)
        raise
    if subs and len(stack) < HELD:
        stack.append((fd, rel, chain, iter(subs)))
        return
    os.close(fd)
    if subs:
        stack.append((-1, rel, chain, iter(subs)))


def _open_below(stack: _Open, name: str) -> int:
    """Subfolder ``name`` of the folder on top of ``stack``, opened from the
    deepest folder held open one name at a time with no symlink followed;
    -1 when it is no real folder now (removed, made a link, unreadable)."""
    held = len(stack) - 1
    while stack[held][0] < 0:
        held -= 1
    at, base = stack[held][0], stack[held][1]
    below = stack[-1][1][len(base) + 1 if base else 0:] if held < len(stack) - 1 else ""
    fd = at
    try:
        for part in [*below.split("/"), name] if below else [name]:
            opened = os.open(part, _FOLDER, dir_fd=fd)
            if fd != at:
                os.close(fd)
            fd = opened
    except OSError as exc:
        if fd != at:
            os.close(fd)
        if exc.errno in _SHORT:
            raise
        return -1
    return fd


def _walk_folder(rules: _Rules, fd: int, rel: str, above: str, items: list[Item]) -> tuple[str, list[str]]:
    """One open folder: the files git serves into ``items``; its .gitignore
    chain and the subfolders git serves."""
    make = tuple.__new__  # an Item at C speed (NamedTuple's own __new__ is Python)
    try:
        here = os.fstat(fd)
        with os.scandir(fd) as listed:
            entries = list(listed)
    except OSError as exc:
        if exc.errno in _SHORT:
            raise
        return "", []  # unreadable
    files: list[tuple[str, os.stat_result]] = []
    dirs: list[str] = []
    ignore_file = "-"
    for e in entries:
        if e.name == ".git" or not _nameable(e.name):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            dirs.append(e.name)
        elif stat.S_ISREG(st.st_mode):
            files.append((e.name, st))
            if e.name == ".gitignore":
                ignore_file = f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"
    chain = f"{above}|{ignore_file}" if rel or above else ignore_file
    state = f"{chain}\0{here.st_ino}:{here.st_mtime_ns}"
    ok_files, ok_dirs = rules.decide(rel, state, [n for n, _ in files], dirs)
    prefix = rel + "/" if rel else ""
    dev = here.st_dev  # one int shared by the folder's files (a million items)
    items.extend(make(Item, (prefix + name, st.st_size, (st.st_ino, st.st_mtime_ns, st.st_ctime_ns), "",
                             dev if st.st_dev == dev else st.st_dev))
                 for name, st in files if ok_files is ALL or name in ok_files)
    return chain, dirs if ok_dirs is ALL else [d for d in dirs if d in ok_dirs]


def _worktree_listing(folder: str, items: list[Item]) -> Listing:
    """A working-tree listing of ``items`` (sorted), signed by their paths and stats."""
    numbers = array("q", [n for i in items for n in (i.size, *i.stamp)])
    newest = max(numbers[2::4] + numbers[3::4], default=0)
    signature = hashlib.blake2b(folder.encode("utf-8", "surrogateescape") + b"\n", digest_size=16)
    signature.update("\0".join(i.path for i in items).encode("utf-8", "surrogateescape"))
    signature.update(numbers.tobytes())
    return Listing(folder, tuple(items), signature.hexdigest(), time.time_ns() - newest > SETTLED_NS)


def visible(listing: Listing, root: Path, caller: Caller) -> Listing:
    """A working-tree listing cut to what ``caller`` could find by ``ls``
    and ``cat`` from its folder down (access.py): a map or summary made from
    it names, counts and ranks nothing else."""
    judge = decider(root, caller)
    return _worktree_listing(listing.folder, [i for i in listing.items if judge.may_find(i.path, listing.folder)])


def subfolders(listing: Listing) -> list[str]:
    """Every folder below a working-tree listing's own that holds a file, sorted."""
    found = {item.path[:cut] for item in listing.items for cut in _slashes(item.path, len(listing.folder) + 1)}
    return sorted(found)


def _slashes(path: str, start: int) -> list[int]:
    cuts, at = [], path.find("/", start)
    while at != -1:
        cuts.append(at)
        at = path.find("/", at + 1)
    return cuts


def sub_listing(listing: Listing, folder: str) -> Listing:
    """The listing a walk of ``folder`` (below ``listing``'s, not through a
    symlink) would give, the same files and signature, without walking: git
    decides a file's ignore the same from any folder above it."""
    prefix = folder + "/"
    first = bisect.bisect_left(listing.items, (prefix,))
    last = bisect.bisect_left(listing.items, (folder + "0",))  # "0" follows "/"
    return _worktree_listing(folder, list(listing.items[first:last]))


def walk_commit(nas: Reader, commit: str, path: str) -> Listing:
    """The blobs under a folder in ``commit`` (links and submodules skipped)."""
    found = nas.tree.files_at(commit, path, _nameable)
    items = [Item(where, size, (), blob_id) for where, size, blob_id in found.files]
    items.sort(key=lambda i: i.path)
    signature = hashlib.blake2b(f"{found.folder}\ntree {found.tree_id}".encode(), digest_size=16).hexdigest()
    return Listing(found.folder, tuple(items), signature, True)


def stem(path: str) -> str:
    """A file's name without its last extension, lower case: how others name it."""
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def mentions_in(head: bytes, names: frozenset[bytes]) -> tuple[bool, frozenset[str]]:
    """(binary, the ``names`` a file's head mentions as code and paths do);
    words are matched as bytes, so only the few that are names get decoded."""
    if b"\0" in head[:8000]:
        return True, frozenset()
    lower = head.lower()
    found = names.intersection(_AFTER.findall(lower)) | names.intersection(_BEFORE.findall(lower))
    return False, frozenset([w.decode() for w in found])


class Known(NamedTuple):
    """A working-tree file's mentions found elsewhere (``nasfs index`` reads
    every file anyway), good while its size and stamp are these; ``mentions``
    may hold more names than a listing's (those count for nothing)."""

    size: int
    stamp: tuple[int, ...]
    binary: bool
    mentions: frozenset[str]


def names_in(paths: Iterable[str]) -> Counter[str]:
    """How many of these files each name (a stem of 2 characters or more) may mean."""
    return Counter(s for s in map(stem, paths) if len(s) >= 2)


_ENCODED: LRU[frozenset[str], frozenset[bytes]] = LRU(1)


def encoded(names: frozenset[str]) -> frozenset[bytes]:
    """``names`` as the bytes a head is searched in (the last set kept: a
    worker of ``nasfs index`` asks with the same set for every file; one set
    of a million-file root is about 100 MB, so no more than one)."""
    found = _ENCODED.get(names)
    if found is None:
        found = as_bytes(names)
        _ENCODED.put(names, found)
    return found


def as_bytes(names: frozenset[str]) -> frozenset[bytes]:
    return frozenset(n.encode("utf-8", "surrogateescape") for n in names)


_HEAD_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY  # a FIFO swapped in: no wait


def read_head(root: Path | str, path: str) -> tuple[bytes, os.stat_result] | None:
    """The first WORDS_BYTES of a working-tree file and its stat, reached
    from ``root`` one folder at a time with no symlink followed (a folder
    swapped for one since the walk may lead out of the tree or into the
    mount); None when no regular file is reachable so, or it is unreadable."""
    try:
        return _head_of(open_in_tree(root, path, _HEAD_FLAGS))
    except OSError:
        return None


def _head_of(fd: int) -> tuple[bytes, os.stat_result] | None:
    """A file's head and stat from its open descriptor, closed after."""
    try:
        st = os.fstat(fd)
        return (os.read(fd, WORDS_BYTES), st) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def known_of(root: Path, path: str, names: frozenset[str], data: bytes | None = None) -> Known | None:
    """A working-tree file's mentions of ``names``, with the stat they hold
    for; ``data``: its bytes, already read (stat after them, as a read is).
    None when the file is not reachable with no symlink followed (read_head)."""
    if data is not None:
        try:
            st = lstat_in_tree(root, path)
        except OSError:
            return None
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        head = data[:WORDS_BYTES]
    else:
        read = read_head(root, path)
        if read is None:
            return None
        head, st = read
    binary, mentions = mentions_in(head, encoded(names))
    return Known(st.st_size, (st.st_ino, st.st_mtime_ns, st.st_ctime_ns), binary, mentions)


class Ranker:
    """Orders a listing's files by importance; keeps each file's mentions of
    the listing's names (by stat or blob id) so a re-rank reads only changes."""

    def __init__(self) -> None:
        self._mentions: LRU[tuple[int, str, object], tuple[bool, frozenset[str]]] = LRU(200_000)

    def order(self, nas: Reader, listing: Listing, at: str | None, known: Mapping[str, Known] | None = None,
              task: Task | None = None) -> list[int]:
        """Indexes into ``listing.items``, most important first; stored on
        disk by the listing's signature when its files have settled.
        ``task``: where the files read so far are shown (``.nas/status``)."""
        key = f"fmap-rank:{__version__}:{listing.signature}"
        cached = nas.disk.get(key) if nas.disk is not None else None
        if cached is not None:
            order = json.loads(cached)
            if isinstance(order, list) and sorted(order) == list(range(len(listing.items))):
                return order
        scores = self.scores(nas, listing, at, known or {}, task)
        paths = [item.path for item in listing.items]
        order = sorted(range(len(paths)), key=lambda i: (-scores[i], paths[i]))
        if nas.disk is not None and listing.settled:
            nas.disk.put(key, json.dumps(order).encode())
        return order

    def scores(self, nas: Reader, listing: Listing, at: str | None, known: Mapping[str, Known],
               task: Task | None = None) -> list[float]:
        items = listing.items
        stems = [stem(item.path) for item in items]
        owners = Counter(s for s in stems if len(s) >= 2)
        names = frozenset(owners)
        names_id = hash(names)  # keys this process's memory only: no sort of a million names
        wanted = as_bytes(names)  # not kept (encoded() would keep the largest set of all)
        if task is not None:
            task.begin("ranking: files read", len(items))
        read, refs = self._read_many(nas, items, at, known, wanted, names_id, task)
        binary: list[bool] = []
        with _Heads(str(nas.tree.root)) as heads:
            for n, (item, own) in enumerate(zip(items, stems)):
                if read and read[n]:  # read by a reader process, its mentions counted there
                    binary.append(read[n] == BINARY)
                    continue
                seen = known.get(item.path)
                if seen is not None and (seen.size, seen.stamp) == (item.size, item.stamp):
                    is_binary, mentions = seen.binary, seen.mentions
                else:
                    is_binary, mentions = self._mentioned(nas, item, at, wanted, names_id, heads)
                binary.append(is_binary)
                if mentions:
                    refs.update(mentions - {own})
                if task is not None and not read:
                    task.done = n + 1
        out = []
        for item, s, is_binary in zip(items, stems, binary):
            credit = refs[s] / owners[s] if s in owners else 0.0
            penalty = 3.0 if is_binary else 0.0
            out.append(math.log2(1 + credit) + _bonus(listing.relative(item.path), item.size) - penalty)
        return out

    def _mentioned(self, nas: Reader, item: Item, at: str | None, names: frozenset[bytes],
                   names_id: int, heads: _Heads) -> tuple[bool, frozenset[str]]:
        """(binary, the listing's names this file mentions)."""
        key = (names_id, item.path, item.oid or (item.size, item.stamp))
        found = self._mentions.get(key)
        if found is None:
            found = mentions_in(_head(nas, item, at, heads), names)
            self._mentions.put(key, found)
        return found

    def _read_many(self, nas: Reader, items: tuple[Item, ...], at: str | None, known: Mapping[str, Known],
                   names: frozenset[bytes], names_id: int, task: Task | None) -> tuple[bytearray, Counter[str]]:
        """A large working-tree listing's unread files read by reader processes
        (reading and searching a million heads is about 40 s of CPU): for each
        file whether it was read (0: no; ``TEXT``, ``BINARY``), and how many of
        them mention each name, their own name left out. Each file's mentions
        are kept, as ``_mentioned`` keeps them, when they all fit in memory's
        LRU (a re-rank after an edit then reads only the edited file); beyond,
        only the counts come back. Nothing is read here when there are too
        few to pay for starting the readers, or one core."""
        jobs = min(os.cpu_count() or 1, READERS)
        if at is not None or jobs < 2 or len(items) < PARALLEL_FILES:
            return bytearray(), Counter()
        todo = []
        for n, item in enumerate(items):
            seen = known.get(item.path)
            if (seen is None or (seen.size, seen.stamp) != (item.size, item.stamp)) and \
                    self._mentions.get((names_id, item.path, (item.size, item.stamp))) is None:
                todo.append(n)
        if len(todo) < PARALLEL_FILES:
            return bytearray(), Counter()
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        each = len(todo) <= self._mentions.size
        chunks = [todo[i:i + READ_CHUNK] for i in range(0, len(todo), READ_CHUNK)]
        read, refs, done = bytearray(len(items)), Counter[str](), 0
        spawn = multiprocessing.get_context("spawn")  # no inherited libgit2, SQLite or FUSE state
        try:
            with ProcessPoolExecutor(jobs, mp_context=spawn, initializer=_start_reader,
                                     initargs=(str(nas.tree.root), names)) as pool:
                files = ([(items[n].path, items[n].device, items[n].stamp[0]) for n in chunk] for chunk in chunks)
                for chunk, (kinds, counted, mentions) in zip(chunks, pool.map(_read_heads, files, [each] * len(chunks))):
                    for k, (n, kind) in enumerate(zip(chunk, kinds)):
                        read[n] = kind
                        if each:
                            item = items[n]
                            self._mentions.put((names_id, item.path, (item.size, item.stamp)),
                                               (kind == BINARY, frozenset(mentions[k])))
                    refs.update(counted)
                    done += len(chunk)
                    if task is not None:
                        task.done = done
        except (OSError, BrokenProcessPool):  # no process could start (limits; a main module without its guard)
            return bytearray(), Counter()
        return read, refs


TEXT, BINARY = 1, 2  # a file read by a reader process
_reader: tuple[str, frozenset[bytes]] = ("", frozenset())  # a reader process's tree and names


def _start_reader(root: str, names: frozenset[bytes]) -> None:
    global _reader
    _reader = (root, names)


def _read_heads(files: list[tuple[str, int, int]], each: bool) -> tuple[bytes, Counter[str], list[tuple[str, ...]]]:
    """In a reader process: whether each file (its path, and its device and
    inode as the walk saw them) is ``TEXT`` or ``BINARY``, how many of them
    mention each name (a file's own name left out), and with ``each`` the
    names each one mentions."""
    root, names = _reader
    kinds, refs, each_one = bytearray(), Counter[str](), []
    with _Heads(root) as heads:
        for path, dev, ino in files:
            binary, mentions = mentions_in(heads.head(path, (dev, ino)), names)
            kinds.append(BINARY if binary else TEXT)
            if mentions:
                refs.update(mentions - {stem(path)})
            if each:
                each_one.append(tuple(mentions))
    return bytes(kinds), refs, each_one


def _folder_in_tree(root: str, folder: str) -> int:
    """An O_PATH descriptor of a folder of the tree, reached with no symlink
    followed (as read_head reaches a file's); -1 when it is no such folder."""
    flags = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        return open_in_tree(root, folder, flags) if folder else os.open(root, flags)
    except OSError:
        return -1


def _head(nas: Reader, item: Item, at: str | None, heads: _Heads) -> bytes:
    """The first WORDS_BYTES of a file (empty when it cannot be read now)."""
    if at is not None:
        return nas.tree.blob_head(at, item.path, item.oid, WORDS_BYTES)
    return heads.head(item.path, item.identity)


class _Heads:
    """The heads of a listing's working files, read in its order. Each file
    is reached with no symlink followed, and its folder kept open for the
    next (a listing comes folder by folder): a file costs one open, not one
    per folder on its way from the root."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.folder: str | None = None
        self.at = -1  # the folder's O_PATH descriptor; -1: none, or it is no folder of the tree

    def __enter__(self) -> _Heads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        if self.at >= 0:
            os.close(self.at)
        self.folder, self.at = None, -1

    def head(self, path: str, walked: Identity | None) -> bytes:
        """The first WORDS_BYTES of ``path``, only when read from the file its
        walk saw (device, inode): one gone, unreadable or under a link since
        mentions nothing, and so does one put in its place (renamed over it;
        maybe a file the reader of the map may not read), since what it
        mentions would rank the files of a map made for that reader."""
        where, _, name = path.rpartition("/")
        if where != self.folder:
            self._close()
            self.folder, self.at = where, _folder_in_tree(self.root, where)
        if self.at < 0:
            return b""
        try:
            read = _head_of(os.open(name, _HEAD_FLAGS | os.O_NOFOLLOW, dir_fd=self.at))
        except OSError:
            return b""
        if read is None or (read[1].st_dev, read[1].st_ino) != walked:
            return b""
        return read[0]


def _bonus(rel: str, size: int) -> float:
    """What a file's name and place say of its importance (docs/views.md)."""
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    depth = rel.count("/")
    score = -0.5 * depth
    if README.fullmatch(name):
        score += 8.0 if depth == 0 else 2.0
    elif lower in MANIFESTS:
        score += 2.0 if depth == 0 else 0.5
    elif stem(name) in ENTRY_STEMS:
        score += 1.0
    if size == 0 or lower.endswith(LOCKS):
        score -= 3.0
    return score


__all__ = ["Item", "Known", "Listing", "Ranker", "known_of", "names_in", "stem", "sub_listing", "subfolders", "walk_commit",
           "walk_worktree", "worktree_state"]
