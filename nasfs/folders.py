"""The files of a folder, and their order of importance, for folder maps.

A folder's files are found as git sees the tree: in the working tree every
regular file that git does not ignore (a tracked file counts even when an
ignore rule matches it), never ``.git``, never through a symlink (links are
skipped, so nothing outside the tree is reached); at a revision, the blobs of
its tree. The walk stats every file (that is how a change is seen) and asks
git's ignore rules only of folders and of files the index does not hold.

Ranking (docs/views.md "Folder maps"), cheap and explainable: a file scores
``log2(1 + references)``, where a reference is another file of the folder
that mentions its name without the extension as a word (``service`` for
``service.py``; the credit is split when several files share a name), plus a
bonus for READMEs, manifests and entry points, minus half a point per folder
level below the mapped folder and a penalty for binary, empty and lock files;
ties go by path. A mention is a name written as code and paths write one:
after ``.``, ``/``, ``:`` or ``\\``, or before ``.`` and a letter. References need every file's words, so the order is cached
on disk by the listing's signature (paths, sizes, times, inodes; a revision's
tree id), and in memory each file's mentions are kept by its stat, so after
an edit only the changed files are read again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygit2

from . import __version__
from .cache import LRU

if TYPE_CHECKING:
    from .service import Nas

WORDS_BYTES = 256 << 10  # the head of a file searched for mentions of other files
# A name as code and paths use it: after '.', '/', ':' or '\\' (``.service``,
# ``docs/views``, ``crate::repo``), or before '.' and a letter (``service.py``,
# ``os.path``); prose rarely writes a word so, and ``the index`` is no reference.
_AFTER = re.compile(rb"[./:\\]([a-z_][a-z0-9_-]*)")
_BEFORE = re.compile(rb"([a-z_][a-z0-9_-]*)\.[a-z]")
README = re.compile(r"readme(\..*)?", re.IGNORECASE)
MANIFESTS = frozenset({
    "pyproject.toml", "setup.py", "setup.cfg", "package.json", "cargo.toml", "go.mod", "pom.xml", "build.gradle",
    "build.gradle.kts", "makefile", "cmakelists.txt", "dockerfile", "gemfile", "composer.json", "meson.build",
})
ENTRY_STEMS = frozenset({"__main__", "__init__", "main", "index", "app", "cli", "lib", "mod", "server"})
LOCKS = (".lock", "-lock.json", ".min.js", ".min.css", ".map", ".sum")
SETTLED_NS = 2_000_000_000  # a file untouched this long is not being rewritten within its timestamp


@dataclass(frozen=True, slots=True)
class Item:
    """One file of a listing: its tree-relative path and what the walk saw."""

    path: str
    size: int
    stamp: tuple[int, ...]  # (inode, mtime, ctime) in the working tree; () at a revision
    oid: str = ""  # the blob id at a revision


@dataclass(frozen=True, slots=True)
class Listing:
    """The files under ``folder`` (tree-relative, ``""`` for the root), sorted by path."""

    folder: str
    items: tuple[Item, ...]
    signature: str
    settled: bool  # no file was touched in the last two seconds (safe to cache by stat)

    def relative(self, path: str) -> str:
        return path[len(self.folder) + 1:] if self.folder else path


def _sign(folder: str, parts: list[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(folder.encode() + b"\n")
    for p in parts:
        h.update(p.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def walk_worktree(nas: Nas, path: str) -> Listing:
    """The files under a working-tree folder that git does not ignore."""
    tree = nas.tree
    folder = tree.real_path(path)[0]  # an in-tree symlink to a folder: the folder it names
    repo = tree.repo
    index = repo.index
    index.read(False)  # reloaded only when the index file changed
    items: list[Item] = []
    newest = 0
    stack = [folder]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(tree.root / rel if rel else tree.root))
        except OSError:
            continue  # removed or unreadable since it was listed
        for e in entries:
            if e.name == ".git":
                continue
            path = f"{rel}/{e.name}" if rel else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not repo.path_is_ignored(path + "/"):
                    stack.append(path)
            elif stat.S_ISREG(st.st_mode) and (path in index or not repo.path_is_ignored(path)):
                stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
                items.append(Item(path, st.st_size, stamp))
                newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    items.sort(key=lambda i: i.path)
    parts = [f"{i.path}\0{i.size}\0{i.stamp}\n" for i in items]
    return Listing(folder, tuple(items), _sign(folder, parts), time.time_ns() - newest > SETTLED_NS)


def walk_commit(nas: Nas, commit: str, path: str) -> Listing:
    """The blobs under a folder in ``commit`` (links and submodules skipped)."""
    repo = nas.tree.repo
    folder, sub = nas.tree.folder_at(commit, path)
    items: list[Item] = []
    stack: list[tuple[str, pygit2.Tree]] = [(folder, sub)]
    while stack:
        rel, t = stack.pop()
        for e in t:
            path = f"{rel}/{e.name}" if rel else e.name
            if e.filemode == pygit2.GIT_FILEMODE_TREE:
                stack.append((path, repo[e.id]))
            elif e.filemode in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
                items.append(Item(path, repo.odb.read_header(e.id)[1], (), str(e.id)))
    items.sort(key=lambda i: i.path)
    return Listing(folder, tuple(items), _sign(folder, [f"tree {sub.id}"]), True)


def stem(path: str) -> str:
    """A file's name without its last extension, lower case: how others name it."""
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


