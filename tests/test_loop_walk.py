"""A folder of the tree swapped for a symlink never makes the daemon walk
through it: out of the tree nothing is stat'ed, and into the mount itself
the request loop (or the core thread) would wait on a FUSE answer only it
could give, and the mount would hang for good.

Unit tests swap the folder at the worst moment (between the stat of ``d``
and that of ``d/x.md``) or before the call, the link pointing at a folder
that exists only outside the tree: the answer is never of the outside
inode. The mount test swaps ``d`` for a link into the mount in a tight
loop while readers, root and another account, stat, cat and list through
it; the mount must still answer after, and stop cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from nasfs.access import Caller, Seen, decider, identity
from nasfs.fuse.nodes import Node
from nasfs.fuse.ops import NasOperations
from nasfs.fuse.pool import HEAVY_BYTES
from nasfs.fuse.read_answers import _larger
from nasfs.fuse.view_memo import ViewMemo
from nasfs.repo import GitTree
from nasfs.service import Nas

from .access_world import shared_mount
from .conftest import git
from .mounts import abort_connection, run_on_mount

OTHER = Caller(54321, 54321)
SECONDS = 6.0
NOTE = "# X\n\n## Part\n\nsome words here.\n"


@pytest.fixture()
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(tree, outside): the tree's d/x.md and e/x.md committed, ``outside``
    a folder beside the tree holding its own x.md and a large big.md."""
    root, outside = tmp_path / "tree", tmp_path / "outside"
    for folder in (root / "d", root / "e", outside):
        folder.mkdir(parents=True)
        (folder / "x.md").write_text(NOTE)
    for folder in (outside, root / "e"):
        with open(folder / "big.md", "wb") as fh:
            fh.truncate(HEAVY_BYTES * 2)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root, outside


def _swap(root: Path, target: Path) -> None:
    """``d`` made a link to ``target`` (its folder kept as d.real)."""
    os.rename(root / "d", root / "d.real")
    os.symlink(target, root / "d")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("caller", [Caller.root(), OTHER], ids=["root", "other"])
