"""Folder maps in the core: DIR@outline, DIR@N, .@N (docs/views.md "Folder maps").

Never over the budget, every pointer verifying, only what git serves
(no .git, no ignored files, no symlinks followed), ranked, cached, and bad
input refused in one line. The doors are tested in test_folder_doors.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasfs.cache import DiskCache
from nasfs.errors import BadPath, BadView, NotFound, NotServable
from nasfs.folders import sub_listing, subfolders, walk_worktree
from nasfs.repo import GitTree
from nasfs.service import Nas

from .conftest import git
from .folder_trees import BUDGETS, pointers, tree, within  # noqa: F401 (tree: a fixture)


@pytest.fixture
def big(tree: Path) -> Nas:
    return Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())


def verify_all(nas: Nas, text: bytes, envelope: dict | None = None) -> int:
    """Check every pointer of a map's text, and of its envelope with sha256."""
    said = pointers(text.decode())
    for p in said:
        nas.verify(p)
    for e in (envelope or {}).get("evidence", []):
        nas.verify(e["pointer"], sha256=e["sha256"])
    return len(said)


@pytest.mark.parametrize("spec", [".", "pkg", "notes", "pkg/deep"])
def test_a_map_never_exceeds_its_budget_and_every_pointer_verifies(big: Nas, spec: str) -> None:
    served: set[str] = set()
    for budget in BUDGETS:
        try:
            r = big.read(f"{spec}@{budget}")
        except BadView as exc:  # not even view=none fits: said in one line, with the budget that would
            assert budget < 60 and "too small" in str(exc) and "\n" not in str(exc)
            continue
        keys = within(r.text, budget)
        served.add(keys["view"] + ":" + keys.get("detail", ""))
        verify_all(big, r.text, json.loads(r.envelope_bytes()))
        assert big.read(f"{spec}@outline@{budget}").text == r.text  # the same ladder
    if spec in (".", "pkg"):
        assert {"map:symbols", "map:files", "map:folders", "skeleton:", "none:"} <= served, served


def test_the_map_of_the_root_lists_what_git_serves(big: Nas) -> None:
    r = big.read(".@outline")
    body = r.served.body.decode()
    shown = {p.split("@")[0] for p in pointers(r.text.decode())}
    assert {"README.md", "pkg/core.py", "kept.log", "untracked.txt", "notes/customer-acme.md", ".gitignore"} <= shown
    for absent in ("build/", "debug.log", ".git/", "out-dir/", "out-file.py", "pkg-link/"):
        assert not any(p.startswith(absent) for p in shown), absent
    assert "SECRET" not in body and "secret.py" not in body
    keys = within(r.text, None)
    assert keys["files"] == keys["shown"] == str(len(shown)) and keys["detail"] == "symbols"
    assert "  1-3 class Core\n" in body and "  2-3   def run(self) -> int\n" in body  # entries, indented by depth
    assert verify_all(big, r.text, r.envelope()) == len(pointers(r.text.decode()))


def test_an_edited_file_points_at_a_snapshot_that_holds_it(big: Nas, tree: Path) -> None:
    text = big.read("pkg@outline").text.decode()
    [line] = [row for row in text.splitlines() if row.startswith("pkg/mod00.py@")]
    commit = line.split("@")[1].split()[0]
    assert commit != git(tree, "rev-parse", "HEAD").strip()[:12]
    assert "def extra" in git(tree, "show", f"{commit}:pkg/mod00.py")


def test_ranking_puts_the_readme_and_the_most_referenced_module_first(big: Nas) -> None:
    files = [p.split("@")[0] for p in pointers(big.read(".@outline").text.decode()) if "#" not in p]
    assert files[0] == "README.md"
    pkg = [f for f in files if f.startswith("pkg/") and f.count("/") == 1]
    assert pkg[0] == "pkg/core.py", pkg[:3]  # imported by all 24 modules
    assert files.index("pkg/core.py") < files.index("pkg/deep/er/leaf0.md")


def file_lines(text: bytes) -> list[str]:
    return [p for p in pointers(text.decode()) if "#" not in p and not p.startswith("folder ")]


# Every file's line of the root's map takes 1,050 to 1,220 tokens, as the digits of the
# commit ids (time-stamped) fall: 2,000 holds them in one page whatever the ids.
@pytest.mark.parametrize("spec, budget", [(".", 200), ("pkg", 150), ("pkg", 300), (".", 2000)])
def test_following_next_pages_every_file_once_in_rank_order_within_budget(big: Nas, spec: str, budget: int) -> None:
    ranked = file_lines(big.read(f"{spec}@outline").text)
    seen: list[str] = []
    asked, pages = f"{spec}@{budget}", 0
    while asked:
        r = big.read(asked)
        keys = within(r.text, budget)
        assert keys["view"] == "map", (asked, keys)  # each page holds a file at least
        page = file_lines(r.text)
        if "page" in keys:  # the ranks it covers, from 1, as in the ranking of the whole map
            first, last = map(int, keys["page"].split("-"))
            assert page == ranked[first - 1:last], (asked, keys)
        verify_all(big, r.text, r.envelope())
        seen += page
        following = keys.get("next")
        if following:
            assert f"the next page is {spec}{following}," in r.served.body.decode()
        asked, pages = (f"{spec}{following}" if following else ""), pages + 1
        assert pages < 60
    assert seen == ranked and (pages > 1) == (budget < 1000)  # at 2000 the whole map fits


