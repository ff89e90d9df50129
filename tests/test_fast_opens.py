"""Opens answered in C (scripts/pyfuse3-patches/3.5.0-fast-opens.patch,
nasfs/fuse/fast.py): a settled small file's read-only open and a cached
folder's opendir never reach Python, and still every change, beside the
mount or through it, shows at the next open, and no open is refused for
mixing page cache and passthrough. Real mounts, real programs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasfs.fuse import fast

from .mounts import Mount, run_on_mount, stats
from .test_passthrough import settle

pytestmark = pytest.mark.skipif(not fast.ON, reason="needs the pyfuse3 scripts/setup builds (fast opens)")


def fast_opens(mnt: Path) -> int:
    return int(stats(mnt)["fast_file_opens"])


def cat(path: Path) -> bytes:
    return subprocess.run(["cat", str(path)], capture_output=True, check=True, timeout=60).stdout


@pytest.fixture
def mounted(home: Path, tmp_path: Path):
    (home / "small.txt").write_bytes(b"settled line\n" * 100)
    settle(home / "small.txt")
    m = Mount(home, tmp_path / "mnt")
    yield home, m.mountpoint
    assert m.stop() == 0


def test_a_settled_file_s_third_open_is_answered_in_c(mounted: tuple[Path, Path]) -> None:
    home, mnt = mounted
    assert stats(mnt)["fast_opens"] == "yes"
    cat(mnt / "small.txt")  # first open: the daemon opens it, keep_cache not yet
    cat(mnt / "small.txt")  # unchanged since: keep_cache, registered for C
    before = fast_opens(mnt)
    for _ in range(5):
        assert cat(mnt / "small.txt") == (home / "small.txt").read_bytes()
    assert fast_opens(mnt) == before + 5
    assert int(stats(mnt)["fast_file_releases"]) == fast_opens(mnt)  # every C open was released in C


@pytest.mark.parametrize("how", ["in place, same size", "rename over it", "through the mount"])
def test_a_change_shows_at_the_next_open(mounted: tuple[Path, Path], how: str) -> None:
    """The C handler compares the stat of what it opens with the registered
    one: a rewrite in place at the same size is seen at once (its ctime
    moved), with no watcher event needed, and so is a write through the
    mount; an editor's rename (a new inode under the old name) within the
    watcher's bound, as before."""
    home, mnt = mounted
    for _ in range(3):
        cat(mnt / "small.txt")
    new = b"changed line\n" * 100  # same size
    if how == "in place, same size":
        with open(home / "small.txt", "r+b") as fh:
            fh.write(new)
    elif how == "rename over it":
        (home / "tmp.txt").write_bytes(new)
        os.rename(home / "tmp.txt", home / "small.txt")
    else:
        (mnt / "small.txt").write_bytes(new)
    before = fast_opens(mnt)
    if how == "rename over it":  # a new inode: the name shows it once the watcher drops the old entry
        deadline = time.monotonic() + 1.0
        while cat(mnt / "small.txt") != new:
            assert time.monotonic() < deadline, "the renamed file did not show within 1 s"
            time.sleep(0.05)
    else:  # the same inode: at once (the C handler's stat check), not within the watcher's second
        assert cat(mnt / "small.txt") == new
    assert fast_opens(mnt) == before  # it went to Python: changed, or not yet registered
    settle(home / "small.txt")
    for _ in range(3):
        assert cat(mnt / "small.txt") == new
    assert fast_opens(mnt) > before  # settled again: back in C


def test_a_writer_beside_held_c_opens_is_not_refused(mounted: tuple[Path, Path]) -> None:
    """Opens answered in C are page-cache opens; a writer's open while they
    are held is given the same mode (a passed-through one would be EIO)."""
    home, mnt = mounted
    for _ in range(2):
        cat(mnt / "small.txt")
    before = fast_opens(mnt)
    with open(mnt / "small.txt", "rb") as reader:
        assert fast_opens(mnt) == before + 1
        with open(mnt / "small.txt", "r+b") as writer:
            writer.write(b"W")
        assert reader.read(1) == b"W"
    assert (home / "small.txt").read_bytes()[:1] == b"W"
    with open(mnt / "small.txt", "rb") as again:  # changed: Python's open, fine
        assert again.read(2) == b"We"


