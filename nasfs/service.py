"""The core every door calls: one tree, one grammar, one set of answers.

``Nas.read('notes.md@outline@120.json')`` is the whole contract for a read; the
CLI, FUSE, HTTP and MCP doors differ only in how they carry it.
"""

from __future__ import annotations

import collections
import copy
import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import __version__
from . import tokens as tok
from .access import AccessDenied, Caller, Identity, check_history, decider, sees_all, still_names
from .budget import Rung, fit
from .cache import LRU, DiskCache
from .declare import Response, declare
from .errors import (
    BadPointer,
    BadView,
    FileChanged,
    NasError,
    NotFound,
    NotServable,
    VerifyFailed,
    check_text,
    one_line,
)
from .evidence.swhid import is_swhid, parse_swhid, swhid_of
from .grammar import RAW, View, check_budget, split_path
from .ladder_rungs import (
    outline_or_file,
    outline_or_section,
    outline_rungs,
    paged,
    with_budget,
)
from .pointers import Pointer, parse_pointer
from .progress import Progress
from .repo import Content, GitTree, clean_path
from .response_json import response_from_json, response_to_json
from .snapshot_access import check_commit, may_read_version
from .summaries import SummarySettings
from .summaries.serving import Summaries
from .summaries.settings import VALID_NOW
from .views import VIEW_FORMAT, Analysis, Served

if TYPE_CHECKING:
    from .evidence.publish import Publisher
    from .folders import Listing


@dataclass
class Stats:
    """Counters behind ``.nas/stats``: what was served against what it saved."""

    views: collections.Counter[str] = field(default_factory=collections.Counter)
    tokens_served: int = 0
    tokens_full: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    more: Callable[[], str] | None = None  # more lines (the summary queue's)
    publishing: Callable[[], str] | None = None  # the publisher's lines (evidence/publish.py)

    def record(self, response: Response) -> None:
        """A view served to a reader (not a door's size probe)."""
        self.views[response.view] += 1
        self.tokens_served += response.tokens
        self.tokens_full += response.full_tokens or 0

    def lookup(self, hit: bool) -> None:
        if hit:
            self.cache_hits += 1
        else:
            self.cache_misses += 1

    def render(self) -> str:
        lines = [f"views_served={sum(self.views.values())}"]
        lines += [f"view.{k}={v}" for k, v in sorted(self.views.items())]
        saved = self.tokens_full - self.tokens_served
        lines += [
            f"tokens_served={self.tokens_served}",
            f"tokens_full_files={self.tokens_full}",
            f"tokens_saved={saved}",
            f"cache_hits={self.cache_hits}",
            f"cache_misses={self.cache_misses}",
        ]
        return "\n".join(lines) + "\n" + (self.more() if self.more else "") + (self.publishing() if self.publishing else "")


@dataclass(frozen=True, slots=True)
class Refusal:
    when: float
    name: str
    error: str  # the refusal's words, not the exception: its traceback would keep every frame it passed
    # alive, with their locals (a Decider's folder descriptors, access.py), for as long as it is kept
    who: tuple[int, ...] | None = None  # the caller's key; None: the process's own (told to every reader)

    def render(self) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.when))
        return f"{stamp} {one_line(self.name)}: {self.error}"




