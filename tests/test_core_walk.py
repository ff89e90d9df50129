"""Answers made of many files (a search's in:, the audience of a snapshot)
walk no folder of the tree by path through the OS (libgit2's status and
ignore rules still do, for folder maps and summaries: docs/mount.md):
a folder swapped for a symlink into the mount would have the thread that
walks (the daemon's core thread, or a worker it waits for) wait on a FUSE
answer only it could give. tests/test_loop_walk.py does the same for the
request loop's and the core's stats; its race and helpers are reused.

Unit tests make the swap deterministic, the link pointing out of the tree:
the answer is never of the outside inode, or is refused. The mount tests
race a writer against readers of each such answer."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasfs import audience
from nasfs import search as searching
from nasfs.repo import GitTree
from nasfs.service import Nas

from .conftest import header
from .summary_servers import CITING_SCRIPT
from .test_loop_walk import _swap, base, race_on_mount, reader_of, tree  # noqa: F401  (fixtures)

__all__ = ["base", "tree"]


def test_in_resolves_its_links_by_string_never_through_a_swapped_folder(tree: tuple[Path, Path]) -> None:
    """``in:d`` with ``d`` made a link out of the tree is refused, even when
    the outside links back into the tree (realpath followed the OS out and
    back, and searched e through the outside); links inside the tree are
    followed, and into ``.git`` or a file refused, in the same words."""
    root, outside = tree
    (outside / "back").symlink_to(root / "e")
    os.rename(root / "d", root / "d.real")
    (root / "d").symlink_to(outside / "back")
    (root / "in").symlink_to("e")
    (root / "git").symlink_to(".git")

    def folder(text: str) -> str:
        return searching._searched_folder(searching.parse_query(text), root)

    with pytest.raises(searching.BadQuery, match="leads outside the served tree"):
        folder("x in:d")
    with pytest.raises(searching.BadQuery, match="leads outside the served tree"):
        folder("x in:git")
    with pytest.raises(searching.BadQuery, match="is not a folder of the tree"):
        folder("x in:e/x.md")
    with pytest.raises(searching.BadQuery, match="is not a folder of the tree"):
        folder("x in:absent")
    assert folder("x in:in") == "e" and folder("x in:d.real") == "d.real" and folder("x") == "."
    assert searching.run_rg(searching.parse_query("words in:in"), root)[0].path == "e/x.md"


def test_a_search_in_a_folder_swapped_out_of_the_tree_finds_nothing_there(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (outside / "x.md").write_text("outsideword\n")
    _swap(root, outside)
    nas = Nas(GitTree(root, node="box", tree="t"))
    with pytest.raises(searching.BadQuery):
        searching.search(nas, "outsideword in:d")
    assert header(searching.search(nas, "outsideword").text)["matches"] == "0"


HOLDING_FS = r"""
import errno, sys, trio, pyfuse3
class Ops(pyfuse3.Operations):
    async def lookup(self, parent, name, ctx=None):
        if name == b"held":
            await trio.sleep(float(sys.argv[2]))  # read by the daemon, answered late: as a core call held
        raise pyfuse3.FUSEError(errno.ENOENT)
    async def getattr(self, inode, ctx=None):
        a = pyfuse3.EntryAttributes(); a.st_mode = 0o40755; a.st_ino = 1; a.st_nlink = 2
        return a
pyfuse3.init(Ops(), sys.argv[1], set(pyfuse3.default_options) | {"fsname=nasfs-test-holding"})
try:
    trio.run(pyfuse3.main)
finally:
    pyfuse3.close(unmount=True)
