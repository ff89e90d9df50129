"""Summaries without a model: the checker's rules, a lying endpoint, a hanging
one, one that is down, the key, stale summaries, the ladder rung, the CLI's
background fill (tests/test_summaries_model.py has the real model)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasfs.cache import DiskCache
from nasfs.errors import NotServable
from nasfs.repo import GitTree
from nasfs.service import Nas
from nasfs.summaries import SummaryPending, build_settings
from nasfs.summaries.checker import Sentence, check_lines, split_answer

from .conftest import git, header
from .mounts import Mount
from .summary_servers import CITING_SCRIPT, FakeChat, free_port, wait_idle

ACME = "notes/customer-acme.md"
LIES = ("Acme is our largest customer in the logistics segment [L3-L4]. The contract renews on 2027-03-01 [L13]. "
        "Acme pays 5,000,000 dollars a year [L13]. It has offices on Mars [L900-L901]. The `renewEarly()` clause "
        "applies [L13]. Pricing is reviewed by the board of directors each winter [L15]. Chatter with no citation.")


def nas_for(home: Path, summarizer: str, model: str = "", **flags: object) -> Nas:
    return Nas(GitTree(home, node="box", tree="home"), summarizer=build_settings(summarizer, model, **flags))


def command(tmp_path: Path) -> str:
    script = tmp_path / "cite.py"
    script.write_text(CITING_SCRIPT)
    return f"{sys.executable} {script}"


def lines_of(text: str):
    rows = text.splitlines()
    return len(rows), lambda a, b: "\n".join(rows[a - 1:b])


@pytest.mark.parametrize("answer, reason", [
    ("The contract renews on 2027-03-01 [L13].", None),
    ("The contract renews on 2027-03-01.\n[L13]", None),  # a citation alone after the sentence is its
    ("The contract renews on 2028-03-01 [L13].", "the number 2028"),
    ("The contract renews on 2027-03-01 [L13-L99].", "not a range of this file's"),
    ("The contract renews on 2027-03-01 [L0].", "not a range"),
    ("The contract renews on 2027-03-01.", "cites no lines"),
    ("The renew_terms function renews the contract [L13].", "the identifier 'renew_terms'"),
    ("The contract renewsOn date is 2027-03-01 [L13].", "the identifier 'renewsOn'"),
    ("The `cancel` clause renews the contract [L13].", "the quoted name 'cancel'"),
    ('The "Gold plan" renews the contract [L13].', "the quoted name 'Gold plan'"),
    ("Penguins enjoy swimming near icebergs while contract [L13].", "content words occur"),
    ("It is what it is [L13].", "nothing that can be checked"),
])
def test_each_rule_of_the_checker(home: Path, answer: str, reason: str | None) -> None:
    count, lines = lines_of((home / ACME).read_text())
    [sentence] = split_answer(answer)
    verdict = check_lines(sentence, count, lines)
    assert (verdict.reason is None) if reason is None else (reason in (verdict.reason or "")), verdict.reason


def test_a_wide_citation_is_too_broad_to_check() -> None:
    verdict = check_lines(Sentence("Acme renews", ((1, 200),)), 300, lambda a, b: "Acme renews")
    assert "too broad" in (verdict.reason or "")


def test_a_lying_endpoint_has_its_lies_dropped_and_the_rest_verifies(home: Path) -> None:
    with FakeChat(lambda user: LIES) as fake:
        nas = nas_for(home, fake.url, "liar")
        with pytest.raises(SummaryPending, match="not generated yet; queued"):
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        r = nas.read(f"{ACME}@summary")
    keys = header(r.text)
    assert keys["generated"] == "true" and keys["model"] == "liar" and keys["support"] == "2/7" and keys["stale"] == "false"
    body = r.served.body.decode()
    assert "largest customer" in body and "2027-03-01" in body
    for lie in ("5,000,000", "Mars", "renewEarly", "board", "Chatter"):
        assert lie not in body
    assert len(r.served.evidence) == 1 + 2  # the file's, then one per kept sentence
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), e.sha256).startswith("verified")
    assert [str(e.pointer) for e in r.served.evidence[1:]] == [w for w in body.split() if w.startswith("nas://")]
    assert fake.requests[0]["body"]["messages"][1]["content"].count("\n[L") >= 10  # the file, in labelled parts


def test_keep_unsupported_marks_instead_of_dropping(home: Path) -> None:
    with FakeChat(lambda user: LIES) as fake:
        nas = nas_for(home, fake.url, "liar", keep_unsupported=True)
        with pytest.raises(SummaryPending):
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        body = nas.read(f"{ACME}@summary").served.body.decode()
    assert "(unsupported: it cites L900-L901, which is not a range of this file's 38 lines) It has offices on Mars." in body
    assert "(unsupported: the number 5,000,000 is not in the cited text)" in body


def test_a_hanging_endpoint_makes_no_read_wait(home: Path) -> None:
    with FakeChat(lambda user: LIES, delay=60) as fake:
        nas = nas_for(home, fake.url, "slow")
        for _ in range(3):
            t0 = time.monotonic()
            with pytest.raises(SummaryPending, match="queued"):
                nas.read(f"{ACME}@summary")
            assert time.monotonic() - t0 < 1.0
            assert nas.read(f"{ACME}@outline").view == "outline"
        deadline = time.monotonic() + 10
        while not fake.requests:  # the worker is inside the request the endpoint holds
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert nas.summaries.worker.counts.running == 1 and "summaries_running=1" in nas.stats.render()


def test_an_endpoint_that_is_down_is_named_in_the_refusal(home: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    nas = nas_for(home, url, "gone")
    with pytest.raises(SummaryPending):
        nas.read(f"{ACME}@summary")
    wait_idle(nas, timeout=30)  # three tries, 1 s and 2 s apart
    with pytest.raises(SummaryPending, match=f"the last try failed: the summarizer endpoint {url} is down"):
        nas.read(f"{ACME}@summary")
    assert "summaries_failed=1" in nas.stats.render()


def test_the_api_key_is_sent_and_never_shown(home: Path, tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("sekrit-123\n")
    with FakeChat(lambda user: "Chatter with no citation.") as fake:
        nas = nas_for(home, fake.url, "keyed", key_file=str(key))
        with pytest.raises(SummaryPending) as refused:
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        r = nas.read(f"{ACME}@summary")
    assert fake.requests[0]["auth"] == "Bearer sekrit-123"
    assert "sekrit" not in str(refused.value) + r.text.decode() + nas.stats.render()
    assert header(r.text)["support"] == "0/1" and b"read @outline instead" in r.served.body


def test_an_endpoint_needs_a_model_and_a_mode_must_be_known(home: Path) -> None:
    with pytest.raises(Exception, match="needs a model name"):
        build_settings("http://127.0.0.1:9/v1")
    with pytest.raises(Exception, match="off, on-demand, background"):
        build_settings("cat", mode="sometimes")
    nas = nas_for(home, "cat", mode="off")
    with pytest.raises(NotServable, match="summaries are off"):
        nas.read(f"{ACME}@summary")


def test_a_changed_file_serves_the_last_summary_as_stale(home: Path, tmp_path: Path) -> None:
    nas = nas_for(home, command(tmp_path))
    with pytest.raises(SummaryPending):
        nas.read(f"{ACME}@summary")
    wait_idle(nas)
    fresh = nas.read(f"{ACME}@summary")
    described = fresh.served.evidence[0].pointer.commit
    assert header(fresh.text)["support"] == "1/1" and b"Acme Corp [L1]" in fresh.served.body
    (home / ACME).write_text((home / ACME).read_text() + "FAIL\n")  # the command now fails for it
    stale = nas.read(f"{ACME}@summary")
    keys = header(stale.text)
    assert keys["stale"] == "true" and keys["describes"] == described[:12]
    assert all(e.pointer.commit == described and nas.verify(str(e.pointer), e.sha256) for e in stale.served.evidence)
    wait_idle(nas)
    assert "summaries_failed=1" in nas.stats.render() and "summaries_stale=1" in nas.stats.render()
    assert header(nas.read(f"{ACME}@summary").text)["stale"] == "true"


def test_a_folder_summary_cites_its_children_and_goes_stale(home: Path, tmp_path: Path) -> None:
    def answer(user: str) -> str:
        if not user.startswith("Folder "):  # a child file: its first line, cited
            label, text = re.search(r"^(\[L\d+-L\d+\])\n(.*[A-Za-z]{3}.*)$", user, re.M).groups()
            return f"{label} {text.strip('# ')}"
        first = user.split("[1] ", 1)[1].split(": ", 1)[1].split("\n")[0]
        return f"{first} [1]. Something about penguins [9]."

    with FakeChat(answer) as fake:
        nas = nas_for(home, fake.url, "fake")
        with pytest.raises(SummaryPending):
            nas.read("notes@summary")
        wait_idle(nas)
        r = nas.read("notes@summary")
        keys = header(r.text)
        assert keys["path"] == "notes" and keys["support"] == "1/2" and keys["stale"] == "false"
        assert "notes/customer-acme.md" in r.served.body.decode()
        for e in r.served.evidence:
            assert nas.verify(str(e.pointer), e.sha256)
        (home / "notes" / "new.md").write_text("# New\n\nA new note about shipping.\n")
        stale = nas.read("notes@summary")
        assert header(stale.text)["stale"] == "true"
        wait_idle(nas)
        assert header(nas.read("notes@summary").text)["stale"] == "false"


def test_the_ladder_serves_a_fully_supported_summary_between_outline_and_skeleton(home: Path, tmp_path: Path) -> None:
    big = home / "notes" / "big.md"
    big.write_text("Shipping handbook for the depot teams.\n\n" + "".join(
        f"## Part {i}\n\nThe depot handles parcels of kind {i} with care.\n\n" for i in range(30)))
    plain = nas_for(home, command(tmp_path))
    nas = nas_for(home, command(tmp_path), in_ladder=True)
    with pytest.raises(SummaryPending):
        nas.read("notes/big.md@summary")
    wait_idle(nas)
    summary = nas.read("notes/big.md@summary")
    budget = summary.tokens + 10  # the header then also says budget=N
    assert nas.read(f"notes/big.md@outline").tokens > budget  # the outline does not fit
    r = nas.read(f"notes/big.md@{budget}")
    assert r.view == "summary" and header(r.text)["generated"] == "true"
    assert "entries=1-" in plain.read(f"notes/big.md@{budget}").header  # by default: a page of the outline
    big.write_text(big.read_text() + "FAIL\n")  # stale: never a rung
    assert "entries=1-" in nas.read(f"notes/big.md@{budget}").header


def test_the_cli_answers_at_once_and_a_background_fill_makes_it(home: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "nasfs", "read", "--repo", str(home), "--node", "box", "--tree", "home",
            "--summarizer", command(tmp_path), f"{ACME}@summary"]
    t0 = time.monotonic()
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 2 and "not generated yet; queued (background nasfs index --summaries pid" in first.stderr
    assert time.monotonic() - t0 < 10
    deadline = time.monotonic() + 60
    while True:
        later = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if later.returncode == 0:
            break
        assert "a background nasfs index --summaries is making it" in later.stderr
        assert time.monotonic() < deadline, later.stderr
        time.sleep(0.3)
    assert "Acme Corp [L1] nas://box/home/notes/customer-acme.md@" in later.stdout
    pointer = later.stdout.splitlines()[1].rsplit(" ", 1)[1]
    verify = subprocess.run([sys.executable, "-m", "nasfs", "verify", "--repo", str(home), "--node", "box", "--tree", "home",
                             pointer], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr


def test_the_cli_fill_makes_the_summary_of_a_tree_named_apart_from_its_folder(home: Path, tmp_path: Path) -> None:
    """The store key holds the tree's name: the detached fill a one-shot read starts must serve the same
    name (--tree), or it makes a record under the folder's name that the read never finds."""
    argv = [sys.executable, "-m", "nasfs", "read", "--repo", str(home), "--node", "box", "--tree", "acme-notes",
            "--summarizer", command(tmp_path), f"{ACME}@summary"]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 2 and "background nasfs index --summaries pid" in first.stderr
    deadline = time.monotonic() + 45
    while (later := subprocess.run(argv, capture_output=True, text=True, timeout=60)).returncode != 0:
        assert time.monotonic() < deadline, later.stderr
        time.sleep(0.3)
    assert "nas://box/acme-notes/notes/customer-acme.md@" in later.stdout


