"""The source watcher's entry invalidations (nasfs/fuse/watch.py): a folder
whose invalidation the kernel holds (a lookup under way there, e.g. a slow
view) holds up its own names only, and however many folders change at once
(a checkout, an overflowed inotify queue) no more than SENDERS threads send
them. The kernel's call is replaced by one that blocks where told, so the
threads' behaviour is seen as it is; tests/test_mount_speed.py checks the
same through a real mount."""

from __future__ import annotations

import threading
import time

import pytest

from nasfs.fuse import watch
from nasfs.fuse.watch import SENDERS, Changes, Watcher

SLOW = 7  # the folder whose invalidations the "kernel" holds


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch):
    """A stand-in for pyfuse3.invalidate_entry: records what is sent, takes
    a few ms a call (as a kernel round trip under load does) and holds every
    call for SLOW until released, and tracks the callers at once."""
    sent: list[tuple[int, bytes]] = []
    release = threading.Event()
    lock = threading.Lock()
    busy = [0, 0]  # calls under way, most at once

    def invalidate_entry(folder: int, name: bytes) -> None:
        with lock:
            busy[0] += 1
            busy[1] = max(busy[1], busy[0])
        if folder == SLOW:
            release.wait(30)
        else:
            time.sleep(0.002)
        with lock:
            busy[0] -= 1
            sent.append((folder, name))

    monkeypatch.setattr(watch.pyfuse3, "invalidate_entry", invalidate_entry)
    monkeypatch.setattr(watch.pyfuse3, "expire_entry", invalidate_entry, raising=False)  # (sent instead where it exists)
    yield sent, release, busy
    release.set()


def changes(entries: list[tuple[int, bytes]]) -> Changes:
    c = Changes()
    c.entries.update(entries)
    return c


def wait_for(check, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.01)
    return check()


def test_many_folders_at_once_use_at_most_senders_threads_and_a_held_folder_holds_up_only_itself(kernel) -> None:
    sent, release, busy = kernel
    w = Watcher(1.0)
    try:
        names = [(SLOW, b"held")] + [(folder, b"n%d" % i) for folder in range(100, 600) for i in range(3)]
        w._send(changes(names))
        others = len(names) - 1
        assert wait_for(lambda: len(sent) == others), f"{len(sent)} of {others} names of free folders sent while one folder is held"
        assert set(sent) == set(names) - {(SLOW, b"held")}
        assert busy[1] <= SENDERS, f"{busy[1]} invalidations sent at once"
        w._send(changes([(SLOW, b"second"), (42, b"later")]))  # a held folder takes more names; a new one is served
        assert wait_for(lambda: (42, b"later") in sent)
        release.set()
        assert wait_for(lambda: len(sent) == len(names) + 2)
        assert sent.count((SLOW, b"held")) == sent.count((SLOW, b"second")) == 1
        assert wait_for(lambda: not w._senders), "senders still alive with nothing to send"
        assert not w._pending
    finally:
        w.stop()