def test_a_cached_folder_s_opendir_is_answered_in_c_and_new_names_show(mounted: tuple[Path, Path]) -> None:
    home, mnt = mounted
    for _ in range(2):
        os.listdir(mnt / "notes")
    before = int(stats(mnt)["fast_folder_opens"])
    names = os.listdir(mnt / "notes")
    assert int(stats(mnt)["fast_folder_opens"]) == before + 1 and sorted(names) == sorted(os.listdir(home / "notes"))
    (home / "notes" / "new.md").write_text("# New\n")
    deadline = time.monotonic() + 1.0
    while "new.md" not in os.listdir(mnt / "notes"):
        assert time.monotonic() < deadline, "a new name beside the mount did not show within 1 s"
        time.sleep(0.05)


def test_attributes_of_a_registered_folder_are_answered_in_c_and_follow_the_source(mounted: tuple[Path, Path]) -> None:
    """A registered folder's GETATTR (here: after the watcher dropped its
    attributes for a chmod beside the mount) is answered in C with the
    source's own fstat: the new mode shows within the bound, every field as
    the source has it."""
    home, mnt = mounted
    for _ in range(2):
        os.listdir(mnt / "notes")
    before = int(stats(mnt)["fast_getattrs"])
    os.chmod(home / "notes", 0o750)
    deadline = time.monotonic() + 1.0
    while os.stat(mnt / "notes").st_mode & 0o777 != 0o750:
        assert time.monotonic() < deadline, "a mode changed beside the mount did not show within 1 s"
        time.sleep(0.05)
    assert int(stats(mnt)["fast_getattrs"]) > before
    seen, real = os.stat(mnt / "notes"), os.stat(home / "notes")
    assert (seen.st_ino, seen.st_mode, seen.st_nlink, seen.st_uid, seen.st_mtime_ns, seen.st_ctime_ns) == \
        (real.st_ino, real.st_mode, real.st_nlink, real.st_uid, real.st_mtime_ns, real.st_ctime_ns)


def test_a_daemon_that_may_not_open_by_handle_says_so_and_serves_every_open(home: Path, tmp_path: Path) -> None:
    """``open_by_handle_at`` needs CAP_DAC_READ_SEARCH, which a daemon not
    run as root lacks: the C handler's every open failed with EPERM while
    ``.nas/stats`` said ``fast_opens=yes``. Run without that capability (as
    root without it: the mount itself still allowed), the mount says why
    not, and every open is served, by Python."""
    (home / "small.txt").write_bytes(b"settled line\n" * 100)
    settle(home / "small.txt")
    m = Mount(home, tmp_path / "mnt", prefix=("setpriv", "--bounding-set", "-dac_read_search", "--inh-caps", "-dac_read_search"))
    try:
        line = stats(m.mountpoint)["fast_opens"]
        assert line.startswith("no (") and "CAP_DAC_READ_SEARCH" in line, line
        for _ in range(4):
            assert cat(m.mountpoint / "small.txt") == (home / "small.txt").read_bytes()
        assert "fast_file_opens" not in stats(m.mountpoint)
    finally:
        assert m.stop() == 0


def drop_cached_listing(folder: Path) -> None:
    """Make the kernel drop its cached listing of ``folder`` (its pages):
    the next READDIR of a handle opened in C reaches the daemon."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_two_listings_of_one_folder_opened_in_c_each_keep_their_own(home: Path, tmp_path: Path) -> None:
    """Each opendir answered in C has a handle of its own: a listing started
    after a name was removed does not replace one half read (before, both
    had the folder's one handle, and the first went on in the second's
    names, skipping a name that never went away)."""
    many = home / "many"
    many.mkdir()
    for i in range(2000):
        (many / f"name-{i:04d}-{'x' * 40}").write_text("x")
    m = Mount(home, tmp_path / "mnt")
    try:
        folder = m.mountpoint / "many"
        for _ in range(3):  # listed whole: cached by the kernel, its opendir answered in C
            os.listdir(folder)
        drop_cached_listing(folder)
        first = os.scandir(folder)  # a first getdents: part of the listing, from the daemon
        seen = [next(first).name]
        removed = seen[0]
        (many / removed).unlink()  # beside the mount: the watcher drops the folder's listing
        time.sleep(1.0)
        assert removed not in os.listdir(folder)  # listed whole again: registered again
        drop_cached_listing(folder)
        with os.scandir(folder) as second:  # from the start, while the first is half read
            next(second)
        seen += [e.name for e in first]
        first.close()
        missing = set(os.listdir(many)) - set(seen)
        assert not missing, f"{len(missing)} names that never went away missing from the first listing"
        assert len(seen) == len(set(seen)) and int(stats(m.mountpoint)["fast_folder_opens"]) >= 2
    finally:
        assert m.stop() == 0


NOT_ROOT = ("prlimit", "--nofile=256:256", "setpriv", "--bounding-set", "-dac_read_search,-sys_resource",
            "--inh-caps", "-dac_read_search,-sys_resource")
# as a daemon not run as root: no open by handle, and 256 descriptors it cannot raise
# (with CAP_SYS_RESOURCE it would, and its LRU of 64 would never let a file go)


def test_a_daemon_that_may_not_open_by_handle_reopens_an_evicted_file_by_its_path(home: Path, tmp_path: Path) -> None:
    """The inode table keeps a descriptor per inode in an LRU and reopened an
    evicted one by its file handle: without CAP_DAC_READ_SEARCH that is EPERM,
    so once more files were read than the LRU holds (64 under a limit of 256
    descriptors), the first ones could no longer be read. Such a daemon
    reopens by path, as on a filesystem without handles, and a rename
    through the mount moves the path it reopens by."""
    files = home / "many"
    files.mkdir()
    for i in range(200):
        (files / f"f{i:03d}").write_bytes(b"line %d\n" % i)
    m = Mount(home, tmp_path / "mnt", prefix=NOT_ROOT)
    try:
        for i in range(200):
            assert cat(m.mountpoint / "many" / f"f{i:03d}") == b"line %d\n" % i
        os.rename(m.mountpoint / "many" / "f000", m.mountpoint / "many" / "moved")  # through the mount: its path changes
        for i in range(1, 200):  # each evicted file is reopened
            assert cat(m.mountpoint / "many" / f"f{i:03d}") == b"line %d\n" % i
        assert cat(m.mountpoint / "many" / "moved") == b"line 0\n"
        assert m.alive()
    finally:
        assert m.stop() == 0


PROBE = """
import errno, os, sys, time
mnt, home, how = sys.argv[1:]
fd = os.open(f"{mnt}/d/sub/f000", os.O_RDONLY)
os.chdir(f"{mnt}/d/sub")
real = f"{home}/e/sub/f000"
if how == "folder renamed through the mount":
    os.rename(f"{mnt}/d", f"{mnt}/e")
