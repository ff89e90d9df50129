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
it was serving (EIO) and is made anew for the next one.

Each worker is an executor of its own, and a call is handed only to an idle
one (the backlog waits here, in ``_idle``): a worker past MAX_TASKS is
retired when idle, so it ends at once and the pool never runs more than its
size; a worker that dies breaks its own executor only, which alone is made
anew. Before, the pool was one executor retired whole, with its queue still
to run: under a backlog every retired one went on running it (a pool of 2
was seen with 6 processes), and a worker that died dropped whichever
executor was current by then.

Replacing is done here, not with the executor's ``max_tasks_per_child``: on
Python 3.11 to 3.13 that deadlocks once a backlog is queued and a worker
exits at its limit (CPython gh-115634): no worker is spawned in its place,
and every search or heavy view queued hangs for good (seen as a 60 s hang of
44 searches in scripts/bench/load.py).
"""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import queue
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

import pyfuse3

from .. import index
from ..access import Caller, Identity
from ..response_json import response_from_json, response_to_json

if TYPE_CHECKING:
    from ..declare import Response
    from ..grammar import View
    from ..repo import GitTree
    from ..summaries import SummarySettings
    from .nodes import Node

log = logging.getLogger("nasfs.fuse")
HEAVY_BYTES = 256 << 10  # about 30 ms of cold outlining here: below it, a view stays in the core thread
MAX_TASKS = 200
NICE = 5


class _Worker:
    """One worker process, as an executor of one (made on first use)."""

    def __init__(self) -> None:
        self.executor: ProcessPoolExecutor | None = None
        self.answered = 0  # calls taken by this executor

    def retire(self) -> None:
        """End the worker, idle (its caller holds it) or dead. Ended by a
        signal, not told to stop: an interpreter's own exit takes seconds of
        CPU at NICE on a busy machine, and an idle worker has nothing to lose."""
        if self.executor is not None:
            processes = _processes(self.executor)
            self.executor.shutdown(wait=False)
            for proc in processes:
                proc.terminate()
            self.executor = None


class Pool:
    """Worker processes over one tree (``nasfs index``'s ``_init_worker``)."""

    def __init__(self, tree: GitTree, tokenizer: str, workers: int | None = None,
                 summarizer: SummarySettings | None = None) -> None:
        self._tree = tree
        self._args = (str(tree.root), tree.node, tree.tree, tokenizer, summarizer)
        self._all = [_Worker() for _ in range(workers or min(2, os.cpu_count() or 1))]
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()  # answer() runs in several threads at once
        for worker in self._all:
            self._idle.put(worker)
        self._closed = False

    def answer(self, fn: Any, *args: Any) -> Response:
        """Run ``fn(*args)`` in a worker and rebuild the response it returns.
        Blocks (for an idle worker, then for the answer): call it from a
        thread, never from the request loop."""
        worker = self._idle.get()
        try:
            if self._closed:
                raise pyfuse3.FUSEError(errno.ESHUTDOWN)
            if worker.answered >= MAX_TASKS:
                worker.retire()
            if worker.executor is None:
                # spawn: a worker inherits no FUSE descriptor, thread or libgit2 handle of the daemon
                worker.executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                      initializer=_start, initargs=self._args)
                worker.answered = 0
            worker.answered += 1
            raw = worker.executor.submit(fn, *args).result()
        except BrokenProcessPool:
            log.error("a view worker process died; it is made anew for the next view")
            worker.retire()
            raise pyfuse3.FUSEError(errno.EIO) from None
        finally:
            self._idle.put(worker)
        response = response_from_json(raw, self._tree)
        if response is None:
            raise RuntimeError("a view worker returned an answer that does not parse")
        return response

    def close(self) -> None:
        """End the workers now, a slow view in progress included."""
        self._closed = True
        processes = []
        for worker in self._all:
            if worker.executor is not None:
                processes += _processes(worker.executor)  # shutdown() alone waits for a running view
                worker.executor.shutdown(wait=False, cancel_futures=True)
                worker.executor = None
        for proc in processes:
            if proc.is_alive():
                proc.terminate()
        for proc in processes:
            proc.join(timeout=5)


def _processes(executor: ProcessPoolExecutor) -> list[Any]:
    """The executor's worker processes (its shutdown forgets them)."""
    return list((getattr(executor, "_processes", None) or {}).values())


# -- what runs in a worker (its Nas is index._nas) ------------------------------------
def _start(root: str, node: str | None, tree: str | None, tokenizer: str, summarizer: SummarySettings | None) -> None:
    os.nice(NICE)
    index._init_worker(root, node, tree, tokenizer, summarizer=summarizer)


def read_view(path: str, view: View, at: str | None, source: Identity | None = None) -> bytes:
    """A view made of the inode ``source`` (the mount's caller's decision; None: any)."""
    return response_to_json(index._nas.read_view(path, view, at, False, source=source))


def side_view(node: Node) -> bytes:
    """``.nas/search/<query>[@N][.json]`` and ``.nas/diff/<A>..<B>[@N][.json]``."""
    from ..diffs import diff_response
    from ..grammar import split_suffixes
    from ..search import search

    text, budget, _ = split_suffixes(node.path)
    caller = Caller.from_key(node.caller) if node.caller else None  # None: the daemon's own account
    if node.kind == "search":
        return response_to_json(search(index._nas, text, at=node.commit or None, budget=budget, caller=caller))
    return response_to_json(diff_response(index._nas, text, None, budget, caller))