def test_index_summaries_fills_the_cache_with_a_progress_bar(home: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "nasfs", "index", str(home), "--jobs", "1", "--summaries",
                           "--summarizer", command(tmp_path)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "summary/s" in done.stderr or "summar" in done.stderr  # tqdm's bar
    assert "summaries: 13 made or cached, 0 failed (8 files, 5 folders)" in done.stdout
    nas = nas_for(home, command(tmp_path))
    assert header(nas.read(f"{ACME}@summary").text)["support"] == "1/1"
    assert header(nas.read(".@summary").text)["generated"] == "true"


def test_a_hanging_endpoint_makes_no_read_through_the_mount_wait(home: Path, tmp_path: Path) -> None:
    with FakeChat(lambda user: LIES, delay=120) as fake:
        m = Mount(home, tmp_path / "mnt", "--summarizer", fake.url, "--summary-model", "slow")
        try:
            mnt = m.mountpoint
            for name in (f"{ACME}@summary", "notes@summary", f"{ACME}@summary"):
                t0 = time.monotonic()
                done = subprocess.run(["cat", str(mnt / name)], capture_output=True, timeout=30)
                assert done.returncode == 1 and b"Resource temporarily unavailable" in done.stderr
                assert time.monotonic() - t0 < 3
                assert subprocess.run(["cat", str(mnt / f"{ACME}@outline")], capture_output=True, timeout=30).returncode == 0
            errors = (mnt / ".nas" / "errors").read_text().splitlines()
            assert "notes/customer-acme.md@summary: the summary of notes/customer-acme.md by slow is not generated yet; queued" in errors[-1]
            deadline = time.monotonic() + 10
            while not fake.requests:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            status = subprocess.run([sys.executable, "-m", "nasfs", "status", str(mnt)], capture_output=True, text=True).stdout
            assert "summaries (on-demand, slow): queued=1 running=1 done=0 failed=0 stale=0" in status, status
        finally:
            assert m.stop() == 0, m.log.read_text()[-2000:]  # a worker held by the endpoint does not hold the unmount


def test_background_mode_walks_the_tree_without_a_read(home: Path, tmp_path: Path) -> None:
    (home / "data" / "logo.bin").write_bytes(bytes(range(256)) * 4)  # binary: never summarized, never queued again
    nas = nas_for(home, command(tmp_path), mode="background")
    nas.summaries.start_background()
    deadline = time.monotonic() + 120
    while "summaries_done=14" not in nas.stats.render():  # 9 files, then 5 folders, deepest first
        assert time.monotonic() < deadline, nas.stats.render()
        time.sleep(0.1)
    assert header(nas.read("code/billing.py@summary").text)["stale"] == "false"
    assert header(nas.read(".@summary").text)["generated"] == "true"
    nas.summaries.walk.walk_once()  # the next walk: nothing left to queue
    wait_idle(nas)
    assert "summaries_done=14" in nas.stats.render()


def test_a_read_at_a_revision_summarizes_that_revision(home: Path, tmp_path: Path) -> None:
    nas = nas_for(home, command(tmp_path))
    with pytest.raises(SummaryPending):
        nas.read(f"{ACME}@summary", at="v1")
    wait_idle(nas)
    old = nas.read(f"{ACME}@summary", at="v1")
    v1 = git(home, "rev-parse", "v1").strip()
    assert old.served.evidence[0].pointer.commit == v1 and header(old.text)["stale"] == "false"
    now = nas.read(f"{ACME}@summary")  # the working file is another blob: v1's is its last summary
    assert header(now.text)["stale"] == "true" and header(now.text)["describes"] == v1[:12]


def test_fstab_options_carry_the_summary_flags() -> None:
    from nasfs.fstab import parse

    call = parse(["/srv/tree", "/mnt/tree", "-o", "summarizer=http://127.0.0.1:8080/v1,summary_model=local,"
                  "summary_key_file=/etc/nasfs/key,summary_context=4096,summaries=background,summaries_in_ladder"])
    assert call.mount_argv == ["mount", "/srv/tree", "/mnt/tree", "--summarizer", "http://127.0.0.1:8080/v1",
                               "--summary-model", "local", "--summary-key-file", "/etc/nasfs/key", "--summary-context",
                               "4096", "--summaries", "background", "--summaries-in-ladder"]


@pytest.mark.parametrize("answer, cited", [
    ("Intro words here:\n\n[L1-L2]\nFirst fact.\n\n[L4]\nSecond fact.", [(), ((1, 2),), ((4, 4),)]),  # labels first
    ("First fact. [L1-L2]\nSecond fact [L4]", [((1, 2),), ((4, 4),)]),  # after the full stop, same line
    ("First fact.\n[L3]", [((3, 3),)]),  # alone at the very end: the sentence before
    ("1. [L2] First fact. Second fact.", [((2, 2),), ()]),
])
def test_where_a_citation_belongs(answer: str, cited: list) -> None:
    assert [s.cited for s in split_answer(answer)] == cited


def test_one_blob_at_two_paths_is_checked_at_each(home: Path, tmp_path: Path) -> None:
    """The checker reads the path's names ("pip" for pip/vendor.txt): a record made at one path is not
    served at another that holds the same blob."""
    script = tmp_path / "pip.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('pip vendors distlib 0.4.4 [L1].')\n")
    for folder in ("pip", "other"):
        (home / folder).mkdir()
        (home / folder / "vendor.txt").write_text("distlib==0.4.4\n")
    git(home, "add", "-A")
    git(home, "commit", "-qm", "one blob, two paths")
    nas = nas_for(home, f"{sys.executable} {script}")
    for path in ("pip/vendor.txt", "other/vendor.txt"):
        with pytest.raises(SummaryPending):
            nas.read(f"{path}@summary")
        wait_idle(nas)
    assert header(nas.read("pip/vendor.txt@summary").text)["support"] == "1/1"
    other = nas.read("other/vendor.txt@summary")
    assert header(other.text)["support"] == "0/1"


