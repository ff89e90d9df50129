"""Slow answers computed in worker processes, so one never stalls the others.

The mount serves the core's quick calls in one core thread (pygit2 objects
and the core's caches are not shared across threads). A view of a huge file
takes seconds, much of it in pure-Python scanning or in C calls that hold
the GIL: in that thread it would hold every other view behind it and slow
the request loop itself. Views of files over HEAVY_BYTES, searches and diffs
go instead to a few spawned worker processes, each with its own ``Nas`` over
the same repository and disk cache (as ``nasfs index`` workers are; snapshot
commits are written under the repository's cross-process lock). An answer
comes back in the disk cache's JSON form of a response.

Workers start on first use, run at NICE (below the daemon, whose request
loop serves real files: on a machine with few cores a worker outlining for
seconds would otherwise slow those), are replaced after about MAX_TASKS
answers each (bounding any leak), and a worker that dies fails only the call
it was serving (EIO); the pool is made anew for the next one.

Replacing is done here, a whole executor at a time, not with the executor's
``max_tasks_per_child``: on Python 3.11 to 3.13 that deadlocks once a backlog
is queued and a worker exits at its limit (CPython gh-115634): no worker is
spawned in its place, and every search or heavy view queued hangs for good
(seen as a 60 s hang of 44 searches in scripts/bench/load.py).
"""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

import pyfuse3

from .. import index
from ..access import Caller
from ..service import _response_from_json, _response_to_json

if TYPE_CHECKING:
    from ..declare import Response
    from ..grammar import View
    from ..repo import GitTree
    from .nodes import Node

log = logging.getLogger("nasfs.fuse")
HEAVY_BYTES = 256 << 10  # about 30 ms of cold outlining here: below it, a view stays in the core thread
MAX_TASKS = 200
NICE = 5


class Pool:
    """Worker processes over one tree (``nasfs index``'s ``_init_worker``)."""

    def __init__(self, tree: GitTree, tokenizer: str, workers: int | None = None) -> None:
        self._tree = tree
        self._args = (str(tree.root), tree.node, tree.tree, tokenizer)
        self._workers = workers or min(2, os.cpu_count() or 1)
        self._executor: ProcessPoolExecutor | None = None
        self._retired: list[Any] = []  # processes of retired executors: finishing their queue, then ending
        self._submitted = 0  # to the current executor
        self._lock = threading.Lock()  # answer() runs in several threads at once

    def _submit(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` queued to the current executor; one that has taken
        MAX_TASKS per worker is retired (its queue still runs) for a new one."""
        with self._lock:
            if self._executor is not None and self._submitted >= MAX_TASKS * self._workers:
                self._retired = [p for p in self._retired if p.is_alive()] + _processes(self._executor)
                self._executor.shutdown(wait=False)  # what is queued still runs; then its workers end
                self._executor = None
            if self._executor is None:
                # spawn: a worker inherits no FUSE descriptor, thread or libgit2 handle of the daemon
                self._executor = ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"),
                                                     initializer=_start, initargs=self._args)
                self._submitted = 0
            self._submitted += 1
            return self._executor.submit(fn, *args)

    def answer(self, fn: Any, *args: Any) -> Response:
        """Run ``fn(*args)`` in a worker and rebuild the response it returns.
        Blocks: call it from a thread, never from the request loop."""
        try:
            raw = self._submit(fn, *args).result()
        except BrokenProcessPool:
            log.error("a view worker process died; the pool is made anew for the next view")
            with self._lock:
                self._executor = None
            raise pyfuse3.FUSEError(errno.EIO) from None
        response = _response_from_json(raw, self._tree)
        if response is None:
            raise RuntimeError("a view worker returned an answer that does not parse")
        return response

    def close(self) -> None:
        """End the workers now, a slow view in progress included."""
        with self._lock:
            executor, self._executor = self._executor, None
            processes, self._retired = self._retired, []
        if executor is not None:
            processes += _processes(executor)  # shutdown() alone waits for a running view
            executor.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.terminate()
        for proc in processes:
            proc.join(timeout=5)


def _processes(executor: ProcessPoolExecutor) -> list[Any]:
    """The executor's worker processes (its shutdown forgets them)."""
    return list((getattr(executor, "_processes", None) or {}).values())


# -- what runs in a worker (its Nas is index._nas) ------------------------------------
def _start(root: str, node: str | None, tree: str | None, tokenizer: str) -> None:
    os.nice(NICE)
    index._init_worker(root, node, tree, tokenizer)


def read_view(path: str, view: View, at: str | None) -> bytes:
    return _response_to_json(index._nas.read_view(path, view, at, False))


def side_view(node: Node) -> bytes:
    """``.nas/search/<query>[@N][.json]`` and ``.nas/diff/<A>..<B>[@N][.json]``."""
    from ..diffs import diff_response
    from ..grammar import split_suffixes
    from ..search import search

    text, budget, _ = split_suffixes(node.path)
    caller = Caller.from_key(node.caller) if node.caller else None  # None: the daemon's own account
    if node.kind == "search":
        return _response_to_json(search(index._nas, text, at=node.commit or None, budget=budget, caller=caller))
    return _response_to_json(diff_response(index._nas, text, None, budget, caller))
