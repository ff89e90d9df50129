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

    __slots__ = ("what", "step", "done", "total", "started", "who")

    def __init__(self, what: str, who: tuple[int, ...] | None = None) -> None:
        self.what = what
        self.who = who  # the reader it is done for (access.Caller.key); None: for all
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
    def task(self, what: str, who: tuple[int, ...] | None = None) -> Iterator[Task]:
        task, key = Task(what, who), next(self._ids)
        with self._lock:
            self._tasks[key] = task
        try:
            yield task
        finally:
            with self._lock:
                del self._tasks[key]

    def render(self, viewer: tuple[int, ...] | None = None) -> str:
        """One line per running task, or ``idle``. A ``viewer`` (a reader's
        ``Caller.key``; None: one who sees all) is told its own tasks, and of
        every other only that one runs: its folder's name and counts may be
        what only that reader could see."""
        with self._lock:
            tasks = list(self._tasks.values())
        lines = (t.render() if viewer is None or t.who == viewer else
                 f"another reader's task, {time.monotonic() - t.started:.0f} s" for t in tasks)
        return "".join(f"working: {line}\n" for line in lines) or "idle\n"


__all__ = ["Progress", "Task"]
