"""fallocate(2) through the mount (the pyfuse3 that scripts/setup builds;
stock pyfuse3 has none: tests/test_install.py's wheel test): each mode does
to the source file what it does to a native file beside it, with the source
filesystem's errno; views and side files refuse as a read-only file does;
a non-root caller's fallocate clears set-id bits, as a write does. Real
mounts, util-linux's fallocate(1)."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from .conftest import git
from .mounts import Mount, stats

MiB = 1 << 20
# (fallocate(1) flags, what they ask): -n is FALLOC_FL_KEEP_SIZE, -p PUNCH_HOLE (with
# KEEP_SIZE), -z ZERO_RANGE; offsets neither page- nor block-aligned where the call allows it
STEPS = [
    (["-o", str(MiB), "-l", "65536"], "allocate past the end: the size grows"),
    (["-n", "-o", str(MiB + 100_000), "-l", "200000"], "allocate past the end, keeping the size"),
    (["-o", "5000", "-l", "70000"], "allocate inside the file: nothing changes"),
    (["-p", "-o", "4096", "-l", "8192"], "punch a hole"),
    (["-p", "-o", "30000", "-l", "50001"], "punch an unaligned hole"),
    (["-z", "-o", "200000", "-l", "10000"], "zero a range inside"),
    (["-z", "-o", str(MiB), "-l", "300000"], "zero a range across the end: the size grows"),
    (["-z", "-n", "-o", str(MiB + 250_000), "-l", "400000"], "zero across the end, keeping the size"),
]


def fallocate(path: Path, *flags: str, user: int | None = None) -> subprocess.CompletedProcess[str]:
    ids = {} if user is None else {"user": user, "group": user, "extra_groups": []}
    return subprocess.run(["fallocate", *flags, str(path)], capture_output=True, text=True, timeout=60, **ids)


def data_extents(path: Path) -> list[tuple[int, int]]:
    """(start, end) of each run of data, by SEEK_DATA/SEEK_HOLE: where a hole was punched."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size, out, off = os.fstat(fd).st_size, [], 0
        while off < size:
            try:
                start = os.lseek(fd, off, os.SEEK_DATA)
            except OSError as exc:
                assert exc.errno == errno.ENXIO
                break
            off = os.lseek(fd, start, os.SEEK_HOLE)
            out.append((start, off))
        return out
    finally:
        os.close(fd)


@pytest.fixture(params=["passthrough", "daemon"])
def either_mount(request: pytest.FixtureRequest, home: Path, tmp_path: Path):
    """(mount, its source): ``home`` itself, whose opens pass through to the
    kernel, or ``home`` through overlayfs, whose files the daemon serves (the
    kernel takes no backing file there), with the mount's own page cache."""
    source = home if request.param == "passthrough" else request.getfixturevalue("overlay_source")
    m = Mount(source, tmp_path / "mnt")
    try:
        assert stats(m.mountpoint)["fallocate"] == "yes"
        yield m, source
        assert (stats(m.mountpoint)["passthrough"] == "yes") == (request.param == "passthrough")
    finally:
        assert m.stop() == 0


def test_each_mode_does_what_it_does_to_a_native_file(either_mount: tuple[Mount, Path], tmp_path: Path) -> None:
    """Each step on a file through the mount and on a native file beside it
    (the same ext4): both succeed, and then hold the same bytes, size,
    allocated blocks and holes; the next stat through the mount has the new
    size and blocks (no stale cached attributes), also through a descriptor
    held open across the steps, which reads the new bytes."""
    mounted, home = either_mount
    seed = os.urandom(MiB)
    through, native, source = mounted.mountpoint / "f.bin", tmp_path / "native.bin", home / "f.bin"
    through.write_bytes(seed)
    native.write_bytes(seed)
    with open(through, "rb") as held:
        for flags, what in STEPS:
            before = os.stat(through)
            ours, theirs = fallocate(through, *flags), fallocate(native, *flags)
            assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr) == (0, ""), what
            os.sync()  # settle delayed allocation on both sides before blocks are compared
            seen, want = os.stat(through), os.stat(native)
            assert (seen.st_size, seen.st_blocks) == (want.st_size, want.st_blocks), what
            assert (seen.st_size, seen.st_blocks) == (os.stat(source).st_size, os.stat(source).st_blocks), what
            assert os.fstat(held.fileno()).st_size == want.st_size, what
            assert through.read_bytes() == os.pread(held.fileno(), 4 * MiB, 0) == native.read_bytes(), what
            assert data_extents(source) == data_extents(native), what
            if "-n" in flags:
                assert seen.st_size == before.st_size and seen.st_blocks > before.st_blocks, what
    assert source.read_bytes()[4096:12288] == bytes(8192)


def test_collapse_and_insert_range_are_refused_by_the_kernel(mounted: Mount) -> None:
    """The kernel passes FUSE filesystems only KEEP_SIZE, PUNCH_HOLE and
    ZERO_RANGE (fs/fuse/file.c); COLLAPSE_RANGE and INSERT_RANGE fail with
    EOPNOTSUPP before they reach the daemon, and the file is unchanged (ext4
    beside it does both)."""
    path = mounted.mountpoint / "g.bin"
    seed = os.urandom(MiB)
    path.write_bytes(seed)
    for flag in ("-c", "-i"):
        refused = fallocate(path, flag, "-o", "65536", "-l", "65536")
        assert refused.returncode == 1 and os.strerror(errno.EOPNOTSUPP) in refused.stderr, refused.stderr
        assert path.read_bytes() == seed


