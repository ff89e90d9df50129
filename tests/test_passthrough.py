"""FUSE passthrough of real files (the pyfuse3 and libfuse 3.17 that
scripts/setup builds): an open of a large, just-changed or written real file
hands the kernel the source file itself, so its reads, writes and maps never
reach the daemon and are exactly the disk's; a small settled file is read
from the page cache. Real mounts, real programs. (Stock pyfuse3 on Debian 12's
libfuse, without passthrough: tests/test_install.py's wheel test.)"""

from __future__ import annotations

import mmap
import os
import subprocess
import time
from pathlib import Path

import pytest

from nasfs.fuse.fast import HOT_NS
from nasfs.fuse.passthrough import PASS_FROM

from .conftest import git
from .mounts import Mount, stats


def settle(*paths: Path) -> None:
    """Wait until none of ``paths`` changed in the last HOT_NS: a settled
    file's open takes the size rule, not the hot one."""
    last = max(max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in paths)
    time.sleep(max(0.0, (last + HOT_NS - time.time_ns()) / 1e9) + 0.1)


@pytest.fixture
def settled(home: Path) -> Path:
    """``home`` with small.txt (a page) and big.bin (twice PASS_FROM), both
    settled."""
    (home / "small.txt").write_bytes(b"a small settled file\n" * 100)
    (home / "big.bin").write_bytes(os.urandom(2 * PASS_FROM))
    settle(home / "small.txt", home / "big.bin")
    return home