class Nas:
    """Views of one git-backed tree, declared and budgeted."""

    def __init__(self, tree: GitTree, tokenizer: str = tok.DEFAULT_TOKENIZER, disk: DiskCache | None = None,
                 summarizer: SummarySettings | None = None) -> None:
        """``summarizer``: the summary settings a door built from its flags and
        environment (summaries.build_settings), or None: no summaries. The core
        reads no environment variable of its own."""
        self.tree = tree
        self.tokenizer = tok.check_tokenizer(tokenizer)
        self.disk = disk
        self.stats = Stats()
        self.progress = Progress()  # long work running now (.nas/status)
        self.summaries = Summaries(summarizer, self, self._summary_core) if summarizer else None
        if self.summaries is not None:
            self.stats.more = self.summaries.status
        self.errors: collections.deque[Refusal] = collections.deque(maxlen=100)
        self._analyses: LRU[tuple[str, str, str], Analysis] = LRU(256)
        self._responses: LRU[str, Response] = LRU(4096)
        self._full_tokens: LRU[tuple[str, str], int] = LRU(65536)
        self._lock = threading.Lock()
        self.elsewhere: Callable[[str], Nas | None] | None = None  # a core for another node's pointer (evidence/foreign.py)
        self.publisher: Publisher | None = None  # where served commits go (evidence/publish.py)

    def publish_to(self, publisher: Publisher) -> None:
        self.publisher = publisher
        self.stats.publishing = publisher.render

    def cite(self, response: Response) -> None:
        """A response went to a reader: the commits its evidence names are published."""
        if self.publisher is not None and response.served.evidence:
            self.publisher.note(e.pointer.commit for e in response.served.evidence)

    def _summary_core(self) -> Nas:
        """A core of its own for a summary worker thread (pygit2 objects stay in one thread)."""
        tree = GitTree(self.tree.root, node=self.tree.node, tree=self.tree.tree, hashes=self.disk)
        return Nas(tree, tokenizer=self.tokenizer, disk=self.disk)

    # -- addressing ----------------------------------------------------------
    def split(self, spec: str, at: str | None = None, caller: Caller | None = None) -> tuple[str, View]:
        """(real path, view) for ``path@view``; the real name always wins."""
        path = clean_path(spec)
        if at is not None:
            self.tree.resolve(at)  # an unknown revision is the error, not "no file"
        real, view = split_path(path, lambda p: self.tree.exists(p, at), lambda p: self.tree.is_file(p, at))
        return real, self.settle(real, view, at, caller)

    def settle(self, path: str, view: View, at: str | None = None, caller: Caller | None = None) -> View:
        """``section=NAME.json`` names the section ``NAME.json`` when the file
        has one (qualified or own name), else NAME's envelope (contract §2)."""
        named = view.name_with_json()
        if named is None:
            return view
        outline = self.analysis(self.content(path, at, caller)).outline
        return named if any(named.arg in (".".join(e.path), e.name) for e in outline.entries if e.path) else view

    def content(self, path: str, at: str | None = None, caller: Caller | None = None,
                allowed: Identity | None = None) -> Content:
        """The file at ``path`` (at ``at``, else in the working tree, recorded
        in a snapshot only for a ``caller`` who may see it: None, this
        process's own account). ``at`` is judged by the door first
        (:meth:`admit`, :meth:`guard`: :meth:`commit_for`).

        A working file is read from the very inode the caller's access
        decision allowed (``allowed``: :meth:`guard`'s, else decided here),
        since the path may name another by then (a file swapped for a
        symlink): decided again once, then FileChanged, never another
        file's bytes. Root and this process's own account need no decision
        (the kernel limits the latter's reads), unless a door gives one it
        made for its own caller (the mount's shared views), which that door
        makes again."""
        if at is not None:
            return self.tree.at(at, path)
        if sees_all(caller):
            return self.tree.working(path, caller, allowed)
        try:
            return self.tree.working(path, caller, allowed or self._allowed(path, caller))
        except FileChanged:
            return self.tree.working(path, caller, self._allowed(path, caller))

    def _same_folder(self, path: str, allowed: Identity) -> None:
        """FileChanged unless ``path`` is still the folder a decision allowed:
        a name decided as a file (a mount's view shared by its readers, made
        as the daemon) and swapped since for a symlink to a folder is never
        mapped, nor a folder swapped for another."""
        if not still_names(self.tree.root, self.tree.real_path(path)[1], allowed):
            raise FileChanged(f"{path!r} changed since it was decided (it names another folder or file now)",
                              "read it again")

    def _allowed(self, path: str, caller: Caller | None) -> Identity | None:
        return decider(self.tree.root, caller).check(path)

    def analysis(self, content: Content) -> Analysis:
        key = (content.path, content.blob_id, content.commit)
        found = self._analyses.get(key)
        if found is None:
            found = Analysis.of(content, self.tree.node, self.tree.tree)
            self._analyses.put(key, found)
        return found

    def using(self, tokenizer: str | None) -> Nas:
        """This tree's views counted with another tokenizer setting (a request's
        own, over HTTP or MCP): the same caches, keyed by the setting."""
        if tokenizer is None or tokenizer == self.tokenizer:
            return self
        other = copy.copy(self)
        other.tokenizer = tok.check_tokenizer(tokenizer)
        return other

    def full_tokens(self, a: Analysis) -> int | None:
        """Tokens of the whole file as a budget counts them; None for binary or large."""
        counts = self.full_counts(a)
        return None if counts is None else tok.resolve(self.tokenizer).charge(max(counts))

    def full_counts(self, a: Analysis) -> tuple[int, ...] | None:
        """Each tokenizer's count of the whole file, cached by blob and
        tokenizer (so sets that share a tokenizer share its counts)."""
        if a.binary or a.data is None:
            return None
        counts = []
        for name in tok.resolve(self.tokenizer).names:
            key = (name, a.content.blob_id)
            n = self._full_tokens.get(key)
            if n is None:
                disk_key = f"tokens:{name}:{key[1]}"
                cached = self.disk.get(disk_key) if self.disk else None
                n = int(cached) if cached is not None else tok.count(a.data, name)
                if cached is None and self.disk:
                    self.disk.put(disk_key, str(n).encode())
                self._full_tokens.put(key, n)
            counts.append(n)
        return tuple(counts)

    def cached_tokens(self, real: str, st: os.stat_result) -> int | None:
        """Tokens of a working-tree file (``real``: its resolved path, as views
        key it) if already counted (a listing's column): never reads, hashes
        or tokenizes."""
        blob_id = self.tree.cached_blob_id(real, st)
        if blob_id is None:
            return None
        used = tok.resolve(self.tokenizer)
        counts = []
        for name in used.names:
            n = self._full_tokens.get((name, blob_id))
            if n is None and self.disk is not None:
                cached = self.disk.get(f"tokens:{name}:{blob_id}")
                n = int(cached) if cached is not None else None
            if n is None:
                return None
            counts.append(n)
        return used.charge(max(counts))

    # -- reads ---------------------------------------------------------------
    def read(self, spec: str, at: str | None = None, budget: int | None = None, default_budget: int | None = None,
             caller: Caller | None = None) -> Response:
        """Serve ``path@view``; ``budget`` (HTTP's budget_tokens) adds ``@N``.
        ``default_budget`` (a door's, for clients that cannot protect
        themselves) applies when neither ``budget`` nor ``@N`` gives one;
        0 or None: no default. ``caller``: who asks (None: this process's
        own account), judged before anything of the path is looked at."""
        try:
            self.admit(spec, at, caller)
            path, view = self.split(spec, at, caller)
            if check_budget(budget) is None and view.budget is None and view.kind != "best" and default_budget:
                budget = default_budget
            if check_budget(budget) is not None:
                view = with_budget(view, budget)
            return self.read_view(path, view, at, caller=caller)
        except NasError as exc:
            self.refused(spec, exc, caller)
            raise

    def admit(self, spec: str, at: str | None, caller: Caller | None) -> None:
        """Refuse ``path@view`` before its name is split: every path it could
        name (left of each '@') that the caller may not see is refused as
        such, so no error of the split or the view tells whether a private
        file exists or where a private symlink points (access.py); one whose
        symlinks leave the tree is refused too, for every caller, decided by
        string before the split follows it (through the mount itself, it
        would wedge the daemon: the core thread waiting on its own mount)."""
        if at is not None:
            check_history(self.tree.git_dir, caller)
            self.commit_for(at, caller)  # a private snapshot: only for readers of its sources
            return
        judge = decider(self.tree.root, caller)
        path = clean_path(spec)
        cut = path.find("@", 1)
        while cut > 0:
            if path[cut - 1] != "/":  # 'dir/@scope' names no file 'dir/'
                judge.admit(path[:cut])  # a link out of the tree too: the split would realpath it
            cut = path.find("@", cut + 1)
        judge.admit(path)

    def guard(self, path: str, at: str | None, caller: Caller | None, since: str | None = None) -> Identity | None:
        """The access decision for a real path about to be read: the working
        tree's file by the caller's own rights, history (``at``, or the range
        ``since`` of a view made from commits) by their right to ``.git`` and
        to each commit read (:meth:`commit_for`: a private snapshot). Returns
        the working file's identity it allowed, for :meth:`content` (None for
        root and this process's own account, whom the kernel limits)."""
        allowed = self._allowed(path, caller) if at is None else None
        allowed = None if sees_all(caller) else allowed
        if at is None and since is None:
            return allowed
        check_history(self.tree.git_dir, caller)
        revisions = [at] if at is not None else []
        if since is not None:
            from .diffs import split_range

            revisions += [rev for rev in split_range(since) if rev]
        for rev in revisions:
            self.commit_for(rev, caller)
        return allowed

    def refused(self, name: str, exc: NasError, caller: Caller | None = None) -> None:
        self.errors.append(Refusal(time.time(), name, str(exc), None if caller is None else caller.key))

    def errors_for(self, viewer: Caller | None) -> list[Refusal]:
        """The refusals a reader of ``.nas/errors`` is told: their own and the
        process's own (a repository problem); all of them to root and the
        process's own account (None). Another reader's refusal may name
        what that reader could see (a section list, a folder's files)."""
        if sees_all(viewer):
            return list(self.errors)
        assert viewer is not None
        return [r for r in self.errors if r.who is None or r.who == viewer.key]

    def read_view(self, path: str, view: View, at: str | None = None, record: bool = True,
                  caller: Caller | None = None, source: Identity | None = None) -> Response:
        """Serve a parsed view; ``record=False`` for a door's size probes
        (FUSE lookup/getattr), which are not reads and stay out of the stats.
        Responses are cached by content (summaries keep their own cache, since
        a stale one must be retried), and the caller is judged before each.
        A folder's view is its map (folder_map.py). ``source``: the inode a
        door's own decision allowed its caller (:meth:`content`)."""
        allowed = self.guard(path, at, caller, since=view.arg if view.kind == "since" else None)
        if self.tree.is_dir(path, at):
            from .folder_map import folder_view

            if at is None and (source or allowed) is not None:
                self._same_folder(path, source or allowed)

            if view.kind == "summary":
                return self._folder_summary(path, view, at, record, caller)

            response = folder_view(self, path, view, at, caller)
            if record:
                self.stats.record(response)
                self.cite(response)
            return response
        if view.kind == "since" and at is None:
            from .diffs import split_range

            at = split_range(view.arg)[1]  # since=A..B reads the file as it is at B
        return self.read_content(self.content(path, at, caller, source or allowed), view, record, caller)

    def read_content(self, content: Content, view: View, record: bool = True, caller: Caller | None = None) -> Response:
        """A view of a file already found (``nasfs index`` goes on to use the
        same content for its map facts, so the file is read and hashed once).
        ``caller``: whom a summary is for (a stale one only if they may read it)."""
        cacheable = view.kind != "summary"
        key = self._response_key(content, view)
        hit = self.recall(key) if cacheable else None
        self.stats.lookup(hit is not None)
        if hit is not None:
            if record:
                self.stats.record(hit)
                self.cite(hit)
            return hit
        response = self._serve(content, view, caller)
        if cacheable:
            self.remember(key, response)
        if record:
            self.stats.record(response)
            self.cite(response)
        return response

    def recall(self, key: str) -> Response | None:
        """A response remembered under ``key``, in memory or on disk."""
        hit = self._responses.get(key)
        if hit is None and self.disk is not None:
            raw = self.disk.get(key)
            hit = response_from_json(raw, self.tree) if raw else None
            if hit is not None:
                self._responses.put(key, hit)
        return hit

    def remember(self, key: str, response: Response, to_disk: bool = True) -> None:
        self._responses.put(key, response)
        if to_disk and self.disk is not None:
            self.disk.put(key, response_to_json(response))

    def _response_key(self, content: Content, view: View) -> str:
        plain = View(view.kind, view.start, view.end, view.arg, view.budget, False)
        if view.kind == "since":  # the commits, not their names, key a diff
            from .diffs import split_range

            a_rev, b_rev = split_range(view.arg)
            ends = str(self.tree.resolve(a_rev).id) + ".." + (str(self.tree.resolve(b_rev).id) if b_rev else "")
            plain = View("since", arg=ends, budget=view.budget)
        parts = (__version__, str(VIEW_FORMAT), self.tree.node, self.tree.tree, self.tokenizer, content.commit, content.path, content.blob_id, plain.spelled())
        if view.kind == "best" and self.summaries is not None and self.summaries.settings.in_ladder:
            parts += ("summary", self.summaries.ladder_state(content.blob_id, content.path))
        return "resp:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _serve(self, content: Content, view: View, caller: Caller | None = None) -> Response:
        """Declare the view, or with a budget the richest rung of its ladder
        that fits; exact line ranges and raw reads carry no header."""
        a = self.analysis(content)
        full = self.full_tokens(a)
        full_counts = self.full_counts(a)
        done: dict[tuple[int, bool], tuple[Served, Response]] = {}  # a rung's answer is declared (counted) once

        def declared(served: Served, headed: bool = True) -> Response:
            hit = done.get((id(served), headed))
            if hit is not None and hit[0] is served:
                return hit[1]
            body_counts = full_counts if served.body is a.data else None
            over = view.budget if served.view != "none" else None  # a rung tried against the budget; none is served as it is
            response = declare(served, full, self.tokenizer, view.budget, headed, body_counts, over)
            done[id(served), headed] = (served, response)
            return response

        rungs, nothing = self._ladder(a, view, declared, caller)
        if view.budget is None:
            return declared(rungs[0](), headed=view.kind not in ("raw", "lines"))
        return fit(rungs, declared, view.budget, nothing)

    def _ladder(self, a: Analysis, view: View, declared: Callable[[Served], Response],
                caller: Caller | None = None) -> tuple[list[Rung], Served]:
        """The rungs of a view, richest (the view itself) first, and its none."""
        whole = a.whole_evidence()
        nothing = Served("none", b"", whole, truncated=True)
        skeleton: Rung = lambda: a.skeleton(None)  # noqa: E731
        if view.kind == "raw":
            if a.data is None:
                raise NotServable(f"{a.content.path} is {a.content.size} bytes; read it as a plain file", "a line range @La-Lb or @outline")
            return [lambda: Served("full", a.data or b"", whole)], nothing
        if view.kind == "lines":
            served = a.lines(view.start, view.end)
            return [lambda: served, skeleton], nothing
        if view.kind == "section":
            entry, served = a.section(view.arg)
            rungs = [lambda: served, *outline_rungs(a, a.section_outline(entry), entry), lambda: a.skeleton(entry)]
            return rungs, Served("none", b"", served.evidence, truncated=True, keys=served.keys)
        if view.kind == "inside":
            entry, served = a.section(view.arg)
            rungs = outline_rungs(a, a.section_outline(entry, whole=True), entry)
            return [outline_or_section(rungs[0], served, declared), *rungs[1:], lambda: a.skeleton(entry)], \
                Served("none", b"", served.evidence, truncated=True, keys=served.keys)
        if view.kind == "outline" and view.start:
            total = a.outline.top_count
            if view.start > total:
                raise NotFound(f"outline={view.start} is past the {total} top-level entries of {a.content.path}",
                               f"outline=1 to outline={total}" if total else "@outline: this outline has no entries")
            part = outline_rungs(a, a.outline.tops(view.start), None, f"{view.start}-{total}/{total}", a.outline.shown)
            return [*paged(a, view, declared, part)[: len(part) - a.outline.page_depth + 1], skeleton], nothing
        if view.kind == "outline":
            rungs = paged(a, view, declared, outline_rungs(a, a.outline, None, top=a.outline.shown))
            return [outline_or_file(a, rungs[0], declared, self.full_tokens(a)), *rungs[1:], skeleton], nothing
        if view.kind == "best":
            outlines = outline_rungs(a, a.outline, None)
            rungs = [a.full, *paged(a, view, declared, outlines)]
            if self.summaries is not None and self.summaries.settings.in_ladder:  # after every whole outline, before a page of one
                summaries = self.summaries
                rungs.insert(1 + max(len(outlines) - a.outline.page_depth, 1), lambda: summaries.ladder_rung(a))
            return [*rungs, skeleton], nothing
        if view.kind == "since":
            return self._since_rungs(a, view.arg), nothing
        if view.kind == "summary":
            return [self._summary(a, caller), skeleton], nothing
        if view.kind == "keys":
            listing = a.key_view()
            return [lambda: listing, skeleton], nothing
        raise NotServable(f"view {view.kind!r} is not served")

    def _since_rungs(self, a: Analysis, spec: str) -> list[Rung]:
        from .diffs import TreeDiff, check_order, split_range

        a_rev, b_rev = split_range(spec)
        old = str(self.tree.resolve(a_rev).id)
        if b_rev is not None and str(self.tree.resolve(b_rev).id) != a.content.commit:
            raise NotServable(f"internal: {a.content.path} was read at the wrong end of {spec}")
        check_order(self, old, a.content.commit)
        return TreeDiff(self, old, a.content.commit, a.content.path).rungs()

    def _summary(self, a: Analysis, caller: Caller | None) -> Rung:
        """The cached summary (summaries/serving.py): served at once or refused, never waited for."""
        if self.summaries is None:
            raise NotServable("no summarizer is configured for this tree (--summarizer CMD or URL, or NASFS_SUMMARIZER)", VALID_NOW)
        served = self.summaries.file_view(self, a, self._may_hold(caller))
        return lambda: served

    def _may_hold(self, caller: Caller | None) -> Callable[[str], bool] | None:
        """Whether a stale summary made at a commit (the last record of a
        path, kept by path alone: of another version, maybe a private
        snapshot of a file the caller may not read) may be told to
        ``caller``: as that commit's content would be (check_commit: a
        private snapshot's only to those who could read its sources when it
        was recorded, though its path may be public now, with other text).
        None: anything may (root and this process's own account)."""
        if sees_all(caller):
            return None
        return lambda commit: may_read_version(self.tree, commit, caller)

    def _folder_summary(self, path: str, view: View, at: str | None, record: bool, caller: Caller | None) -> Response:
        """A folder's summary, declared like a file's, degraded to none past a
        budget; told only to a caller who may see every file it is made from."""
        if self.summaries is None:
            raise NotServable("no summarizer is configured for this tree (--summarizer CMD or URL, or NASFS_SUMMARIZER)", VALID_NOW)
        check = None
        if at is None and not sees_all(caller):
            who = caller or Caller.current()

            def check(listing: Listing) -> None:
                """Made on each walk the summary is made from (walked again
                when a child was replaced: the new file is decided too), and
                of the very inodes it saw."""
                judge = decider(self.tree.root, who)
                for item in listing.items:
                    allowed = judge.finds(item.path, listing.folder)
                    if allowed is None and judge.vanished(item.path, listing.folder):  # deleted or renamed since the walk
                        raise FileChanged(f"a file of {listing.folder or '.'} is gone since it was walked", "read it again")
                    if allowed is None:
                        shown = listing.folder or "."
                        raise AccessDenied(f"the summary of {shown} is made from files {who} may not read",
                                           f"{shown}@outline (the map of the files this account may read), or FILE@summary of one of them")
                    if item.identity is not None and allowed != item.identity:  # (device, inode): the very file
                        raise FileChanged(f"{item.path!r} changed since its folder was walked", "read it again")
        served = self.summaries.folder_view(self, path, at, check, self._may_hold(caller))
        nothing = Served("none", b"", served.evidence[:1], truncated=True)
        declared = lambda s: declare(s, None, self.tokenizer, view.budget)  # noqa: E731
        response = declared(served) if view.budget is None else fit([lambda: served], declared, view.budget, nothing)
        if record:
            self.stats.record(response)
            self.cite(response)
        return response

    # -- evidence --------------------------------------------------------------
    def commit_for(self, rev: str, caller: Caller | None = None) -> str:
        """The full id of ``rev``, for a ``caller`` who may read what it holds
        (AccessDenied for a private snapshot of files the caller may not see;
        None: this process's own account). Every door asks it before serving
        a commit's content."""
        commit = str(self.tree.resolve(rev).id)
        check_commit(self.tree, commit, caller)
        return commit

    def resolve_pointer(self, text: str, caller: Caller | None = None) -> tuple[Pointer, Content]:
        p = parse_pointer(text, self.tree.node, self.tree.tree)
        content = self.tree.at(self.commit_for(p.commit, caller), p.path)
        return p, content

    def admit_pointer(self, text: str, caller: Caller | None) -> Pointer:
        """The pointer, once the caller may read the repository and see its
        path in the working tree (a snapshot commit holds working-tree
        content; a path gone from it is history alone). Its commit is judged
        by :meth:`commit_for` when it is read (deref)."""
        p = parse_pointer(text, self.tree.node, self.tree.tree)
        check_history(self.tree.git_dir, caller)
        decider(self.tree.root, caller).check(p.path if p.folder is None else p.folder)
        return p

    def deref(self, text: str, caller: Caller | None = None) -> tuple[Pointer, bytes]:
        """Exactly the bytes a pointer names, at its commit; for a folder
        pointer, the folder's listing as ``git ls-tree`` prints it. Told to a
        caller who may read the repository and may see the path in the
        working tree (a snapshot commit holds working-tree content). A SWHID
        names a file's lines too; another node's pointer is served by
        :attr:`elsewhere` (a registered remote's published commits, which
        that node pushed because every reader of its repository may read them)."""
        other = self.elsewhere(text) if self.elsewhere is not None else None
        if other is not None:
            return other.deref(text)
        if is_swhid(text):
            text = parse_swhid(text).pointer(self.tree.node, self.tree.tree).short()
        p = self.admit_pointer(text, caller)
        if p.folder is not None:
            commit = self.commit_for(p.commit, caller)
            listing = self.tree.ls_tree_at(commit, p.folder)
            if listing is None:
                raise NotFound(f"{p.folder or '.'!r} is not a folder at {commit[:12]}", "a folder of that commit")
            return p, listing
        p, content = self.resolve_pointer(text, caller)
        if not p.start:
            if content.large:
                raise NotServable(f"{p.path} is {content.size} bytes; dereference a line range of it")
            return p, content.read()
        a = self.analysis(content)
        return p, a.lines(p.start, p.end).body

    def verify(self, text: str, sha256: str | None = None, quote: str | None = None, caller: Caller | None = None) -> str:
        """Check a pointer; raise :class:`VerifyFailed` saying what did not hold."""
        answer = self.check(text, sha256, quote, caller)
        if not answer["verified"]:
            raise VerifyFailed(str(answer["detail"]))
        return str(answer["detail"])

    def check(self, text: str, sha256: str | None = None, quote: str | None = None,
              caller: Caller | None = None) -> dict[str, object]:
        """``{pointer, verified, sha256, detail}``: the pointer as parsed, the
        sha256 of the bytes it names (None when it names none), and what held
        or did not. A pointer that does not parse is refused (BadPointer).
        Another node's pointer is checked in its fetched commit (a commit its
        remote does not hold does not verify); a SWHID also checks its blob id."""
        if is_swhid(text):
            return self._check_swhid(text, sha256, quote, caller)
        try:
            other = self.elsewhere(text) if self.elsewhere is not None else None
        except NotFound as exc:
            return {"pointer": text.strip(), "verified": False, "sha256": None, "detail": f"does not verify: {exc}"}
        if other is not None:
            return other.check(text, sha256, quote)
        p = parse_pointer(text, self.tree.node, self.tree.tree)

        def answer(ok: bool, digest: str | None, detail: str) -> dict[str, object]:
            return {"pointer": str(p), "verified": ok, "sha256": digest, "detail": detail}

        try:
            p, body = self.deref(text, caller)
        except (NotFound, NotServable) as exc:
            return answer(False, None, f"does not verify: {exc}")
        digest = hashlib.sha256(body).hexdigest()
        if sha256 is not None and sha256.lower() != digest:
            return answer(False, digest, f"does not verify: sha256 of those lines is {digest}, not {sha256}")
        if quote is not None and check_text("the quote", quote, BadView).encode() not in body:
            return answer(False, digest, f"does not verify: the quoted text does not occur in {p.short()}")
        return answer(True, digest, f"verified {p} sha256={digest}")

    def _check_swhid(self, text: str, sha256: str | None, quote: str | None,
                     caller: Caller | None) -> dict[str, object]:
        """A SWHID's lines checked as its pointer's (for the same caller), and its blob id against the anchor's blob at its path."""
        s = parse_swhid(text)
        answer = self.check(s.pointer(self.tree.node, self.tree.tree).short(), sha256, quote, caller)
        answer["swhid"] = str(s)
        if answer["verified"]:
            blob = self.tree.at(s.commit, s.path).blob_id
            if blob != s.blob:
                answer.update(verified=False, detail=f"does not verify: {s.path} at {s.commit[:12]} is blob {blob}, not {s.blob}")
            else:
                answer["detail"] = f"verified {s} sha256={answer['sha256']}"
        return answer

    def swhid(self, text: str, caller: Caller | None = None) -> str:
        """The SWHID of a file pointer (after checking it names bytes that exist, for this caller)."""
        other = self.elsewhere(text) if self.elsewhere is not None else None
        if other is not None:
            return other.swhid(text)
        p, _ = self.deref(text, caller)
        if p.folder is not None:
            raise BadPointer(f"{p} names a folder; a SWHID here names a file's content", "a file pointer PATH@COMMIT#La-Lb")
        content = self.tree.at(p.commit, p.path)
        found = swhid_of(p, content.blob_id, content.commit)
        assert found is not None
        return found


__all__ = ["Nas", "RAW", "Stats"]