elif how == "folder swapped for a link into the mount":
    os.rename(f"{home}/d", f"{home}/e")
    os.symlink(f"{mnt}/e", f"{home}/d")
elif how == "file deleted beside the mount":
    os.unlink(f"{home}/d/sub/f000")
    real = f"{home}/d/sub/f001"
else:
    os.rename(f"{mnt}/d/sub/f000", f"{mnt}/d/sub/moved")
    real = f"{home}/d/sub/moved"
for i in range(100):  # past the LRU: f000 and its folders are let go
    with open(f"{mnt}/other/g{i:03d}", "rb") as fh:
        fh.read()
with open(real, "ab") as fh:  # beside the mount: the watcher drops what the kernel holds of them
    fh.write(b"more\\n")
with open(os.path.join(os.path.dirname(real), "new"), "wb") as fh:
    fh.write(b"new\\n")
time.sleep(1.0)
for what, do in (("fstat", lambda: os.fstat(fd).st_size), ("cwd", lambda: os.stat("new").st_size)):
    try:
        print(what, do())
    except OSError as exc:
        print(what, errno.errorcode[exc.errno])
"""


@pytest.mark.parametrize("how", ["file renamed through the mount", "folder renamed through the mount",
                                 "file deleted beside the mount", "folder swapped for a link into the mount"])
def test_an_evicted_inode_reopened_by_path_after_a_rename(home: Path, tmp_path: Path, how: str) -> None:
    """A daemon that may not open by handle reopens an evicted inode by the
    path it last saw: a file or folder renamed through the mount moves that
    path (an open file's fstat, a shell's cwd below it still work), and an
    open file is reopened by that open, deleted or not; a folder
    swapped beside the mount for a link into the mount itself is never
    followed (the daemon would ask itself, and hang): the folder is ESTALE."""
    (home / "d" / "sub").mkdir(parents=True)
    (home / "d" / "sub" / "f000").write_bytes(b"line 0\n")
    (home / "other").mkdir()
    for i in range(100):
        (home / "other" / f"g{i:03d}").write_bytes(b"line %d\n" % i)
    m = Mount(home, tmp_path / "mnt", prefix=NOT_ROOT)
    try:
        out = run_on_mount(m.mountpoint, [sys.executable, "-c", PROBE, str(m.mountpoint), str(home), how], 60, how)
        if how == "folder swapped for a link into the mount":
            assert out.split() == ["fstat", "12", "cwd", "ESTALE"], out  # the open file: by its open
        elif how == "file deleted beside the mount":  # open: reopened by that open, deleted or not
            assert out.split() == ["fstat", "7", "cwd", "4"], out
        else:
            assert out.split() == ["fstat", "12", "cwd", "4"], out
        assert m.alive()
    finally:
        assert m.stop() == 0