def test_the_trees_name_counts_as_a_name(home: Path, tmp_path: Path) -> None:
    """A sentence may name the tree it is served from (every pointer of the view shows it)."""
    script = tmp_path / "acme.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('Acmetool is our largest customer [L3-L4].')\n")
    for tree, support in (("acmetool", "1/1"), ("home", "0/1")):
        nas = Nas(GitTree(home, node="box", tree=tree), summarizer=build_settings(f"{sys.executable} {script}", ""),
                  disk=DiskCache(tmp_path / f"cache-{tree}"))
        with pytest.raises(SummaryPending):
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        assert header(nas.read(f"{ACME}@summary").text)["support"] == support


def test_two_trees_sharing_a_cache_keep_their_own_verdicts(home: Path, tmp_path: Path) -> None:
    """The rules read the tree's name, so one blob at one path in two trees is checked in each, even
    with the one cache every tree of a user shares (DiskCache())."""
    script = tmp_path / "acme.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('Acmetool is our largest customer [L3-L4].')\n")
    disk = DiskCache(tmp_path / "cache")
    for tree, support in (("acmetool", "1/1"), ("home", "0/1")):
        nas = Nas(GitTree(home, node="box", tree=tree), summarizer=build_settings(f"{sys.executable} {script}", ""),
                  disk=disk)
        with pytest.raises(SummaryPending):
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        assert header(nas.read(f"{ACME}@summary").text)["support"] == support


