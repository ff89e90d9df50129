"""What a read of ``@summary`` gets, at once: a cached summary or a clear refusal.

:class:`Summaries` is the one object the core (service.py) holds. A read
looks the summary up in the store (by blob and model; a folder by its
listing's signature) and serves it, or serves the last one of that path as
``stale=true`` naming the commit it describes, or refuses with
:class:`SummaryPending`; in every case a missing or stale one is queued.
Nothing here waits on a model: generation runs in worker threads (a daemon
door), or in a background ``nasfs index --summaries`` process that a
one-shot door (the CLI) starts. Workers read the tree through their own
core (``open_core``), never the one serving reads.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, NotServable
from ..pointers import Pointer
from ..views import Analysis, Evidence, Served
from . import folders as fold
from .backends import BackendDown, make_backend
from .files import summarize_file
from .settings import VALID_NOW, SummaryPending, SummarySettings
from .store import Store
from .worker import QueueFull, Worker

if TYPE_CHECKING:
    from ..reader import Reader

log = logging.getLogger("nasfs.summaries")
SPAWN_AGAIN_SECONDS = 600  # a one-shot door starts at most one background fill per file in this time
WALK_SECONDS = 30.0  # background mode: how often the tree is walked again for changed files


class Summaries:
    def __init__(self, settings: SummarySettings, nas: Reader, open_core: Callable[[], Reader]) -> None:
        self.settings = settings
        self.model = settings.model_name
        self.root = str(nas.tree.root)
        self.store = Store(nas.disk, self.root, self.model)
        self._open_core = open_core
        self._local = threading.local()
        self._backend: Any = None
        self._backend_lock = threading.Lock()
        self.worker = Worker(settings.in_flight, settings.queue_size)
        self.stale: set[str] = set()  # paths served stale and not yet made again

    # -- reads (never wait) ------------------------------------------------------------
    def check_mode(self) -> None:
        if self.settings.mode == "off":
            raise NotServable("summaries are off for this tree (--summaries off)", VALID_NOW)

    def file_view(self, nas: Reader, a: Analysis) -> Served:
        self.check_mode()
        c = a.content
        if a.data is None or a.binary:
            raise NotServable(f"{c.path} is binary or too large to summarize", VALID_NOW)
        record = self.store.get("file", c.blob_id)
        if record is not None:
            self.stale.discard(c.path)
            return self._file_served(record, a, stale=False)
        ahead = self._queue(("file", c.path, c.blob_id), c.path, lambda: self._file_job(c.path, c.blob_id, c.commit))
        last = self.store.last("file", c.path)
        if last is not None and nas.tree.hold(last["commit"]):
            self.stale.add(c.path)
            return self._file_served(last, nas.analysis(nas.tree.at(last["commit"], c.path)), stale=True)
        raise self._pending(c.path, ahead, self.store.failure("file", c.blob_id))

    def folder_view(self, nas: Reader, path: str, at: str | None) -> Served:
        self.check_mode()
        listing = fold.listing_of(nas, path, at)
        path = listing.folder  # "." and "" are the root; a link, the folder it names
        sig = fold.signature(listing, path)
        shown = path or "."
        record = self.store.get("folder", sig)
        if record is not None:
            self.stale.discard(shown + "/")
            return self._folder_served(nas, record, shown, stale=False)
        ahead = self._queue(("folder", path, sig), path, lambda: self._folder_job(path, at))
        last = self.store.last("folder", path)
        if last is not None and all(nas.tree.hold(k["commit"]) for k in last["kept"] + ([last["head"]] if last.get("head") else [])):
            self.stale.add(shown + "/")
            return self._folder_served(nas, last, shown, stale=True)
        raise self._pending(shown, ahead, self.store.failure("folder", sig))

    def ladder_rung(self, a: Analysis) -> Served | None:
        """For ``@N``: a fresh summary whose every sentence was supported, else None."""
        if self.settings.mode == "off" or a.data is None or a.binary:
            return None
        record = self.store.get("file", a.content.blob_id)
        if record is None or not record["kept"] or len(record["kept"]) != record["written"]:
            return None
        return self._file_served(record, a, stale=False)

    def ladder_state(self, blob_id: str) -> str:
        """What of the summary a cached ``@N`` answer rests on."""
        record = self.store.get("file", blob_id)
        return "none" if record is None else f"{len(record['kept'])}/{record['written']}"

    def _pending(self, shown: str, ahead: str, failure: str | None) -> SummaryPending:
        last = f"; the last try failed: {failure}" if failure else ""
        return SummaryPending(f"the summary of {shown} by {self.model} is not generated yet; queued ({ahead}){last}; "
                              "read it again later", VALID_NOW)

    # -- what is served ---------------------------------------------------------------
    def _file_served(self, record: dict[str, Any], a: Analysis, stale: bool) -> Served:
        c = a.content
        evidence = list(a.whole_evidence())
        lines = []
        for k in record["kept"]:
            e = Evidence(Pointer(a.node, a.tree, c.path, c.commit, k["start"], k["end"]), k["sha256"], c.blob_id)
            evidence.append(e)
            lines.append(f"{k['text']} [{_cited(k['cited'])}] {e.pointer}")
        return self._served(record, lines, tuple(evidence), c.commit, stale)

    def _folder_served(self, nas: Reader, record: dict[str, Any], shown: str, stale: bool) -> Served:
        evidence, lines = [], []
        for k in ([record["head"]] if record.get("head") else []) + record["kept"]:
            e = Evidence(Pointer(nas.tree.node, nas.tree.tree, k["path"], k["commit"], k["start"], k["end"]), k["sha256"])
            evidence.append(e)
            if k is not record.get("head"):
                lines.append(f"{k['text']} [{', '.join(k['children'])}] {e.pointer}")
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
                ("stale", stale), ("describes", commit[:12]))
        return Served("summary", ("\n".join(lines) + "\n").encode(), evidence, generated=True, keys=keys)

    # -- queueing ---------------------------------------------------------------------
    def _queue(self, key: tuple[str, str, str], path: str, job: Callable[[], None]) -> str:
        """Queue a job; what to tell the reader about where it stands."""
        if self.settings.detached:
            return self._spawn(key, path)
        try:
            ahead = self.worker.submit(key, job)
        except QueueFull as exc:
            return f"{exc}; it is queued again at a later read"
        return f"{ahead} ahead of it" if ahead else "next"

    def _spawn(self, key: tuple[str, str, str], path: str) -> str:
        """A one-shot door: start ``nasfs index --summaries-only PATH`` in the background."""
        marker = f"summ-spawned:{self.model}:{self.root}:{key[2]}"
        raw = self.store.disk.get(marker)
        if raw is not None and time.time() - float(raw) < SPAWN_AGAIN_SECONDS:
            return "a background nasfs index --summaries is making it"
        argv = [sys.executable, "-P", "-m", "nasfs", "index", "--repo", self.root, "--quiet",
                *self.settings.argv(mode=False), "--summaries-only", path or "."]
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     cwd="/", start_new_session=True)
        except OSError as exc:
            return f"but a background nasfs index could not start: {exc}"
        self.store.disk.put(marker, str(time.time()).encode())
        return f"background nasfs index --summaries pid {child.pid} is making it"

    # -- generation (worker threads, nasfs index) -----------------------------------------
    def backend(self) -> Any:
        with self._backend_lock:
            if self._backend is None:
                self._backend = make_backend(self.settings)
            return self._backend

    def core(self) -> Reader:
        """This thread's own core over the same tree (pygit2 objects are not shared)."""
        nas = getattr(self._local, "nas", None)
        if nas is None:
            nas = self._local.nas = self._open_core()
        return nas

    def _file_job(self, path: str, blob_id: str, commit: str) -> None:
        """Summarize the blob a read asked for: the working file when it still
        holds it, else the commit the read named (a read at a revision, or a
        file changed again since)."""
        nas = self.core()
        try:
            content = nas.content(path)
            if content.blob_id != blob_id and nas.tree.hold(commit):
                content = nas.tree.at(commit, path)
        except (NotServable, NotFound):
            return  # a folder or gone by now: nothing to summarize
        self.make_file(nas.analysis(content))

    def make_file(self, a: Analysis) -> dict[str, Any] | None:
        """The record of ``a``'s blob, made now if missing (None: binary or too large)."""
        c = a.content
        record = self.store.get("file", c.blob_id)
        if record is not None:
            return record
        if a.data is None or a.binary:  # remembered, so a background walk does not queue it again
            self.store.failed("file", c.blob_id, f"{c.path} is binary or too large to summarize")
            return None
        try:
            record = summarize_file(self.backend(), self.settings, c.path, c.blob_id, c.commit, a.data, a.outline)
        except BackendDown as exc:
            self.store.failed("file", c.blob_id, str(exc))
            raise
        self.store.put("file", c.blob_id, c.path, record)
        self.stale.discard(c.path)
        log.info("summary of %s: %d/%d sentences supported, %.1f s", c.path, len(record["kept"]), record["written"], record["seconds"])
        return record

    def _folder_job(self, path: str, at: str | None) -> None:
        self.make_folder(self.core(), path, at)

    def make_folder(self, nas: Reader, path: str, at: str | None) -> dict[str, Any]:
        """A folder's record, its children's made first when missing (bottom-up)."""
        listing = fold.listing_of(nas, path, at)
        path = listing.folder
        sig = fold.signature(listing, path)
        record = self.store.get("folder", sig)
        if record is not None:
            return record
        files, folders = fold.children(listing, path)

        def file_record(child: str) -> tuple[dict[str, Any] | None, Analysis | None]:
            a = nas.analysis(nas.content(child, at))
            try:
                return self.make_file(a), a
            except BackendDown:
                return None, a

        items = fold.child_items(files, folders, file_record, lambda sub: self.make_folder(nas, sub, at))
        try:
            record = fold.summarize_folder(self.backend(), path, items)
        except BackendDown as exc:
            self.store.failed("folder", sig, str(exc))
            raise
        record["head"] = fold.head(nas, files, at) or next((self.make_folder(nas, sub, at).get("head") for sub in folders), None)
        self.store.put("folder", sig, path, record)
        self.stale.discard((path or ".") + "/")
        return record

    # -- background mode and status ---------------------------------------------------------
    def start_background(self) -> None:
        """``--summaries background``: walk the tree now and every WALK_SECONDS,
        queueing each file with no summary of its content (smallest first), then folders (deepest first)."""
        if self.settings.mode != "background" or self.settings.detached:
            return
        threading.Thread(target=self._walk_forever, name="nasfs-summaries-walk", daemon=True).start()

    def _walk_forever(self) -> None:
        while True:
            try:
                self.walk_once()
            except Exception as exc:  # the walk must not end: a file removed meanwhile, a repository moved
                log.warning("summary walk failed: %s", exc)
            time.sleep(WALK_SECONDS)

    def walk_once(self) -> None:
        """Queue every file whose content has no summary and no failed try, then every folder."""
        nas = self.core()
        listing = fold.listing_of(nas, "", None)
        try:
            for item in sorted(listing.items, key=lambda i: (i.size, i.path)):
                c = nas.content(item.path)
                if self.store.get("file", c.blob_id) is None and self.store.failure("file", c.blob_id) is None:
                    self.worker.submit(("file", c.path, c.blob_id), lambda c=c: self._file_job(c.path, c.blob_id, c.commit))
            for folder in fold.bottom_up(listing):
                sig = fold.signature(fold.listing_of(nas, folder, None), folder)
                if self.store.get("folder", sig) is None and self.store.failure("folder", sig) is None:
                    self.worker.submit(("folder", folder, sig), lambda f=folder: self._folder_job(f, None))
        except QueueFull:
            pass  # the rest at the next walk

    def status(self) -> str:
        c = self.worker.counts
        return (f"summaries_mode={self.settings.mode}\nsummaries_model={self.model}\nsummaries_queued={c.queued}\n"
                f"summaries_running={c.running}\nsummaries_done={c.done}\nsummaries_failed={c.failed}\n"
                f"summaries_stale={len(self.stale)}\n")


def _cited(cited: list[list[int]]) -> str:
    return ", ".join(f"L{a}" if a == b else f"L{a}-L{b}" for a, b in cited)
