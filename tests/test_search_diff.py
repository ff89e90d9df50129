"""Search (snippets with pointers) and diffs (budgeted), checked against git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasfs import tokens
from nasfs.diffs import TreeDiff, diff_response
from nasfs.errors import BadView, NasError, NotFound
from nasfs.search import search
from nasfs.service import Nas

from .conftest import git
from .mounts import Mount

ACME = "notes/customer-acme.md"


def hits_of(response) -> set[tuple[str, int]]:
    out = set()
    for e in response.served.evidence:
        out.add((e.pointer.path, e.pointer.start))
    return out


def git_grep(home: Path, *args: str) -> set[tuple[str, int]]:
    done = subprocess.run(["git", "grep", "-n", *args], cwd=home, capture_output=True, text=True)
    rows = set()
    for line in done.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        rows.add((path, int(number)))
    return rows


@pytest.mark.parametrize("query, grep", [
    ("renew", ["-i", "-F", "renew"]),
    ("Invoice", ["-F", "Invoice"]),
    ("re:^## [A-Z]", ["-E", "^## [A-Z]"]),
    ("acme glob:*.md", ["-i", "-F", "acme", "--", "*.md"]),
    ("routing in:config", ["-i", "-F", "routing", "--", "config"]),
])
def test_hits_match_git_grep_and_pointers_verify(nas: Nas, home: Path, query: str, grep: list[str]) -> None:
    r = search(nas, query, budget=10**6)
    assert hits_of(r) == git_grep(home, *grep)
    keys = dict(kv.split("=", 1) for kv in r.header.split(" ")[1:])
    assert int(keys["matches"]) == len(git_grep(home, *grep)) == int(keys["shown"])
    assert r.tokens == tokens.count(r.text)
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), sha256=e.sha256).startswith("verified")
        line = git(home, "show", f"{e.pointer.commit}:{e.pointer.path}").splitlines()[e.pointer.start - 1]
        assert line.strip()[:40] in r.text.decode()


def test_hits_carry_their_section_and_never_whole_files(nas: Nas) -> None:
    r = search(nas, "Priya")
    body = r.text.decode()
    assert "in ### Escalation (L27-L31)" in body and "in ## Contacts (L21-L31)" in body
    assert "def add" in search(nas, "self.lines.append").text.decode()  # in the method's entry
    whole = (nas.tree.root / ACME).read_text()
    assert whole not in body


def test_search_budget_pages_and_declares_what_was_left(nas: Nas) -> None:
    everything = search(nas, "a", budget=10**6)
    total = int(dict(kv.split("=", 1) for kv in everything.header.split(" ")[1:])["matches"])
    small = search(nas, "a", budget=300)
    keys = dict(kv.split("=", 1) for kv in small.header.split(" ")[1:])
    assert small.tokens <= 300 and int(keys["shown"]) < total and keys["matches"] == str(total)
    nxt = search(nas, f"a {keys['next']}", budget=300)
    assert hits_of(nxt).isdisjoint(hits_of(small))
    default = search(nas, "a")
    assert "budget=1000" in default.header and default.tokens <= 1000


def test_search_at_a_past_revision(nas: Nas, home: Path) -> None:
    old = search(nas, "then +3%", at="v1")
    assert "matches=0" in old.header
    now = search(nas, "then +3%")
    assert "matches=1" in now.header
    past = search(nas, "price held", at="v1")
    ptr = past.served.evidence[0].pointer
    assert git(home, "rev-parse", "v1").startswith(ptr.commit[:12])


@pytest.mark.parametrize("query, says", [
    ("", "empty query"),
    ("   ", "empty query"),
    ("re:([a-", "unclosed character class"),
    ("x" * 2000, "at most 1024"),
    ("foo skip:abc", "not a whole number"),
    ("foo in:../etc", "leaves the tree"),
    ("a\0b", "NUL"),
])
def test_bad_queries(nas: Nas, query: str, says: str) -> None:
    with pytest.raises(NasError) as err:
        search(nas, query)
    assert says in str(err.value)


def test_budgets_given_as_numbers_are_checked_like_at_n(nas: Nas) -> None:
    for call in (lambda: search(nas, "renew", budget=-1), lambda: diff_response(nas, "v1..main", None, -1),
                 lambda: nas.read("notes/customer-acme.md@outline", budget=-1)):
        with pytest.raises(BadView, match="not a whole number"):
            call()


def test_catastrophic_regex_runs_in_bounded_time(nas: Nas, home: Path) -> None:
    (home / "evil.txt").write_text("a" * 5000 + "!\n")
    start = time.monotonic()
    r = search(nas, "re:(a+)+$")
    assert time.monotonic() - start < 5
    assert "matches=0" in r.header
    with pytest.raises(NotFound, match="unknown revision"):
        search(nas, "foo", at="nosuchrev")


def test_diff_matches_git_diff(nas: Nas, home: Path) -> None:
    r = diff_response(nas, "v1..main", None, None)
    assert r.view == "diff"
    assert r.served.body.decode() == git(home, "diff", "v1", "main")
    one = diff_response(nas, "v1..main", ACME, None)
    assert one.served.body.decode() == git(home, "diff", "v1", "main", "--", ACME)
    assert nas.read(f"{ACME}@since=v1..main").served.body == one.served.body
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), sha256=e.sha256).startswith("verified")


def test_diff_to_now_renames_binary_added_deleted(nas: Nas, home: Path) -> None:
    os.rename(home / "README.txt", home / "README.md")
    (home / "code" / "client.ts").unlink()
    (home / "img.bin").write_bytes(b"\0\1\2" * 10)
    (home / "notes" / "new.md").write_text("# New\n\nhello\n")
    status_before = git(home, "status", "--porcelain")
    head_before = git(home, "rev-parse", "HEAD")
    r = diff_response(nas, "main", None, 10**6)
    keys = dict(kv.split("=", 1) for kv in r.header.split(" ")[1:])
    snapshot = r.served.evidence[0].pointer.commit
    assert keys["files"] == "4"
    body = r.served.body.decode()
    assert "rename from README.txt" in body and "deleted file mode" in body and "Binary files" in body
    views = [diff_response(nas, "main", None, b).view for b in range(1000, 0, -20)]
    order = ["diff", "diff-entries", "diffstat", "none"]
    assert [order.index(v) for v in views] == sorted(order.index(v) for v in views)
    assert {"diff", "diffstat", "none"} <= set(views)
    lines = TreeDiff(nas, git(home, "rev-parse", "main").strip(), snapshot).rungs()[2]().body.decode().splitlines()
    assert "R README.txt -> README.md | +0 -0" in lines and "D code/client.ts | +0 -22" in lines
    assert "A img.bin | binary" in lines and "A notes/new.md | +3 -0" in lines
    # both ends are commits: plain git agrees
    assert git(home, "diff", "--stat", "main", snapshot)
    assert git(home, "status", "--porcelain") == status_before and git(home, "rev-parse", "HEAD") == head_before


def test_changed_entries_rung(nas: Nas, home: Path) -> None:
    seen = {b: diff_response(nas, "v1..main", None, b) for b in range(60, 400, 5)}
    r = next(r for r in seen.values() if r.view == "diff-entries")
    assert {x.view for x in seen.values()} >= {"diff", "diff-entries", "diffstat"}
    body = r.served.body.decode()
    assert "M notes/customer-acme.md | +1 -1" in body
    assert "~ ## Renewal (+1 -1) old=notes/customer-acme.md@" in body
    ptr_old = body.split("old=")[1].split()[0]
    assert nas.verify(ptr_old).startswith("verified")
    tiny = diff_response(nas, "v1..main", None, 5)
    assert tiny.view == "none" and tiny.served.truncated


def test_bad_ranges(nas: Nas, home: Path) -> None:
    with pytest.raises(BadView, match="older than"):
        diff_response(nas, "main..v1", None, None)
    with pytest.raises(NotFound, match="unknown revision"):
        diff_response(nas, "v1..nosuch", None, None)
    with pytest.raises(NotFound, match="neither"):
        diff_response(nas, "v1..main", "notes/never.md", None)
    with pytest.raises(BadView, match="range"):
        diff_response(nas, "..main", None, None)
    (home / "later.md").write_text("# Later\n")
    r = diff_response(nas, "v1", "later.md", None)  # absent at one end: an added file
    assert "new file mode" in r.served.body.decode()


def test_cli_search_and_diff(home: Path) -> None:
    run = lambda *a: subprocess.run([sys.executable, "-m", "nasfs", *a, "--repo", str(home)], capture_output=True, text=True)  # noqa: E731
    ok = run("search", "--json", "--budget", "400", "renew")
    env = json.loads(ok.stdout)
    assert ok.returncode == 0 and env["view"] == "search" and env["evidence"]
    assert run("search", "re:([").returncode == 2
    d = run("diff", "v1..main", ACME)
    assert d.returncode == 0 and d.stdout.split("\n", 1)[1] == git(home, "diff", "v1", "main", "--", ACME)
    bad = run("diff", "main..v1")
    assert bad.returncode == 2 and "older than" in bad.stderr


def test_search_and_diff_through_the_mount(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    text = (mnt / ".nas" / "search" / "renew@400").read_bytes()
    assert text.startswith(b"nasfs view=search") and b"matches=3" in text
    env = json.loads((mnt / ".nas" / "search" / "Priya glob:*.md.json").read_text())
    assert env["evidence"][0]["pointer"].startswith("nas://box/home/notes/customer-acme.md@")
    assert b"price held" in (mnt / ".at" / "v1" / ".nas" / "search" / "price held").read_bytes()
    diff = (mnt / ".nas" / "diff" / "v1..main").read_bytes()
    assert diff.split(b"\n", 1)[1].decode() == git(home, "diff", "v1", "main")
    assert b"view=diffstat" in (mnt / ".nas" / "diff" / "v1..main@95").read_bytes() or b"view=diff-entries" in (mnt / ".nas" / "diff" / "v1..main@95").read_bytes()
    for bad in ("re:([a-", "x" * 300):
        with pytest.raises(OSError):
            (mnt / ".nas" / "search" / bad).read_bytes()
    with pytest.raises(OSError):
        (mnt / ".nas" / "diff" / "main..v1").read_bytes()
    errors = (mnt / ".nas" / "errors").read_text()
    assert "unclosed character class" in errors and "older than" in errors
    assert os.getxattr(mnt / ".nas" / "search" / "renew@400", "user.nas.view") == b"search"
    assert os.getxattr(mnt / ".nas" / "diff" / "v1..main", "user.nas.pointer").startswith(b"nas://box/home/")