SWAPPED_SECRET = "# Vault\n\nKVXSECRETBODY the vault code is 3141.\n"


def test_a_file_swapped_after_the_walk_never_feeds_a_summary(home: Path, tmp_path: Path, monkeypatch) -> None:
    """The daemon reads a folder's children by path: a file the walk saw
    (mine/x) swapped for a symlink to another file before its bytes are read
    feeds no record (file, folder, or the last one served as stale): the
    folder is walked again, and the link is not read."""
    import json

    import pygit2

    from nasfs.summaries import folders as fold
    from nasfs.summaries.store import file_ident

    (home / "mine").mkdir()
    (home / "mine" / "x").write_text("# Mine\n\nOnly mine, nothing secret in these notes.\n")
    (home / "theirs").mkdir()
    (home / "theirs" / "key.md").write_text(SWAPPED_SECRET)
    secret_blob = str(pygit2.hash(SWAPPED_SECRET.encode()))
    x, kept = home / "mine" / "x", home / "mine" / ".kept"
    walk = fold.listing_of

    def walked_then_swapped(nas, path, at):
        listing = walk(nas, path, at)
        if not x.is_symlink():
            os.rename(x, kept)
            os.symlink("../theirs/key.md", x)
        return listing

    nas = nas_for(home, command(tmp_path))
    gen, store = nas.summaries.generator, nas.summaries.store
    monkeypatch.setattr(fold, "listing_of", walked_then_swapped)
    record = gen.make_folder(gen.core(), "mine", None)  # walked again: mine/x is a link now, and not read
    assert "KVXSECRET" not in json.dumps(record)
    gen.file_job("mine/x", "0" * 40, "0" * 40)  # a file's record is keyed by the real path read (theirs/key.md), not mine/x
    assert store.get("file", file_ident(secret_blob, "mine/x")) is None
    last = store.last("file", "mine/x")
    assert last is None or (last["blob"] != secret_blob and "KVXSECRET" not in json.dumps(last))
    x.unlink()
    os.rename(kept, x)
    monkeypatch.setattr(fold, "listing_of", walk)
    record = gen.make_folder(gen.core(), "mine", None)  # unswapped: made as ever
    assert "KVXSECRET" not in json.dumps(record)


