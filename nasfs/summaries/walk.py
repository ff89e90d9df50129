"""``--summaries background``: walk the tree and queue what has no summary.

Now and every WALK_SECONDS: each file whose content has no summary
(smallest first), then each folder (deepest first). A file or folder whose
last try failed (an endpoint or judge down) is queued again once its
backoff has passed, RETRY_FIRST_SECONDS doubling with each failure in a row
up to RETRY_MAX_SECONDS, so an endpoint started after the mount is used;
a binary file is never queued again.
"""

from __future__ import annotations

import logging
import threading
import time

from ..errors import NasError
from . import folders as fold
from .generate import Generator
from .store import Failure, Store, file_ident
from .worker import QueueFull, Worker

log = logging.getLogger("nasfs.summaries")
WALK_SECONDS = 30.0
RETRY_FIRST_SECONDS = 30.0
RETRY_MAX_SECONDS = 3600.0
MAX_DOUBLINGS = 30  # past RETRY_MAX_SECONDS for any sane RETRY_FIRST_SECONDS


def due(failure: Failure | None, now: float) -> bool:
    """Whether something that failed so is worth trying again now."""
    if failure is None:
        return True
    if failure.final:
        return False
    doublings = min(max(failure.tries - 1, 0), MAX_DOUBLINGS)  # tries may be any count: 2**1024 is no float
    wait = min(RETRY_MAX_SECONDS, RETRY_FIRST_SECONDS * 2.0 ** doublings)
    return now - failure.when >= wait


class Walk:
    def __init__(self, generator: Generator, worker: Worker, store: Store) -> None:
        self.generator = generator
        self.worker = worker
        self.store = store

    def start(self) -> None:
        threading.Thread(target=self._forever, name="nasfs-summaries-walk", daemon=True).start()

    def _forever(self) -> None:
        while True:
            try:
                self.walk_once()
            except Exception as exc:  # the walk must not end: a file removed meanwhile, a repository moved
                log.warning("summary walk failed: %s", exc)
            time.sleep(WALK_SECONDS)

    def walk_once(self) -> None:
        """Queue every file and folder with no summary whose last try (if any) is due again."""
        nas = self.generator.core()
        listing = fold.listing_of(nas, "", None)
        stamps = fold.walked(listing)
        now = time.time()
        try:
            for item in sorted(listing.items, key=lambda i: (i.size, i.path)):
                try:
                    c = fold.child_content(nas, item.path, None, stamps)  # the inode walked (a swap: the next walk)
                except NasError:
                    continue
                ident = file_ident(c.blob_id, c.path)
                if self.store.get("file", ident) is None and due(self.store.failure("file", ident), now):
                    self.worker.submit(("file", c.path, c.blob_id),
                                       lambda c=c: self.generator.file_job(c.path, c.blob_id, c.commit))
            for folder in fold.bottom_up(listing):
                try:
                    sig = fold.signature(nas, listing, folder, None, self.store.disk)
                except NasError:
                    continue  # a file of it changed since the walk: the next walk
                if self.store.get("folder", sig) is None and due(self.store.failure("folder", sig), now):
                    self.worker.submit(("folder", folder, sig), lambda f=folder: self.generator.folder_job(f, None))
        except QueueFull:
            pass  # the rest at the next walk
