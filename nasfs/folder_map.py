"""Folder maps: ``DIR@outline``, ``DIR@N``, ``.@N`` (docs/views.md "Folder maps").

A map lists a folder's files in order of importance (:mod:`nasfs.folders`),
each as a short pointer (``path@commit``) with its kind, lines and tokens,
and under it the file's top outline entries, each starting with its lines
(``11-20 ## Renewal``, as in a file's outline). Within a
budget it is fitted by a ladder, every rung declared and counted whole:

    every file, the top-ranked ones with their entries (as many as fit)
    → the subfolders with their counts, then as many top-ranked files as fit
    → skeleton (one line: counts and the top file) → none

What is left out is declared (``files=N shown=K``, ``folders_shown``) and
said in the last line with how to get it (a subfolder's map, the next page,
a larger budget). ``DIR@outline=K`` is a page: the files from the K-th in
rank on, declared ``page=K-L`` with ``next=@outline=L+1@N`` while files are
left, as a file's outline pages its entries.
Each file's facts are cached on disk by blob, and whole answers by the
listing's signature, so a warm map costs a walk of the tree and a lookup.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import __version__
from . import tokens as tok
from .access import Caller, Identity, sees_all
from .budget import Rung, fit
from .declare import Response, declare
from .errors import BadView, NasError, NotServable
from .folders import Listing, Ranker, visible, walk_commit, walk_worktree, worktree_state
from .grammar import View
from .outline.model import line_span
from .pointers import Pointer, folder_pointer
from .repo import FOLDER_READS, Content
from .views import VIEW_FORMAT, Evidence, Served

if TYPE_CHECKING:
    from .reader import Reader

TOP_ENTRIES = 8  # outline entries shown under a file: the shallowest first
HEADER_SLACK = 4  # tokens the header may grow by as its counts are filled in
_RANKER = Ranker()


@dataclass(frozen=True, slots=True)
class Facts:
    """What a map shows of one file, computed once per blob (and name)."""

    kind: str
    lines: int
    size: int
    tokens: int | None  # None for binary and large files
    sha256: str  # of the whole blob
    binary: bool
    large: bool
    entries: tuple[tuple[str, int, int, str], ...]  # label (indented by depth), first line, last line, sha256
    more: int  # entries of the outline not shown

    def describe(self) -> str:
        if self.size == 0:
            return "empty"
        if self.binary:
            return f"{self.kind}, {self.size} bytes"
        lines = "1 line" if self.lines == 1 else f"{self.lines} lines"
        if self.large or self.tokens is None:
            return f"{self.kind}, {lines}, {self.size} bytes"
        return f"{self.kind}, {lines}, {self.tokens} tokens"


def file_facts(nas: Reader, content: Content) -> Facts:
    """A file's facts, from the disk cache or its analysis."""
    name = content.path.rsplit("/", 1)[-1]
    key = f"fmap-file:{__version__}:{nas.tokenizer}:{content.blob_id}:{name}"
    raw = nas.disk.get(key) if nas.disk is not None else None
    if raw is not None:
        try:
            d = json.loads(raw)
            return Facts(**{**d, "entries": tuple(tuple(e) for e in d["entries"])})
        except (ValueError, TypeError, KeyError):
            pass
    a = nas.analysis(content)
    whole = a.whole_evidence()
    sha = whole[0].sha256 if whole else hashlib.sha256(b"").hexdigest()
    entries: tuple[tuple[str, int, int, str], ...] = ()
    more = 0
    if not a.binary and a.data is not None:
        ranked = sorted(a.outline.served().entries, key=lambda e: (e.depth, e.start))
        chosen = sorted(ranked[:TOP_ENTRIES], key=lambda e: (e.start, e.depth))
        top = min((e.depth for e in chosen), default=0)
        pad = (lambda e: "  " * (e.depth - top)) if a.outline.indent else (lambda e: "")
        entries = tuple((pad(e) + " ".join(e.label.split()), e.start, e.end, a.evidence(e.start, e.end)[0].sha256) for e in chosen)
        more = len(ranked) - len(chosen)
    facts = Facts(a.outline.kind, a.line_count, content.size, nas.full_tokens(a), sha, a.binary, content.large, entries, more)
    if nas.disk is not None:
        nas.disk.put(key, json.dumps({k: getattr(facts, k) for k in Facts.__slots__}).encode())
    return facts


