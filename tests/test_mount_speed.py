"""What makes the mount fast must not make it wrong or stall it: a slow view
runs beside other views and real-file reads, never in front of them; and
real entries and attributes cached by the kernel for long are dropped by the
source watcher when the source changes beside the mount. Real mounts, real
programs; nothing here asserts how long anything took."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from .conftest import header
from .mounts import Mount, stats
from .processes import spawned_workers

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
    """While notes/huge.md@outline is being computed (held there: its view
    worker is stopped until the others are answered), views and real files in
    other folders are served, and so are names in notes/ itself that the
    kernel has not met yet, with the binding that asks for parallel lookups
    (libfuse 3.17, scripts/pyfuse3-patches/). On stock pyfuse3 or libfuse 3.14
    the kernel looks up one name at a time per folder: those would wait for
    the view for as long as it takes."""
    mnt = slow_mount.mountpoint
    (home / "notes" / "beside.md").write_text("# Made beside the mount\n")
    slow = subprocess.Popen(["cat", str(mnt / "notes" / "huge.md@outline")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results: dict[str, bytes] = {}

    def read(name: str) -> None:
        results[name] = (mnt / name).read_bytes()

    code = sorted(os.listdir(home / "code"))
    names = [f"code/{code[0]}@outline", "README.txt@outline", "README.txt", f"code/{code[1]}", f"code/{code[0]}",
             "notes/customer-acme.md", "notes/beside.md", "notes/meeting-2026-11-12.md@outline"]
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not workers:  # the view's worker starts when the view is handed to it
            assert time.monotonic() < deadline and slow.poll() is None, "huge.md@outline went to no worker"
            workers = spawned_workers(slow_mount.proc.pid)
            time.sleep(0.02)
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)  # the view now takes as long as this test wants
        threads = [threading.Thread(target=read, args=(name,), daemon=True) for name in names]
        for th in threads:
            th.start()
        answered_by = time.monotonic() + 60
        for th in threads:
            th.join(timeout=max(0.0, answered_by - time.monotonic()))
        assert sorted(results) == sorted(names), f"not answered while huge.md@outline was computed: {set(names) - set(results)}"
        assert slow.poll() is None, "huge.md@outline finished although its worker was stopped"
    finally:
        for pid in workers:
            os.kill(pid, signal.SIGCONT)
        out, err = slow.communicate(timeout=300)
    assert header(results[f"code/{code[0]}@outline"])["view"] == "outline"
    assert header(results["notes/meeting-2026-11-12.md@outline"])["view"] == "outline"
    assert results["README.txt"] == (home / "README.txt").read_bytes()
    assert results["notes/beside.md"] == b"# Made beside the mount\n"
    assert slow.returncode == 0, err
    h = header(out)
    assert h["view"] == "outline" and h["pointer"].startswith("nas://box/home/notes/huge.md@")
    assert slow_mount.alive()


def within(seconds: float, check) -> bool:
    """Whether ``check()`` holds within the stated bound (polled)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def caches_dropped() -> int:
    """How often the kernel's dentries and inodes were dropped system-wide
    (``echo 2 > /proc/sys/vm/drop_caches``, as cold-cache benchmarks do)."""
    for line in Path("/proc/vmstat").read_text().splitlines():
        if line.startswith("drop_slab "):
            return int(line.split()[1])
    return 0


def test_real_entries_stay_cached_past_the_old_timeout(mounted: Mount) -> None:
    """With the source watched, the kernel keeps a real entry and its
    attributes: a stat 1.5 s later (past the 1 s of --attr-timeout) asks the
    daemon nothing, and neither does a name that is nothing. A round during
    which anything on the machine dropped the kernel's caches (other
    benchmarks do, every few seconds) proves nothing and is made again."""
    mnt = mounted.mountpoint
    for _ in range(50):
        dropped = caches_dropped()
        os.stat(mnt / "README.txt")
        assert not (mnt / "notes" / ".rgignore").exists()
        before = stats(mnt)
        assert float(before["real_entry_timeout"]) > 60
        time.sleep(1.5)
        os.stat(mnt / "README.txt")
        assert not (mnt / "notes" / ".rgignore").exists()
        after = stats(mnt)
        if caches_dropped() == dropped:
            break
    else:
        pytest.fail("the kernel's caches were dropped during each of 50 rounds")
    assert after["real_lookups_and_getattrs"] == before["real_lookups_and_getattrs"]


