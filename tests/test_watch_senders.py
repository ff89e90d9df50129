"""The source watcher's entry invalidations (nasfs/fuse/watch.py): a folder
whose invalidation the kernel holds (a lookup under way there, e.g. a slow
view) holds up its own names only, and however many folders change at once
(a checkout, an overflowed inotify queue) no more than SENDERS threads send
them. The kernel's call is replaced by one that blocks where told, so the
threads' behaviour is seen as it is; tests/test_mount_speed.py checks the
same through a real mount."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from nasfs.fuse import watch
from nasfs.fuse.watch import MADE, MOVED_IN, MOVED_OUT, SENDERS, Changes, Watcher

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


FOLDER = 42  # the FUSE inode the watched source folder stands for


@pytest.fixture
def watched(kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A watcher running over a real source folder (inotify), as FOLDER; the
    kernel's calls recorded (inode invalidations dropped: no session here)."""
    monkeypatch.setattr(watch, "_inval_inode", lambda ino, attr_only: None)
    sent = kernel[0]
    source = tmp_path / "source"
    source.mkdir()
    w = Watcher(1.0)
    fd = os.open(source, os.O_RDONLY | os.O_DIRECTORY)
    try:
        w.watch(FOLDER, fd)
        assert w.watching(FOLDER)
        w.start()
        yield w, source, sent
    finally:
        w.stop()
        os.close(fd)


def test_an_own_change_drops_no_name_but_a_failed_one_hides_no_change_made_beside_it(watched) -> None:
    """The echo of a change the mount made drops no name. A change the mount
    tried and that failed because the same change was made beside it first
    (mkdir: EEXIST; rename: ENOENT) must still drop the name: before, the
    outside event was taken as the expected echo, nothing was sent, and the
    kernel kept its (negative, or moved-away) entry for the LONG timeout."""
    w, source, sent = watched
    with w.own((FOLDER, b"mine", MADE)):
        (source / "mine").mkdir()  # made through the mount: an echo
    events = w.events
    with pytest.raises(FileExistsError):
        with w.own((FOLDER, b"raced", MADE)):
            (source / "raced").mkdir()  # made beside the mount first ...
            assert wait_for(lambda: w.events >= events + 1, 10)  # ... and its event handled as an echo
            os.mkdir(source / "raced")  # the mount's own mkdir: EEXIST
    (source / "away").write_text("x")
    assert wait_for(lambda: (FOLDER, b"away") in sent, 10)
    time.sleep(REPEAT_WAIT)  # (sent twice: at once and REPEAT later)
    made_away, events = sent.count((FOLDER, b"away")), w.events
    with pytest.raises(FileNotFoundError):
        with w.own((FOLDER, b"away", MOVED_OUT), (FOLDER, b"there", MOVED_IN)):
            os.rename(source / "away", source / "gone")  # moved away beside the mount first ...
            assert wait_for(lambda: w.events >= events + 2, 10)
            os.rename(source / "away", source / "there")  # the mount's own rename: ENOENT
    with pytest.raises(FileExistsError):
        with w.own((FOLDER, b"untouched", MADE)):  # failed, and nothing made beside it: nothing to drop
            raise FileExistsError
    assert wait_for(lambda: (FOLDER, b"raced") in sent, 5), "a name made beside the mount was hidden as an echo"
    assert wait_for(lambda: sent.count((FOLDER, b"away")) > made_away, 5), "a name moved away beside the mount was hidden"
    time.sleep(REPEAT_WAIT)
    assert (FOLDER, b"mine") not in sent and (FOLDER, b"untouched") not in sent and (FOLDER, b"there") not in sent


REPEAT_WAIT = watch.REPEAT * 2 + 0.2


def test_after_an_overflow_no_event_is_taken_for_an_echo_it_may_have_lost() -> None:
    """An overflowed queue loses events, the echo of an own change among
    them: the echo still expected would take the next event of that name, a
    change made beside the mount within ECHO_S (say the name removed and
    made again there), and the kernel would keep the entry it cached in
    between (negative, for the LONG timeout)."""
    from inotify_simple import Event, flags

    w = Watcher(1.0)
    w._watched[FOLDER], w._folders[7] = 7, FOLDER  # (as watch() does, with watch descriptor 7)
    try:
        with w.own((FOLDER, b"x", MADE)):
            pass  # made through the mount; its event is lost in the overflow
        w._changes([Event(-1, flags.Q_OVERFLOW, 0, "")])
        w._changes([Event(7, flags.DELETE | flags.ISDIR, 0, "x")])  # beside the mount: removed ...
        assert (FOLDER, b"x") in w._changes([Event(7, flags.CREATE | flags.ISDIR, 0, "x")]).entries  # ... made again
    finally:
        w.stop()
