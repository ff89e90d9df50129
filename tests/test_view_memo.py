"""A view looked up again is answered from what its last lookup made
(nasfs/fuse/view_memo.py) only while nothing it rests on has changed: its
file, its name's split, HEAD and the ref keeping snapshots reachable. Each
test makes the mount remember a view (``view_lookups_remembered`` in
.nas/stats counts the answers from memory), changes one of those beside the
mount, and reads the view again at once: it must be what a fresh core makes
of the tree now, byte for byte. Real mount, real ``cat``; files are left to
settle first (a file changed in the last 2 s is never remembered)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from nasfs.repo import GitTree
from nasfs.repo.hashes import SETTLED_NS
from nasfs.service import Nas

from .conftest import git, header
from .mounts import Mount

ACME = "notes/customer-acme.md"
VIEW = f"{ACME}@outline"


def cat(path: Path) -> bytes:
    return subprocess.run(["cat", str(path)], check=True, capture_output=True, timeout=60).stdout


def remembered(mnt: Path) -> int:
    stats = dict(line.split("=", 1) for line in (mnt / ".nas" / "stats").read_text().splitlines())
    return int(stats["view_lookups_remembered"])


def settle(path: Path) -> None:
    """Wait until ``path`` was last changed longer ago than SETTLED_NS."""
    st = os.stat(path)
    left = (max(st.st_mtime_ns, st.st_ctime_ns) + SETTLED_NS) / 1e9 + 0.1 - time.time()
    if left > 0:
        time.sleep(left)


def fresh(home: Path, spec: str) -> bytes:
    """What the core makes of ``spec`` now, with no memory of earlier reads."""
    nas = Nas(GitTree(home, node="box", tree="home"))
    path, view = nas.split(spec)
    return nas.read_view(path, view).text


def remember(mnt: Path, spec: str) -> bytes:
    """Read ``spec`` twice, the second time answered from memory."""
    first = cat(mnt / spec)
    count = remembered(mnt)
    assert cat(mnt / spec) == first
    assert remembered(mnt) == count + 1, "the second lookup was not answered from memory"
    return first


def rewrite_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Same inode, same size: only mtime and ctime tell the change."""
    assert len(old) == len(new)
    with open(path, "r+b") as fh:
        data = fh.read()
        assert old in data
        fh.seek(0)
        fh.write(data.replace(old, new))


def test_a_remembered_view_follows_its_file(mounted: Mount, home: Path) -> None:
    """Rewritten in place (read at once, and read only once it settled), then
    replaced by a rename: each next read shows the file as it is."""
    mnt = mounted.mountpoint
    settle(home / ACME)
    before = remember(mnt, VIEW)
    assert before == fresh(home, VIEW)
    rewrite_in_place(home / ACME, b"## Renewal", b"## Rebuild")
    after = cat(mnt / VIEW)
    assert b"## Rebuild" in after and after == fresh(home, VIEW)

    settle(home / ACME)
    assert remember(mnt, VIEW) == after
    rewrite_in_place(home / ACME, b"## Rebuild", b"## Reprice")
    settle(home / ACME)  # no longer "just changed": only its stat tells
    repriced = cat(mnt / VIEW)
    assert b"## Reprice" in repriced and repriced == fresh(home, VIEW)

    settle(home / ACME)
    remember(mnt, VIEW)
    data = (home / ACME).read_bytes()
    (home / "notes" / "new.md").write_bytes(data.replace(b"## Contacts", b"## Partners"))
    os.rename(home / "notes" / "new.md", home / ACME)  # an editor's save: a new inode
    replaced = cat(mnt / VIEW)
    assert b"## Partners" in replaced and replaced == fresh(home, VIEW)


def test_a_remembered_view_follows_head(mounted: Mount, home: Path) -> None:
    """A commit of another file moves HEAD: the view's pointer names the new
    HEAD at once (the file's bytes did not change)."""
    mnt = mounted.mountpoint
    settle(home / ACME)
    before = remember(mnt, VIEW)
    (home / "later.txt").write_text("a later commit\n")
    git(home, "add", "later.txt")
    git(home, "commit", "-q", "-m", "later")
    head = git(home, "rev-parse", "HEAD").strip()
    after = cat(mnt / VIEW)
    assert header(after)["pointer"].split("@")[1].split("#")[0] == head[:12]
    assert after != before and after == fresh(home, VIEW)