def test_the_source_filesystems_errno_comes_back(small_disk: Path, tmp_path: Path) -> None:
    """On a tmpfs source: what tmpfs refuses (ZERO_RANGE: EOPNOTSUPP; more
    than it holds: ENOSPC) is refused through the mount with the same errno,
    what it takes (a hole) is done."""
    m = Mount(small_disk, tmp_path / "mnt")
    try:
        through, native = m.mountpoint / "t.bin", small_disk / "native.bin"
        seed = os.urandom(100_000)
        through.write_bytes(seed)
        native.write_bytes(seed)
        for flags in (["-z", "-o", "0", "-l", "4096"], ["-l", str(8 * MiB)], ["-p", "-o", "4096", "-l", "4096"]):
            ours, theirs = fallocate(through, *flags), fallocate(native, *flags)
            assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr), flags
            assert through.read_bytes() == native.read_bytes()
        assert "Operation not supported" in fallocate(through, "-z", "-l", "1").stderr
        assert through.read_bytes()[4096:8192] == bytes(4096) and os.stat(through).st_size == 100_000
    finally:
        assert m.stop() == 0


def fallocate_fd(fd: int, mode: int = 0, offset: int = 0, length: int = 4096) -> int:
    """errno of fallocate(2) on an open descriptor (0: done)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate64.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    return 0 if libc.fallocate64(fd, mode, offset, length) == 0 else ctypes.get_errno()


def test_views_history_and_side_files_refuse_as_read_only_files(mounted: Mount, home: Path, tmp_path: Path) -> None:
    """A view, an ``.at/`` file and a ``.nas/`` file open only read-only
    (EROFS for writing, so fallocate(1), which opens for writing, fails
    there); fallocate on their read-only descriptors is EBADF, as on a
    native read-only descriptor and on a real file's through the mount."""
    mnt = mounted.mountpoint
    native = tmp_path / "native.txt"
    native.write_text("x\n")
    virtual = [mnt / "notes" / "customer-acme.md@outline", mnt / ".at" / "v1" / "README.txt", mnt / ".nas" / "stats"]
    for path in virtual:
        refused = fallocate(path, "-l", "4096")
        assert refused.returncode == 1 and os.strerror(errno.EROFS) in refused.stderr, (path, refused.stderr)
    for path in [*virtual, native, mnt / "README.txt", mnt / "notes"]:
        fd = os.open(path, os.O_RDONLY)
        try:
            assert fallocate_fd(fd) == errno.EBADF, path
        finally:
            os.close(fd)
    assert os.stat(mnt / "README.txt").st_size == os.stat(home / "README.txt").st_size


def test_a_non_root_callers_fallocate_clears_set_id_bits(home: Path) -> None:
    """As on ext4 beside it: a user who is not root and may write a set-uid,
    set-gid (group-executable) file clears both bits with fallocate, with
    KEEP_SIZE and with a hole punched, and the call succeeds."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-fallocate-", dir="/tmp"))  # a folder other users may enter
    os.chmod(base, 0o755)
    m = Mount(home, base / "mnt", "--allow-other")
    try:
        shared, beside = m.mountpoint / "shared", base / "native"
        for folder in (shared, beside):
            folder.mkdir()
            os.chmod(folder, 0o777)
        for flags in (["-n", "-o", "0", "-l", "8192"], ["-p", "-o", "0", "-l", "4096"]):
            modes = []
            for folder in (shared, beside):
                victim = folder / "victim"
                victim.write_bytes(os.urandom(20_000))
                os.chmod(victim, 0o6777)
                done = fallocate(victim, *flags, user=65534)
                assert done.returncode == 0, done.stderr
                modes.append(stat.S_IMODE(os.stat(victim).st_mode))
            assert modes == [0o777, 0o777], flags
            assert stat.S_IMODE(os.stat(home / "shared" / "victim").st_mode) == 0o777
    finally:
        assert m.stop() == 0
        shutil.rmtree(base)


def test_autocommit_commits_what_fallocate_changed(home: Path, tmp_path: Path) -> None:
    """With --autocommit a close commits what was changed since the last
    flush: a hole punched after an earlier close of a dup'd descriptor (whose
    flush committed and cleared the mark) is committed at the last close."""
    m = Mount(home, tmp_path / "mnt", "--autocommit")
    try:
        path = m.mountpoint / "notes" / "customer-acme.md"
        fd = os.open(path, os.O_RDWR)
        try:
            os.close(os.dup(fd))  # a flush: nothing changed yet
            before = git(home, "rev-parse", "HEAD").strip()
            assert fallocate_fd(fd, 0x03, 0, 4096) == 0  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
        finally:
            os.close(fd)
        assert git(home, "log", "-1", "--format=%P %s").split() == [before, "nasfs:", "update", "notes/customer-acme.md"]
        assert git(home, "status", "--porcelain") == ""
        assert git(home, "show", "HEAD:notes/customer-acme.md").startswith("\0" * 100)
    finally:
        assert m.stop() == 0
