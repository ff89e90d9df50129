"""FUSE passthrough of real files (the pyfuse3 and libfuse 3.17 that
scripts/setup builds): an open of a real file hands the kernel the source
file itself, so its reads, writes and maps never reach the daemon and are
exactly the disk's. Real mounts, real programs. (Stock pyfuse3 on Debian 12's
libfuse, without passthrough: tests/test_install.py's wheel test.)"""

from __future__ import annotations

import mmap
import os
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import git
from .mounts import Mount, stats


def test_real_files_are_read_by_the_kernel_not_the_daemon(mounted: Mount, home: Path) -> None:
    """Reads and maps of real files, small and large, return the source's
    bytes and not one READ reaches the daemon."""
    mnt = mounted.mountpoint
    assert stats(mnt)["passthrough"] == "yes"
    (home / "big.bin").write_bytes(os.urandom(3 << 20))
    assert (mnt / "big.bin").read_bytes() == (home / "big.bin").read_bytes()
    assert (mnt / "README.txt").read_bytes() == (home / "README.txt").read_bytes()
    with open(mnt / "big.bin", "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert m[-4096:] == (home / "big.bin").read_bytes()[-4096:]
    assert subprocess.run(["cmp", str(mnt / "big.bin"), str(home / "big.bin")]).returncode == 0
    assert stats(mnt)["real_reads"] == "0"


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
    """The kernel fails (EIO) an open of an inode in passthrough that is not
    itself passthrough, and a passthrough open while a plain one is live: so
    writers' opens are handed to the kernel too. Readers and writers of one
    file, held open together, see each other's bytes at once."""
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


@pytest.fixture
def overlay_source(home: Path, tmp_path: Path):
    """``home`` seen through overlayfs (as in a container), a stacked
    filesystem that the kernel does not take backing files from."""
    layers = {name: tmp_path / name for name in ("upper", "work", "merged")}
    for folder in layers.values():
        folder.mkdir()
    options = f"lowerdir={home},upperdir={layers['upper']},workdir={layers['work']}"
    done = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(layers["merged"])],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"overlayfs did not mount: {done.stderr}"
    try:
        yield layers["merged"]
    finally:
        subprocess.run(["umount", "-l", str(layers["merged"])], capture_output=True)


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
