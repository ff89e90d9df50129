"""The view workers are replaced after MAX_TASKS answers each without the
executor's ``max_tasks_per_child``, which on Python 3.11-3.13 deadlocks once
a backlog is queued and a worker exits at its limit (CPython gh-115634): a
backlog of heavy views and searches past the limit must all be answered."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
    assert workers._retired == [] and workers._executor is None