"""
HELD = 8.0


@pytest.fixture()
def holding(tmp_path: Path) -> Iterator[Path]:
    """A FUSE mount whose lookup of ``held`` is answered only after HELD seconds."""
    mnt = tmp_path / "held-mnt"
    mnt.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", HOLDING_FS, str(mnt), str(HELD)])
    deadline = time.monotonic() + 20
    while not os.path.ismount(mnt):
        assert proc.poll() is None and time.monotonic() < deadline, "the holding mount did not come up"
        time.sleep(0.05)
    try:
        yield mnt
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=HELD + 10)
        finally:
            subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)


def test_a_killed_search_waiting_on_a_fuse_answer_frees_its_thread(holding: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child waiting on a FUSE request its daemon has read is not ended by
    SIGKILL, only by the answer (the kernel's request_wait_answer): the
    kill of subprocess.run's timeout then waits for that answer, for good
    when it needs the waiting thread. _bounded gives up after KILL_WAIT."""
    monkeypatch.setattr(searching, "RG_SECONDS", 1)
    started = time.monotonic()
    assert searching._bounded(["stat", str(holding / "held")], holding.parent) is None
    assert time.monotonic() - started < 1 + searching.KILL_WAIT + 1.5


def test_subprocess_run_waits_for_the_fuse_answer_past_its_timeout(holding: Path) -> None:
    """What _bounded is for: the kernel behaviour, shown with the timeout's kill of subprocess.run."""
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(["stat", str(holding / "held")], capture_output=True, timeout=1)
    assert time.monotonic() - started > HELD - 2


def test_a_snapshots_audience_stats_no_folder_through_a_link(tree: tuple[Path, Path]) -> None:
    """The stats a snapshot's store is chosen by (audience._path_stats) are
    of the tree's own inodes: under ``d`` made a link out of the tree, none
    (the outside folder's inode was stat'ed on main), and the answer is the
    private store's."""
    root, outside = tree
    before = audience._path_stats(root, "d/x.md")
    assert before is not None and [st.st_ino for st, _ in before] == [
        os.stat(p).st_ino for p in (root, root / "d", root / "d" / "x.md")]
    _swap(root, outside)
    assert audience._path_stats(root, "d/x.md") is None
    assert audience.narrower_than_git(root, root / ".git", ["d/x.md"])


