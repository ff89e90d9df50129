"""Folder maps read the working tree with no symlink followed, and hold a
working file only when it is the very file their walk saw.

1. Ranking a map reads each working file's first bytes for its mentions of
   the others. Read by path, a folder of the tree swapped for a symlink since
   the walk (to a private folder out of the tree, or into the mount, which
   can wedge the daemon) was read through: in the daemon (``_head``), its
   reader processes (``_read_heads``) and ``nasfs index`` (``known_of``).
   So were the walk's own listing of a folder, ``worktree_state``'s and the
   ignore chain's stats, and the HTTP/MCP doors' folder listing.
2. The file the walk saw is (device, inode), as an access decision names a
   file: an inode number alone may be another device's file (a tmpfs mounted
   in the tree counts its inode numbers from 1, as the tree's own tmpfs does).
   A head read to rank a map counts only when read from that file: one
   renamed over it since (maybe a file the map's reader may not read)
   mentions nothing.
3. The walk holds a bounded number of folders open, however deep the tree,
   and a folder it cannot open for want of descriptors fails it, never
   shortens it.
"""

from __future__ import annotations

import errno
import gc
import math
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nasfs import folders
from nasfs.access import Caller
from nasfs.errors import FileChanged
from nasfs.folders import Listing, walk_worktree
from nasfs.repo import GitTree
from nasfs.service import Nas

from .conftest import git

SECRET = b"# KVXOUTSIDE\n\nsee zeta.md, and import .zeta\n"  # mentions zeta twice over


def _make(repo: Path) -> None:
    """zeta.md, d/f.md (mentions nothing), e/g.md (mentions zeta), committed."""
    for rel, text in (("zeta.md", "# Zeta\n"), ("d/f.md", "# F\n\nplain words\n"), ("e/g.md", "# G\n\nsee zeta.md\n")):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")


def _swap(repo: Path, target: str | Path) -> None:
    """d (a real folder when walked) made a symlink to ``target``."""
    for name in os.listdir(repo / "d"):
        (repo / "d" / name).unlink()
    (repo / "d").rmdir()
    (repo / "d").symlink_to(target)