def test_a_page_without_a_budget_is_the_rest_of_the_map(big: Nas) -> None:
    ranked = file_lines(big.read("pkg@outline").text)
    r = big.read("pkg@outline=5")
    keys = within(r.text, None)
    assert keys["page"] == f"5-{len(ranked)}" and "next" not in keys
    assert file_lines(r.text) == ranked[4:] and "  4-5 def f" in r.served.body.decode()


def test_a_folder_through_a_symlink_inside_the_tree_is_mapped_as_its_target(big: Nas) -> None:
    r = big.read("pkg-link@300")
    assert "path=pkg " in r.header and "pkg-link" not in r.served.body.decode()
    with pytest.raises(BadPath, match="outside the tree"):
        big.read("out-dir@300")


def test_a_map_at_a_revision(big: Nas, tree: Path) -> None:
    v1 = git(tree, "rev-parse", "v1").strip()
    r = big.read(".@outline", at="v1")
    shown = pointers(r.text.decode())
    assert shown and all(p.split("@")[1][:12] == v1[:12] for p in shown)
    assert not any(p.startswith(("pkg/", "README.md")) for p in shown)  # added after v1
    verify_all(big, r.text, r.envelope())
    assert "pkg/core.py@" in big.read("pkg@2000", at="main").text.decode()


@pytest.mark.parametrize("spec, error, says", [
    ("nosuch@2000", NotFound, "does not exist"),
    ("..@2000", BadPath, "leaves the folder through '..'"),
    ("pkg/..@2000", BadPath, "leaves the folder through '..'"),
    ("../x@2000", BadPath, "leaves the tree"),
    ("pkg@since=v1", NotServable, "is a folder; @since=v1 is a view of files"),
    ("pkg@L1-L2", NotServable, "is a folder"),
    ("pkg@section=Core", NotServable, "is a folder"),
    ("pkg@outline=99", BadView, "folder 'pkg' has 31 files; @outline=99 starts past them"),
    ("pkg", NotServable, "is a folder (a directory), not a file"),
    ("pkg@outlien", BadView, "did you mean @outline?"),
    (".@9000000000000000", BadView, "larger than"),
    ("pkg@10", BadView, "too small for any map of folder 'pkg'"),
])
def test_bad_input_gets_one_line(big: Nas, spec: str, error: type, says: str) -> None:
    with pytest.raises(error) as err:
        big.read(spec)
    assert says in str(err.value) and "\n" not in str(err.value)
    assert "valid:" in str(err.value) or error is BadPath


def test_a_folder_cut_from_the_root_listing_is_the_listing_its_walk_gives(big: Nas, tree: Path) -> None:
    """nasfs index ranks every folder's map from one walk of the root: each
    cut must hold what a walk of that folder holds, signed alike, or no map
    would find its ranking."""
    for name in ("pkg.txt", "pkg0.txt", "pkg-notes.md"):  # sorted next to pkg/'s files, not in them
        (tree / name).write_text("beside pkg\n")
    root = walk_worktree(big, "")
    folders = subfolders(root)
    assert {"notes", "pkg", "pkg/deep", "pkg/deep/er"} <= set(folders)
    assert not {"build", "out-dir", "pkg-link"} & set(folders)  # ignored, or a symlink
    for folder in folders:
        cut, walked = sub_listing(root, folder), walk_worktree(big, folder)
        assert (cut.folder, cut.items, cut.signature) == (walked.folder, walked.items, walked.signature), folder


def test_a_warm_map_is_served_from_the_cache_and_a_change_is_seen(tree: Path) -> None:
    first = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())
    cold = first.read(".@1200").text
    again = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())
    assert again.read(".@1200").text == cold
    assert again.stats.cache_hits == 0  # the map's own cache, not per-file responses
    (tree / "pkg" / "new.py").write_text("def brand_new() -> None:\n    pass\n")
    changed = again.read("pkg@outline").text.decode()
    assert "pkg/new.py@" in changed and "1-2 def brand_new() -> None" in changed


def test_an_empty_folder_and_an_empty_tree(big: Nas, tree: Path) -> None:
    (tree / "void" / "inner").mkdir(parents=True)
    r = big.read("void@outline")
    assert r.served.body == b"(no files)\n" and "files=0 shown=0" in r.header and "pointer=none" in r.header