def test_a_remembered_snapshot_view_keeps_its_commit_reachable(mounted: Mount, home: Path) -> None:
    """A view of a changed file names a snapshot commit kept under
    refs/nasfs/snapshots; when that ref is deleted, the next read of the view
    keeps its commit reachable again, as a fresh read does."""
    mnt = mounted.mountpoint
    with open(home / ACME, "a") as fh:
        fh.write("\n## Pricing\n\nGold tier.\n")
    settle(home / ACME)
    # The first read makes the snapshot and moves refs/nasfs/snapshots, a fact the view rests on,
    # so that lookup is not remembered; read once first (the mount's warm-up `nasfs index` did it
    # first only when it reached the file after the change: the test passed by that race).
    cat(mnt / f"{ACME}@section=Pricing")
    shown = remember(mnt, f"{ACME}@section=Pricing")
    snapshot = header(shown)["pointer"].split("@")[1].split("#")[0]
    git(home, "update-ref", "-d", "refs/nasfs/snapshots")
    assert cat(mnt / f"{ACME}@section=Pricing") == shown
    kept = git(home, "rev-list", "refs/nasfs/snapshots")  # fails if the ref is gone
    assert any(line.startswith(snapshot) for line in kept.split()), "the snapshot is not reachable from the ref"


def test_a_remembered_name_gives_way_to_a_real_file_and_a_symlink(mounted: Mount, home: Path) -> None:
    """A real entry named like the view wins at once; so does a symlink put
    where the file was (the view is of its target, under the target's path)."""
    mnt = mounted.mountpoint
    settle(home / ACME)
    settle(home / "README.txt")
    remember(mnt, VIEW)
    (home / "notes" / "customer-acme.md@outline").write_bytes(b"a real file\n")
    assert cat(mnt / VIEW) == b"a real file\n"
    os.unlink(home / "notes" / "customer-acme.md@outline")

    remember(mnt, "README.txt@outline")
    os.rename(home / "README.txt", home / "README.old")
    os.symlink(ACME, home / "README.txt")
    got = cat(mnt / "README.txt@outline")
    assert header(got)["pointer"].startswith(f"nas://box/home/{ACME}@")
    assert got == fresh(home, "README.txt@outline")


def verify(home: Path, shown: bytes) -> str:
    """The commit a view's pointer names, once ``nasfs verify`` (a process of
    its own) has checked the pointer against the repository."""
    pointer = header(shown)["pointer"]
    done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "verify", "--repo", str(home), "--node", "box",
                           "--tree", "home", pointer], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return pointer.split("@")[-1].split("#")[0]


def test_a_remembered_view_follows_branch_switches_and_a_commit_of_its_file(mounted: Mount, home: Path) -> None:
    """``git checkout`` beside the mount, to a branch where the file differs
    (git writes it anew) and to one where it is the same (only HEAD moves);
    then the file changed (its view names a snapshot) and committed as it is
    (only HEAD moves, to a commit holding those bytes): each next read is what
    a fresh core makes of the tree, and its pointer verifies."""
    mnt = mounted.mountpoint
    git(home, "checkout", "-q", "-b", "side")
    rewrite_in_place(home / ACME, b"## Renewal", b"## Rebuild")
    git(home, "commit", "-q", "-am", "side")
    git(home, "checkout", "-q", "-b", "same")
    (home / "later.txt").write_text("only on same\n")
    git(home, "add", "later.txt")
    git(home, "commit", "-q", "-m", "same")
    git(home, "checkout", "-q", "main")

    for branch, shows in (("side", b"## Rebuild"), ("same", b"## Rebuild"), ("main", b"## Renewal")):
        settle(home / ACME)
        remember(mnt, VIEW)
        git(home, "checkout", "-q", branch)
        after = cat(mnt / VIEW)
        assert shows in after and after == fresh(home, VIEW), f"after checkout of {branch}"
        assert git(home, "rev-parse", "HEAD").startswith(verify(home, after))

    with open(home / ACME, "a") as fh:
        fh.write("\n## Pricing\n\nGold tier.\n")
    settle(home / ACME)
    snapshot = verify(home, remember(mnt, VIEW))
    assert not git(home, "rev-parse", "HEAD").startswith(snapshot)
    git(home, "commit", "-q", "-am", "pricing")
    after = cat(mnt / VIEW)
    assert after == fresh(home, VIEW) and git(home, "rev-parse", "HEAD").startswith(verify(home, after))
