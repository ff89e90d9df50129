"""The view workers are replaced after MAX_TASKS answers each without the
executor's ``max_tasks_per_child``, which on Python 3.11-3.13 deadlocks once
a backlog is queued and a worker exits at its limit (CPython gh-115634): a
backlog of heavy views and searches past the limit must all be answered."""

from __future__ import annotations

import errno
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyfuse3
import pytest

from nasfs.fuse import pool
from nasfs.grammar import View
from nasfs.repo import GitTree


def test_a_backlog_past_the_workers_limit_is_answered(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "MAX_TASKS", 2)
    workers = pool.Pool(GitTree(home, node="box", tree="home"), "cl100k_base", workers=1)
    view = View(kind="outline")
    try:
        with ThreadPoolExecutor(8) as threads:  # queued at once: a backlog behind one worker
            answers = list(threads.map(lambda _: workers.answer(pool.read_view, "notes/customer-acme.md", view, None),
                                       range(40), timeout=120))
        assert len(answers) == 40 and len({a.text for a in answers}) == 1 and answers[0].view == "outline"
    finally:
        workers.close()
    assert all(w.executor is None for w in workers._all) and not _live_workers()


def _live_workers() -> set[int]:
    """View worker processes this one started that still run (not zombies;
    not multiprocessing's resource tracker), found in /proc."""
    pids: set[int] = set()
    for children in Path("/proc/self/task").glob("*/children"):
        pids.update(int(p) for p in children.read_text().split())
    live = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            worker = b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if state != "Z" and worker:
            live.add(pid)
    return live


def test_retired_workers_leave_no_process_beyond_the_pool(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backlog waits in the pool, not in retired executors: past the
    moment a retired worker takes to end, no more processes run than the
    pool's size (before: every retired executor ran its own queue on)."""
    monkeypatch.setattr(pool, "MAX_TASKS", 2)
    workers = pool.Pool(GitTree(home, node="box", tree="home"), "cl100k_base", workers=2)
    view = View(kind="outline")
    over_since: float | None = None
    longest = most = 0.0
    try:
        with ThreadPoolExecutor(8) as threads:
            pending = [threads.submit(workers.answer, pool.read_view, "notes/customer-acme.md", view, None)
                       for _ in range(16)]
            while not all(f.done() for f in pending):
                live, now = len(_live_workers()), time.monotonic()
                most = max(most, live)
                over_since = (over_since or now) if live > 2 else None
                longest = max(longest, now - over_since if over_since else 0.0)
                time.sleep(0.02)
            assert len({f.result(timeout=120).text for f in pending}) == 1
    finally:
        workers.close()
    assert longest < 1.0, f"{most:g} view worker processes alive for a pool of 2, more than 2 for {longest:.1f} s"


def die_soon(seconds: float) -> bytes:
    """Run in a view worker: end its process abruptly (as a crash would)."""
    time.sleep(seconds)
    os._exit(1)


def test_a_worker_that_dies_takes_no_other_worker_with_it(home: Path) -> None:
    """The call in a worker that dies fails EIO; the other worker goes on
    (its process is not ended or replaced) and the next call is answered."""
    workers = pool.Pool(GitTree(home, node="box", tree="home"), "cl100k_base", workers=2)
    view = View(kind="outline")
    try:
        with ThreadPoolExecutor(1) as threads:
            dying = threads.submit(workers.answer, die_soon, 4.0)
            deadline = time.monotonic() + 60
            while not _live_workers() and time.monotonic() < deadline:
                time.sleep(0.05)
            doomed = _live_workers()
            workers.answer(pool.read_view, "notes/customer-acme.md", view, None)  # in the other worker
            other = _live_workers() - doomed
            assert len(doomed) == 1 and len(other) == 1, (doomed, other)
            with pytest.raises(pyfuse3.FUSEError) as failed:
                dying.result(timeout=60)
            assert failed.value.errno == errno.EIO
        assert other <= _live_workers(), "the worker that did not die was ended with the one that did"
        for _ in range(4):
            assert workers.answer(pool.read_view, "notes/customer-acme.md", view, None).view == "outline"
        assert len(_live_workers()) <= 2
    finally:
        workers.close()
