"""The source tree watched, so the kernel may keep real entries for long.

Tools through the mount look every name up again once the kernel's entry
and attribute timeouts pass: with 1 s, a repeated ``git status`` or ``rg``
sends a LOOKUP per file. With a watch (inotify) on every source folder the
kernel has been told about, real entries, attributes and names that are
nothing get LONG timeouts instead: a change made beside the mount is an
inotify event, and this module tells the kernel to drop what it holds of
that name (``invalidate_entry``) and of that inode (``invalidate_inode``:
attributes, and data for a write). A name added, removed or renamed in a
folder drops the folder's data too: with the patched binding the kernel
caches the folder's listing there (ops.py), and comparing the folder's mtime
alone would miss a second change within one timestamp tick.

A name is expired, not invalidated, where the kernel allows (Linux 6.2,
``FUSE_EXPIRE_ONLY``, through the patched binding's ``expire_entry``): its
next use looks it up again, and until then a dentry in use stays. An
invalidated dentry is unhashed, and a process whose working directory it is
has no path any more (``getcwd`` fails with ``ENOENT``: pjdfstest's prove,
``cmake`` in a build folder). And the event a change made through the mount
itself causes (``own``: made, removed, renamed by the daemon) drops no name
at all: the kernel learnt that change from the reply.

Invalidations are sent only from this module's own threads, never from a
request handler (libfuse deadlocks on that), and every one is sent twice:
at once, and again REPEAT seconds later, which covers a reply with the old
state that was on its way while the change happened (the kernel cannot drop
an entry it does not hold yet). Entries go through threads of their own, a
folder at a time, because the kernel makes an entry invalidation wait for a
lookup under way in its folder (which may be a slow view): that holds up the
names of that folder only, not those of others (one thread for all of them
did), nor attributes and data. At most SENDERS such threads run at once (a
checkout, or an overflowed queue, names thousands of folders at a time);
a folder waits for a free one.

The bound: a change beside the mount shows through it once its event is
handled, within REPEAT plus the kernel's delivery, under 1 s (tested), except
for a name whose folder has a lookup under way: it waits for that lookup.
If a folder cannot be watched (the inotify watch limit, or no inotify), the
mount falls back to the short ``--attr-timeout`` for everything it answers
from then on, and says so in its log. Watches are added in the request loop
(a plain syscall, before the entry is answered), so every name the kernel
holds with a long timeout is in a watched folder.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pyfuse3
from inotify_simple import INotify, flags

from . import fast

log = logging.getLogger("nasfs.fuse")
LONG = 3600.0
REPEAT = 0.25
SENDERS = 8  # threads sending entry invalidations at once; each serves one folder at a time
MASK = (flags.MODIFY | flags.ATTRIB | flags.CLOSE_WRITE | flags.CREATE | flags.DELETE | flags.MOVED_FROM
        | flags.MOVED_TO | flags.ONLYDIR)
ENTRY_EVENTS = flags.CREATE | flags.DELETE | flags.MOVED_FROM | flags.MOVED_TO
DATA_EVENTS = flags.MODIFY | flags.CLOSE_WRITE
GONE_EVENTS = flags.DELETE | flags.MOVED_FROM
MADE, REMOVED, MOVED_OUT, MOVED_IN = flags.CREATE, flags.DELETE, flags.MOVED_FROM, flags.MOVED_TO  # for ``own``
ECHO_S = 2.0  # an echo of the mount's own change not seen by then is forgotten (the name is then expired as any)
ECHOES_HELD = 4096


class Changes:
    """What one batch of events asks the kernel to drop."""

    def __init__(self) -> None:
        self.entries: set[tuple[int, bytes]] = set()
        self.data: set[int] = set()
        self.attrs: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.entries or self.data or self.attrs)


class Watcher:
    def __init__(self, fallback: float) -> None:
        self.fallback = fallback
        self._lock = threading.Lock()
        self._folders: dict[int, int] = {}  # watch descriptor -> FUSE inode of the folder
        self._watched: dict[int, int] = {}  # FUSE inode of a folder -> watch descriptor
        self._names: dict[tuple[int, bytes], int] = {}  # (folder inode, name) -> inode the kernel was given
        self._name_of: dict[int, tuple[int, bytes]] = {}  # inode -> its last (folder, name), to forget it
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._pending: dict[int, set[bytes]] = {}  # folder -> names to drop (waiting, or being sent)
        self._waiting: deque[int] = deque()  # folders with names that no sender has taken yet
        self._senders: set[threading.Thread] = set()
        self._echoes: dict[tuple[int, bytes, int], list[float]] = {}  # (folder, name, event) the mount made -> until when
        self._expire = hasattr(pyfuse3, "expire_entry")  # until the kernel says it has no FUSE_EXPIRE_ONLY
        self.events = 0
        try:
            self._inotify: INotify | None = INotify()
            self.healthy = True
        except OSError as exc:
            log.warning("no inotify (%s): real entries are cached for --attr-timeout (%s s) only", exc, fallback)
            self._inotify = None
            self.healthy = False

    @property
    def folders(self) -> int:
        return len(self._watched)

    def watching(self, ino: int) -> bool:
        """Whether a change in the folder ``ino`` will be told to the kernel."""
        return self.healthy and ino in self._watched

    @property
    def timeout(self) -> float:
        """The entry and attribute timeout of a real node answered now."""
        return LONG if self.healthy else self.fallback

    # -- from the request loop (syscalls and dicts only) ---------------------------------
    def watch(self, ino: int, fd: int) -> None:
        """Watch the folder ``ino`` (``fd``: a descriptor of it) before any
        entry in it is answered with a long timeout."""
        if ino in self._watched or not self.healthy or self._inotify is None:
            return
        try:
            wd = self._inotify.add_watch(f"/proc/self/fd/{fd}", MASK)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return  # gone meanwhile: nothing in it will be answered
            self.healthy = False
            fast.attrs_cached_for(self.fallback)  # (before any answer with the short timeout is given)
            log.warning("cannot watch another source folder (%s; see /proc/sys/fs/inotify/max_user_watches): "
                        "real entries are cached for --attr-timeout (%s s) from now on", exc, self.fallback)
            return
        with self._lock:
            self._watched[ino] = wd
            self._folders[wd] = ino

    def seen(self, parent: int, name: bytes, ino: int) -> None:
        """The kernel was given ``ino`` as ``name`` in ``parent``."""
        with self._lock:
            self._names[(parent, name)] = ino
            self._name_of[ino] = (parent, name)

    @contextmanager
    def own(self, *changes: tuple[int, bytes, int]) -> Iterator[None]:
        """The mount is about to make these changes itself: (folder, name,
        the inotify event it causes there). Their events are echoes, which
        drop no name (the kernel learns the change from the reply); if the
        change fails, none is expected."""
        now = time.monotonic()
        changes = tuple(key for key in changes if self.watching(key[0]))  # no event comes from others
        with self._lock:
            if len(self._echoes) > ECHOES_HELD:  # echoes that never came (an overflowed queue)
                self._echoes = {k: v for k, v in self._echoes.items() if v[-1] >= now}
            for key in changes:
                self._echoes.setdefault(key, []).append(now + ECHO_S)
        try:
            yield
        except BaseException:
            # Not made: no echo of it comes. An echo expected and already
            # taken was the same change made beside the mount meanwhile (the
            # name made there first: EEXIST; moved away there first: ENOENT),
            # which must drop the name as any change beside the mount does.
            with self._lock:
                self._queue_entries({(folder, name) for folder, name, event in changes
                                     if not self._echo((folder, name, event))})
            raise

    def _echo(self, key: tuple[int, bytes, int]) -> bool:
        """Whether an event is an echo expected (under the lock); takes it."""
        whens = self._echoes.get(key)
        if not whens:
            return False
        now = time.monotonic()
        while whens and whens[0] < now:
            whens.pop(0)
        found = bool(whens)
        if found:
            whens.pop(0)
        if not whens:
            del self._echoes[key]
        return found

    def forgot(self, ino: int) -> None:
        """The kernel let go of ``ino``: its name need no longer be remembered."""
        with self._lock:
            key = self._name_of.pop(ino, None)
            if key is not None and self._names.get(key) == ino:
                del self._names[key]

    # -- the threads ----------------------------------------------------------------------
    def start(self) -> None:
        """Start handling events (after pyfuse3.init: invalidations need the session)."""
        if self._inotify is None:
            return
        th = threading.Thread(target=self._run, name="nasfs-watch", daemon=True)
        th.start()
        self._threads.append(th)

    def stop(self) -> None:
        """Stop the threads (before pyfuse3.close: no invalidation after it)."""
        self._stop.set()
        with self._lock:
            senders = list(self._senders)
        for th in self._threads + senders:
            th.join(timeout=10)
        if self._inotify is not None:
            self._inotify.close()

    def _run(self) -> None:
        assert self._inotify is not None
        again: list[tuple[float, Changes]] = []
        while not self._stop.is_set():
            wait = min([1.0] + [due - time.monotonic() for due, _ in again])
            try:
                events = self._inotify.read(timeout=max(0, int(wait * 1000)))
                changes = self._changes(events)
                if changes:
                    self._send(changes)
                    again.append((time.monotonic() + REPEAT, changes))
                now = time.monotonic()
                for due, later in [x for x in again if x[0] <= now]:
                    self._send(later)
                again = [x for x in again if x[0] > now]
            except Exception:  # the watch goes on; what it missed is bounded by the repeat
                if self._stop.is_set():
                    return
                log.exception("source watcher: an event batch failed")

    def _changes(self, events: Iterable) -> Changes:
        changes = Changes()
        with self._lock:
            for ev in events:
                self.events += 1
                if ev.mask & flags.Q_OVERFLOW:
                    log.warning("source watcher: inotify queue overflowed; every cached real entry is dropped")
                    changes.entries.update(self._names)
                    changes.attrs.update(self._names.values())
                    changes.data.update(self._names.values())
                    changes.data.update(self._watched)
                    self._echoes.clear()  # the echoes expected may be among the events lost: none is taken for one now
                    continue
                folder = self._folders.get(ev.wd)
                if folder is None:
                    continue
                if ev.mask & flags.IGNORED:  # the folder is gone (or unmounted)
                    self._folders.pop(ev.wd, None)
                    self._watched.pop(folder, None)
                    fast.drop_dir(folder)  # no longer watched: no longer answered in C
                    continue
                if not ev.name:
                    continue
                name = os.fsencode(ev.name)
                ino = self._names.get((folder, name))
                if ev.mask & ENTRY_EVENTS:
                    if not self._echo((folder, name, ev.mask & ENTRY_EVENTS)):
                        changes.entries.add((folder, name))
                    changes.data.add(folder)  # its mtime, nlink, and the kernel's cached listing of it
                if ino is not None:
                    (changes.data if ev.mask & DATA_EVENTS else changes.attrs).add(ino)
                    if ev.mask & GONE_EVENTS:
                        del self._names[(folder, name)]
        return changes

    def _send(self, changes: Changes) -> None:
        for ino in changes.data:
            fast.drop_dir(ino)  # its next opendir reaches the daemon, which lists it anew
            fast.drop_file(ino)
            _inval_inode(ino, attr_only=False)
        for ino in changes.attrs - changes.data:
            _inval_inode(ino, attr_only=True)
        with self._lock:
            self._queue_entries(changes.entries)

    def _queue_entries(self, entries: Iterable[tuple[int, bytes]]) -> None:
        """Queue names to drop to the sender threads (under the lock; sends
        nothing itself, so a request handler may call it)."""
        for folder, name in entries:
            names = self._pending.get(folder)
            if names is not None:  # waiting, or its sender sends this one too
                names.add(name)
                continue
            self._pending[folder] = {name}
            self._waiting.append(folder)
        for _ in range(min(SENDERS - len(self._senders), len(self._waiting))):  # a sender per waiting folder
            th = threading.Thread(target=self._send_entries, name="nasfs-watch-entries", daemon=True)
            self._senders.add(th)
            th.start()  # under the lock: stop() joins only started threads

    def _send_entries(self) -> None:
        """Take a waiting folder and drop its names until none is left, then
        the next one; end when no folder waits. Whether to end is decided
        under the lock that queues folders, so none is left without a sender."""
        folder: int | None = None
        while True:
            with self._lock:
                if folder is not None and not self._pending[folder]:
                    del self._pending[folder]
                    folder = None
                if self._stop.is_set() or (folder is None and not self._waiting):
                    self._senders.discard(threading.current_thread())
                    return
                if folder is None:
                    folder = self._waiting.popleft()
                name = self._pending[folder].pop()
            try:
                self._drop_entry(folder, name)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF):
                    log.warning("invalidating entry %r in %d: %s", name, folder, exc)

    def _drop_entry(self, folder: int, name: bytes) -> None:
        """Expire the kernel's entry; invalidate it where it cannot be expired."""
        if self._expire:
            try:
                pyfuse3.expire_entry(folder, name)
                return
            except OSError as exc:
                if exc.errno != errno.ENOSYS:
                    raise
                self._expire = False
                log.warning("the kernel cannot expire an entry (FUSE_EXPIRE_ONLY, Linux 6.2): entries changed beside "
                            "the mount are invalidated, and a process working in such a folder loses its path")
        pyfuse3.invalidate_entry(folder, name)


def _inval_inode(ino: int, attr_only: bool) -> None:
    try:
        pyfuse3.invalidate_inode(ino, attr_only)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.EBADF):  # ENOENT: the kernel holds nothing of it
            log.warning("invalidating inode %d: %s", ino, exc)