def test_a_folder_swapped_between_two_steps_of_a_decision_is_not_walked_through(
        tree: tuple[Path, Path], caller: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer swaps ``d`` just after the decision stat'ed or opened it
    as a folder: the next step must not follow the link to the outside x.md
    (the tree's own x.md, walked to before the swap, may be allowed)."""
    root, outside = tree
    outside_x, own_x = identity(os.stat(outside / "x.md")), identity(os.stat(root / "d" / "x.md"))
    swapped: list[bool] = []

    def swapping(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            result = real(path, *args, **kwargs)
            if not swapped and isinstance(path, (str, Path)) and os.path.basename(os.fspath(path)) == "d":
                swapped.append(True)
                _swap(root, outside)
            return result
        return call

    for name in ("stat", "lstat", "open"):
        monkeypatch.setattr(os, name, swapping(getattr(os, name)))
    seen, allowed = decider(root, caller).judge("d/x.md")
    monkeypatch.undo()
    assert swapped, "the decision never reached d"
    assert allowed != outside_x, "the decision walked through the link, out of the tree"
    assert (seen, allowed) in ((Seen.ALLOWED, own_x), (Seen.DENIED, None), (Seen.MISSING, None)), (seen, allowed)


def test_stat_follows_links_inside_the_tree_by_string_and_none_by_the_os(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    _swap(root, outside)
    (root / "in").symlink_to("e")
    (root / "abs").symlink_to(root / "e")
    (root / "x-link.md").symlink_to("in/x.md")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    e_x = os.stat(root / "e" / "x.md")
    before = _fds()
    for caller in (Caller.root(), OTHER):
        judge = decider(root, caller)
        for path in ("in/x.md", "abs/x.md", "x-link.md", "e/../e/x.md"):
            st = judge.stat(path)
            assert st is not None and identity(st) == identity(e_x), path
        folder = judge.stat("in")
        assert folder is not None and identity(folder) == identity(os.stat(root / "e"))
        for path in ("d/x.md", "d", "loop1/x.md", "../tree/e/x.md", "e/absent.md", "e/x.md/y"):
            assert judge.stat(path) is None, path
        assert judge.decide("d/x.md") is Seen.OUTSIDE
        assert judge.decide("loop1/x.md") is Seen.DENIED  # past the kernel's 40 links
        del judge
    assert _fds() == before  # the folders' descriptors are closed with their Decider


def test_a_decider_of_many_folders_holds_few_descriptors(tmp_path: Path) -> None:
    """A folder map's Decider walks thousands of folders: it keeps a bounded
    number open (a worker process may have a limit of 1,024)."""
    root = tmp_path / "tree"
    for i in range(300):
        (root / f"f{i}" / "sub").mkdir(parents=True)
        (root / f"f{i}" / "sub" / "x.md").write_text("x\n")
    before = _fds()
    judge = decider(root, OTHER)
    most = 0
    for i in range(300):
        assert judge.decide(f"f{i}/sub/x.md") is Seen.ALLOWED
        most = max(most, _fds() - before)
    assert most <= 80, most
    del judge
    assert _fds() == before


def test_one_walk_of_a_deep_path_holds_few_descriptors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One decision of a path 300 folders deep (any writer may make one, and
    a link may lengthen a path so) holds no more descriptors at any moment
    than a Decider's bound: a reader's request must not starve the daemon's
    other threads (the loop, the core) of descriptors. It decides as before."""
    root = tmp_path / "tree"
    deep = root.joinpath(*["a"] * 300)
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("x\n")
    (root / "link").symlink_to("/".join(["a"] * 300))
    closed = root.joinpath(*["a"] * 250)
    before = _fds()
    most = [0]
    real_open = os.open

    def counting(*args: Any, **kwargs: Any) -> Any:
        fd = real_open(*args, **kwargs)
        most[0] = max(most[0], _fds() - before)
        return fd

    monkeypatch.setattr(os, "open", counting)
    for caller in (Caller.root(), OTHER):
        judge = decider(root, caller)
        st = judge.stat("/".join(["a"] * 300 + ["x.md"]))
        assert st is not None and identity(st) == identity(os.stat(deep / "x.md"))
        st = judge.stat("link/x.md")
        assert st is not None and identity(st) == identity(os.stat(deep / "x.md"))
        del judge
    os.chmod(closed, 0o700)
    assert decider(root, OTHER).decide("link/x.md") is Seen.DENIED
    assert decider(root, Caller.root()).decide("link/x.md") is Seen.ALLOWED
    monkeypatch.undo()
    assert most[0] <= 80, most[0]
    assert _fds() == before


def test_the_cores_resolution_walks_no_link_by_the_os(tree: tuple[Path, Path]) -> None:
    """real_path, exists, is_file and is_dir (the core's split of a view's
    name) resolve by string: under ``d`` made a link out of the tree, the
    outside's files neither exist nor resolve, even one linking back in
    (realpath followed the OS out and back: e/x.md); links inside the tree
    still resolve, a last link is not followed by exists."""
    from nasfs.errors import BadPath

    root, outside = tree
    (outside / "back.md").symlink_to(root / "e" / "x.md")
    _swap(root, outside)
    (root / "in").symlink_to("e")
    (root / "dangling").symlink_to("nowhere")
    files = GitTree(root, node="box", tree="t")
    assert not files.exists("d/x.md") and not files.exists("d/back.md")
    for path in ("d/x.md", "d/back.md", "d"):
        with pytest.raises(BadPath):
            files.real_path(path)
        with pytest.raises(BadPath):
            files.is_file(path)
    assert files.real_path("in/x.md") == ("e/x.md", root / "e" / "x.md")
    assert files.exists("in/x.md") and files.is_file("in/x.md") and files.is_dir("in")
    assert files.exists("dangling") and not files.is_file("dangling")


def test_refusals_kept_for_nas_errors_hold_no_descriptors(tree: tuple[Path, Path]) -> None:
    """``.nas/errors`` keeps the last 100 refusals: kept with their
    tracebacks, each held the frames of the decision that refused, and so
    its Decider's folder descriptors (4 each here: any reader could pin
    thousands, past a daemon's limit, by reading what they may not)."""
    import gc

    from nasfs.access import AccessDenied

    root, _ = tree
    deep = root / "p" / "q" / "r"
    deep.mkdir(parents=True)
    (deep / "s.md").write_text(NOTE)
    os.chmod(deep / "s.md", 0o600)
    nas = Nas(GitTree(root, node="box", tree="t"))
    nas.read("p/q/r/s.md@outline")  # whatever the Nas keeps open, opened first
    gc.collect()
    before = _fds()
    for _ in range(20):
        with pytest.raises(AccessDenied):
            nas.read("p/q/r/s.md@outline", caller=OTHER)
    gc.collect()
    assert len(nas.errors) == 20 and "may not read p/q/r/s.md" in nas.errors[-1].render()
    assert _fds() == before


def test_the_view_memo_reads_no_facts_through_a_swapped_folder(tree: tuple[Path, Path]) -> None:
    """view_memo.facts runs on the request loop: under a folder made a link,
    no file's facts (the outside x.md's would be remembered)."""
    root, outside = tree
    _swap(root, outside)
    time.sleep(2.1)  # past SETTLED_NS: only a settled file's facts are taken
    memo = ViewMemo(str(root), str(root / ".git"))
    assert memo.facts("e", "x.md@outline") is not None  # a real folder's file: taken
    assert memo.facts("d", "x.md@outline") is None


def test_heavy_reads_no_size_through_a_swapped_folder(tree: tuple[Path, Path]) -> None:
    """Virtual.heavy (the request loop) and the read socket's _larger (its
    own thread) size a view's file by string, not through the link."""
    root, outside = tree
    _swap(root, outside)
    ops = NasOperations(Nas(GitTree(root, node="box", tree="t")))
    try:
        assert trio.run(ops.heavy, Node("view", "e/big.md"))
        assert not trio.run(ops.heavy, Node("view", "d/big.md"))
    finally:
        ops.close()
    assert _larger(root, "e/big.md", HEAVY_BYTES)
    assert not _larger(root, "d/big.md", HEAVY_BYTES)


# -- a real mount, its folder swapped for a link into itself --------------------------

WRITER = r"""
import os, sys, time
root, target, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
d, real = os.path.join(root, "d"), os.path.join(root, "d.real")
swaps = 0
while time.monotonic() < until:
    os.rename(d, real)
    os.symlink(target, d)
    os.unlink(d)
    os.rename(real, d)
    swaps += 1
print(swaps)
"""

def reader_of(*commands: str) -> str:
    """A reader for race_on_mount: bash running ``commands`` ($1: the
    mountpoint) in a loop for $2 seconds, then printing its rounds."""
    body = "".join(f"  {command} >/dev/null 2>&1\n" for command in commands)
    return f"end=$((SECONDS + $2)); n=0\nwhile [ $SECONDS -lt $end ]; do\n{body}  n=$((n + 1))\ndone\necho $n\n"


READER = reader_of('stat "$1/d/x.md@outline"', 'cat "$1/d/x.md@outline"', 'cat "$1/d/x.md"', 'ls -l "$1/d"')


@pytest.fixture()
def base() -> Iterator[Path]:
    """A folder other accounts may enter (pytest's are root's, 0700)."""
    made = Path(tempfile.mkdtemp(prefix="nasfs-loopwalk-"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def race_on_mount(base: Path, into: str, reader_script: str, *mount_args: str,
                  dirty: bool = False, least: int = 6,
                  after: tuple[tuple[str, str], ...] = (("d/x.md@outline", "# X"),)) -> None:
    """The tree's ``d`` (holding x.md) swapped for a link to ``MNT/into`` in a
    tight loop for SECONDS while ``reader_script`` (bash: $1 the mountpoint,
    $2 the seconds; it prints how many rounds it made) runs twice as root and
    twice as another account: none may hang, each makes ``least`` rounds, and
    the mount answers after (.nas/HELP, and each name of ``after`` with
    its text) and stops cleanly. ``dirty``: x.md is edited after the
    commit (its views record a snapshot)."""
    with shared_mount(base, lambda: None) as mounted:
        root = base / "tree"
        (root / "d").mkdir(parents=True)
        (root / "d" / "x.md").write_text(NOTE)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "one")
        if dirty:
            (root / "d" / "x.md").write_text(NOTE + "\nsome more words here.\n")
        for path in (root, root / "d"):
            os.chmod(path, 0o755)
        os.chmod(root / "d" / "x.md", 0o644)
        m = mounted(root, *mount_args)
        mnt = m.mountpoint
        run_on_mount(mnt, ["cat", str(mnt / "d" / "x.md@outline")], 30, "a view before the swaps")
        reader = ["bash", "-c", reader_script, "reader", str(mnt), str(int(SECONDS))]
        other = ["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", *reader]
        procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(mnt / into), str(SECONDS)],
                                  stdout=subprocess.PIPE, text=True)]
        procs += [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, HOME="/tmp"))
                  for args in (reader, reader, other, other)]
        deadline = time.monotonic() + SECONDS + 40
        outs = []
        try:
            for proc in procs:
                outs.append(proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            abort_connection(mnt)
            for proc in procs:
                proc.kill()
                proc.communicate()
            raise AssertionError(f"the mount hung while {root / 'd'} was swapped for a link to {mnt / into}") from None
        swaps, reads = int(outs[0]), [int(out) for out in outs[1:]]
        assert swaps > 100 and all(n >= least for n in reads), (swaps, reads)
        run_on_mount(mnt, ["cat", str(mnt / ".nas" / "HELP")], 20, ".nas/HELP after the swaps")
        for name, text in after:
            assert text in run_on_mount(mnt, ["cat", str(mnt / name)], 30, f"{name} after the swaps")
        assert m.stop() == 0


@pytest.mark.parametrize("into", ["d", ".at/HEAD/d"], ids=["mount-d", "mount-at-head-d"])
def test_a_folder_swapped_for_a_link_into_the_mount_never_wedges_it(base: Path, into: str) -> None:
    race_on_mount(base, into, READER)
