"""The background worker: a bounded queue of summary jobs and the threads that run them.

A read only ever calls :meth:`Worker.submit`, which never blocks: a job
already queued is not queued twice, and a full queue is said, not waited
on. The threads are daemon threads of the door's process (the mount, the
HTTP or MCP server); a job that fails is counted (the store remembers the
failure and its backoff, store.py and walk.py), and the
worker goes on with the next one.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass

log = logging.getLogger("nasfs.summaries")


class QueueFull(Exception):
    pass


@dataclass
class Counts:
    queued: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0


class Worker:
    def __init__(self, threads: int, size: int) -> None:
        self._jobs: queue.Queue[tuple[Hashable, Callable[[], None]]] = queue.Queue(maxsize=size)
        self._pending: set[Hashable] = set()
        self._lock = threading.Lock()
        self._threads = max(1, threads)
        self._started: list[threading.Thread] = []
        self.counts = Counts()

    def submit(self, key: Hashable, job: Callable[[], None]) -> int:
        """Queue ``job`` unless one with ``key`` is queued or running; the
        number of jobs ahead of it. Raises :class:`QueueFull`, never waits."""
        with self._lock:
            if key in self._pending:
                return self._jobs.qsize()
            try:
                self._jobs.put_nowait((key, job))
            except queue.Full:
                raise QueueFull(f"the summary queue is full ({self._jobs.maxsize} jobs)") from None
            self._pending.add(key)
            self.counts.queued += 1
            if not self._started:
                for n in range(self._threads):
                    t = threading.Thread(target=self._run, name=f"nasfs-summaries-{n}", daemon=True)
                    t.start()
                    self._started.append(t)
            return max(0, self._jobs.qsize() - 1)

    def _run(self) -> None:
        while True:
            key, job = self._jobs.get()
            with self._lock:
                self.counts.queued -= 1
                self.counts.running += 1
            failed = None
            try:
                job()
            except Exception as exc:  # one job's failure must not end the worker
                failed = str(exc) or type(exc).__name__
                log.warning("summary of %s failed: %s", key, failed)
            with self._lock:
                self._pending.discard(key)
                self.counts.running -= 1
                if failed is None:
                    self.counts.done += 1
                else:  # what failed is remembered in the store (store.failed), with its backoff
                    self.counts.failed += 1

    def idle(self) -> bool:
        with self._lock:
            return not self._pending
