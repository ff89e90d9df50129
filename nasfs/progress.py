"""Long work in progress, as ``.nas/status`` shows it while it runs.

A cold folder map of a large tree reads the head of every file below it
(tens of seconds at a million files); a reader waiting on it, or its
operator, can see what runs and how far it is. The worker thread sets
plain attributes (atomic under the GIL); a door renders them from any
thread without a lock on the worker's path.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Task:
    """One piece of work: what it is, its current step, and how far that step is."""

    __slots__ = ("what", "step", "done", "total", "started")

    def __init__(self, what: str) -> None:
        self.what = what
        self.step = "starting"
        self.done = 0
        self.total = 0
        self.started = time.monotonic()

    def begin(self, step: str, total: int = 0) -> None:
        """A new step of ``total`` units (0: not counted)."""
        self.step, self.done, self.total = step, 0, total

    def render(self) -> str:
        counted = f" {self.done}/{self.total}" if self.total else ""
        return f"{self.what}: {self.step}{counted}, {time.monotonic() - self.started:.0f} s"


class Progress:
    """The tasks running now, in the order they started."""

    def __init__(self) -> None:
        self._tasks: dict[int, Task] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    @contextmanager
    def task(self, what: str) -> Iterator[Task]:
        task, key = Task(what), next(self._ids)
        with self._lock:
            self._tasks[key] = task
        try:
            yield task
        finally:
            with self._lock:
                del self._tasks[key]

    def render(self) -> str:
        """One line per running task, or ``idle``."""
        with self._lock:
            tasks = list(self._tasks.values())
        return "".join(f"working: {t.render()}\n" for t in tasks) or "idle\n"


__all__ = ["Progress", "Task"]