@pytest.mark.parametrize("saves", [1, 3])
def test_a_child_saved_by_rename_during_the_walk_costs_a_walk_not_an_error(home: Path, tmp_path: Path, monkeypatch,
                                                                           saves: int) -> None:
    """An editor saves by rename (a new inode under the name): saved between
    the walk and its hashing, the child is FileChanged (child_content), and
    the folder is walked again rather than the read refused (ESTALE, 409).
    Saved at every one of its WALKS walks, the read still says so."""
    from nasfs.errors import NasError
    from nasfs.summaries import folders as fold

    assert fold.WALKS == 3
    (home / "mine").mkdir()
    x = home / "mine" / "x"
    x.write_text("# Mine\n\nOnly mine, version 0.\n")
    walk, walks = fold.listing_of, []

    def walked_then_saved(nas, path, at):
        listing = walk(nas, path, at)
        walks.append(path)
        if len(walks) <= saves:
            (home / "mine" / ".x.swp").write_text(f"# Mine\n\nOnly mine, version {len(walks)}.\n")
            os.rename(home / "mine" / ".x.swp", x)
        return listing

    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    monkeypatch.setattr(fold, "listing_of", walked_then_saved)
    if saves < fold.WALKS:
        with pytest.raises(NasError, match="not generated yet"):  # the read: walked again, queued, not refused
            nas.summaries.folder_view(gen.core(), "mine", None)
        assert walks[:saves + 1] == ["mine"] * (saves + 1)
        assert gen.make_folder(gen.core(), "mine", None)["kept"]  # made from the saved file
        assert nas.summaries.folder_view(gen.core(), "mine", None)  # and served
    else:
        with pytest.raises(NasError, match="changed since its folder was walked"):
            gen.make_folder(gen.core(), "mine", None)
        assert walks == ["mine"] * fold.WALKS


def test_a_folder_summary_walked_again_is_decided_again(home: Path, tmp_path: Path, monkeypatch) -> None:
    """A reader's folder summary is told only if they may read every file it
    is made from. Walked again because a child was saved by rename after the
    walk, it is made from the new file: that one is decided too, not the one
    the reader's decision saw (here: saved as another account's 0600 file,
    whose summary the daemon had made for its owner)."""
    from nasfs.access import AccessDenied, Caller
    from nasfs.summaries import folders as fold

    secret = "# Kvxvault\n\nKVXSECRETBODY the vault code is 3141.\n"
    (home / "mine").mkdir()
    x = home / "mine" / "x"
    x.write_text(secret)
    os.chmod(x, 0o600)
    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    assert "Kvxvault" in str(gen.make_folder(gen.core(), "mine", None))  # made for its owner (root)
    saved = home / "mine" / ".x.swp"
    saved.write_text("# Mine\n\nOnly mine, nothing secret in these notes.\n")
    os.chmod(saved, 0o644)
    os.rename(saved, x)  # the reader may read the folder's one file now
    hashed, walks = fold.signature, []

    def saved_then_hashed(nas, listing, *args):
        walks.append(listing.folder)
        if len(walks) == 1:  # the secret saved back, by rename, after the walk and its decision, before its hashing
            saved.write_text(secret)
            os.chmod(saved, 0o600)
            os.rename(saved, x)
        return hashed(nas, listing, *args)

    monkeypatch.setattr(fold, "signature", saved_then_hashed)
    with pytest.raises(AccessDenied, match="may not read"):  # (it was told: "Kvxvault [mine/x] ...")
        nas.read("mine@summary", caller=Caller(54321, 54321))
    assert walks == ["mine"]  # hashed once: the second walk's decision refused it


STALE_SECRET = "# Kvxvault\n\nKVXSECRETBODY the vault code is 3141.\n"


def _made_for_the_owner_then_refused(home: Path, tmp_path: Path):
    """mine/ holds a public file (committed) and root's untracked 0600 a.md; its folder summary is made
    for root (its owner). Another reader is refused mine@summary. The summary stays the path's last
    record, kept by path alone."""
    from nasfs.access import AccessDenied, Caller

    (home / "mine").mkdir()
    (home / "mine" / "pub.md").write_text("# Public\n\nPublic notes about shipping.\n")
    git(home, "add", "mine/pub.md")
    git(home, "commit", "-q", "-m", "pub")
    secret = home / "mine" / "a.md"
    secret.write_text(STALE_SECRET)
    os.chmod(secret, 0o600)
    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    assert "Kvxvault" in str(gen.make_folder(gen.core(), "mine", None))
    reader = Caller(54321, 54321)
    with pytest.raises(AccessDenied):
        nas.read("mine@summary", caller=reader)
    return nas, secret, reader


