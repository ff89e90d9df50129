"""Faults a NAS meets: the daemon killed mid-write, the repository changing
underneath, files replaced while open, a full disk. Real mounts, real git."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import git, header
from .mounts import Mount

ACME = "notes/customer-acme.md"


def verify_with_git(home: Path, pointer: str) -> None:
    """A pointer's commit and lines, checked with plain git."""
    where = pointer.split("/", 4)[4]
    path, _, rest = where.rpartition("@")
    commit, _, lines = rest.partition("#")
    shown = git(home, "show", f"{commit}:{path}").encode()
    if lines:
        a, _, b = lines[1:].partition("-L")
        assert len(shown.splitlines()) >= int(b or a)


def test_kill_9_mid_write_keeps_every_fsynced_byte(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt")
    log = tmp_path / "synced"
    writer = subprocess.Popen([sys.executable, "-c", f"""
import os
fd = os.open({str(m.mountpoint / 'journal.log')!r}, os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(100000):
    os.write(fd, b'%08d\\n' % i)
    os.fsync(fd)
    with open({str(log)!r}, 'w') as fh:
        fh.write(str(i + 1)); fh.flush(); os.fsync(fh.fileno())
"""], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while (not log.exists() or int(log.read_text() or 0) < 200) and time.monotonic() < deadline:
        time.sleep(0.05)
    m.proc.kill()
    m.proc.wait()
    writer.wait(timeout=30)
    synced = int(log.read_text())
    lines = (home / "journal.log").read_bytes().splitlines()
    assert synced >= 200 and len(lines) >= synced
    assert lines[:synced] == [b"%08d" % i for i in range(synced)]
    subprocess.run(["fusermount3", "-u", "-z", str(m.mountpoint)], capture_output=True)


def test_the_repository_changing_underneath(mounted: Mount, home: Path) -> None:
    """Commit, branch switch, rebase, gc --prune=now and a held index.lock
    beside the mount: views keep answering and every pointer verifies."""
    mnt = mounted.mountpoint

    def check() -> None:
        data = (mnt / f"{ACME}@outline").read_bytes()
        verify_with_git(home, header(data)["pointer"])
        done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "verify", "--repo", str(home), "--node", "box",
                               "--tree", "home", header(data)["pointer"]], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    check()
    acme = home / ACME
    acme.write_text(acme.read_text() + "\n## Later\n\nAdded beside the mount.\n")
    check()  # a snapshot commit
    git(home, "commit", "-q", "-am", "later")
    check()
    git(home, "checkout", "-q", "-b", "side", "HEAD~1")  # ACME as it was before "later"
    check()
    (home / "README.txt").write_text("On the side branch.\n")
    git(home, "commit", "-q", "-am", "side")
    git(home, "rebase", "-q", "main")  # ACME with "later" again, under a new HEAD
    check()
    git(home, "checkout", "-q", "main")
    git(home, "reflog", "expire", "--expire=now", "--all")
    git(home, "gc", "-q", "--prune=now")
    check()
    lock = home / ".git" / "index.lock"
    lock.write_text("")
    try:
        acme.write_text(acme.read_text() + "\nWhile the index is locked.\n")
        check()
    finally:
        lock.unlink()
    assert mounted.alive()


def test_a_file_replaced_beside_the_mount_while_open(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    (home / "r.txt").write_text("old\n")
    with open(mnt / "r.txt") as fh:
        (home / "r.new").write_text("new\n")
        os.rename(home / "r.new", home / "r.txt")
        assert fh.read() == "old\n"  # the open file is the old inode, as natively
    deadline = time.monotonic() + 3  # the kernel may keep the old name for --attr-timeout
    while (mnt / "r.txt").read_text() != "new\n" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (mnt / "r.txt").read_text() == "new\n"


def test_a_full_disk_is_enospc_and_nothing_half_written_is_reported_done(small_disk: Path, tmp_path: Path) -> None:
    m = Mount(small_disk, tmp_path / "mnt")
    try:
        fd = os.open(m.mountpoint / "fill.bin", os.O_WRONLY | os.O_CREAT, 0o644)
        written = 0
        with pytest.raises(OSError) as err:
            for _ in range(10_000):
                written += os.write(fd, b"x" * 65536)
        assert err.value.errno == errno.ENOSPC
        for finish in (os.fsync, os.close):  # may succeed: the bytes that did not fit were refused at write
            try:
                finish(fd)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        assert (small_disk / "fill.bin").stat().st_size == written
        assert m.alive()
        assert (m.mountpoint / "a.md@outline").read_bytes().startswith(b"nasfs view=")
    finally:
        assert m.stop() == 0
