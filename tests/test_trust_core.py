"""What the core promises about trust: nothing outside the tree is searched,
every printed pointer verifies as printed, cached answers never outlive the
repository they describe, a vanished repository is said, and a subfolder of a
repository is not served as if it were the whole. Checked through the core,
the CLI as a process, and plain git (never through the mount)."""

from __future__ import annotations

import gc
import itertools
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest

from nasfs.diffs import TreeDiff
from nasfs.errors import BadView, NasError, NotFound, NotServable, VerifyFailed
from nasfs.repo import KEEP_REF, GitTree
from nasfs.search import search
from nasfs.service import Nas
from nasfs.summaries import SummaryPending, build_settings

from .conftest import git
from .summary_servers import CITING_SCRIPT, wait_idle

ACME = "notes/customer-acme.md"
TREE = ("--node", "box", "--tree", "home")


def nasfs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "nasfs", *args], capture_output=True, text=True)


def header_keys(header: str) -> dict[str, str]:
    assert header.startswith("nasfs ")
    return dict(pair.split("=", 1) for pair in header.split(" ")[1:])


def commit_of(pointer: str) -> str:
    return pointer.rpartition("@")[2].partition("#")[0]


def git_ok(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True).returncode == 0


# -- A. search never looks outside the tree ------------------------------------