def _told(nas: Nas, path: str, reader, at: str | None = None) -> str:
    """What ``reader`` is told of ``path`` (a summary, or that it is not made yet)."""
    try:
        return nas.read(path, at=at, caller=reader).text.decode()
    except SummaryPending as exc:
        return str(exc)


@pytest.mark.parametrize("then", ["ignored", "deleted", "read at HEAD"])
def test_a_stale_folder_summary_is_told_only_from_files_the_reader_may_read(home: Path, tmp_path: Path,
                                                                            then: str) -> None:
    """The path's last folder record is served, stale, when no record fits the reader's walk. It was
    served whatever it was made from: root's 0600 file's summary was told to another reader once the
    file was git-ignored or deleted, or at HEAD with nothing changed. Now it is served only when every
    child it names is in the reader's decided walk and every commit it points to is one they may read."""
    nas, secret, reader = _made_for_the_owner_then_refused(home, tmp_path)
    if then == "ignored":
        (home / "mine" / ".gitignore").write_text("a.md\n")
    elif then == "deleted":
        secret.unlink()
    told = _told(nas, "mine@summary", reader, at="HEAD" if then == "read at HEAD" else None)
    assert "Kvxvault" not in told and "KVXSECRET" not in told, told
    assert b"Kvxvault" in nas.read("mine@summary", at="HEAD").text  # root: its own file, stale at HEAD


def test_a_stale_file_summary_is_told_only_from_a_version_the_reader_may_read(home: Path, tmp_path: Path) -> None:
    """A file's last record, made from the owner's uncommitted 0600 edit (a private snapshot), was served
    stale to another reader who read the committed file at HEAD."""
    from nasfs.access import AccessDenied, Caller

    (home / "mine").mkdir()
    plan = home / "mine" / "plan.md"
    plan.write_text("# Plan\n\nPublic plan about shipping.\n")
    git(home, "add", "mine/plan.md")
    git(home, "commit", "-q", "-m", "plan")
    plan.write_text(STALE_SECRET)
    os.chmod(plan, 0o600)
    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    assert "Kvxvault" in str(gen.make_file(gen.core().analysis(gen.core().content("mine/plan.md", None))))
    reader = Caller(54321, 54321)
    with pytest.raises(AccessDenied):
        nas.read("mine/plan.md@summary", caller=reader)
    told = _told(nas, "mine/plan.md@summary", reader, at="HEAD")
    assert "Kvxvault" not in told and "KVXSECRET" not in told, told
    assert b"Kvxvault" in nas.read("mine/plan.md@summary", at="HEAD").text  # root may read that version


@pytest.fixture
def private_edit() -> Iterator[tuple[Path, Path]]:
    """(root, plan): mine/plan.md committed with public text, then rewritten with STALE_SECRET, uncommitted
    and 0600; the tree under a 0755 folder in /tmp (pytest's own are 0700: no other account gets in)."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-stale-", dir="/tmp"))
    os.chmod(base, 0o755)
    root = base / "t"
    try:
        (root / "mine").mkdir(parents=True)
        plan = root / "mine" / "plan.md"
        plan.write_text("# Plan\n\nPublic plan about shipping.\n")
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "plan")
        plan.write_text(STALE_SECRET)
        os.chmod(plan, 0o600)
        yield root, plan
    finally:
        shutil.rmtree(base)


def test_the_mount_tells_a_stale_summary_at_a_revision_only_to_a_reader_who_may_read_it(
        tmp_path: Path, private_edit: tuple[Path, Path]) -> None:
    """Through the mount, a file's view and any view at a revision (``.at/HEAD/...``) were read as
    the daemon's own account, whatever the caller: the stale summary of root's uncommitted 0600 edit
    of a committed file, and its folder's, were told to any reader of ``.git`` at HEAD."""
    root, _ = private_edit
    m = Mount(root, root.parent / "mnt", "--allow-other", "--no-warm", "--summarizer", command(tmp_path))
    try:
        mnt = m.mountpoint
        for name in ("mine/plan.md@summary", "mine@summary"):  # made for root, its owner
            deadline = time.monotonic() + 60
            while b"Kvxvault" not in subprocess.run(["cat", str(mnt / name)], capture_output=True, timeout=30).stdout:
                assert time.monotonic() < deadline, m.log.read_text()[-2000:]
                time.sleep(0.2)
        for name in ("mine/plan.md@summary", "mine@summary"):
            at_head = mnt / ".at" / "HEAD" / name
            assert b"Kvxvault" in at_head.read_bytes()  # root: its own edit, stale at HEAD
            done = subprocess.run(["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", "cat", str(at_head)],
                                  capture_output=True, timeout=30, env=dict(os.environ, HOME="/tmp"))
            assert b"Kvxvault" not in done.stdout and b"KVXSECRET" not in done.stdout, done.stdout
            # not the stale record: pending, or HEAD's own summary once root's read above has had it made
            assert ((done.returncode == 1 and b"Resource temporarily unavailable" in done.stderr)
                    or (done.returncode == 0 and b" stale=false " in done.stdout)), (done.stdout, done.stderr)
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_a_stale_folder_summary_citing_a_subfolder_is_told_to_a_reader_of_it(home: Path, tmp_path: Path) -> None:
    """A folder record names a subfolder child ``top/sub/``; the listing's folders have no slash, so a
    stale record citing one was never told to a reader who does not see all, however public."""
    from nasfs.access import Caller

    (home / "top" / "sub").mkdir(parents=True)
    (home / "top" / "sub" / "x.md").write_text("# Shipping\n\nShipping notes for the public.\n")
    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    made = gen.make_folder(gen.core(), "top", None)
    assert made["kept"] and made["kept"][0]["children"] == ["top/sub/"], made
    (home / "top" / "sub" / "x.md").write_text("# Shipping\n\nShipping notes for the public, revised.\n")
    told = _told(nas, "top@summary", Caller(54321, 54321))
    assert "stale=true" in told and "Shipping" in told, told


