"""Making summaries: the model asked, the rules and the judge applied, the record stored.

Runs in the daemon's worker threads and in ``nasfs index --summaries``,
never in a read. Each worker thread reads the tree through a core of its
own (``open_core``: pygit2 objects are not shared across threads), never the
one serving reads. With a judge, what the rules kept is stored first
(``file-rules``), so a judge that is down holds back only the judging,
which is tried again later, not the model's answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, NotServable
from ..views import Analysis
from . import folders as fold
from .backends import BackendDown, make_backend
from .files import cited_text, summarize_file
from .judging import JudgeDown, judge_record
from .settings import SummarySettings
from .store import Store, file_ident

if TYPE_CHECKING:
    from ..reader import Reader

log = logging.getLogger("nasfs.summaries")


class Generator:
    def __init__(self, settings: SummarySettings, store: Store, open_core: Callable[[], Reader],
                 made: Callable[[str], None]) -> None:
        """``made(shown)``: told the path (a folder's with a trailing ``/``) of each record made."""
        self.settings = settings
        self.store = store
        self._open_core = open_core
        self._made = made
        self._local = threading.local()
        self._backend: Any = None
        self._backend_lock = threading.Lock()

    def backend(self) -> Any:
        with self._backend_lock:
            if self._backend is None:
                self._backend = make_backend(self.settings)
            return self._backend

    def core(self) -> Reader:
        """This thread's own core over the same tree."""
        nas = getattr(self._local, "nas", None)
        if nas is None:
            nas = self._local.nas = self._open_core()
        return nas

    def file_job(self, path: str, blob_id: str, commit: str) -> None:
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

    def folder_job(self, path: str, at: str | None) -> None:
        self.make_folder(self.core(), path, at)

    def _finish(self, kind: str, ident: str, path: str, rules: Callable[[], dict[str, Any]],
                cited: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
        """The record the rules make (``rules()``, asked of the model once),
        then judged when a judge is set; stored, or the failure remembered."""
        judge = self.settings.judge
        try:
            if judge is None:
                record = rules()
            else:
                record = self.store.get(kind + "-rules", ident)
                if record is None:
                    record = rules()
                    self.store.keep(kind + "-rules", ident, record)
                record = judge_record(record, judge, self.store, ident, cited, self.settings.timeout)
        except BackendDown as exc:
            self.store.failed(kind, ident, str(exc))
            raise
        self.store.put(kind, ident, path, record)
        return record

    def make_file(self, a: Analysis) -> dict[str, Any] | None:
        """The record of ``a``'s blob, made now if missing (None: binary or too large)."""
        c = a.content
        ident = file_ident(c.blob_id, c.path)
        record = self.store.get("file", ident)
        if record is not None:
            return record
        data = a.data
        if data is None or a.binary:  # remembered, so a background walk does not queue it again
            self.store.failed("file", ident, f"{c.path} is binary or too large to summarize", final=True)
            return None
        record = self._finish(
            "file", ident, c.path,
            lambda: summarize_file(self.backend(), self.settings, c.path, c.blob_id, c.commit, data, a.outline,
                                   self.store.tree),
            lambda k: cited_text(data, k))
        self._made(c.path)
        log.info("summary of %s: %d/%d sentences supported (%s), %.1f s", c.path, len(record["kept"]),
                 record["written"], record["checked"], record["seconds"])
        return record

    def make_folder(self, nas: Reader, path: str, at: str | None) -> dict[str, Any]:
        """A folder's record, its children's made first when missing (bottom-up)."""
        listing, sig = fold.walked_signature(nas, path, at, self.store.disk)
        path = listing.folder
        record = self.store.get("folder", sig)
        if record is not None:
            return record
        files, folders = fold.children(listing, path)
        stamps = fold.walked(listing)
        made_of: set[str] | None = set()  # the commit of every file it is made from (None: not known)

        def file_record(child: str) -> tuple[dict[str, Any] | None, Analysis | None]:
            a = nas.analysis(fold.child_content(nas, child, at, stamps))  # the inode the walk saw, or FileChanged
            if made_of is not None:
                made_of.add(a.content.commit)
            try:
                return self.make_file(a), a
            except JudgeDown:
                raise  # the folder waits for the judge too, not made (and kept) from skeletons meanwhile
            except BackendDown:
                return None, a

        def folder_record(sub: str) -> dict[str, Any]:
            nonlocal made_of
            record = self.make_folder(nas, sub, at)
            if made_of is not None and "made_of" in record:
                made_of |= set(record["made_of"])
            else:
                made_of = None  # a record made before its files' commits were kept
            return record

        def rules() -> dict[str, Any]:
            items = fold.child_items(files, folders, file_record, folder_record)
            made = fold.summarize_folder(self.backend(), path, items)
            made["head"] = fold.head(nas, files, at, stamps) or next(
                (self.make_folder(nas, sub, at).get("head") for sub in folders), None)
            if made_of is not None:  # a stale record is told only to readers of them all (serving.py)
                made["made_of"] = sorted(made_of)
            return made

        record = self._finish("folder", sig, path, rules, lambda k: k["source"])
        self._made((path or ".") + "/")
        return record