@pytest.fixture(params=["outside", "inside"])
def linked(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Nas, Listing, int]:
    """(the tree's Nas, its listing walked while d was a folder, how many files
    of that listing mention zeta.md: e/g.md alone). Then d became a link, out
    of the tree to a folder whose 0600 f.md mentions zeta, or inside it to e,
    which holds such an f.md too (not walked: the listing is older)."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    _make(repo)
    nas = Nas(GitTree(repo, node="box", tree="t"))
    listing = walk_worktree(nas, "")
    assert [i.path for i in listing.items] == ["d/f.md", "e/g.md", "zeta.md"]
    if request.param == "outside":
        outside.mkdir()
        (outside / "f.md").write_bytes(SECRET)
        os.chmod(outside / "f.md", 0o600)
        _swap(repo, outside)
    else:
        (repo / "e" / "f.md").write_bytes(SECRET)
        _swap(repo, "e")
    assert (repo / "d" / "f.md").read_bytes() == SECRET  # what a read by path would get
    return nas, listing, 1


def _zeta_score(listing: Listing, scores: list[float], mentioned_by: int) -> tuple[float, float]:
    """(zeta.md's score, the score it has when ``mentioned_by`` files mention it)."""
    n = [i.path for i in listing.items].index("zeta.md")
    return scores[n], math.log2(1 + mentioned_by) + folders._bonus("zeta.md", listing.items[n].size)


def test_a_ranking_reads_no_head_under_a_folder_made_a_link(linked: tuple[Nas, Listing, int]) -> None:
    """In the daemon (``_head``): d/f.md is no file of the tree now; it mentions nothing."""
    nas, listing, legit = linked
    got, want = _zeta_score(listing, folders.Ranker().scores(nas, listing, None, {}), legit)
    assert got == want


def test_reader_processes_read_no_head_under_a_folder_made_a_link(linked: tuple[Nas, Listing, int],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader process's ``_read_heads`` (O_NOFOLLOW was on the last name
    only), called here; then for real, in processes, when there are cores."""
    nas, listing, legit = linked
    names = folders.as_bytes(frozenset(folders.names_in(i.path for i in listing.items)))
    monkeypatch.setattr(folders, "_reader", (str(nas.tree.root), names))
    kinds, refs, each = folders._read_heads([(i.path, *i.identity) for i in listing.items], True)
    assert dict(refs) == {"zeta": legit} and each[0] == ()
    if (os.cpu_count() or 1) >= 2:
        monkeypatch.setattr(folders, "PARALLEL_FILES", 1)
        ranker = folders.Ranker()
        read, _ = ranker._read_many(nas, listing.items, None, {}, names, 0, None)
        assert all(read), "the readers did not read every file"
        got, want = _zeta_score(listing, ranker.scores(nas, listing, None, {}), legit)
        assert got == want


@pytest.fixture
def renamed_over(tmp_path: Path) -> tuple[Nas, Listing]:
    """(the tree's Nas, its listing), d/f.md then replaced by a rename of
    another file, 0600, that mentions zeta: a path of the listing that now
    names another file, with no symlink anywhere (a folder writable by
    others lets them rename a file they may not read over their own)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _make(repo)
    nas = Nas(GitTree(repo, node="box", tree="t"))
    listing = walk_worktree(nas, "")
    (repo / "d" / ".private").write_bytes(SECRET)
    os.chmod(repo / "d" / ".private", 0o600)
    os.replace(repo / "d" / ".private", repo / "d" / "f.md")
    return nas, listing


def test_a_ranking_reads_no_head_of_a_file_renamed_over_a_walked_one(renamed_over: tuple[Nas, Listing],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A head counts only when read from the file the walk saw (device,
    inode): what the renamed file mentions ranks nothing, in the daemon
    (``_head``) and in its reader processes (``_read_heads``)."""
    nas, listing = renamed_over
    got, want = _zeta_score(listing, folders.Ranker().scores(nas, listing, None, {}), 1)
    assert got == want
    names = folders.as_bytes(frozenset(folders.names_in(i.path for i in listing.items)))
    monkeypatch.setattr(folders, "_reader", (str(nas.tree.root), names))
    _, refs, each = folders._read_heads([(i.path, *i.identity) for i in listing.items], True)
    assert dict(refs) == {"zeta": 1} and each[0] == ()
    if (os.cpu_count() or 1) >= 2:
        monkeypatch.setattr(folders, "PARALLEL_FILES", 1)
        ranker = folders.Ranker()
        read, _ = ranker._read_many(nas, listing.items, None, {}, names, 0, None)
        assert all(read), "the readers did not read every file"
        got, want = _zeta_score(listing, ranker.scores(nas, listing, None, {}), 1)
        assert got == want


def test_a_ranking_opens_a_files_folders_once_per_folder_not_per_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The heads a ranking reads in the daemon come folder by folder: each
    folder is reached from the root once, and each file from its folder
    (reached anew for each file, 20 files 3 folders deep cost 100 opens)."""
    repo = tmp_path / "repo"
    (repo / "p" / "q" / "r").mkdir(parents=True)
    for n in range(20):
        (repo / "p" / "q" / "r" / f"f{n}.md").write_text(f"see f{n + 1}.md\n")
    git(repo, "init", "-q", "-b", "main")
    nas = Nas(GitTree(repo, node="box", tree="t"))
    listing = walk_worktree(nas, "")
    opened: list[object] = []
    real_open = os.open

    def counted(*args: object, **kwargs: object) -> int:
        opened.append(args[0])
        return real_open(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    scores = folders.Ranker().scores(nas, listing, None, {})
    monkeypatch.undo()
    assert len(opened) == 4 + 20  # the root, p, q, r once; each file
    assert scores[1] > scores[0]  # f1.md is mentioned (by f0.md): the heads were read


def test_known_of_reads_nothing_under_a_folder_made_a_link(linked: tuple[Nas, Listing, int]) -> None:
    """``nasfs index``'s mentions of a file, read or from bytes it hashed: none."""
    nas, _, _ = linked
    names = frozenset({"zeta", "f", "g"})
    assert folders.known_of(nas.tree.root, "d/f.md", names) is None
    assert folders.known_of(nas.tree.root, "d/f.md", names, SECRET) is None  # no stat through the link either
    kept = folders.known_of(nas.tree.root, "e/g.md", names)
    assert kept is not None and kept.mentions == {"zeta"}  # a file of the tree still is read


def _with_outside(tmp_path: Path, name: str = "kvx-outside-name.md") -> tuple[Path, Path]:
    """(the tree of ``_make``, a folder out of it holding ``name``: by
    default a name that is nowhere in the tree)."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    _make(repo)
    outside.mkdir()
    (outside / name).write_bytes(SECRET)
    return repo, outside


def test_no_head_read_waits_on_a_fifo_put_in_a_walked_files_place(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """d/f.md made a FIFO after the walk: a blocking open would wait for a
    writer that never comes (the daemon's thread with it); the ranking in
    the daemon, in a reader process and ``nasfs index``'s read go on."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _make(repo)
    nas = Nas(GitTree(repo, node="box", tree="t"))
    listing = walk_worktree(nas, "")
    (repo / "d" / "f.md").unlink()
    os.mkfifo(repo / "d" / "f.md")
    names = folders.as_bytes(frozenset(folders.names_in(i.path for i in listing.items)))
    monkeypatch.setattr(folders, "_reader", (str(nas.tree.root), names))
    done: list[object] = []

    def rank() -> None:
        done.append(_zeta_score(listing, folders.Ranker().scores(nas, listing, None, {}), 1))
        done.append(folders._read_heads([(i.path, *i.identity) for i in listing.items], False)[1])
        done.append(folders.known_of(nas.tree.root, "d/f.md", frozenset({"zeta"})))

    worker = threading.Thread(target=rank, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():
        os.close(os.open(repo / "d" / "f.md", os.O_WRONLY | os.O_NONBLOCK))  # let it go (a reader holds it open)
        pytest.fail("a head read waited on the FIFO")
    score, refs, known = done
    assert score[0] == score[1] and dict(refs) == {"zeta": 1} and known is None


def test_a_walk_of_a_folder_made_a_link_since_it_was_resolved_is_file_changed(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder a map or summary walks, resolved while a folder, then a
    link out of the tree: FileChanged (the door says ESTALE, 409; a summary
    walks again), never the outside folder's files."""
    repo, outside = _with_outside(tmp_path)
    nas = Nas(GitTree(repo, node="box", tree="t"))
    assert [i.path for i in walk_worktree(nas, "d").items] == ["d/f.md"]
    _swap(repo, outside)
    monkeypatch.setattr(nas.tree, "real_path", lambda path: ("d", repo / "d"))  # resolved before the swap
    with pytest.raises(FileChanged):
        walk_worktree(nas, "d")


def test_a_walk_lists_no_folder_made_a_link_after_its_parent_was_listed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """d is a folder when the root is listed, and a link out of the tree
    when the walk comes to list it: nothing under it is listed."""
    repo, outside = _with_outside(tmp_path)
    decide = folders._Rules.decide

    def swapped_after(rules: folders._Rules, rel: str, *args: object) -> object:
        if rel == "" and (repo / "d").is_dir() and not (repo / "d").is_symlink():
            _swap(repo, outside)
        return decide(rules, rel, *args)

    monkeypatch.setattr(folders._Rules, "decide", swapped_after)
    listing = walk_worktree(Nas(GitTree(repo, node="box", tree="t")), "")
    assert (repo / "d").is_symlink()
    assert [i.path for i in listing.items] == ["e/g.md", "zeta.md"]


def _chain(repo: Path, names: list[str], file: str) -> None:
    """Folders ``names`` one in the other under ``repo``, ``file`` in the
    last: made from each folder's descriptor, as a path past PATH_MAX cannot be."""
    fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(os.open(file, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _open_now() -> int:
    """Descriptors open in this process, once garbage from earlier tests that
    holds some (a repository handle, a Decider's folders) is collected: else
    a collection during the walk closes some and the count moves."""
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def low_limit() -> Iterator[Callable[[int], None]]:
    """Lowers this process's descriptor limit to so many more than are open (restored after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    yield lambda more: resource.setrlimit(resource.RLIMIT_NOFILE, (_open_now() + more, hard))
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _deep_tree(tmp_path: Path, depth: int) -> Nas:
    """The tree of ``_make`` with a/a/.../deep.md, ``depth`` folders deep."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _make(repo)
    _chain(repo, ["a"] * depth, "deep.md")
    return Nas(GitTree(repo, node="box", tree="t"))


def test_a_deep_tree_is_walked_whole_under_a_low_descriptor_limit(tmp_path: Path, low_limit: Callable[[int], None]) -> None:
    """A walk holds no descriptor per level of the tree (a folder 300 deep,
    with 64 descriptors to spare): every file is listed, nothing left open."""
    nas = _deep_tree(tmp_path, 300)
    before = _open_now()
    low_limit(64)
    listing = walk_worktree(nas, "")
    assert [i.path for i in listing.items] == ["/".join(["a"] * 300 + ["deep.md"]), "d/f.md", "e/g.md", "zeta.md"]
    assert _open_now() == before
    assert [i.path for i in walk_worktree(nas, "/".join(["a"] * 10)).items] == [listing.items[0].path]


def test_a_walk_short_of_descriptors_raises_rather_than_list_less(tmp_path: Path, low_limit: Callable[[int], None]) -> None:
    """A folder the walk cannot open for want of a descriptor is no folder
    removed since it was listed: EMFILE, not a listing short of its files
    (which a map would be cached as); and nothing is left open."""
    nas = _deep_tree(tmp_path, 10)
    before = _open_now()
    low_limit(4)
    with pytest.raises(OSError) as caught:
        walk_worktree(nas, "")
    assert caught.value.errno == errno.EMFILE
    assert _open_now() == before


def test_a_folder_past_path_max_is_not_walked(tmp_path: Path) -> None:
    """As before the walk opened folders from their parents: a folder whose
    path is PATH_MAX long or more (no view can name what it holds) is not
    walked, so a tree's depth costs a walk no more than it did."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _make(repo)
    _chain(repo, ["n" * 200] * 30, "past.md")  # 6030 bytes of folders
    _chain(repo, ["m" * 200] * 10, "within.md")
    listing = walk_worktree(Nas(GitTree(repo, node="box", tree="t")), "")
    assert [i.path.rsplit("/", 1)[-1] for i in listing.items] == ["f.md", "g.md", "within.md", "zeta.md"]


@pytest.fixture
def outside_link(tmp_path: Path) -> tuple[Nas, Path]:
    """The tree, d made a link to a folder out of it (f.md, .gitignore)."""
    repo, outside = _with_outside(tmp_path, "f.md")
    (outside / ".gitignore").write_text("*.tmp\n")
    _swap(repo, outside)
    return Nas(GitTree(repo, node="box", tree="t")), outside


def test_the_working_state_stats_nothing_under_a_folder_made_a_link(outside_link: tuple[Nas, Path]) -> None:
    """``worktree_state`` stats each path git status names, d/f.md among
    them (deleted: git's view of a folder made a link): not through the link."""
    nas, outside = outside_link
    before = folders.worktree_state(nas)
    (outside / "f.md").write_bytes(SECRET * 2)  # the outside file changes: nothing of the tree does
    assert folders.worktree_state(nas) == before


def test_the_ignore_chain_stats_no_gitignore_under_a_folder_made_a_link(outside_link: tuple[Nas, Path]) -> None:
    """A walk below d stamps the .gitignore files above it: d/.gitignore is
    no file of the tree (git reads none through a link)."""
    nas, _ = outside_link
    assert folders._Rules(nas, "").chain("d").split("|") == ["-", "-"]


def test_a_doors_listing_lists_no_folder_made_a_link_after_it_was_resolved(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP and MCP list a folder (listing.py): d resolved while a folder,
    then made a link out of the tree: FileChanged (or BadPath, when its
    existence is asked by string after the swap), for root too; never the
    outside folder's names."""
    from nasfs.errors import BadPath
    from nasfs.listing import list_folder

    repo, outside = _with_outside(tmp_path)
    nas = Nas(GitTree(repo, node="box", tree="t"))
    assert b"f.md" in list_folder(nas, "d").served.body
    _swap(repo, outside)
    monkeypatch.setattr(nas.tree, "real_path", lambda path: ("d", repo / "d"))  # resolved before the swap
    for caller in (None, Caller.root()):
        with pytest.raises((FileChanged, BadPath)):
            list_folder(nas, "d", caller=caller)
    monkeypatch.undo()
    assert b"zeta.md" in list_folder(nas, "").served.body


# -- 2. the file the walk saw: (device, inode) ---------------------------------------------------------------------


def _tmpfs(where: Path) -> None:
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], check=True)


@pytest.fixture
def two_devices(tmp_path: Path) -> Iterator[tuple[Nas, Listing, Path]]:
    """A tree on a tmpfs with x.md, and another tmpfs mounted in it at
    other/ (ignored: not in the walk), where other/y.md has x.md's inode
    number. Yields (its Nas, the listing walked, the tree), x.md then made
    a link to other/y.md: the same inode number, another device."""
    tree = tmp_path / "tree"
    _tmpfs(tree)
    try:
        (tree / "x.md").write_text("# Mine\n\nmy own notes\n")
        (tree / ".gitignore").write_text("other/\n")
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "-A")
        git(tree, "commit", "-qm", "one")
        _tmpfs(tree / "other")
        ino = os.stat(tree / "x.md").st_ino
        for n in range(ino + 10):  # a tmpfs counts inode numbers up from 1
            made = tree / "other" / f"n{n}.md"
            made.write_text("# KVXOTHERDEVICE\n\nanother device's file\n")
            if os.stat(made).st_ino >= ino:
                break
        if os.stat(made).st_ino != ino:
            pytest.skip("this kernel's tmpfs does not count inode numbers one by one")
        os.rename(made, tree / "other" / "y.md")
        nas = Nas(GitTree(tree, node="box", tree="t"))
        listing = walk_worktree(nas, "")
        assert [i.path for i in listing.items] == [".gitignore", "x.md"]
        (tree / "x.md").rename(tree / ".x.kept")
        (tree / "x.md").symlink_to("other/y.md")
        st = os.stat(tree / "x.md")
        assert st.st_ino == listing.items[1].stamp[0] and st.st_dev != os.stat(tree / ".x.kept").st_dev
        yield nas, listing, tree
    finally:
        subprocess.run(["umount", "-l", str(tree / "other")], capture_output=True)
        subprocess.run(["umount", "-l", str(tree)], capture_output=True)


class _Captured(Exception):
    """The reader's check, taken before a summary is looked for."""


READER = Caller(54321, 54321)  # not root, not this process: a map made for them is shared by their listing


def test_a_map_shows_no_file_of_another_device_with_the_walked_inode_number(
        two_devices: tuple[Nas, Listing, Path]) -> None:
    """The map made for a reader from its walk: x.md is now another
    device's file with x.md's inode number; it is not shown as x.md."""
    from nasfs.folder_map import FolderMap

    nas, listing, tree = two_devices
    assert nas.content("x.md", None, READER).source[1] == listing.items[1].stamp[0]  # the number alone matches
    shown = FolderMap(nas, listing, [0, 1], None, READER).shown(1)
    assert shown is None, shown.entries
    (tree / "x.md").unlink()
    (tree / ".x.kept").rename(tree / "x.md")
    assert FolderMap(nas, listing, [0, 1], None, READER).shown(1) is not None  # the walked file itself is shown


def test_a_folder_summarys_child_is_no_file_of_another_device_with_the_walked_inode_number(
        two_devices: tuple[Nas, Listing, Path]) -> None:
    """A folder summary's children (child_content) are the files the walk saw, device too."""
    from nasfs.summaries import folders as fold

    nas, listing, _ = two_devices
    with pytest.raises(FileChanged):
        fold.child_content(nas, "x.md", None, fold.walked(listing))


def test_a_readers_folder_summary_check_takes_no_file_of_another_device_with_the_walked_inode_number(
        two_devices: tuple[Nas, Listing, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader's folder summary is decided on its walk (service.py's check):
    the file a decision allows must be the walked one, device too."""
    from nasfs.summaries.settings import build_settings

    from .summary_servers import CITING_SCRIPT

    nas, listing, _ = two_devices
    script = tmp_path / "cite.py"
    script.write_text(CITING_SCRIPT)
    summarizing = Nas(nas.tree, summarizer=build_settings(f"{sys.executable} {script}", ""))
    checks: list[object] = []

    def captured(nas: Nas, path: str, at: str | None, check: object, hold: object) -> None:
        checks.append(check)
        raise _Captured

    monkeypatch.setattr(summarizing.summaries, "folder_view", captured)
    with pytest.raises(_Captured):
        summarizing.read(".@summary", caller=READER)
    [check] = checks
    with pytest.raises(FileChanged):
        check(listing)