def test_a_large_file_is_read_by_the_kernel_not_the_daemon(settled: Path, tmp_path: Path) -> None:
    """Reads and maps of a large settled file return the source's bytes and
    not one READ reaches the daemon."""
    m = Mount(settled, tmp_path / "mnt")
    try:
        mnt = m.mountpoint
        assert stats(mnt)["passthrough"] == "yes"
        assert (mnt / "big.bin").read_bytes() == (settled / "big.bin").read_bytes()
        with open(mnt / "big.bin", "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            assert mapped[-4096:] == (settled / "big.bin").read_bytes()[-4096:]
        assert subprocess.run(["cmp", str(mnt / "big.bin"), str(settled / "big.bin")]).returncode == 0
        assert stats(mnt)["real_reads"] == "0"
    finally:
        assert m.stop() == 0


def test_a_small_settled_file_read_again_is_the_page_caches(settled: Path, tmp_path: Path) -> None:
    """A small settled file is served from the page cache: read again
    (unchanged) and stat'ed, as grep does with every file, it sends the
    daemon nothing. A passed-through read would have the kernel drop the
    file's atime, and the stat would ask the daemon (a GETATTR per file
    for a grep -r over many)."""
    m = Mount(settled, tmp_path / "mnt")
    try:
        path = m.mountpoint / "small.txt"
        for _ in range(2):  # the first open fills the page cache, the second keeps it
            assert path.read_bytes() == (settled / "small.txt").read_bytes()
            os.stat(path)
        before = stats(m.mountpoint)
        for _ in range(3):
            assert path.read_bytes() == (settled / "small.txt").read_bytes()
            assert os.stat(path).st_size == 2100
        after = stats(m.mountpoint)
        for counter in ("real_lookups_and_getattrs", "real_reads"):
            assert after[counter] == before[counter], counter
        assert int(before["real_reads"]) > 0  # read through the daemon once: not passed through
    finally:
        assert m.stop() == 0


def test_a_file_held_open_keeps_its_opens_mode(mounted: Mount, home: Path) -> None:
    """The kernel fails (EIO) an open passed through beside one served from
    the page cache, and the reverse. So an open of a file held open takes
    the mode of the opens already there, even when the file has grown past
    PASS_FROM, or changed, since: small settled files held by a reader and a
    writer, grown through the writer; held by a reader and changed beside
    the mount; and held by a writer (passed through) then opened to read."""
    mnt = mounted.mountpoint
    for name in ("grown.txt", "changed.txt", "written.txt"):
        (home / name).write_bytes(b"small and settled\n")
    settle(*(home / name for name in ("grown.txt", "changed.txt", "written.txt")))
    grown = b"grown past the threshold\n" * (PASS_FROM // 25 + 1)
    with open(mnt / "grown.txt", "rb") as reader, open(mnt / "grown.txt", "r+b") as writer:
        writer.write(grown)
        writer.flush()
        with open(mnt / "grown.txt", "rb") as third:  # large and just changed: on its own it would be passed through
            assert third.read() == grown
        assert os.pread(reader.fileno(), len(grown) + 1, 0) == grown
    assert (home / "grown.txt").read_bytes() == grown
    with open(mnt / "changed.txt", "rb") as reader:
        assert reader.read() == b"small and settled\n"
        (home / "changed.txt").write_bytes(b"changed beside the mount\n")
        with open(mnt / "changed.txt", "rb") as second:  # just changed: on its own it would be passed through
            assert second.read() == b"changed beside the mount\n"
    with open(mnt / "written.txt", "r+b") as writer:
        with open(mnt / "written.txt", "rb") as reader:  # small and settled: on its own, the page cache
            assert reader.read() == b"small and settled\n"
            writer.write(b"SMALL")
            writer.flush()
            assert os.pread(reader.fileno(), 100, 0) == b"SMALL and settled\n"


def test_a_file_just_written_maps_shared_and_follows_its_source(mounted: Mount, home: Path) -> None:
    """A read-only open of a file changed in the last 2 s used to be direct_io
    (docs/mount.md), so MAP_SHARED failed with ENODEV. A passthrough open maps
    the source file's own pages: it works at once, and a write beside the
    mount is in the map at once, as on the disk."""
    path = mounted.mountpoint / "fresh.bin"
    path.write_bytes(b"fresh bytes\n" * 1000)
    with open(path, "rb") as fh:
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as shared:
            assert shared[:12] == b"fresh bytes\n" and len(shared) == 12000
            with open(home / "fresh.bin", "r+b") as beside:
                beside.write(b"FRESH")
            assert shared[:12] == b"FRESH bytes\n"
        with mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as private:
            assert private[:12] == b"FRESH bytes\n"


def test_every_open_of_a_file_shares_its_backing_file(mounted: Mount) -> None:
    """Writers' opens are passed through, and every open of a file held open
    takes the mode of the opens there (the kernel fails, EIO, an open of an
    inode in passthrough that is not itself passthrough, and the reverse).
    Readers and writers of one file, held open together, see each other's
    bytes at once, and no read reaches the daemon."""
    path = mounted.mountpoint / "shared.txt"
    path.write_bytes(b"one\n")
    with open(path, "rb") as reader:
        with open(path, "r+b") as writer:
            writer.write(b"two\n")
            writer.flush()
            assert os.pread(reader.fileno(), 100, 0) == b"two\n"
            with open(path, "rb") as second:
                assert second.read() == b"two\n"
        with open(path, "ab") as appender:
            appender.write(b"three\n")
        assert os.pread(reader.fileno(), 100, 0) == b"two\nthree\n"
    with open(path, "r+b") as writer, mmap.mmap(writer.fileno(), 0) as m:
        m[:3] = b"TWO"
        m.flush()
    assert path.read_bytes() == (mounted.source / "shared.txt").read_bytes() == b"TWO\nthree\n"
    assert stats(mounted.mountpoint)["real_reads"] == "0"


def test_autocommit_commits_a_write_the_daemon_never_saw(home: Path, tmp_path: Path) -> None:
    """An existing file opened for writing: its writes go to the source in
    the kernel, never through the daemon's write, and still become a commit
    when the file is closed."""
    m = Mount(home, tmp_path / "mnt", "--autocommit")
    try:
        before = git(home, "rev-parse", "HEAD").strip()
        with open(m.mountpoint / "README.txt", "r+b") as fh:
            fh.write(b"Changed")
        assert git(home, "log", "-1", "--format=%P %s").split() == [before, "nasfs:", "update", "README.txt"]
        assert git(home, "status", "--porcelain") == ""
    finally:
        assert m.stop() == 0


def committed(home: Path, rel: str) -> bytes:
    return subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=home, capture_output=True, check=True).stdout


def test_autocommit_commits_what_is_written_after_an_earlier_close(home: Path, tmp_path: Path) -> None:
    """A shell's ``> file`` opens the file, dup2()s it onto stdout and closes
    the first descriptor: that close flushes before anything is written. The
    writes that follow pass through the kernel unseen, so the last close of
    the file must commit again; so must the release of a map written after
    its file was closed. The first close, before any write, commits nothing
    (no commit of the emptied file before the one of what was written)."""
    m = Mount(home, tmp_path / "mnt", "--autocommit")
    mnt = m.mountpoint
    try:
        before = git(home, "rev-parse", "HEAD").strip()
        subprocess.run(["bash", "-c", f"echo hello > {mnt}/notes/new.txt; echo world > {mnt}/README.txt"],
                       check=True, timeout=60)
        assert git(home, "log", "--format=%s", f"{before}..").splitlines() == \
            ["nasfs: update README.txt", "nasfs: update notes/new.txt"]
        subprocess.run(["sh", "-c", f"{{ /bin/echo a; echo b; }} > {mnt}/code/more.txt"], check=True, timeout=60)
        assert committed(home, "notes/new.txt") == b"hello\n"
        assert committed(home, "README.txt") == b"world\n"
        assert committed(home, "code/more.txt") == b"a\nb\n"
        assert git(home, "status", "--porcelain") == ""

        with open(mnt / "README.txt", "r+b") as fh:
            shared = mmap.mmap(fh.fileno(), 0)
        shared[:5] = b"WORLD"  # the file is closed; the map still writes to it
        shared.close()  # the last reference: the kernel releases the open file
        deadline = time.monotonic() + 30  # release is not waited for by munmap
        while committed(home, "README.txt") != b"WORLD\n" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert committed(home, "README.txt") == b"WORLD\n"
        assert git(home, "status", "--porcelain") == ""
    finally:
        assert m.stop() == 0


def test_a_source_the_kernel_will_not_back_is_served_by_the_daemon(overlay_source: Path, tmp_path: Path) -> None:
    """The kernel refuses backing files on overlayfs (ELOOP): the first open
    falls back to a plain open, passthrough stays off for the mount, and
    every file reads and writes as before, through the daemon."""
    m = Mount(overlay_source, tmp_path / "mnt")
    try:
        mnt = m.mountpoint
        assert (mnt / "README.txt").read_bytes() == (overlay_source / "README.txt").read_bytes()
        (mnt / "new.txt").write_bytes(b"written through the daemon\n")
        assert (mnt / "new.txt").read_bytes() == (overlay_source / "new.txt").read_bytes() == b"written through the daemon\n"
        seen = stats(mnt)
        assert seen["passthrough"].startswith("no (the kernel refused a backing file")
        assert int(seen["real_reads"]) > 0
        assert "passthrough_open: Too many levels of symbolic links" in m.log.read_text()
    finally:
        assert m.stop() == 0


def test_an_inode_reopened_by_its_path_is_the_very_file_it_was(tmp_path: Path) -> None:
    """The inode table of a daemon that may not open by handle reopens an
    evicted inode by its last path: a RENAME_EXCHANGE of two folders through
    the mount moves each one's entries with it (not back and forth), and a
    path naming a new file that was given the old one's inode number (same
    dev and inode, another generation: its handle differs) is ESTALE, and has
    no path, not the other file's bytes or attributes."""
    import errno

    from nasfs.fuse.passthrough import RENAME_EXCHANGE
    from nasfs.fuse.real import ROOT, RealInodes
    from nasfs.fuse.syscalls import rename2

    root = tmp_path / "src"
    (root / "a" / "in").mkdir(parents=True)
    (root / "b").mkdir()
    for rel in ("a/in/f", "b/g", "x", "y"):
        (root / rel).write_text(rel)
    table = RealInodes(str(root))
    table.by_handle = False  # as without CAP_DAC_READ_SEARCH

    def learn(rel: str) -> int:
        fd = os.open(root / rel, os.O_PATH | os.O_NOFOLLOW)
        return table.learn(fd, os.fstat(fd), rel)

    f, g, x = learn("a/in/f"), learn("b/g"), learn("x")
    learn("a/in"), learn("a"), learn("b")

    def evict() -> None:
        for ino in list(table._fds):
            if ino != ROOT:
                os.close(table._fds.pop(ino))

    rename2(table.fd(ROOT), b"a", table.fd(ROOT), b"b", RENAME_EXCHANGE)
    table.moved([(os.stat(root / "b"), "b"), (os.stat(root / "a"), "a")])
    evict()
    assert table.path(f) == "b/in/f" and table.path(g) == "a/g"
    os.rename(root / "y", root / "x")
    st = os.stat(root / "x")
    table._entries[x].key = (st.st_dev, st.st_ino)  # as if the new x had been given the old one's number
    evict()
    with pytest.raises(OSError) as refused:
        table.fd(x)
    assert refused.value.errno == errno.ESTALE
    assert table.path(x) is None