class Ranker:
    """Orders a listing's files by importance; keeps each file's mentions of
    the listing's names (by stat or blob id) so a re-rank reads only changes."""

    def __init__(self) -> None:
        self._mentions: LRU[tuple[str, str, object], tuple[bool, frozenset[str]]] = LRU(200_000)

    def order(self, nas: Nas, listing: Listing, at: str | None) -> list[int]:
        """Indexes into ``listing.items``, most important first."""
        key = f"fmap-rank:{__version__}:{listing.signature}"
        cached = nas.disk.get(key) if nas.disk is not None else None
        if cached is not None:
            order = json.loads(cached)
            if isinstance(order, list) and sorted(order) == list(range(len(listing.items))):
                return order
        scores = self.scores(nas, listing, at)
        order = sorted(range(len(listing.items)), key=lambda i: (-scores[i], listing.items[i].path))
        if nas.disk is not None and listing.settled:
            nas.disk.put(key, json.dumps(order).encode())
        return order

    def scores(self, nas: Nas, listing: Listing, at: str | None) -> list[float]:
        items = listing.items
        owners: dict[str, int] = {}
        for item in items:
            s = stem(item.path)
            if len(s) >= 2:
                owners[s] = owners.get(s, 0) + 1
        names = frozenset(owners)
        names_id = hashlib.blake2b("\n".join(sorted(names)).encode(), digest_size=8).hexdigest()
        refs: dict[str, int] = {}
        binary: list[bool] = []
        for item in items:
            is_binary, mentions = self._mentioned(nas, item, at, names, names_id)
            binary.append(is_binary)
            for s in mentions - {stem(item.path)}:
                refs[s] = refs.get(s, 0) + 1
        out = []
        for item, is_binary in zip(items, binary):
            s = stem(item.path)
            credit = refs.get(s, 0) / owners[s] if s in owners else 0.0
            penalty = 3.0 if is_binary else 0.0
            out.append(math.log2(1 + credit) + _bonus(listing.relative(item.path), item.size) - penalty)
        return out

    def _mentioned(self, nas: Nas, item: Item, at: str | None, names: frozenset[str],
                   names_id: str) -> tuple[bool, frozenset[str]]:
        """(binary, the listing's names this file mentions)."""
        key = (names_id, item.path, item.oid or (item.size, item.stamp))
        found = self._mentions.get(key)
        if found is None:
            head = _head(nas, item, at)
            if b"\0" in head[:8000]:
                found = (True, frozenset())
            else:
                lower = head.lower()
                words = set(_AFTER.findall(lower)) | set(_BEFORE.findall(lower))
                found = (False, frozenset(w.decode() for w in words) & names)
            self._mentions.put(key, found)
        return found


def _head(nas: Nas, item: Item, at: str | None) -> bytes:
    """The first WORDS_BYTES of a file (empty when it cannot be read now)."""
    if at is not None:
        return nas.tree.repo[item.oid].data[:WORDS_BYTES]
    try:
        with open(nas.tree.root / item.path, "rb") as fh:
            return fh.read(WORDS_BYTES)
    except OSError:
        return b""


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


__all__ = ["Item", "Listing", "Ranker", "stem", "walk_commit", "walk_worktree"]
