"""What a read of ``@summary`` gets, at once: a cached summary or a clear refusal.

:class:`Summaries` is the one object the core (service.py) holds. A read
looks the summary up in the store (by blob and the summarizer's identity; a
folder by its signature) and serves it, or serves the last one of that path
as ``stale=true`` naming the commit it describes, or refuses with
:class:`SummaryPending`; in every case a missing or stale one is queued:
to the worker threads (worker.py) of a daemon door, or to a detached fill
(spawn.py) from a one-shot door. Nothing here waits on a model: making is
generate.py's, the background walk walk.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NotServable
from ..folders import subfolders
from ..pointers import Pointer
from ..views import Analysis, Evidence, Served
from . import folders as fold
from .files import cited_label
from .generate import Generator
from .settings import VALID_NOW, SummaryPending, SummarySettings
from .spawn import spawn_fill
from .store import Failure, Store, file_ident
from .walk import Walk
from .worker import QueueFull, Worker

if TYPE_CHECKING:
    from ..folders import Listing
    from ..reader import Reader


class Summaries:
    def __init__(self, settings: SummarySettings, nas: Reader, open_core: Callable[[], Reader]) -> None:
        self.settings = settings
        self.model = settings.model_name
        self.store = Store(nas.disk, str(nas.tree.root), settings.identity, nas.tree.tree)
        self.stale: set[str] = set()  # paths served stale and not yet made again
        self.generator = Generator(settings, self.store, open_core, self.stale.discard)
        self.worker = Worker(settings.in_flight, settings.queue_size)
        self.walk = Walk(self.generator, self.worker, self.store)

    def start_background(self) -> None:
        """``--summaries background`` in a daemon door: the walk (walk.py) starts."""
        if self.settings.mode == "background" and not self.settings.detached:
            self.walk.start()

    # -- reads (never wait) ------------------------------------------------------------
    def check_mode(self) -> None:
        if self.settings.mode == "off":
            raise NotServable("summaries are off for this tree (--summaries off)", VALID_NOW)

    def file_view(self, nas: Reader, a: Analysis, may_hold: Callable[[str], bool] | None = None) -> Served:
        """``may_hold``: whether the reader may be told what a commit holds; the
        path's last record (of another version: kept by path alone) is served,
        stale, only for a commit it allows."""
        self.check_mode()
        c = a.content
        if a.data is None or a.binary:
            raise NotServable(f"{c.path} is binary or too large to summarize", VALID_NOW)
        record = self.store.get("file", file_ident(c.blob_id, c.path))
        if record is not None:
            self.stale.discard(c.path)
            return self._file_served(record, a, stale=False)
        ahead = self._queue(("file", c.path, c.blob_id), c.path,
                            lambda: self.generator.file_job(c.path, c.blob_id, c.commit))
        last = self.store.last("file", c.path)
        if last is not None and nas.tree.hold(last["commit"]) and (may_hold is None or may_hold(last["commit"])):
            self.stale.add(c.path)
            return self._file_served(last, nas.analysis(nas.tree.at(last["commit"], c.path)), stale=True)
        raise self._pending(c.path, ahead, self.store.failure("file", file_ident(c.blob_id, c.path)))

    def folder_view(self, nas: Reader, path: str, at: str | None, check: Callable[[Listing], None] | None = None,
                    may_hold: Callable[[str], bool] | None = None) -> Served:
        """``check``: the reader's decision, made on each walk (walked_signature).
        The path's last record (kept by path alone: made from other files, or
        other versions) is served, stale, given ``may_hold`` (a reader who does
        not see all), only when every child it names is in the listing (their
        decided walk, or the revision's) and it allows every commit it points to
        and every commit of a file it was made from (``made_of``: a sentence
        may cite a child its pointers do not name)."""
        self.check_mode()
        listing, sig = fold.walked_signature(nas, path, at, self.store.disk, check)
        path = listing.folder  # "." and "" are the root; a link, the folder it names
        shown = path or "."
        record = self.store.get("folder", sig)
        if record is not None:
            self.stale.discard(shown + "/")
            return self._folder_served(nas, record, shown, stale=False)
        ahead = self._queue(("folder", path, sig), path, lambda: self.generator.folder_job(path, at))
        last = self.store.last("folder", path)
        commits = {p["commit"] for p in _folder_pointers(last)} if last is not None else set()
        if last is not None and all(nas.tree.hold(c) for c in commits) and (
                may_hold is None or (_named_in(last, listing, self.settings.keep_unsupported) and "made_of" in last
                                     and all(may_hold(c) for c in commits | set(last["made_of"])))):
            self.stale.add(shown + "/")
            return self._folder_served(nas, last, shown, stale=True)
        raise self._pending(shown, ahead, self.store.failure("folder", sig))

    def ladder_rung(self, a: Analysis) -> Served | None:
        """For ``@N``: a fresh summary whose every sentence was supported, else None."""
        if self.settings.mode == "off" or a.data is None or a.binary:
            return None
        record = self.store.get("file", file_ident(a.content.blob_id, a.content.path))
        if record is None or not record["kept"] or len(record["kept"]) != record["written"]:
            return None
        return self._file_served(record, a, stale=False)

    def ladder_state(self, blob_id: str, path: str) -> str:
        """What of the summary a cached ``@N`` answer rests on."""
        record = self.store.get("file", file_ident(blob_id, path))
        return "none" if record is None else f"{len(record['kept'])}/{record['written']}"

    def _pending(self, shown: str, ahead: str, failure: Failure | None) -> SummaryPending:
        last = f"; the last try failed: {failure.message}" if failure else ""
        return SummaryPending(f"the summary of {shown} by {self.model} is not generated yet; queued ({ahead}){last}; "
                              "read it again later", VALID_NOW)

    def _queue(self, key: tuple[str, str, str], path: str, job: Callable[[], None]) -> str:
        """Queue a job; what to tell the reader about where it stands."""
        if self.settings.detached:
            return spawn_fill(self.settings, self.store, key[2], path)
        try:
            ahead = self.worker.submit(key, job)
        except QueueFull as exc:
            return f"{exc}; it is queued again at a later read"
        return f"{ahead} ahead of it" if ahead else "next"

    # -- what is served ---------------------------------------------------------------
    def _file_served(self, record: dict[str, Any], a: Analysis, stale: bool) -> Served:
        c = a.content
        evidence = list(a.whole_evidence())
        lines = []
        for k in record["kept"]:
            mine = [Evidence(Pointer(a.node, a.tree, c.path, c.commit, s["start"], s["end"]), s["sha256"], c.blob_id) for s in k["spans"]]
            evidence += mine
            lines.append(f"{k['text']} [{cited_label(k['cited'])}] " + " ".join(str(e.pointer) for e in mine))
        return self._served(record, lines, tuple(evidence), c.commit, stale)

    def _folder_served(self, nas: Reader, record: dict[str, Any], shown: str, stale: bool) -> Served:
        def evidence_of(p: dict[str, Any]) -> Evidence:
            return Evidence(Pointer(nas.tree.node, nas.tree.tree, p["path"], p["commit"], p["start"], p["end"]), p["sha256"])

        evidence = [evidence_of(record["head"])] if record.get("head") else []
        lines = []
        for k in record["kept"]:
            mine = [evidence_of(p) for p in k["pointers"]]
            evidence += mine
            lines.append(f"{k['text']} [{', '.join(k['children'])}] " + " ".join(str(e.pointer) for e in mine))
        commit = evidence[0].pointer.commit if evidence else ""
        return self._served(record, lines, tuple(evidence), commit, stale, (("path", shown),))

    def _served(self, record: dict[str, Any], lines: list[str], evidence: tuple[Evidence, ...], commit: str,
                stale: bool, more: tuple[tuple[str, object], ...] = ()) -> Served:
        if self.settings.keep_unsupported:
            lines += [f"(unsupported: {r['reason']}) {r['text']}" for r in record["refused"]]
        if not record["kept"]:
            lines.insert(0, f"(none of the {record['written']} sentences the model wrote was supported by what it cited; "
                            "read @outline instead)")
        keys = (*more, ("model", self.model), ("support", f"{len(record['kept'])}/{record['written']}"),
                ("checked", record["checked"]), ("stale", stale), ("describes", commit[:12]))
        return Served("summary", ("\n".join(lines) + "\n").encode(), evidence, generated=True, keys=keys)

    def status(self) -> str:
        c = self.worker.counts
        return (f"summaries_mode={self.settings.mode}\nsummaries_model={self.model}\n"
                f"summaries_checked={self.settings.checked}\nsummaries_queued={c.queued}\n"
                f"summaries_running={c.running}\nsummaries_done={c.done}\nsummaries_failed={c.failed}\n"
                f"summaries_stale={len(self.stale)}\n")


def _named_in(record: dict[str, Any], listing: Listing, unsupported_shown: bool = False) -> bool:
    """Every child a folder record's sentences and head name is a file of
    ``listing``, or a folder holding one (named ``sub/`` by the record).
    ``unsupported_shown`` (--summaries-keep-unsupported): its refused
    sentences are served too, and they cite no child they may be about, so
    every child the model was shown must be in ``listing``."""
    found = {item.path for item in listing.items} | set(subfolders(listing))
    named = {c for k in record["kept"] for c in k.get("children", ())} | {p["path"] for p in _folder_pointers(record)}
    if unsupported_shown and record.get("refused"):
        named |= set(record.get("children", ()))
    return {c.rstrip("/") for c in named} <= found


def _folder_pointers(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for k in record["kept"] for p in k["pointers"]] + ([record["head"]] if record.get("head") else [])
