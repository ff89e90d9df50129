"""What the first summaries merge left (issue 25, point 4), each checked
through real parts: pointers per cited range, lines at ``\\n`` only, the
cache keyed by the whole summarizer, the mount's memo and view workers and
the summary rung, the walk's retries, relative paths, what a folder's
summary queues, its signature and its pointers, and a core that reads no
environment of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasfs.cache import DiskCache
from nasfs.repo import GitTree
from nasfs.service import Nas
from nasfs.summaries import SummaryPending, build_settings
from nasfs.summaries import walk as walk_module

from .conftest import header
from .mounts import Mount
from .summary_servers import CITING_SCRIPT, FakeChat, wait_idle

ACME = "notes/customer-acme.md"
NASFS = [sys.executable, "-m", "nasfs"]

# A command summarizer (``cite.py LOG [PICK]``) that logs the first line of
# each prompt it is given to LOG, cites the part whose text holds PICK (else
# the first part), and fails while the file $FLAG (when set) does not exist.
LOGGING_SCRIPT = """\
import os, re, sys
prompt = sys.stdin.read()
flag = os.environ.get('FLAG')
if flag and not os.path.exists(flag):
    sys.exit('model unavailable')
with open(sys.argv[1], 'a') as log:
    log.write(prompt.split('\\n\\n', 2)[1].splitlines()[0] + '\\n')
pick = sys.argv[2] if len(sys.argv) > 2 else ''
parts = re.findall(r'^(\\[L\\d+-L\\d+\\])\\n(.*[A-Za-z]{3}.*)$', prompt, re.M)
for label, text in [p for p in parts if pick in p[1]][:1]:
    print(label, text.strip('#-* '))
for n, text in re.findall(r'^\\[(\\d+)\\] [^:]+: (.*)$', prompt, re.M)[:1]:
    print('[' + n + ']', text.split(' [')[0])