@dataclass(frozen=True, slots=True)
class Shown:
    """One file as the map shows it: its line, its entries' lines, their evidence."""

    line: str
    entries: str
    file_evidence: Evidence
    entry_evidence: tuple[Evidence, ...]


def _shown(nas: Reader, path: str, at: str | None, caller: Caller | None = None,
           walked: Identity | None = None) -> Shown | None:
    """None when the file cannot be served now (gone since the walk, refused);
    a working-tree file is recorded in a snapshot for ``caller``, read from
    the inode their decision allows (Nas.content) and, for a caller whose
    map is cached by its listing, the file the walk saw (``walked``: device
    and inode, as a decision names a file; an inode number alone may be
    another device's file): a map shared by callers with the same listing
    holds nothing else."""
    try:
        content = nas.content(path, at, caller)
        f = file_facts(nas, content)
    except NasError:
        return None
    if walked is not None and content.source is not None and content.source != walked and not sees_all(caller):
        return None  # swapped since the walk
    node, tree = nas.tree.node, nas.tree.tree
    span = (1, f.lines) if f.large and f.lines else (0, 0)
    pointer = Pointer(node, tree, content.path, content.commit, *span)
    lines = [f"  {line_span(a, b)} {label}\n" for label, a, b, _ in f.entries]  # as a file's outline lines
    if f.more:
        lines.append(f"  (+{f.more} more)\n")
    evidence = tuple(Evidence(Pointer(node, tree, content.path, content.commit, a, b), h, content.blob_id) for _, a, b, h in f.entries)
    return Shown(f"{pointer.short()} ({f.describe()})\n", "".join(lines), Evidence(pointer, f.sha256, content.blob_id), evidence)


