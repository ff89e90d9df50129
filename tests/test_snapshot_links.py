"""A snapshot reads no file through a link (review-final-access finding 4):
a tracked folder swapped for a symlink, out of the tree or into it, is no
folder of the working tree. git status reports the files under it deleted,
and a snapshot records them deleted (as git would). It reads nothing through
the link, for a caller and for the daemon's own account (``caller=None``)
alike. The rest of the tree is still recorded."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from nasfs.access import Caller
from nasfs.errors import FileChanged, NotFound
from nasfs.repo import GitTree

from .conftest import git

SECRET = b"OUTSIDESECRET 7731\n"


def _all_objects(git_dir: Path) -> bytes:
    """Every object's bytes in .git/objects and in every private store."""
    stores = [git_dir, *sorted((git_dir / "nasfs-private").glob("*.git"))]
    out = b""
    for store in stores:
        out += subprocess.run(["git", f"--git-dir={store}", "cat-file", "--batch-all-objects", "--batch"],
                              check=True, capture_output=True).stdout
    return out


@pytest.fixture()
def swapped(tmp_path: Path) -> tuple[Path, Path]:
    """(tree, outside): d/f and top.md committed; then d removed and made a
    link to ``outside``, which holds a 0600 ``f``; top.md edited, new.md added."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "d").mkdir(parents=True)
    outside.mkdir()
    (repo / "d" / "f").write_text("hello\n")
    (repo / "top.md").write_text("top\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "d" / "f").unlink()
    (repo / "d").rmdir()
    (repo / "d").symlink_to(outside)
    (outside / "f").write_bytes(SECRET)
    os.chmod(outside / "f", 0o600)
    (repo / "top.md").write_text("top, edited\n")
    (repo / "new.md").write_text("new\n")
    assert "D d/f" in git(repo, "status", "--porcelain")
    return repo, outside


def _tree_of(t: GitTree, commit: str) -> pygit2.Tree:
    return t.resolve(commit).tree


@pytest.mark.parametrize("caller", [None, Caller.root()], ids=["no-caller", "root-caller"])
def test_folder_linked_out_of_tree_is_not_read(swapped: tuple[Path, Path], caller: Caller | None) -> None:
    repo, _ = swapped
    t = GitTree(repo, node="box", tree="t")
    commit = t.snapshot_worktree(caller)
    tree = _tree_of(t, commit)
    assert SECRET not in _all_objects(repo / ".git")
    with pytest.raises(KeyError):
        tree["d/f"]  # deleted, as git status reports it
    assert tree["top.md"].data == b"top, edited\n"  # the rest of the tree is recorded
    assert tree["new.md"].data == b"new\n"


def test_folder_linked_into_tree_is_not_read(tmp_path: Path) -> None:
    """``d`` made a link to the tree's own ``e``: d/f is deleted (git's
    view); e/f is recorded once, as itself, never as d/f."""
    repo = tmp_path / "repo"
    (repo / "d").mkdir(parents=True)
    (repo / "e").mkdir()
    (repo / "d" / "f").write_text("d's\n")
    (repo / "e" / "f").write_text("e's\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "d" / "f").unlink()
    (repo / "d").rmdir()
    (repo / "d").symlink_to("e")
    (repo / "e" / "f").write_text("e's, edited\n")
    t = GitTree(repo, node="box", tree="t")
    for caller in (None, Caller.root()):
        tree = _tree_of(t, t.snapshot_worktree(caller))
        with pytest.raises(KeyError):
            tree["d/f"]
        assert tree["e/f"].data == b"e's, edited\n"
        # a link is not recorded as content either (an emptied folder may stay, as before this fix)
        assert "d" not in tree or (tree["d"].type_str == "tree" and len(tree["d"]) == 0)


def test_in_tree_file_still_recorded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / "a" / "b" / "c.md").write_text("one\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "a" / "b" / "c.md").write_text("two\n")
    (repo / "a" / "b" / "n.md").write_text("new\n")
    t = GitTree(repo, node="box", tree="t")
    for caller in (None, Caller.root()):
        tree = _tree_of(t, t.snapshot_worktree(caller))
        assert tree["a/b/c.md"].data == b"two\n"
        assert tree["a/b/n.md"].data == b"new\n"


def test_single_file_snapshot_reads_no_linked_folder(swapped: tuple[Path, Path]) -> None:
    """``snapshot`` (one file) reads by path too: a folder on the way made a
    link since the path was resolved is not read through (FileChanged: read
    it again), and nothing is written."""
    repo, _ = swapped
    t = GitTree(repo, node="box", tree="t")
    with pytest.raises(FileChanged):
        t.snapshot("d/f", str(pygit2.hash(SECRET)), repo / "d" / "f", t.head())
    assert SECRET not in _all_objects(repo / ".git")


def test_working_file_reads_no_linked_folder(swapped: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``working``: the path resolved (no link then), and a folder on the way
    swapped for a link before the stat and the read: NotFound, nothing read."""
    repo, _ = swapped
    t = GitTree(repo, node="box", tree="t")
    monkeypatch.setattr(t, "real_path", lambda path: ("d/f", repo / "d" / "f"))
    with pytest.raises(NotFound):  # d/f is no file of the tree: git status has it deleted
        t.working("d/f")
    assert SECRET not in _all_objects(repo / ".git")
    monkeypatch.undo()
    assert t.working("top.md").read() == b"top, edited\n"