# a command summarizer's answer: its first part's label and text, then sentences about the folder's children
FIRST_PART_AND_CHILDREN = """\
import re, sys
prompt = sys.stdin.read()
for label, text in re.findall(r'^(\\[L\\d+-L\\d+\\])\\n(.*[A-Za-z]{3}.*)$', prompt, re.M)[:1]:
    print(label, text.strip('#-* '))
items = re.findall(r'^\\[(\\d+)\\] [^:]+: (.*)$', prompt, re.M)
"""

UNSUPPORTED_SCRIPT = FIRST_PART_AND_CHILDREN + """\
if items:  # the first child's own sentence, and the last child's cited as the first's: refused
    print('[' + items[0][0] + ']', items[0][1].split(' [')[0])
    print('[' + items[0][0] + ']', items[-1][1].split(' [')[0])
"""


def test_a_stale_folder_summary_with_unsupported_sentences_shown_names_every_child(home: Path, tmp_path: Path) -> None:
    """With --summaries-keep-unsupported a record's refused sentences are served too; one may be about a
    child it does not cite (root's 0600 file, since deleted), so every child the model was shown must be
    in the reader's walk."""
    from nasfs.access import Caller

    script = tmp_path / "unsupported.py"
    script.write_text(UNSUPPORTED_SCRIPT)
    (home / "mine").mkdir()
    (home / "mine" / "pub.md").write_text("# Public\n\nPublic notes about shipping.\n")
    git(home, "add", "mine/pub.md")
    git(home, "commit", "-q", "-m", "pub")  # its pointers (and the head's) name a commit every reader of .git may
    secret = home / "mine" / "z.md"
    secret.write_text(STALE_SECRET)
    os.chmod(secret, 0o600)
    nas = nas_for(home, f"{sys.executable} {script}", keep_unsupported=True)
    gen = nas.summaries.generator
    made = gen.make_folder(gen.core(), "mine", None)
    assert [k["children"] for k in made["kept"]] == [["mine/pub.md"]] and "Kvxvault" in str(made["refused"]), made
    secret.unlink()
    assert b"Kvxvault" in nas.read("mine@summary").text  # root, stale: its refused sentence shown
    told = _told(nas, "mine@summary", Caller(54321, 54321))
    assert "Kvxvault" not in told, told


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_stale_summary_of_a_private_version_is_not_told_once_its_path_is_public(home: Path, tmp_path: Path,
                                                                                 kind: str) -> None:
    """Root's 0600 file is summarized (a private snapshot); root then writes public text to it and makes
    it 0644. The stale summary describes a version other readers never could read: it is told to
    those who could read it when it was recorded (the snapshot's trail), root alone here."""
    from nasfs.access import Caller

    (home / "mine").mkdir()
    secret = home / "mine" / "a.md"
    secret.write_text(STALE_SECRET)
    os.chmod(secret, 0o600)
    nas = nas_for(home, command(tmp_path))
    gen = nas.summaries.generator
    if kind == "file":
        made = gen.make_file(gen.core().analysis(gen.core().content("mine/a.md", None)))
    else:
        made = gen.make_folder(gen.core(), "mine", None)
    assert "Kvxvault" in str(made)
    secret.write_text("# Public\n\nPublic notes about shipping.\n")
    os.chmod(secret, 0o644)
    told = _told(nas, "mine/a.md@summary" if kind == "file" else "mine@summary", Caller(54321, 54321))
    assert "Kvxvault" not in told and "KVXSECRET" not in told, told
    assert b"Kvxvault" in nas.read("mine/a.md@summary" if kind == "file" else "mine@summary").text  # root


def test_a_stale_summary_of_an_owners_private_version_is_told_to_that_owner(
        tmp_path: Path, private_edit: tuple[Path, Path]) -> None:
    """The owner of a 0600 file (not root) may read its private snapshots' store (theirs, when they may
    reach .git/objects): the stale summary of their own uncommitted edit is told to them at HEAD, and
    to no other reader."""
    from nasfs.access import Caller

    owner, other = Caller(54321, 54321), Caller(54322, 54322)
    root, plan = private_edit
    os.chown(plan, owner.uid, owner.gid)
    nas = nas_for(root, command(tmp_path))
    gen = nas.summaries.generator
    assert "Kvxvault" in str(gen.make_file(gen.core().analysis(gen.core().content("mine/plan.md", None))))
    assert "Kvxvault" in _told(nas, "mine/plan.md@summary", owner, at="HEAD")
    assert "Kvxvault" not in _told(nas, "mine/plan.md@summary", other, at="HEAD")


