"""What the review of the summaries-fixes branch found: a backoff count that
grew without bound (and overflowed), the judge's endpoint in logs and
reprs, a judge verdict reused for another cited text, a folder made from
skeletons while the judge was down, and a cache key blind to the rules'
version."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import pytest

from nasfs.cache import DiskCache
from nasfs.repo import GitTree
from nasfs.service import Nas
from nasfs.summaries import build_settings, checker
from nasfs.summaries import folders as fold
from nasfs.summaries import walk as walk_module
from nasfs.summaries.judge import Judge, ask
from nasfs.summaries.judging import JudgeDown, judge_record
from nasfs.summaries.store import Store

from .summary_servers import CITING_SCRIPT, free_port

ACME = "notes/customer-acme.md"

# ``judge.py LOG``: logs each document it is shown, says Yes.
LOGGING_JUDGE = """\
import sys
prompt = sys.stdin.read()
with open(sys.argv[1], 'a') as log:
    log.write(prompt.rsplit('Document: ', 1)[1].split('\\nClaim: ')[0] + '\\n')
print('Yes')
"""


def nas_for(home: Path, summarizer: str, **flags: object) -> Nas:
    return Nas(GitTree(home, node="box", tree="home"), summarizer=build_settings(summarizer, **flags))


def test_a_long_run_of_failures_neither_overflows_the_backoff_nor_grows_its_count(home: Path) -> None:
    # every read of a summary whose making fails adds a try: a client polling for an hour adds a thousand
    nas = nas_for(home, "cat", mode="background")
    store = nas.summaries.store
    blob = nas.content(ACME).blob_id
    store.disk.put(store._key("file-failed", blob),
                   json.dumps({"message": "down", "when": 0.0, "tries": 5000, "final": False}).encode())
    assert walk_module.due(store.failure("file", blob), time.time())  # no OverflowError out of the walk
    store.failed("file", blob, "down")
    store.failed("file", blob, "down")
    assert store.failure("file", blob).tries <= 1000  # store.MAX_TRIES


def test_the_judge_endpoint_stays_out_of_logs_and_reprs(caplog: pytest.LogCaptureFixture) -> None:
    target = f"http://judge:tok3n-secret@127.0.0.1:{free_port()}/v1?key=tok3n-secret"
    settings = build_settings("cat", judge=target, judge_model="minicheck")
    assert "tok3n" not in repr(settings) and "tok3n" not in repr(settings.judge)
    with caplog.at_level(logging.WARNING, logger="nasfs.summaries"):
        assert ask(settings.judge, "Acme renews.", "Acme renews yearly.", timeout=2) is None
        slow = Judge(f"{sys.executable} -c 'import time; time.sleep(5)' tok3n-secret", None)
        assert ask(slow, "Acme renews.", "Acme renews yearly.", timeout=0.5) is None
    assert caplog.records and "tok3n" not in caplog.text, caplog.text
    assert "minicheck" in caplog.text


def test_a_verdict_is_kept_for_the_text_the_judge_read(tmp_path: Path) -> None:
    script = tmp_path / "judge.py"
    script.write_text(LOGGING_JUDGE)
    log = tmp_path / "shown"
    judge = Judge(f"{sys.executable} {script} {log}", None)
    store = Store(DiskCache(tmp_path / "cache"), str(tmp_path), "id")
    record = {"kept": [{"text": "Acme Corp is one.", "cited": [[1, 1]]}], "refused": [], "written": 1}
    judge_record(record, judge, store, "sig", lambda k: "[1] notes/customer-acme.md: Acme Corp", 10)
    judge_record(record, judge, store, "sig", lambda k: "[1] notes/customer-acme.md: File, 3 lines", 10)
    judge_record(record, judge, store, "sig", lambda k: "[1] notes/customer-acme.md: File, 3 lines", 10)
    assert log.read_text().splitlines() == ["[1] notes/customer-acme.md: Acme Corp",
                                            "[1] notes/customer-acme.md: File, 3 lines"]


def test_a_folder_waits_for_a_judge_that_is_down_instead_of_keeping_skeletons(home: Path, tmp_path: Path) -> None:
    cite = tmp_path / "cite.py"
    cite.write_text(CITING_SCRIPT)
    nas = nas_for(home, f"{sys.executable} {cite}", judge=f"{sys.executable} -c 'import sys; sys.exit(1)'")
    generator = nas.summaries.generator
    with pytest.raises(JudgeDown):
        generator.make_folder(nas, "notes", None)
    listing = fold.listing_of(nas, "notes", None)
    assert nas.summaries.store.get("folder-rules", fold.signature(nas, listing, "notes", None)) is None


def test_the_cache_key_changes_with_the_rules_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = build_settings("cat").identity
    monkeypatch.setattr(checker, "VERSION", getattr(checker, "VERSION", 1) + 1, raising=False)
    assert build_settings("cat").identity != before


def test_the_summaries_modules_import_one_another_without_a_cycle() -> None:
    """serving.py split by job (issue 25 point 4): lookup, generate, spawn, walk, worker import down, never back."""
    import ast

    import nasfs.summaries as package

    folder = Path(package.__file__).parent
    imports: dict[str, set[str]] = {}
    for module in folder.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        imports[module.stem] = found - {"__init__"}
    assert {"generate", "spawn", "walk", "worker"} <= imports["serving"]
    assert "serving" not in set().union(*(v for k, v in imports.items() if k != "__init__"))
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join(path + (name,))}"
        if name in done or name not in imports:
            return
        for dep in imports[name]:
            visit(dep, path + (name,))
        done.add(name)

    for name in imports:
        visit(name, ())


def test_a_folder_signature_read_again_hashes_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of ``folder@summary`` computes the signature in the core: once the
    listing has settled, it is remembered, not made again by hashing children."""
    nas = nas_for(home, "cat")
    time.sleep(2.1)  # settled
    listing = fold.listing_of(nas, "", None)
    disk = nas.summaries.store.disk
    first = fold.signature(nas, listing, "", None, disk)

    def no_hashing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a child was hashed again")

    monkeypatch.setattr(nas, "content", no_hashing)
    assert fold.signature(nas, fold.listing_of(nas, "", None), "", None, disk) == first