class FolderMap:
    """One folder's map at one state of the tree: its ranked files and rungs."""

    def __init__(self, nas: Reader, listing: Listing, order: list[int], at: str | None,
                 caller: Caller | None = None) -> None:
        self.nas = nas
        self.at = at
        self.caller = caller  # who a working-tree map is made for (None: this process's own account)
        # a listing cut for that reader: the header's snapshot records only its files
        self.only = frozenset(item.path for item in listing.items) if caller is not None else None
        self.shown_name = listing.folder or "."
        self.files = [listing.items[i].path for i in order]
        self.walked = [listing.items[i].identity for i in order]  # (device, inode) as walked; None at a revision
        self._shown: dict[int, Shown | None] = {}
        folders: dict[str, list[int]] = {}  # immediate subfolder -> [files, bytes, rank of its first file]
        for rank, i in enumerate(order):
            item = listing.items[i]
            rel = listing.relative(item.path)
            if "/" in rel:
                top = rel.split("/", 1)[0]
                entry = folders.setdefault(top, [0, 0, rank])
                entry[0] += 1
                entry[1] += item.size
        prefix = listing.folder + "/" if listing.folder else ""
        self.folders = [f"{prefix}{name}/ ({_files(n)}, {size} bytes)\n"
                        for name, (n, size, _) in sorted(folders.items(), key=lambda kv: kv[1][2])]
        self.total_bytes = sum(item.size for item in listing.items)
        self.head = self._folder_evidence(listing.folder)

    def _folder_evidence(self, folder: str) -> tuple[Evidence, ...]:
        """The header's pointer: the folder itself at the commit the map shows
        (``at``, or the working tree's snapshot commit, HEAD when nothing
        differs; for a caller, of the files in its listing only), with the
        sha256 of its ``git ls-tree`` listing; none for a folder git holds no
        file of."""
        keep = None if self.only is None else self.only.__contains__
        commit = self.at or self.nas.tree.snapshot_worktree(self.caller, keep)
        listed = self.nas.tree.ls_tree_at(commit, folder)
        if listed is None:
            return ()
        pointer = folder_pointer(self.nas.tree.node, self.nas.tree.tree, folder, commit)
        return (Evidence(pointer, hashlib.sha256(listed).hexdigest()),)

    def shown(self, rank: int) -> Shown | None:
        if rank not in self._shown:
            self._shown[rank] = _shown(self.nas, self.files[rank], self.at, self.caller, self.walked[rank])
        return self._shown[rank]

    def count(self, text: str) -> int:
        return tok.count(text, self.nas.tokenizer)

    def declared(self, served: Served, budget: int | None) -> Response:
        return declare(served, None, self.nas.tokenizer, budget)

    def keys(self, detail: str, shown: int, folders_shown: int | None = None,
             page: tuple[int, int] | None = None, budget: int | None = None) -> tuple[tuple[str, object], ...]:
        """``page``: the ranks (from 1) this answer covers, declared when it is
        not the whole ranking from the first file, with the view of the next page."""
        keys: list[tuple[str, object]] = [("path", self.shown_name), ("detail", detail), ("files", len(self.files)),
                                          ("shown", shown), ("folders", len(self.folders))]
        if folders_shown is not None and folders_shown < len(self.folders):
            keys.append(("folders_shown", folders_shown))
        if page is not None:
            first, last = page
            if last >= first and (first > 1 or last < len(self.files)):
                keys.append(("page", f"{first}-{last}"))
            if last < len(self.files):
                keys.append(("next", self.next_page(last + 1, budget)))
        return tuple(keys)

    def next_page(self, first: int, budget: int | None) -> str:
        return f"@outline={first}" + (f"@{budget}" if budget is not None else "")

    def first_file(self) -> Evidence | None:
        for rank in range(len(self.files)):
            s = self.shown(rank)
            if s is not None:
                return s.file_evidence
        return None

    def overhead(self, budget: int | None, detail: str) -> int:
        """The header's tokens, estimated with the largest counts it can hold."""
        n = len(self.files)
        keys = self.keys(detail, n, 0 if detail == "folders" else None, (n, n - 1), budget)
        return self.declared(Served("map", b"", self.head, keys=keys), budget).tokens + HEADER_SLACK

    # -- the rungs ------------------------------------------------------------------
    def files_rung(self, budget: int | None, first: int = 1) -> Served | None:
        """Every file from rank ``first`` on, and the entries of as many
        top-ranked ones as fit; None when not every file's line fits."""
        spent = self.overhead(budget, "symbols")
        picked, spent, every = self._lines_within(first, spent, budget)
        if not every:
            return None
        with_entries = 0
        for _, s in picked:
            cost = self.count(s.entries) if s.entries else 0
            if budget is not None and spent + cost > budget:
                break
            spent += cost
            with_entries += 1
        if budget is None:
            return self._files_served(picked, with_entries, first)
        fits = lambda k: self.declared(self._files_served(picked, k, first), budget).tokens <= budget  # noqa: E731
        while with_entries < len(picked) and fits(with_entries + 1):  # the estimate was long: give more
            with_entries += 1
        while with_entries and not fits(with_entries):  # the estimate was short: give back
            with_entries -= 1
        return self._files_served(picked, with_entries, first)

    def _files_served(self, picked: list[tuple[int, Shown]], with_entries: int, first: int) -> Served:
        body: list[str] = []
        evidence: list[Evidence] = list(self.head)
        for n, (_, s) in enumerate(picked):
            body.append(s.line)
            evidence.append(s.file_evidence)
            if n < with_entries:
                body.append(s.entries)
                evidence.extend(s.entry_evidence)
        entries_all = all(not s.entries for _, s in picked[with_entries:])
        detail = "symbols" if entries_all else "files"
        left = len(self.files) - (first - 1) - len(picked)
        if left:  # files that could not be read between the walk and now
            body.append(f"(+{left} files could not be read now)\n")
        text = "".join(body) if self.files else "(no files)\n"
        page = (first, len(self.files)) if first > 1 else None
        return Served("map", text.encode(), tuple(evidence), keys=self.keys(detail, len(picked), page=page))

    def page_rung(self, budget: int, first: int) -> Served | None:
        """Files from rank ``first`` on, as many as fit, each on its line."""
        spent = self.overhead(budget, "files") + self.count(self._trailer(0, first - 1, budget))
        files = self._lines_within(first, spent, budget)[0]
        return self._shrunk(lambda f: self._lines_served("files", [], f, first, budget), [], files, budget)

    def folders_rung(self, budget: int) -> Served | None:
        """The subfolders with their counts, then top-ranked files, as many as fit."""
        spent = self.overhead(budget, "folders") + self.count(self._trailer(0, 0, budget))
        folders: list[str] = []
        for line in self.folders:
            if spent + self.count(line) > budget:
                break
            spent += self.count(line)
            folders.append(line)
        files = self._lines_within(1, spent, budget)[0]
        return self._shrunk(lambda f: self._lines_served("folders", folders, f, 1, budget), folders, files, budget)

    def _lines_within(self, first: int, spent: int, budget: int | None) -> tuple[list[tuple[int, Shown]], int, bool]:
        """Files from rank ``first`` on, with their rank, while their lines fit
        (each one readable now), the tokens spent then, and whether all did."""
        files: list[tuple[int, Shown]] = []
        for rank in range(first - 1, len(self.files)):
            s = self.shown(rank)
            if s is None:
                continue
            if budget is not None and spent + self.count(s.line) > budget:
                return files, spent, False
            spent += self.count(s.line)
            files.append((rank, s))
        return files, spent, True

    def _shrunk(self, serve: Callable[[list[tuple[int, Shown]]], Served], folders: list[str],
                files: list[tuple[int, Shown]], budget: int) -> Served | None:
        """The answer with the last files (then folders) given back until it fits."""
        while folders or files:
            served = serve(files)
            if self.declared(served, budget).tokens <= budget:
                return served
            if files:
                files.pop()
            else:
                folders.pop()
        return None

    def _trailer(self, folders_shown: int, last: int, budget: int) -> str:
        """What is left after rank ``last`` and how to get it."""
        left = len(self.files) - last
        more_folders = len(self.folders) - folders_shown
        if not left:
            return ""
        folders_said = f" and {more_folders} folders" if more_folders else ""
        above = "a folder above as FOLDER@N, " if folders_shown else ""
        return (f"(+{left} files{folders_said} not shown: the next page is {self.shown_name}{self.next_page(last + 1, budget)}, "
                f"{above}or use a larger budget)\n")

    def _lines_served(self, detail: str, folders: list[str], files: list[tuple[int, Shown]], first: int,
                      budget: int) -> Served:
        """Folders (``detail=folders``, the map's first page) and file lines, from rank ``first``."""
        last = files[-1][0] + 1 if files else first - 1
        body = "".join(folders) + "".join(s.line for _, s in files) + self._trailer(len(folders), last, budget)
        evidence = (*self.head, *(s.file_evidence for _, s in files))
        keys = self.keys(detail, len(files), len(folders) if detail == "folders" else None, (first, last), budget)
        return Served("map", body.encode(), evidence, keys=keys)

    def skeleton(self) -> Served:
        first = self.first_file()
        top = f"; top: {first.pointer.short()}" if first else ""
        line = f"folder {self.shown_name}: {len(self.files)} files, {self.total_bytes} bytes, {len(self.folders)} folders{top}\n"
        return Served("skeleton", line.encode(), (*self.head, *([first] if first else [])), keys=(("path", self.shown_name),))

    def nothing(self, budget: int) -> Served:
        needs = self.declared(self.skeleton(), budget).tokens
        return Served("none", b"", self.head, truncated=True,
                      keys=(("path", self.shown_name), ("files", len(self.files)), ("needs", needs)))

    def response(self, budget: int | None, start: int = 0) -> Response:
        """The map, or its page from the ``start``-th file on (``DIR@outline=K``)."""
        first = max(start, 1)
        if first > max(len(self.files), 1):
            raise BadView(f"folder {self.shown_name!r} has {_files(len(self.files))}; @outline={first} starts past them",
                          f"@outline=1 to @outline={len(self.files)}")
        if budget is None:
            served = self.files_rung(None, first)
            assert served is not None
            return self.declared(served, None)
        wider: Rung = (lambda: self.folders_rung(budget)) if not start else (lambda: self.page_rung(budget, first))
        rungs: list[Rung] = [lambda: self.files_rung(budget, first), wider, self.skeleton]
        nothing = self.nothing(budget)
        response = fit(rungs, lambda s: self.declared(s, budget), budget, nothing)
        if response.tokens > budget:  # a map never exceeds its budget: not even view=none fits
            needs = dict(nothing.keys)["needs"]
            raise BadView(f"budget {budget} is too small for any map of folder {self.shown_name!r}: view=none alone is "
                          f"{response.tokens} tokens, the skeleton {needs}", f"a budget of {needs} or more")
        return response