MIXED_SCRIPT = FIRST_PART_AND_CHILDREN + """\
if len(items) > 1:  # one sentence citing both: its words mostly the first's, so its pointers are the first's
    print(items[0][1].split(' [')[0], 'mention', items[-1][1].split(' [')[0], '[1][2]')
"""


def test_a_stale_folder_summary_citing_a_private_version_through_a_public_pointer_is_not_told(
        home: Path, tmp_path: Path) -> None:
    """A folder sentence cites public b.md and root's 0600 z.md, its pointers b.md's (the child sentence
    sharing the most words; the head is b.md's too). Root then writes public text to z.md and makes it
    0644: every child is in
    the reader's walk and every pointer's commit is public, yet the sentence tells z.md's old text.
    The record keeps the commit of every file it was made from, each checked as a pointer's is."""
    from nasfs.access import Caller

    script = tmp_path / "mixed.py"
    script.write_text(MIXED_SCRIPT)
    (home / "mine").mkdir()
    (home / "mine" / "b.md").write_text("# Public shipping notes\n\nPublic shipping notes for everyone.\n")
    git(home, "add", "mine/b.md")
    git(home, "commit", "-q", "-m", "b")
    secret = home / "mine" / "z.md"
    secret.write_text(STALE_SECRET)
    os.chmod(secret, 0o600)
    nas = nas_for(home, f"{sys.executable} {script}")
    gen = nas.summaries.generator
    made = gen.make_folder(gen.core(), "mine", None)
    [kept] = made["kept"]
    assert "Kvxvault" in kept["text"] and {p["path"] for p in kept["pointers"]} == {"mine/b.md"}, made
    secret.write_text("# Public\n\nPublic notes about shipping.\n")
    os.chmod(secret, 0o644)
    told = _told(nas, "mine@summary", Caller(54321, 54321))
    assert "Kvxvault" not in told, told
    assert b"Kvxvault" in nas.read("mine@summary").text  # root


def _deleted_after_the_first_walk(monkeypatch: pytest.MonkeyPatch, gone: Path) -> list[list[str]]:
    """Folder summaries' walks, each recorded (the paths it found), with ``gone`` deleted after the first."""
    from nasfs.summaries import folders as fold

    walk, walks = fold.listing_of, []

    def walked_then_deleted(nas, path, at):
        listing = walk(nas, path, at)
        walks.append([item.path for item in listing.items])
        if gone.exists():
            gone.unlink()
        return listing

    monkeypatch.setattr(fold, "listing_of", walked_then_deleted)
    return walks


def test_a_child_deleted_after_the_walk_costs_a_walk_not_a_refusal(home: Path, tmp_path: Path, monkeypatch) -> None:
    """A reader's folder summary is decided on the walk's files: one deleted between the walk and the
    decision was refused as a file the reader "may not read". It is gone, not private: the folder
    is walked again, without it."""
    from nasfs.access import Caller
    from nasfs.errors import NasError

    (home / "mine").mkdir()
    (home / "mine" / "a.md").write_text("# Shipping\n\nShipping notes for the public.\n")
    gone = home / "mine" / "b.md"
    gone.write_text("# Old\n\nOld notes, soon deleted.\n")
    walks = _deleted_after_the_first_walk(monkeypatch, gone)
    nas = nas_for(home, command(tmp_path))
    with pytest.raises(NasError, match="not generated yet"):  # walked again and queued, not refused
        nas.read("mine@summary", caller=Caller(54321, 54321))
    assert walks[:2] == [["mine/a.md", "mine/b.md"], ["mine/a.md"]], walks


@pytest.mark.parametrize("locked", ["mine/locked", "mine/locked/sub"])
def test_a_child_deleted_after_the_walk_below_a_folder_the_reader_may_not_list_is_refused(
        home: Path, tmp_path: Path, monkeypatch, locked: str) -> None:
    """A file gone since the walk is a second walk only where the reader could have seen it go: every
    folder from the summary's down to the file's may be listed (as a folder map's finds asks). Below
    one they may search but not list (0711), its going is no more theirs to learn than its name: the
    walk that saw it is refused, as any walk holding a file they may not find."""
    from nasfs.access import AccessDenied, Caller

    (home / "mine" / "locked" / "sub").mkdir(parents=True)
    (home / "mine" / "a.md").write_text("# Shipping\n\nShipping notes for the public.\n")
    gone = home / "mine" / "locked" / "sub" / "b.md"
    gone.write_text("# Old\n\nOld notes, soon deleted.\n")
    os.chmod(home / locked, 0o711)  # root's: the reader may pass through it, not list it
    walks = _deleted_after_the_first_walk(monkeypatch, gone)
    nas = nas_for(home, command(tmp_path))
    with pytest.raises(AccessDenied, match="may not read"):
        nas.read("mine@summary", caller=Caller(54321, 54321))
    assert walks == [["mine/a.md", "mine/locked/sub/b.md"]], walks  # one walk: no second look for the reader