def test_content_reread_follows_no_linked_folder(swapped: tuple[Path, Path]) -> None:
    """A working file's Content reads its bytes again by path when served:
    not through a folder swapped for a link since."""
    repo, _ = swapped
    t = GitTree(repo, node="box", tree="t")
    served = t.working("top.md")
    moved = type(served)("d/f", str(pygit2.hash(SECRET)), len(SECRET), served.commit, t.repo,
                         str(repo / "d" / "f"), None, None, str(t.root))
    with pytest.raises(FileChanged):
        b"".join(moved.stream())
    with pytest.raises(KeyError):
        moved.read()  # the blob named, which no store holds: never the outside bytes


def test_autocommit_commits_no_file_through_linked_folder(swapped: tuple[Path, Path]) -> None:
    """A write's autocommit of d/f, d a link out of the tree: git would record
    d/f deleted, and so does the commit; the outside bytes are not committed."""
    repo, _ = swapped
    t = GitTree(repo, node="box", tree="t")
    t.commit_worktree_path("d/f", "test")
    assert SECRET not in _all_objects(repo / ".git")
    with pytest.raises(KeyError):
        t.repo.head.peel().tree["d/f"]


def test_autocommit_executable_bit_is_the_owners_x_bit(tmp_path: Path) -> None:
    """As git takes it (ce_permissions: mode & 0100): the owner's x bit alone,
    not whether the daemon could execute it (root may if any x bit is set)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "seed.md").write_text("seed\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    t = GitTree(repo, node="box", tree="t")
    for name, mode, want in [("others_x.sh", 0o611, pygit2.GIT_FILEMODE_BLOB),
                             ("owner_x.sh", 0o744, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)]:
        (repo / name).write_text("#!/bin/sh\n")
        os.chmod(repo / name, mode)
        t.commit_worktree_path(name, "test")
        assert t.repo.head.peel().tree[name].filemode == want, name
    assert "others_x.sh" not in git(repo, "status", "--porcelain")  # git agrees with what was committed


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_in_tree_walk_edges_and_no_descriptor_left(tmp_path: Path) -> None:
    """``..``, empty parts, absolute paths outside, the root itself, a file on
    the way, a link at the end, an odd-byte name, a deep path: the right
    answer each time, and every descriptor closed on every path."""
    from nasfs.errors import NotServable
    from nasfs.repo.one_version import open_regular
    from nasfs.tree_walk import lstat_in_tree

    root = tmp_path / "t"
    deep = root.joinpath(*["d"] * 60)
    deep.mkdir(parents=True)
    (deep / "f").write_bytes(b"deep\n")
    odd = os.fsdecode(b"odd\xff\n name")
    (root / odd).write_bytes(b"odd\n")
    (root / "file").write_bytes(b"x\n")
    (root / "link").symlink_to("file")
    (tmp_path / "outside").write_bytes(SECRET)
    before = _fds()
    for _ in range(3):
        assert lstat_in_tree(root, "/".join(["d"] * 60) + "/f") is not None
        assert lstat_in_tree(root, "d//./d/") is not None  # empty parts and "." skipped
        assert lstat_in_tree(root, odd) is not None
        assert lstat_in_tree(root, "d/../file") is None  # ".." is no name of the tree
        assert lstat_in_tree(root, "") is None  # the root is no file of it
        assert lstat_in_tree(root, "file/x") is None  # a file on the way
        assert lstat_in_tree(root, "absent/x") is None
        assert lstat_in_tree(root, "link") is not None  # the link itself, not followed
        with open_regular(deep / "f", root) as fh:
            assert fh.read() == b"deep\n"
        with open_regular(root / odd, root) as fh:
            assert fh.read() == b"odd\n"
        with pytest.raises(NotServable):
            open_regular(root / "link", root)
        with pytest.raises(NotServable):
            open_regular(root / "d", root)  # a folder
        with pytest.raises(FileNotFoundError):
            open_regular(tmp_path / "outside", root)  # an absolute path not under the root
        with pytest.raises(FileNotFoundError):
            open_regular(root / "file" / "x", root)
    assert _fds() == before


def test_single_file_snapshot_of_a_file_made_a_link_is_changed(swapped: tuple[Path, Path]) -> None:
    """The file itself swapped for a link (to an outside file) after its view
    was hashed: FileChanged (read it again), as for a folder on the way or
    another inode; nothing read through the link, nothing written."""
    repo, outside = swapped
    t = GitTree(repo, node="box", tree="t")
    (repo / "top.md").unlink()
    (repo / "top.md").symlink_to(outside / "f")
    with pytest.raises(FileChanged):
        t.snapshot("top.md", str(pygit2.hash(SECRET)), repo / "top.md", t.head())
    assert SECRET not in _all_objects(repo / ".git")