def _files(n: int) -> str:
    return "1 file" if n == 1 else f"{n} files"


def folder_view(nas: Reader, path: str, view: View, at: str | None, caller: Caller | None = None) -> Response:
    """The map of a folder for a view that asks for one (outline, N). A
    working-tree map for another account than root or this process's own
    lists, counts and ranks only what that caller could find (access.py):
    its listing is walked and cut each time, and the cut keys the cache."""
    shown = path or "."
    if view.kind == "raw" and view.budget is None:
        raise NotServable(f"{shown!r} is a folder (a directory), not a file", FOLDER_READS)
    if view.kind not in ("outline", "best", "raw"):
        asked = View(view.kind, view.start, view.end, view.arg).spelled()  # without a door's default budget
        raise NotServable(f"{shown!r} is a folder; @{asked} is a view of files", FOLDER_READS)
    who = None if sees_all(caller) else caller.key  # type: ignore[union-attr]  (.nas/status tells only them)
    with nas.progress.task(f"folder map of {shown!r}" + (f" at {at}" if at is not None else ""), who) as task:
        commit = str(nas.tree.resolve(at).id) if at is not None else None
        if commit is not None:
            task.begin("listing the revision's files")
            listing: Listing | None = walk_commit(nas, commit, path)
            state = listing.signature
        elif not sees_all(caller):
            assert caller is not None
            task.begin("walking the folder (what this caller may see)")
            listing = visible(walk_worktree(nas, path), nas.tree.root, caller)
            state = "seen:" + listing.signature
        else:
            listing = None
            task.begin("asking git what changed in the work tree")
            state = worktree_state(nas)
        head = commit or _head_id(nas)
        folder = nas.tree.real_path(path)[0] if commit is None else path
        parts = (__version__, str(VIEW_FORMAT), nas.tree.node, nas.tree.tree, nas.tokenizer, head, folder, state,
                 str(view.budget), str(view.start))
        key = "fmap:" + hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
        hit = _cached(nas, key, head)
        if hit is not None:
            return hit
        if listing is None:
            task.begin("walking the folder")
            listing = walk_worktree(nas, path)
        order = _RANKER.order(nas, listing, commit, task=task)
        task.begin("outlining the files shown")
        made_for = caller if state.startswith("seen:") else None  # a listing cut for this caller
        response = FolderMap(nas, listing, order, commit, made_for).response(view.budget, view.start)
        nas.remember(key, response, to_disk=listing.settled)
        return response


def _head_id(nas: Reader) -> str:
    head = nas.tree.head()
    return str(head.id) if head is not None else ""


def _cached(nas: Reader, key: str, head: str) -> Response | None:
    """A remembered map, if every commit its pointers name is still held."""
    hit = nas.recall(key)
    if hit is None:
        return None
    commits = {e.pointer.commit for e in hit.served.evidence} - {head[:12]}
    if all(nas.tree.hold(_full(nas, c)) for c in commits):
        return hit
    return None


def _full(nas: Reader, short: str) -> str:
    try:
        return str(nas.tree.resolve(short).id)
    except NasError:
        return ""


__all__ = ["FolderMap", "file_facts", "folder_view"]