BOUND = 1.0  # docs/mount.md: a change beside the mount shows through it within 1 s


def test_changes_beside_the_mount_show_within_the_bound(mounted: Mount, home: Path) -> None:
    """Each kind of change made in the source, natively, shows through the
    mount within BOUND although the kernel caches real entries for an hour:
    content (also through a file held open, as on the disk), a new file, a
    removed one, a mode, a new folder and its files, a renamed folder."""
    mnt = mounted.mountpoint
    readme = (mnt / "README.txt").read_bytes()
    with open(mnt / "README.txt", "rb") as held:
        assert held.read() == readme
        same_size = bytes(b ^ 1 for b in readme[:8]) + readme[8:]
        with open(home / "README.txt", "r+b") as fh:  # in place: same inode, same size
            fh.write(same_size[:8])
        assert within(BOUND, lambda: os.pread(held.fileno(), len(readme), 0) == same_size), "an open file kept old data"
    assert within(BOUND, lambda: (mnt / "README.txt").read_bytes() == same_size)

    assert not (mnt / "notes" / "later.md").exists()
    (home / "notes" / "later.md").write_text("# Later\n")
    assert within(BOUND, lambda: (mnt / "notes" / "later.md").exists()), "a new file did not show"
    assert (mnt / "notes" / "later.md@outline").read_bytes().startswith(b"nasfs view=")
    os.unlink(home / "notes" / "later.md")
    assert within(BOUND, lambda: not (mnt / "notes" / "later.md").exists()), "a removed file stayed"

    os.stat(mnt / "README.txt")
    os.chmod(home / "README.txt", 0o600)
    assert within(BOUND, lambda: os.stat(mnt / "README.txt").st_mode & 0o777 == 0o600), "a mode change did not show"

    (home / "notes" / "sub").mkdir()
    (home / "notes" / "sub" / "a.txt").write_text("a\n")
    assert within(BOUND, lambda: (mnt / "notes" / "sub" / "a.txt").exists()), "a new folder did not show"
    (home / "notes" / "sub" / "b.txt").write_text("b\n")
    assert within(BOUND, lambda: (mnt / "notes" / "sub" / "b.txt").exists()), "a file in a new folder did not show"
    os.rename(home / "notes" / "sub", home / "notes" / "moved")
    assert within(BOUND, lambda: not (mnt / "notes" / "sub").exists() and (mnt / "notes" / "moved" / "b.txt").read_text() == "b\n")
    assert int(stats(mnt)["source_events"]) > 0


def test_a_second_listing_of_an_unchanged_folder_does_not_reach_the_daemon(mounted: Mount) -> None:
    """The binding scripts/setup builds (scripts/pyfuse3-patches/) lets the
    kernel keep a real folder's listing: the daemon lists notes/ once, and
    the next listings come from the kernel's cache."""
    mnt = mounted.mountpoint
    assert stats(mnt)["kernel_cached_listings"] == "yes", "pyfuse3 here is stock: scripts/setup builds the patched one"
    first = sorted(os.listdir(mnt / "notes"))
    before = int(stats(mnt)["real_listings"])
    for _ in range(3):
        assert sorted(os.listdir(mnt / "notes")) == first
    assert subprocess.run(["ls", "-a", str(mnt / "notes")], capture_output=True, text=True, check=True).stdout.split() == \
        sorted(first + [".", ".."])
    assert int(stats(mnt)["real_listings"]) == before