def test_the_audience_walk_opens_no_folder_by_its_path(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every folder below the root is reached from its parent's descriptor:
    no stat or open is given a path under the tree (the kernel would walk it)."""
    root, _ = tree
    by_path: list[str] = []
    for name in ("stat", "lstat", "open"):
        real = getattr(os, name)

        def watched(path: object, *args: object, _real: object = real, **kwargs: object) -> object:
            if kwargs.get("dir_fd") is None and isinstance(path, (str, Path)) and os.fspath(path).startswith(f"{root}/"):
                by_path.append(os.fspath(path))
            return _real(path, *args, **kwargs)  # type: ignore[operator]
        monkeypatch.setattr(os, name, watched)
    audience.narrower_than_git(root, root / ".git", ["d/x.md", "e/x.md"])
    monkeypatch.undo()
    assert [p for p in by_path if not p.startswith(f"{root}/.git")] == []


def test_a_request_of_the_core_thread_is_refused_unanswered(tree: tuple[Path, Path]) -> None:
    """A FUSE request made by the thread running a core call (a walk of it
    that reached the mount through a link) is ENOENT at once, its handler
    never run (it may wait for that very thread); another process's request
    meanwhile, and the same thread's once the call is over, are answered."""
    import subprocess as sp
    import threading

    import pyfuse3
    import trio

    from nasfs.fuse.ops import NasOperations

    class Ctx(pyfuse3.RequestContext):  # type: ignore[misc]
        def __init__(self, pid: int) -> None:
            self._pid = pid
        pid = property(lambda self: self._pid)  # type: ignore[assignment]

    root, _ = tree
    ops = NasOperations(Nas(GitTree(root, node="box", tree="t")))
    other = sp.Popen(["sleep", "30"])

    async def ask(pid: int) -> int:
        try:
            await ops.getattr(pyfuse3.ROOT_INODE, Ctx(pid))
        except pyfuse3.FUSEError as exc:
            return exc.errno
        return 0

    def in_core() -> tuple[int, int, int]:
        me = threading.get_native_id()
        return me, trio.from_thread.run(ask, me), trio.from_thread.run(ask, other.pid)

    async def main() -> tuple[int, int, int, int]:
        me, mine, others = await ops.core(in_core)
        return mine, others, await ask(me), len(ops.core_threads)

    try:
        assert trio.run(main) == (errno.ENOENT, 0, 0, 0)
    finally:
        other.kill()
        other.wait()
        ops.close()



CORE_STAT = r"""
import errno, os, sys, trio, pyfuse3
from nasfs.fuse.ops import NasOperations
from nasfs.repo import GitTree
from nasfs.service import Nas
root, mnt = sys.argv[1:3]
ops = NasOperations(Nas(GitTree(root, node="box", tree="t")))
pyfuse3.init(ops, mnt, set(pyfuse3.default_options) | {"fsname=nasfs-test-core-thread"})
view = os.path.join(mnt, "d", "x.md@outline")  # its lookup needs a core call

def stat_view():
    try:
        os.stat(view)
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "answered"

async def main():
    async with trio.open_nursery() as nursery:
        nursery.start_soon(pyfuse3.main)
        print(await ops.core(stat_view), await trio.to_thread.run_sync(stat_view), flush=True)
        pyfuse3.terminate()

try:
    trio.run(main)
finally:
    ops.close()
    pyfuse3.close(unmount=True)
"""


def test_the_kernels_request_of_the_core_thread_is_refused(tree: tuple[Path, Path], tmp_path: Path) -> None:
    """The guard with a real kernel: a FUSE request names the thread that
    made it (ctx.pid is its native id, not its process's), so a daemon whose
    core call stats a view of its own mount (as a walk through a link into
    it would) gets ENOENT at once, where it waited for good on its own core
    call; the same stat from another thread of that process is answered."""
    import nasfs

    from .mounts import communicate_on_mount

    root, _ = tree
    mnt = tmp_path / "core-mnt"
    mnt.mkdir()
    imported = f"PYTHONPATH={Path(nasfs.__file__).parents[1]}"  # the nasfs this test imported
    try:
        _, out, err = communicate_on_mount(mnt, ["env", imported, sys.executable, "-c", CORE_STAT, str(root), str(mnt)],
                                           30, "a core call's stat of a view of its own mount")
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
    assert out.split() == ["ENOENT", "answered"], (out, err[-2000:])

# -- a real mount: searches, summaries, diffs and snapshots while d is swapped ------------------

READER = reader_of('cat "$1/.nas/search/words in:d"', 'cat "$1/d@summary"', 'cat "$1/.nas/diff/HEAD"',
                   'cat "$1/d/x.md@outline"')


def _race(base: Path, into: str, reader: str, after: tuple[tuple[str, str], ...]) -> None:
    script = base / "cite.py"
    script.write_text(CITING_SCRIPT)
    race_on_mount(base, into, reader, "--no-warm", "--summarizer", f"{sys.executable} {script}", dirty=True, least=1,
                  after=(("d/x.md@outline", "# X"), *after))


@pytest.mark.parametrize("into", ["d", ".at/HEAD/d"], ids=["mount-d", "mount-at-head-d"])
def test_answers_of_many_files_never_wedge_the_mount_under_a_swapped_folder(base: Path, into: str) -> None:  # noqa: F811
    """A search ``in:d`` (in a worker process), the summary of ``d``, the
    diff of the working tree with HEAD (a worker) and a view of the edited
    d/x.md (it records a snapshot, whose store audience.py chooses in the
    core thread), by root and another account, while ``d`` is swapped for a
    link into the mount. A guard against a regression: on main this race
    did not hang in 9 runs (the unit tests above are what fail there), and
    folder maps are left out (libgit2 still walks their folders by path:
    docs/mount.md, "Still open"; scripts/bench/core_wedge.py maps)."""
    _race(base, into, READER, ((".nas/search/words in:d", "some more words"), (".nas/diff/HEAD", "+some more words")))