@pytest.fixture
def escapes(home: Path, tmp_path: Path) -> Path:
    """Symlinks out of the tree (a folder and a file) and one inside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("zebrafish one\nzebrafish two\n")
    (home / "escdir").symlink_to(outside)
    (home / "escfile.txt").symlink_to(outside / "secret.txt")
    (home / "codelink").symlink_to("code")
    (home / "acmelink.md").symlink_to(ACME)
    (home / "gitlink").symlink_to(".git")
    return outside


def test_search_counts_nothing_outside_the_tree(nas: Nas, escapes: Path) -> None:
    keys = header_keys(search(nas, "zebrafish").header)
    assert (keys["matches"], keys["files"]) == ("0", "0")
    for folder in ("escdir", "escfile.txt", "gitlink"):
        with pytest.raises(BadView, match=f"in:{folder} leads outside the served tree"):
            search(nas, f"zebrafish in:{folder}")
    with pytest.raises(BadView, match="in:missing is not a folder"):
        search(nas, "zebrafish in:missing")


def test_search_through_an_in_tree_symlink_counts_each_file_once(nas: Nas, escapes: Path) -> None:
    plain = search(nas, "Invoice", budget=10**6)
    assert search(nas, "Invoice in:codelink", budget=10**6).served.evidence == search(nas, "Invoice in:code", budget=10**6).served.evidence
    assert {e.pointer.path for e in plain.served.evidence} == {"code/billing.py"}  # not codelink/billing.py too
    acme = search(nas, "Renewal", budget=10**6)
    assert {e.pointer.path for e in acme.served.evidence} == {ACME}  # acmelink.md is not searched again


def test_search_at_a_revision_does_not_follow_committed_escapes(nas: Nas, home: Path, escapes: Path) -> None:
    git(home, "add", "escdir", "escfile.txt")
    git(home, "commit", "-q", "-m", "links")
    assert header_keys(search(nas, "zebrafish", at="HEAD").header)["matches"] == "0"
    with pytest.raises(BadView, match="in:escdir leads outside the served tree"):
        search(nas, "zebrafish in:escdir", at="HEAD")


def test_cli_search_refuses_a_folder_link_that_leaves(home: Path, escapes: Path) -> None:
    done = nasfs("search", "--repo", str(home), "zebrafish in:escdir")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "leads outside the served tree" in done.stderr


# -- B. every printed pointer verifies exactly as printed --------------------------

ODD_DIR = "we@ird dir #1 100%"
ODD = f"{ODD_DIR}/Résumé draft.md"


def verifies_as_printed(repo: Path, pointer: str, *tree: str) -> None:
    """``nasfs verify`` accepts it, and ``git show`` finds its decoded path."""
    done = nasfs("verify", "--repo", str(repo), *tree, pointer)
    assert done.returncode == 0, (pointer, done.stderr)
    rest = pointer.split("/", 4)[4] if pointer.startswith("nas://") else pointer
    path = unquote(rest.rpartition("@")[0])
    first, _, last = rest.partition("#L")[2].partition("-L")
    shown = git(repo, "show", f"{commit_of(pointer)}:{path}").splitlines()
    assert len(shown) >= int(last or first or 0)


@pytest.mark.parametrize("committed", [True, False], ids=["head", "snapshot"])
def test_pointers_to_odd_names_verify_as_printed(nas: Nas, home: Path, committed: bool) -> None:
    (home / ODD_DIR).mkdir()
    (home / ODD).write_text("# Résumé\n\nzanzibar line\n\n## Next\nmore\n")
    if committed:
        git(home, "add", "-A")
        git(home, "commit", "-q", "-m", "odd names")
    else:
        (home / ODD).write_text((home / ODD).read_text() + "zanzibar again\n")
    printed: dict[str, list[str]] = {}
    header = nasfs("read", "--repo", str(home), *TREE, f"{ODD}@outline").stdout.split("\n", 1)[0]
    printed["header"] = [header_keys(header)["pointer"]]
    envelope = json.loads(nasfs("read", "--repo", str(home), *TREE, "--json", f"{ODD}@section=Next").stdout)
    printed["envelope"] = [e["pointer"] for e in envelope["evidence"]]
    found = nasfs("search", "--repo", str(home), *TREE, "zanzibar").stdout
    printed["search"] = [line.split(" ")[0] for line in found.splitlines()[1:] if not line.startswith(" ")]
    printed["xattr"] = [nas.read(f"{ODD}@L3").xattrs()["user.nas.pointer"]]
    diff = json.loads(nasfs("diff", "--repo", str(home), *TREE, "--json", "v1").stdout)
    printed["diff"] = [e["pointer"] for e in diff["evidence"] if "R%C3%A9sum%C3%A9" in e["pointer"]]
    before = nas.tree.snapshot_worktree()  # HEAD itself, or a snapshot
    (home / ODD).write_text((home / ODD).read_text().replace("more", "changed"))
    entries = TreeDiff(nas, before, nas.tree.snapshot_worktree(), ODD).rungs()[1]().body.decode()
    printed["entries"] = [w.split("=", 1)[1] for w in entries.split() if w.startswith(("old=", "new="))]
    assert all(printed.values()), printed
    for pointer in (p for door in printed.values() for p in door):
        assert " " not in pointer and "%25" not in pointer.replace("100%25", "")
        verifies_as_printed(home, pointer, *TREE)


def test_a_folder_where_head_has_a_file_or_a_link_gets_a_snapshot(nas: Nas, home: Path) -> None:
    """HEAD's entries are looked up in their folder's tree, kept per folder:
    a path whose folder is a file, or a link, in HEAD is not in HEAD, and
    a folder learnt once serves its other files and a HEAD that moved."""
    os.symlink("notes", home / "notelink")
    git(home, "add", "notelink")
    git(home, "commit", "-q", "-m", "a link")
    (home / "code" / "billing.py").unlink()  # a file in HEAD, a folder in the work tree
    (home / "code" / "billing.py").mkdir()
    (home / "code" / "billing.py" / "inner.md").write_text("# Inner\n\nbody\n")
    os.unlink(home / "notelink")
    (home / "notelink").mkdir()
    (home / "notelink" / "loose.md").write_text("# Loose\n")
    head = str(nas.tree.head().id)
    for path in ("code/billing.py/inner.md", "notelink/loose.md"):
        pointer = nas.read(f"{path}@outline").served.evidence[0].pointer
        assert pointer.commit != head and git(home, "show", f"{pointer.commit}:{path}") == (home / path).read_text()
    assert nas.read("code/client.ts@outline").served.evidence[0].pointer.commit == head  # code/ was learnt above
    (home / "code" / "client.ts").write_text("export const x = 1;\n")
    git(home, "commit", "-q", "-am", "moved")
    moved = nas.read("code/client.ts@outline").served.evidence[0].pointer
    assert moved.commit == str(nas.tree.head().id) != head


def test_a_tree_named_with_a_space_and_accents_verifies(home: Path, tmp_path: Path) -> None:
    odd = tmp_path / "my trée"
    shutil.copytree(home, odd)
    header = nasfs("read", "--repo", str(odd), "--node", "bo x", f"{ACME}@outline").stdout.split("\n", 1)[0]
    pointer = header_keys(header)["pointer"]
    assert pointer.startswith("nas://bo%20x/my%20tr%C3%A9e/notes/")
    verifies_as_printed(odd, pointer, "--node", "bo x")


# -- C. cached answers never outlive what they describe --------------------------------

def changed_acme(home: Path, extra: str = "one more line\n") -> None:
    (home / ACME).write_text((home / ACME).read_text() + extra)


def test_a_snapshot_is_kept_again_after_its_ref_was_removed(nas: Nas, home: Path) -> None:
    changed_acme(home)
    first = header_keys(nas.read(f"{ACME}@outline").header)["pointer"]
    assert commit_of(first) != str(nas.tree.head().id)[:12]  # a snapshot
    git(home, "update-ref", "-d", KEEP_REF)
    assert header_keys(nas.read(f"{ACME}@outline").header)["pointer"] == first  # from the cache
    git(home, "gc", "-q", "--prune=now")
    assert git_ok(home, "show", f"{commit_of(first)}:{ACME}")


def test_a_snapshot_is_kept_again_across_cli_runs(home: Path) -> None:
    changed_acme(home)
    read = lambda: header_keys(nasfs("read", "--repo", str(home), f"{ACME}@outline").stdout.split("\n", 1)[0])["pointer"]  # noqa: E731
    first = read()
    git(home, "update-ref", "-d", KEEP_REF)
    assert read() == first
    git(home, "gc", "-q", "--prune=now")
    assert git_ok(home, "show", f"{commit_of(first)}:{ACME}")


def test_a_clone_without_the_keep_ref_keeps_what_it_serves(nas: Nas, home: Path, tmp_path: Path) -> None:
    changed_acme(home)
    snapshot = nas.read(f"{ACME}@outline").served.evidence[0].pointer.commit
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(home), str(clone))  # a local clone: all objects, no refs/nasfs
    assert git_ok(clone, "cat-file", "-e", snapshot) and not git_ok(clone, "rev-parse", "--verify", KEEP_REF)
    changed_acme(clone)
    served = Nas(GitTree(clone, node="box", tree="home")).read(f"{ACME}@outline").served.evidence[0].pointer.commit
    assert served == snapshot
    git(clone, "gc", "-q", "--prune=now")
    assert git_ok(clone, "show", f"{served}:{ACME}")


def test_reading_a_kept_snapshot_again_keeps_nothing_more(home: Path) -> None:
    keepers = lambda: git(home, "log", "--format=%s", KEEP_REF).count("nasfs: keep snapshots reachable")  # noqa: E731
    changed_acme(home)
    nasfs("read", "--repo", str(home), f"{ACME}@outline")
    (home / "notes" / "meeting-2026-11-12.md").write_text("changed\n")
    nasfs("read", "--repo", str(home), "notes/meeting-2026-11-12.md@outline")
    assert keepers() == 2
    nasfs("read", "--repo", str(home), f"{ACME}@outline")  # found below the chain's newest end
    assert keepers() == 2


def summarizing(home: Path, tmp_path: Path) -> Nas:
    script = tmp_path / "summarize.py"
    script.write_text(CITING_SCRIPT)
    return Nas(GitTree(home, node="box", tree="home"), summarizer=build_settings(f"{sys.executable} {script}"))


def summarized(nas: Nas, spec: str):
    """The summary of ``spec``, once the worker has made it (the first read only queues it)."""
    with pytest.raises(SummaryPending):
        nas.read(spec)
    wait_idle(nas)
    return nas.read(spec)


def test_a_stale_summary_names_a_commit_that_is_kept(home: Path, tmp_path: Path) -> None:
    nas = summarizing(home, tmp_path)
    changed_acme(home)
    described = summarized(nas, f"{ACME}@summary").served.evidence[0].pointer.commit
    git(home, "update-ref", "-d", KEEP_REF)
    changed_acme(home, "FAIL\n")
    stale = nas.read(f"{ACME}@summary")
    assert header_keys(stale.header)["stale"] == "true" and stale.served.evidence[0].pointer.commit == described
    git(home, "gc", "-q", "--prune=now")
    assert git_ok(home, "show", f"{described}:{ACME}")


def test_a_stale_summary_of_a_commit_gone_is_not_served(home: Path, tmp_path: Path) -> None:
    nas = summarizing(home, tmp_path)
    changed_acme(home)
    summarized(nas, f"{ACME}@summary")
    git(home, "update-ref", "-d", KEEP_REF)
    git(home, "gc", "-q", "--prune=now")
    changed_acme(home, "FAIL\n")
    with pytest.raises(SummaryPending, match="not generated yet; queued"):
        nas.read(f"{ACME}@summary")
    wait_idle(nas)
    with pytest.raises(SummaryPending, match="the last try failed: the summarizer command .* model unavailable"):
        nas.read(f"{ACME}@summary")


# -- D. a repository deleted or made anew while serving ----------------------------------

def make_anew(home: Path) -> str:
    """Delete .git (if still there) and make the repository again from the same files."""
    shutil.rmtree(home / ".git", ignore_errors=True)
    git(home, "init", "-q", "-b", "main")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "made anew")
    return git(home, "rev-parse", "HEAD").strip()


def test_a_repository_made_anew_is_served_as_it_is_now(nas: Nas, home: Path) -> None:
    old_head = str(nas.tree.head().id)
    old = str(nas.read(f"{ACME}@outline").served.evidence[0].pointer)
    assert nas.read(f"{ACME}@L1", at=old_head).text == b"# Acme Corp\n"
    new_head = make_anew(home)
    assert nas.read(f"{ACME}@outline").served.evidence[0].pointer.commit == new_head
    with pytest.raises(NotFound, match="unknown revision"):
        nas.read(f"{ACME}@L1", at=old_head)  # not from memory: it is gone
    with pytest.raises(VerifyFailed):
        nas.verify(old)
    changed_acme(home)
    snapshot = nas.read(f"{ACME}@outline").served.evidence[0].pointer.commit
    git(home, "gc", "-q", "--prune=now")
    assert git_ok(home, "show", f"{snapshot}:{ACME}")


def test_health_says_the_repository_is_gone_and_reopens_it_when_back(home: Path) -> None:
    tree = GitTree(home, node="box", tree="home")
    nas = Nas(tree)
    assert tree.health() is None
    v1 = str(tree.resolve("v1").id)
    pointer = str(nas.read(f"{ACME}@outline").served.evidence[0].pointer)
    shutil.rmtree(home / ".git")
    gone = (f"the repository {home}/.git is gone (deleted while serving); "
            "views, .at/ and pointers are unavailable until it is back")
    assert tree.health() == gone
    for call in (lambda: nas.read(f"{ACME}@outline"), lambda: nas.read(ACME, at="v1"), lambda: nas.verify(pointer),
                 lambda: tree.listing_at(v1, ""), lambda: search(nas, "acme"), lambda: search(nas, "acme", at="v1"),
                 lambda: tree.snapshot_worktree()):
        with pytest.raises(NasError) as refused:
            call()
        assert str(refused.value) == gone
    assert tree.health() == gone
    new_head = make_anew(home)
    assert tree.health() is None
    assert nas.read(f"{ACME}@outline").served.evidence[0].pointer.commit == new_head
    with pytest.raises(NotFound, match="unknown revision"):
        tree.resolve(v1)


# -- E. a subfolder is not a repository ---------------------------------------------------

def test_a_subfolder_of_a_repository_is_refused(home: Path) -> None:
    sub = home / "notes"
    said = (f"{sub} is a folder inside the git repository {home}; "
            f"serve the repository's top folder, or make {sub} a repository of its own")
    with pytest.raises(NasError) as refused:
        GitTree(sub)
    assert str(refused.value) == said
    done = nasfs("read", "--repo", str(sub), "customer-acme.md")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"nasfs read: {said}\n"
    assert GitTree(home / "notes" / "..").root == home  # the top folder, however spelled


# -- F. a long-running server does not grow with the number of reads or writes ---------
# pygit2 1.21 keeps a reference to every key string a lookup by path is given
# (a tree's [], in and /, a TreeBuilder's get and remove); each request brings
# a fresh string, so an unguarded lookup grew the daemon by ~60 bytes a call.

def fresh(text: str) -> str:
    """A new string object equal to ``text``, as each request brings one."""
    return "".join([text[:1], text[1:]])


def kept_by(call: Callable[[], object], times: int) -> int:
    """Bytes still held (tracemalloc) after ``times`` more calls of ``call``,
    once a warm-up has filled every cache the call fills: the smaller of two
    windows, since a leak grows in both while a one-off growth of a table the
    whole process shares (the interned strings', once earlier tests filled it)
    lands in one. Garbage is collected first, so cycles awaiting the collector
    are not counted as kept."""
    for _ in range(50):
        call()
    tracemalloc.start()
    try:
        grown = []
        for _ in range(2):
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(times):
                call()
            gc.collect()
            grown.append(tracemalloc.get_traced_memory()[0] - before)
        return min(grown)
    finally:
        tracemalloc.stop()


def test_repeated_view_reads_keep_memory_flat(nas: Nas) -> None:
    grown = kept_by(lambda: nas.read(fresh(f"{ACME}@outline")), 1000)
    assert grown < 20_000, f"{grown} bytes kept by 1000 reads of one view"


def test_repeated_reads_of_a_changed_file_keep_memory_flat(nas: Nas, home: Path) -> None:
    """A file that differs from HEAD is served with a snapshot commit, whose
    tree is edited by name on every read (the commit itself is written once)."""
    (home / ACME).write_text((home / ACME).read_text() + "\nchanged, not committed\n")
    grown = kept_by(lambda: nas.read(fresh(f"{ACME}@outline")), 1000)
    assert grown < 20_000, f"{grown} bytes kept by 1000 reads of one changed file"


def test_repeated_listings_at_a_commit_keep_memory_flat(nas: Nas) -> None:
    """What ``ls .at/<rev>/notes`` asks of the core, once per listing."""
    head = str(nas.tree.head().id)
    grown = kept_by(lambda: nas.tree.listing_at(head, fresh("notes")), 1000)
    assert grown < 20_000, f"{grown} bytes kept by 1000 listings of one folder at a commit"


def test_repeated_autocommits_keep_memory_flat(nas: Nas, home: Path) -> None:
    """A file in new folders written then removed through the mount, each an
    autocommit, and an unchanged file's write, which commits nothing."""
    deep = home / "logs" / "2026" / "today.md"
    deep.parent.mkdir(parents=True)
    writes = itertools.count()

    def write_then_remove() -> None:
        deep.write_text(f"entry {next(writes)}\n")
        assert nas.tree.commit_worktree_path(fresh("logs/2026/today.md"), "test") is not None
        deep.unlink()
        assert nas.tree.commit_worktree_path(fresh("logs/2026/today.md"), "test") is not None
        assert nas.tree.commit_worktree_path(fresh(ACME), "test") is None

    grown = kept_by(write_then_remove, 300)
    assert grown < 20_000, f"{grown} bytes kept by 300 rounds of three autocommits"


def test_repeated_worktree_snapshots_keep_memory_flat(nas: Nas, home: Path) -> None:
    """What a diff against the working tree records first: a changed file and
    a deleted one, each in a folder, snapshotted once per diff. The file takes
    two contents in turn, so the snapshots are the same two commits (each new
    snapshot is rightly remembered as kept) while every path is looked up anew."""
    (home / "code" / "client.ts").unlink()
    edits = itertools.count()

    def edit_and_snapshot() -> None:
        (home / ACME).write_text(f"# Acme\n\nedit {next(edits) % 2}\n")
        nas.tree.snapshot_worktree()

    grown = kept_by(edit_and_snapshot, 600)
    assert grown < 20_000, f"{grown} bytes kept by 600 snapshots of the working tree"


# -- G. a file rewritten in place while it is read --------------------------------------

def test_a_file_rewritten_between_two_reads_of_it_is_served_as_one_version(
        nas: Nas, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-file read is several read calls. The writer here rewrites the
    file (O_TRUNC, then a longer version) exactly between the daemon's first
    and second: the view, and the commit its pointer names, must still be one
    version's, never the first's start with the second's end."""
    import nasfs.repo.one_version

    short, long = "# Short\n\nfirst version\n", "# Long\n\n" + "second version, longer\n" * 20
    target = home / "notes" / "rewritten.md"
    target.write_text(short)
    rewritten: list[bool] = []

    class RewrittenAfterFirstRead:
        def __init__(self, fh):
            self._fh = fh

        def read(self, size: int = -1) -> bytes:
            first = self._fh.read(os.fstat(self._fh.fileno()).st_size)
            if not rewritten:
                rewritten.append(True)
                target.write_text(long)
            return first + self._fh.read()

        def __getattr__(self, name: str):
            return getattr(self._fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self._fh.close()

    plain = nasfs.repo.one_version.open_regular

    def opening(path, root=None):
        fh = plain(path, root)
        return RewrittenAfterFirstRead(fh) if Path(path) == target else fh

    monkeypatch.setattr(nasfs.repo.one_version, "open_regular", opening)
    response = nas.read("notes/rewritten.md@100000")  # the full view, with its header and pointer
    assert rewritten, "the file was not read through the wrapper"
    body = response.text.decode().split("\n", 1)[1]
    assert body in (short, long), body[:80]
    commit = commit_of(header_keys(response.header)["pointer"])
    shown = subprocess.run(["git", "show", f"{commit}:notes/rewritten.md"], cwd=home, capture_output=True, text=True)
    assert shown.stdout == body