def test_names_changed_beside_the_mount_show_in_the_next_listing_within_the_bound(mounted: Mount, home: Path) -> None:
    """A cached listing is dropped when names in its folder change in the
    source: a new, a removed and a renamed name (within a folder and across
    two) show in the next listing through the mount within BOUND; so does a
    new name whose folder got its old mtime back (as tar or rsync leave it),
    which a comparison of the folder's mtime alone would miss."""
    mnt = mounted.mountpoint

    def listed(folder: str) -> set[str]:
        return set(os.listdir(mnt / folder))

    def ls(folder: str) -> set[str]:
        return set(subprocess.run(["ls", str(mnt / folder)], capture_output=True, text=True, check=True).stdout.split())

    assert listed("notes") == listed("notes") == set(os.listdir(home / "notes"))  # the second from the kernel's cache
    (home / "notes" / "new.md").write_text("# New\n")
    assert within(BOUND, lambda: "new.md" in listed("notes")), "a new name did not show in the listing"
    os.rename(home / "notes" / "new.md", home / "notes" / "renamed.md")
    assert within(BOUND, lambda: {"renamed.md"} <= ls("notes") and "new.md" not in ls("notes")), "a rename did not show"
    assert listed("code") == set(os.listdir(home / "code"))
    os.rename(home / "notes" / "renamed.md", home / "code" / "moved.md")
    assert within(BOUND, lambda: "renamed.md" not in listed("notes") and "moved.md" in listed("code")), \
        "a move to another folder did not show in both listings"
    os.unlink(home / "code" / "moved.md")
    assert within(BOUND, lambda: "moved.md" not in listed("code")), "a removed name stayed in the listing"

    folder = home / "notes"
    st = os.stat(folder)
    assert listed("notes") == listed("notes") == set(os.listdir(folder))
    (folder / "same-mtime.md").write_text("# Same mtime\n")
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert within(BOUND, lambda: "same-mtime.md" in listed("notes")), "a new name in a folder with its old mtime did not show"


def test_a_slow_view_holds_up_no_change_beside_the_mount_in_another_folder(slow_mount: Mount, home: Path) -> None:
    """While notes/huge.md@outline is being computed (its worker stopped), the
    kernel makes a name's invalidation in notes/ wait for that lookup; a name
    made, removed or changed beside the mount in another folder still shows
    through the mount within BOUND."""
    mnt = slow_mount.mountpoint
    assert not (mnt / "code" / "later.py").exists()  # the kernel now holds that it is nothing, for long
    assert (mnt / "README.txt").exists()
    slow = subprocess.Popen(["cat", str(mnt / "notes" / "huge.md@outline")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not workers:
            assert time.monotonic() < deadline and slow.poll() is None, "huge.md@outline went to no worker"
            workers = spawned_workers(slow_mount.proc.pid)
            time.sleep(0.02)
        for pid in workers:
            os.kill(pid, signal.SIGSTOP)
        events = int(stats(mnt)["source_events"])
        (home / "notes" / "beside.md").write_text("# Beside\n")  # its invalidation waits for the view
        assert within(60, lambda: int(stats(mnt)["source_events"]) > events), "the watcher did not see notes/beside.md"
        (home / "code" / "later.py").write_text("x = 1\n")  # seen after it, in a later batch
        os.rename(home / "README.txt", home / "README.old")
        assert within(BOUND, lambda: (mnt / "code" / "later.py").exists()), "a new file in code/ did not show"
        assert within(BOUND, lambda: not (mnt / "README.txt").exists()), "a file renamed away beside the mount stayed"
        assert slow.poll() is None, "huge.md@outline finished although its worker was stopped"
    finally:
        for pid in workers:
            os.kill(pid, signal.SIGCONT)
        slow.communicate(timeout=300)
    assert within(BOUND, lambda: (mnt / "notes" / "beside.md").exists())
