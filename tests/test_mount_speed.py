"""What makes the mount fast must not make it wrong or stall it: a slow view
runs beside other views and real-file reads, never in front of them; and
real entries and attributes cached by the kernel for long are dropped by the
source watcher when the source changes beside the mount. Real mounts, real
programs; nothing here asserts how long anything took."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from .conftest import git, header
from .mounts import Mount

HUGE_MB = 120  # seconds of cold outlining here; far above the worker threshold


def huge_markdown(path: Path, mb: int) -> None:
    para = ("Words of a long document that an outline has to scan through, " * 8 + "\n\n").encode()
    with open(path, "wb") as fh:
        fh.write(b"# A very long document\n\n")
        written, i = 0, 0
        while written < mb * 1_000_000:
            chunk = b"## Part %d\n\n" % i + para * 40
            fh.write(chunk)
            written += len(chunk)
            i += 1


@pytest.fixture
def slow_mount(home: Path, tmp_path: Path):
    huge_markdown(home / "notes" / "huge.md", HUGE_MB)
    m = Mount(home, tmp_path / "mnt", "--no-warm")  # no warm-up that would outline huge.md first
    try:
        yield m
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_a_slow_view_stalls_no_other_view_and_no_real_read(slow_mount: Mount, home: Path) -> None:
    """While notes/huge.md@outline is computed, views and real files in other
    folders are served: they all finish first. (A new name in notes/ itself
    waits: libfuse before 3.17 never asks the kernel for parallel lookups in
    one folder; see docs/performance.md.)"""
    mnt = slow_mount.mountpoint
    slow = subprocess.Popen(["cat", str(mnt / "notes" / "huge.md@outline")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results: dict[str, bytes] = {}

    def read(name: str) -> None:
        results[name] = (mnt / name).read_bytes()

    code = sorted(os.listdir(home / "code"))
    names = [f"code/{code[0]}@outline", "README.txt@outline", "README.txt", f"code/{code[1]}", f"code/{code[0]}"]
    try:
        time.sleep(0.5)  # not a measure: lets the slow view's lookup reach the daemon first
        threads = [threading.Thread(target=read, args=(name,), daemon=True) for name in names]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert sorted(results) == sorted(names), f"not answered within 120 s: {set(names) - set(results)}"
        assert slow.poll() is None, "huge.md@outline finished before the other reads were served"
    finally:
        out, err = slow.communicate(timeout=300)
    assert header(results[f"code/{code[0]}@outline"])["view"] == "outline"
    assert results["README.txt"] == (home / "README.txt").read_bytes()
    assert slow.returncode == 0, err
    h = header(out)
    assert h["view"] == "outline" and h["pointer"].startswith("nas://box/home/notes/huge.md@")
    assert slow_mount.alive()
