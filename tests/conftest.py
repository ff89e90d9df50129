"""Shared fixtures: a real git repository made from the bundled demo tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "demo"


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def header(text: bytes) -> dict[str, str]:
    """The key=value pairs of a view's header line."""
    first = text.split(b"\n", 1)[0].decode()
    assert first.startswith("nasfs "), first[:200]
    return dict(pair.split("=", 1) for pair in first.split(" ")[1:])


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own disk cache, so no test is served another's answer."""
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The demo tree as a git repo: tag v1 (first commit), then a second commit."""
    work = tmp_path / "home"
    shutil.copytree(DEMO, work)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    git(work, "tag", "v1")
    acme = work / "notes" / "customer-acme.md"
    acme.write_text(acme.read_text().replace("price held at the 2026 rate", "price held at the 2026 rate, then +3%"))
    git(work, "commit", "-q", "-am", "second")
    return work


@pytest.fixture
def nas(home: Path):
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    return Nas(GitTree(home, node="box", tree="home"))


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 4 MiB tmpfs holding a git work tree (a full disk; a filesystem without ZERO_RANGE)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
    try:
        git(disk, "init", "-q", "-b", "main")
        (disk / "a.md").write_text("# A\n")
        git(disk, "add", "-A")
        git(disk, "commit", "-q", "-m", "a")
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


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


@pytest.fixture(scope="session", autouse=True)
def _no_stale_mounts(tmp_path_factory: pytest.TempPathFactory):
    from .mounts import clear_stale_mounts

    clear_stale_mounts(str(tmp_path_factory.getbasetemp().parent), quiet_for=600)  # earlier sessions'
    yield
    clear_stale_mounts(str(tmp_path_factory.getbasetemp()))  # this session's own


@pytest.fixture
def mounted(home: Path, tmp_path: Path):
    """``home`` mounted at tmp_path/mnt by a real nasfs daemon."""
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        pytest.fail("FUSE tests need root and /dev/fuse (run scripts/test as root)")
    from .mounts import Mount

    m = Mount(home, tmp_path / "mnt")
    try:
        yield m
    finally:
        rc = m.stop()
        assert rc == 0, f"daemon exit {rc}: {m.log.read_text()[-2000:]}"