def test_an_edited_gitignore_is_seen_by_the_next_map(tree: Path) -> None:
    """Which files git serves is remembered per folder; an ignore rule changed
    in place (no folder's mtime moves) must still be seen."""
    (tree / "pkg" / "deep" / "scratch.tmp").write_text("untracked\n")
    nas = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())
    assert "pkg/deep/scratch.tmp@" in nas.read("pkg@outline").text.decode()
    with open(tree / ".gitignore", "a") as fh:
        fh.write("*.tmp\n")
    fresh = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())
    for reader in (nas, fresh):
        text = reader.read("pkg@outline").text.decode()
        assert "scratch.tmp" not in text and "pkg/deep/er/leaf0.md@" in text  # tracked files stay
    git(tree, "add", "-f", "pkg/deep/scratch.tmp")  # tracked: served although ignored
    assert "pkg/deep/scratch.tmp@" in nas.read("pkg@outline").text.decode()


def test_each_edit_of_a_file_is_seen_by_the_next_map(tree: Path) -> None:
    """A remembered map is keyed by what git status says (and each reported
    file's stat): a file edited twice, still 'modified', is seen both times."""
    nas = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())
    nas.read("pkg@outline")
    for name in ("first_edit", "second_edit"):
        with open(tree / "pkg" / "core.py", "a") as fh:
            fh.write(f"\n\ndef {name}() -> None:\n    pass\n")
        for reader in (nas, Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache())):
            text = reader.read("pkg@outline").text.decode()
            assert f"def {name}() -> None" in text
            verify_all(reader, reader.read("pkg@outline").text)


def test_a_name_that_is_not_utf8_is_left_out_of_the_map(big: Nas, tree: Path) -> None:
    """No view or pointer can spell it (the file stays a plain file); the map
    of its folder and of the root is served without it (found by fuzz.py: the
    root's map failed on such a name)."""
    import os

    os.mkdir(os.path.join(os.fsencode(tree), b"dir\xff"))
    for name in (b"pkg/bad\xff.py", b"dir\xff/inside.py"):
        with open(os.path.join(os.fsencode(tree), name), "wb") as fh:
            fh.write(b"def f() -> None:\n    pass\n")
    for spec in (".@outline", "pkg@2000", ".@300"):
        r = big.read(spec)
        assert b"pkg/bad" not in r.served.body and b"inside.py" not in r.served.body  # "bad" alone: a commit's hex may hold it
        verify_all(big, r.text, r.envelope())


def test_a_ranking_read_by_reader_processes_is_the_ranking_read_here(big: Nas, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large listing's heads are read by reader processes (folders.PARALLEL_FILES);
    lowered here so this small tree takes that path: same scores, same order."""
    from nasfs import folders

    listing = walk_worktree(big, "")
    here = folders.Ranker().scores(big, listing, None, {})
    monkeypatch.setattr(folders, "PARALLEL_FILES", 1)
    ranker = folders.Ranker()
    read, _ = ranker._read_many(big, listing.items, None, {}, frozenset(), 0, None)
    assert len(read) == len(listing.items) and all(read), "the readers did not read every file"
    assert ranker.scores(big, listing, None, {}) == here


def test_a_map_shows_its_steps_in_progress_while_it_runs(big: Nas, monkeypatch: pytest.MonkeyPatch) -> None:
    """What .nas/status serves: each running map's step and the files read so far."""
    from nasfs import folders

    seen: list[str] = []
    head = folders._head

    def watched(*args: object) -> bytes:
        seen.append(big.progress.render())
        return head(*args)

    monkeypatch.setattr(folders, "_head", watched)
    assert big.progress.render() == "idle\n"
    big.read(".@2000")
    assert any(line.startswith("working: folder map of '.': ranking: files read ") for line in seen), seen[:3]
    counts = [int(line.split("files read ")[1].split("/")[0]) for line in seen if "files read" in line]
    assert counts[-1] > counts[0], "the count of files read does not move"
    assert big.progress.render() == "idle\n"


def test_a_re_rank_after_an_edit_reads_only_the_edited_file(big: Nas, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The readers' mentions are kept as the ranking's own are: after one edit
    only that file is read again (one file: read here, not by the readers)."""
    from nasfs import folders

    monkeypatch.setattr(folders, "PARALLEL_FILES", 2)
    ranker = folders.Ranker()
    ranker.scores(big, walk_worktree(big, ""), None, {})
    (tree / "README.md").write_text((tree / "README.md").read_text() + "\nsee pkg/core.py\n")
    read: list[str] = []
    head = folders._head
    monkeypatch.setattr(folders, "_head", lambda nas, item, at, heads: read.append(item.path) or head(nas, item, at, heads))
    ranker.scores(big, walk_worktree(big, ""), None, {})
    assert read == ["README.md"]
