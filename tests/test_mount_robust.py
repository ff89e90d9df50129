"""The mount's robustness (issue 24): a rewrite nothing announced is never
served from a stale page cache, and a folder made through the mount stays
a working directory while the watcher sees it appear in the source.
Real mounts, real programs."""

from __future__ import annotations

import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .mounts import Mount
from .test_passthrough import settle


@pytest.fixture
def mount(home: Path, tmp_path: Path):
    m = Mount(home, tmp_path / "mnt")
    yield home, m.mountpoint
    assert m.stop() == 0


def cat(path: Path) -> bytes:
    return subprocess.run(["cat", str(path)], capture_output=True, check=True, timeout=60).stdout


def test_a_same_size_rewrite_with_its_mtime_set_back_is_not_served_from_the_page_cache(mount: tuple[Path, Path]) -> None:
    """Written through a map held open (inotify reports no write through a
    map, and its close-after-write only once the map is gone) and its mtime
    set back with utime (an attribute event, which drops no data): the
    watcher tells nothing of the new bytes, only the file's ctime does. The
    next open must not keep the old pages."""
    home, mnt = mount
    src = home / "small.txt"
    src.write_bytes(b"old line\n" * 100)
    settle(src)
    for _ in range(3):  # read into the page cache, kept across opens (and registered for opens in C)
        assert cat(mnt / "small.txt") == b"old line\n" * 100
    before = src.stat()
    fd = os.open(src, os.O_RDWR)
    with mmap.mmap(fd, 0) as mapped:
        mapped[:] = b"new line\n" * 100
        mapped.flush()
        os.utime(src, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = src.stat()
        assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
        assert after.st_ctime_ns != before.st_ctime_ns
        settle(src)  # not hot: the keep-cache rule decides, not the hot one
        assert cat(mnt / "small.txt") == b"new line\n" * 100
    os.close(fd)


def shell(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=timeout)


GETCWD = f"{sys.executable} -c 'import os; print(os.getcwd())'"


def test_a_folder_made_through_the_mount_stays_a_working_directory(mount: tuple[Path, Path]) -> None:
    """The issue's own steps: the watcher sees ``pjd`` appear in the source
    (the echo of the mount's mkdir); the shell's working directory must keep
    its path (before: getcwd failed with ENOENT, every time)."""
    home, mnt = mount
    done = shell(f"mkdir {mnt}/pjd && cd {mnt}/pjd && sleep 2 && {GETCWD}")
    assert done.returncode == 0 and done.stdout.strip() == f"{mnt}/pjd", done.stderr


def test_getcwd_in_a_build_folder_made_through_the_mount(mount: tuple[Path, Path]) -> None:
    """As cmake does: a subfolder made through the mount, files made in it,
    then getcwd and a program that resolves ``..`` from there."""
    home, mnt = mount
    done = shell(f"mkdir -p {mnt}/proj/build && cd {mnt}/proj/build && echo x > CMakeCache.txt && mkdir CMakeFiles"
                 f" && sleep 2 && {GETCWD} && /bin/pwd -P && ls .. && cat ../build/CMakeCache.txt")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [f"{mnt}/proj/build", f"{mnt}/proj/build", "build", "x"]
    assert (home / "proj" / "build" / "CMakeCache.txt").read_text() == "x\n"


def test_a_working_directory_made_or_renamed_beside_or_through_the_mount_keeps_a_path(mount: tuple[Path, Path]) -> None:
    """A folder made beside the mount and entered through it at once (the
    watcher's drop of its entry comes after: expired, not unhashed), and a
    working directory renamed through the mount (its events are echoes)."""
    home, mnt = mount
    done = shell(f"mkdir {home}/beside && cd {mnt}/beside && sleep 2 && {GETCWD}")
    assert done.returncode == 0 and done.stdout.strip() == f"{mnt}/beside", done.stderr
    done = shell(f"mkdir {mnt}/old && cd {mnt}/old && mv {mnt}/old {mnt}/new && sleep 2 && {GETCWD}")
    assert done.returncode == 0 and done.stdout.strip() == f"{mnt}/new", done.stderr
