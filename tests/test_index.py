"""``nasfs index``: warming the disk cache, and the mount's background warm-up."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import git
from .folder_trees import grow

ACME = "notes/customer-acme.md"
SUMMARY = re.compile(r"^indexed (\d+) files \((\d+) tokens outlined, (\d+) skipped: binary/large/refused\), "
                     r"(\d+) folder maps ranked in [\d.]+ s$")


def nasfs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "nasfs", *args], capture_output=True, text=True)


def cached_views() -> int:
    """Rows of computed work (views and token counts) in the shared disk cache."""
    db = Path(os.environ["NASFS_CACHE_DIR"]) / "cache.sqlite3"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM kv WHERE k LIKE 'resp:%' OR k LIKE 'tokens:%'").fetchone()[0]


@pytest.fixture
def tree(home: Path) -> tuple[Path, int]:
    """home plus an untracked file, an ignored one and a binary one; and how
    many files nasfs index must visit (every file git does not ignore)."""
    (home / "untracked.md").write_text("# Loose\n\nnot committed yet\n")
    (home / ".gitignore").write_text("*.log\n")
    (home / "noise.log").write_text("ignored\n")
    (home / "blob.bin").write_bytes(bytes(range(256)) * 8)
    listed = git(home, "ls-files", "-z").split("\0") + git(home, "ls-files", "-z", "--others", "--exclude-standard").split("\0")
    files = {p for p in listed if p and (home / p).is_file() and not (home / p).is_symlink()}
    assert "noise.log" not in files and "untracked.md" in files and "blob.bin" in files
    return home, len(files)


def summary(done: subprocess.CompletedProcess[str]) -> tuple[int, int, int, int]:
    """(files indexed, tokens outlined, files skipped, folder maps ranked)."""
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and done.stderr == "", (done.stdout, done.stderr)  # no bar when stderr is not a terminal
    m = SUMMARY.match(lines[0])
    assert m, lines[0]
    return int(m[1]), int(m[2]), int(m[3]), int(m[4])


def test_index_counts_every_file_and_warms_a_new_process(tree: tuple[Path, int]) -> None:
    home, expected = tree
    # a cold read in a new process computes and stores its view: the counter can move
    before = cached_views()
    assert nasfs("read", "--repo", str(home), "code/billing.py@outline").returncode == 0
    assert cached_views() > before

    files, tokens, skipped, _ = summary(nasfs("index", "--repo", str(home), "--jobs", "1"))
    assert files + skipped == expected and skipped >= 1 and tokens > 0  # blob.bin is binary
    stored = cached_views()
    for spec, view in ((f"{ACME}@outline", "outline"), ("untracked.md@outline", "full")):  # 3 lines: cheaper whole
        out = nasfs("read", "--repo", str(home), spec)
        assert out.returncode == 0 and out.stdout.startswith(f"nasfs view={view} ")
    assert cached_views() == stored, "a read after nasfs index computed its view again"


def test_jobs_2_gives_the_same_summary(tree: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, expected = tree
    one = summary(nasfs("index", str(home), "--jobs", "1"))
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path / "cache2"))  # cold again
    two = summary(nasfs("index", str(home), "--jobs", "2"))
    assert one == two and one[0] + one[2] == expected
    assert summary(nasfs("index", str(home), "--jobs", "2")) == two  # warm: same answer


# Maps read in a new process, which counts the outlines it computes and the
# files it reads to rank a map; prints {"counts": ..., "answers": {spec: text}}.
MAP_READER = r"""
import json, sys
from nasfs import folders, views
from nasfs.cache import DiskCache
from nasfs.repo import GitTree
from nasfs.service import Nas

counts = {"outlined": 0, "heads read": 0}
outline, head = views.Analysis.of.__func__, folders._head

def counted_outline(cls, *args):
    counts["outlined"] += 1
    return outline(cls, *args)

def counted_head(*args):
    counts["heads read"] += 1
    return head(*args)

views.Analysis.of = classmethod(counted_outline)
folders._head = counted_head
disk = DiskCache()
nas = Nas(GitTree(sys.argv[1], node="box", tree="home", hashes=disk), disk=disk)
answers = {spec: nas.read(spec).text.decode() for spec in sys.argv[2:]}
print(json.dumps({"counts": counts, "answers": answers}))
"""
MAPS = (".@2000", ".@outline", ".@outline=5@300", "pkg@outline", "pkg/deep@300", "pkg-link@120", "notes@outline")


def read_maps(home: Path) -> dict:
    done = subprocess.run([sys.executable, "-P", "-c", MAP_READER, str(home), *MAPS], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_map_after_index_outlines_no_file_and_reads_none_to_rank_it(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nasfs index leaves each file's map facts and every folder's ranking on
    disk: a first map in a new process computes no outline and reads no file
    to rank it, and says what a map made from nothing says."""
    grow(home, tmp_path / "outside")  # a package, ignored and untracked files, an edit, symlinks
    *_, maps = summary(nasfs("index", "--repo", str(home), "--jobs", "2"))
    assert maps >= 6  # ., code, config, data, notes, pkg, pkg/deep, pkg/deep/er
    warm = read_maps(home)
    assert warm["counts"] == {"outlined": 0, "heads read": 0}
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path / "cold"))
    cold = read_maps(home)
    assert cold["counts"]["outlined"] > 0 and cold["counts"]["heads read"] > 0  # the counters do count
    assert warm["answers"] == cold["answers"]


def test_a_terminal_gets_a_progress_bar_to_the_last_file(tree: tuple[Path, int]) -> None:
    """On a terminal the bar (tqdm) counts every file, also with several workers
    that answer in chunks; the summary still goes to stdout."""
    import fcntl
    import pty
    import struct
    import termios

    home, expected = tree
    for jobs in ("1", "2"):
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a size
        proc = subprocess.Popen([sys.executable, "-P", "-m", "nasfs", "index", "--jobs", jobs, str(home)],
                                stdout=subprocess.PIPE, stderr=follower, text=True)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        os.close(leader)
        out = proc.communicate()[0]
        assert proc.returncode == 0 and SUMMARY.match(out.strip()), out
        bar = shown.decode(errors="replace")
        assert "100%" in bar and f"{expected}/{expected}" in bar and "file/s" in bar, bar


def test_quiet_prints_nothing(home: Path) -> None:
    done = nasfs("index", "--quiet", str(home))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_the_mount_warms_up_in_the_background(home: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        pytest.fail("FUSE tests need root and /dev/fuse (run scripts/test as root)")
    from .mounts import Mount

    m = Mount(home, tmp_path / "mnt")
    try:
        deadline = time.monotonic() + 60
        while "(done)" not in m.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        log = m.log.read_text()
        assert re.search(r"warm-up: \d+/\d+ files, \d+ s", log), log
        assert "warm-up: " in log and "(done)" in log, log
        assert "Renewal" in (m.mountpoint / f"{ACME}@outline").read_text()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]
    m = Mount(home, tmp_path / "mnt2", "--no-warm")
    try:
        time.sleep(0.5)
    finally:
        assert m.stop() == 0
    assert "warm-up" not in m.log.read_text()