"""


def script(tmp_path: Path, text: str = CITING_SCRIPT, name: str = "cite.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def nas_for(home: Path, summarizer: str, model: str = "", **flags: object) -> Nas:
    return Nas(GitTree(home, node="box", tree="home"), summarizer=build_settings(summarizer, model, **flags))


def made(nas: Nas, spec: str):
    with pytest.raises(SummaryPending):
        nas.read(spec)
    wait_idle(nas)
    return nas.read(spec)


def pointers(body: bytes) -> list[str]:
    return [w for w in body.decode().split() if w.startswith("nas://")]


def test_each_cited_range_is_its_own_pointer_over_exactly_its_lines(home: Path) -> None:
    with FakeChat(lambda user: "Acme Corp renews on 2027-03-01 [L1, L13].") as fake:
        nas = nas_for(home, fake.url, "fake")
        r = made(nas, f"{ACME}@summary")
    assert header(r.text)["support"] == "1/1"
    found = pointers(r.served.body)
    assert [p.rsplit("#", 1)[1] for p in found] == ["L1-L1", "L13-L13"]  # not L1-L13 over lines nobody checked
    assert [str(e.pointer) for e in r.served.evidence[1:]] == found
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), e.sha256).startswith("verified")


def test_the_prompt_numbers_lines_at_newlines_only(home: Path) -> None:
    page = home / "notes" / "paged.md"
    page.write_bytes(b"Intro of the depot guide\x0cwith a form feed inside.\n\nThe depot ships parcels daily.\n")

    def answer(user: str) -> str:
        label = re.search(r"^(\[L\d+-L\d+\])\nThe depot", user, re.M)
        return f"{label.group(1) if label else '[L9]'} The depot ships parcels daily."

    with FakeChat(answer) as fake:
        nas = nas_for(home, fake.url, "fake")
        r = made(nas, "notes/paged.md@summary")
        prompt = fake.requests[0]["body"]["messages"][1]["content"]
    assert "[L3-L3]\nThe depot ships parcels daily." in prompt and "[L1-L1]\nIntro of the depot guide\x0cwith" in prompt
    assert header(r.text)["support"] == "1/1", r.text
    assert pointers(r.served.body)[0].endswith("#L3-L3")
    assert nas.read("notes/paged.md@L3").text == b"The depot ships parcels daily.\n"


def test_two_commands_of_one_program_do_not_share_summaries(home: Path, tmp_path: Path) -> None:
    cite = f"{sys.executable} {script(tmp_path, LOGGING_SCRIPT)} {tmp_path / 'log'}"
    first = made(nas_for(home, f"{cite} Acme"), f"{ACME}@summary")
    second = made(nas_for(home, f"{cite} contract"), f"{ACME}@summary")  # same program, another model: queued
    assert header(first.text)["model"] == header(second.text)["model"]  # both command:python...
    assert b"Acme Corp [L1]" in first.served.body and b"contract renews" in second.served.body
    assert len((tmp_path / "log").read_text().splitlines()) == 2


def test_a_folder_summary_made_by_a_read_uses_only_its_children(home: Path, tmp_path: Path) -> None:
    many = home / "many"
    many.mkdir()
    for letter in "abcdefghij":  # ten files: a folder's summary is made from the first eight by name
        (many / f"{letter}.md").write_text(f"# Note {letter}\n\nThe depot note {letter} about parcels.\n")
    log = tmp_path / "log"
    argv = [*NASFS, "read", "--repo", str(home), "--node", "box", "--tree", "home",
            "--summarizer", f"{sys.executable} {script(tmp_path, LOGGING_SCRIPT)} {log}", "many@summary"]
    deadline = time.monotonic() + 120
    while (done := subprocess.run(argv, capture_output=True, text=True, timeout=60)).returncode != 0:
        assert "not generated yet" in done.stderr and time.monotonic() < deadline, done.stderr
        time.sleep(0.3)
    assert header(done.stdout.encode())["generated"] == "true"
    asked = log.read_text().splitlines()
    assert sorted(asked) == sorted([f"File many/{c}.md:" for c in "abcdefgh"] + ["Folder many holds:"]), asked


def test_a_touch_does_not_ask_the_model_again_but_a_change_does(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "log"
    nas = nas_for(home, f"{sys.executable} {script(tmp_path, LOGGING_SCRIPT)} {log}")
    made(nas, "notes@summary")
    asked = len(log.read_text().splitlines())
    later = time.time() + 5
    for f in (home / "notes").iterdir():
        os.utime(f, (later, later))  # new times (and ctimes), same bytes
    again = nas.read("notes@summary")
    assert header(again.text)["stale"] == "false"
    wait_idle(nas)
    assert len(log.read_text().splitlines()) == asked
    (home / "notes" / "meeting-2026-11-12.md").write_text("# Meeting\n\nThe depot moved to Leeds.\n")
    assert header(nas.read("notes@summary").text)["stale"] == "true"
    wait_idle(nas)


def test_a_folder_sentence_needs_a_child_sentence_that_shares_a_word(home: Path) -> None:
    def answer(user: str) -> str:
        if user.startswith("Folder "):  # [1] is notes/customer-acme.md, whose summary is "Acme Corp"
            return "Notes about customers [1]. Acme Corp is one [1]."
        label, text = re.search(r"^(\[L\d+-L\d+\])\n(.*[A-Za-z]{3}.*)$", user, re.M).groups()
        return f"{label} {text.strip('# ')}"

    with FakeChat(answer) as fake:
        nas = nas_for(home, fake.url, "fake", keep_unsupported=True)
        r = made(nas, "notes@summary")
    body = r.served.body.decode()
    assert header(r.text)["support"] == "1/2"
    assert "(unsupported: no sentence of notes/customer-acme.md shares a word with it" in body
    assert re.search(r"^Acme Corp is one\. \[notes/customer-acme.md\] nas://\S+#L1-L1$", body, re.M), body


def test_the_walk_tries_a_failed_file_again_after_its_backoff(home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_module, "RETRY_FIRST_SECONDS", 60.0)
    flag = tmp_path / "up"  # the model is up once this exists
    monkeypatch.setenv("FLAG", str(flag))
    nas = nas_for(home, f"{sys.executable} {script(tmp_path, LOGGING_SCRIPT)} {tmp_path / 'log'}", mode="background")
    walk = nas.summaries.walk
    walk.walk_once()
    wait_idle(nas)
    failed = nas.summaries.worker.counts.failed
    assert failed >= 8 and nas.summaries.worker.counts.done == 0
    walk.walk_once()  # within the backoff: nothing is queued again
    wait_idle(nas)
    assert nas.summaries.worker.counts.failed == failed
    flag.touch()
    # the backoff has passed, for a file tried once and for one a folder's job tried again (tries 2-3)
    monkeypatch.setattr(walk_module, "RETRY_FIRST_SECONDS", 0.1)
    time.sleep(0.6)
    walk.walk_once()
    wait_idle(nas)
    assert nas.summaries.worker.counts.done >= 8
    assert header(nas.read(f"{ACME}@summary").text)["stale"] == "false"


def test_the_core_reads_no_summary_setting_from_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NASFS_SUMMARIZER", "cat")
    nas = Nas(GitTree(home, node="box", tree="home"))
    assert nas.summaries is None
    with pytest.raises(Exception, match="no summarizer is configured"):
        nas.read(f"{ACME}@summary")
    assert build_settings(env={"NASFS_SUMMARIZER": "cat"}).summarizer == "cat"  # the doors read it


def test_relative_summarizer_and_key_paths_work_from_a_daemon_in_root(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script(work)
    (work / "key").write_text("sekrit-9\n")
    argv = [*NASFS, "read", "--repo", str(home), "--node", "box", "--tree", "home",
            "--summarizer", f"{sys.executable} cite.py", f"{ACME}@summary"]
    deadline = time.monotonic() + 120
    while (done := subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=work)).returncode != 0:
        assert "not generated yet" in done.stderr and time.monotonic() < deadline, done.stderr
        time.sleep(0.3)
    assert "Acme Corp [L1]" in done.stdout  # made by a background fill started in /
    with FakeChat(lambda user: "Chatter with no citation.") as fake:
        (work / "mnt").mkdir()
        started = subprocess.run([*NASFS, "mount", str(home), "mnt", "--node", "box", "--tree", "home", "--no-warm",
                                  "--summarizer", fake.url, "--summary-model", "m", "--summary-key-file", "key"],
                                 cwd=work, capture_output=True, text=True, timeout=60)
        assert started.returncode == 0, started.stderr
        try:
            deadline = time.monotonic() + 60
            while (cat := subprocess.run(["cat", str(work / "mnt" / f"{ACME}@summary")], capture_output=True,
                                         timeout=30)).returncode != 0:
                assert b"Resource temporarily unavailable" in cat.stderr and time.monotonic() < deadline, cat.stderr
                time.sleep(0.3)
        finally:
            subprocess.run([*NASFS, "umount", str(work / "mnt")], capture_output=True, timeout=60)
    assert fake.requests[0]["auth"] == "Bearer sekrit-9"  # the daemon, in /, read work/key
    assert header(cat.stdout)["support"] == "0/1"


def test_the_mount_serves_the_summary_rung_once_made_from_its_memo_and_its_view_workers(home: Path, tmp_path: Path) -> None:
    handbook = "Shipping handbook for the depot teams.\n\n"
    (home / "notes" / "big.md").write_text(handbook + "".join(
        f"## Part {i}\n\nThe depot handles parcels of kind {i} with care.\n\n" for i in range(30)))
    (home / "notes" / "huge.md").write_text("# " + handbook + "".join(  # over 256 KiB: its views are made in a worker process
        f"## Part {i}\n\nThe depot handles parcels of kind {i} with care.\n\n" for i in range(5000)))
    assert (home / "notes" / "huge.md").stat().st_size > 256 << 10
    command = f"{sys.executable} {script(tmp_path)}"
    flags = ["--summarizer", command, "--summaries-in-ladder"]
    aside = Nas(GitTree(home, node="box", tree="home"), disk=DiskCache(tmp_path / "aside"),
                summarizer=build_settings(command, in_ladder=True))
    budget = {name: made(aside, f"notes/{name}@summary").tokens + 10 for name in ("big.md", "huge.md")}
    time.sleep(2.1)  # settled: the memo remembers a view of big.md from now on
    m = Mount(home, tmp_path / "mnt", *flags)
    try:
        mnt = m.mountpoint
        before = (mnt / f"notes/big.md@{budget['big.md']}").read_bytes()
        assert header(before)["view"] != "summary" and "entries" in header(before)  # no summary yet: a page
        fill = subprocess.run([*NASFS, "index", "--repo", str(home), "--node", "box", "--tree", "home", *flags,
                               "--summaries-only", "notes/big.md", "notes/huge.md"], capture_output=True, text=True, timeout=300)
        assert fill.returncode == 0, fill.stderr
        cli = subprocess.run([*NASFS, "read", "--repo", str(home), "--node", "box", "--tree", "home", *flags,
                              f"notes/big.md@{budget['big.md']}"], capture_output=True, timeout=60)
        assert header(cli.stdout)["view"] == "summary", cli.stderr
        after = (mnt / f"notes/big.md@{budget['big.md']}").read_bytes()
        assert header(after)["view"] == "summary" and after == cli.stdout  # not the memo's answer from before
        huge = (mnt / f"notes/huge.md@{budget['huge.md']}").read_bytes()
        assert header(huge)["view"] == "summary" and header(huge)["generated"] == "true", huge[:300]
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]
