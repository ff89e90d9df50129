"""Caches: in-process LRUs and one disk store shared by CLI runs.

Everything cached is keyed by content (blob id, commit) so it never goes
stale; the disk store lets a one-shot ``nasfs read`` skip the tokenizer and
the parsers when it has served the same view of the same blob before.

What nasfs writes to disk holds views of private and uncommitted files, so
it is private to the account that writes it: folders 0700, files 0600
(:func:`private_folder`), whoever made the folder.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

log = logging.getLogger("nasfs.cache")
K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map of at most ``size`` items
    and, when ``weigh`` is given, at most ``max_weight`` in total (bytes held)."""

    def __init__(self, size: int, weigh: Callable[[V], int] | None = None, max_weight: int = 0) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._weigh = weigh
        self._max_weight = max_weight
        self._weight = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if self._weigh is not None:
                self._weight += self._weigh(value) - (self._weigh(old) if old is not None else 0)
            self._items[key] = value
            while len(self._items) > self.size or (self._weigh is not None and self._weight > self._max_weight and len(self._items) > 1):
                _, gone = self._items.popitem(last=False)
                if self._weigh is not None:
                    self._weight -= self._weigh(gone)


def default_cache_dir() -> Path:
    if os.environ.get("NASFS_CACHE_DIR"):
        return Path(os.environ["NASFS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nasfs"


class NotPrivate(OSError):
    """A cache folder another account owns: nasfs does not write into it."""


def private_folder(folder: Path) -> Path:
    """``folder``, made if missing, and private to this process's account:
    mode 0700 (an existing folder of ours that is wider is tightened). One
    that another account owns is refused (:class:`NotPrivate`), never
    written into: that account could read what is cached, or swap it."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    link = os.lstat(folder)
    if stat.S_ISLNK(link.st_mode) and link.st_uid != os.geteuid():  # a name in /tmp another account took first
        raise NotPrivate(f"the cache folder {folder} is a symlink of uid {link.st_uid}, not of this account "
                         f"(uid {os.geteuid()}); set NASFS_CACHE_DIR to a folder of its own")
    st = os.stat(folder)
    if st.st_uid != os.geteuid():
        raise NotPrivate(f"the cache folder {folder} belongs to uid {st.st_uid}, not to this account "
                         f"(uid {os.geteuid()}); set NASFS_CACHE_DIR to a folder of its own")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(folder, 0o700)
    return folder


def private_file(path: Path) -> Path:
    """Make ``path`` (if missing) and leave it 0600, so a program that copies
    its mode to files beside it (SQLite's -wal, -shm and -journal) makes
    them 0600 too."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


class DiskCache:
    """A key-value store in SQLite; any failure makes it a silent no-op.

    A cache that cannot be written (read-only home, full disk, a folder of
    another account's) must never turn a read into an error. Its folder is
    0700 and its files 0600 (SQLite gives its -wal, -shm and -journal files
    the database file's mode).
    """

    BATCH = 256  # writes held by :meth:`batch` before they are written

    def __init__(self, folder: Path | None = None) -> None:
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._pending: dict[str, bytes] | None = None  # writes held while a batch is open
        try:
            folder = private_folder(folder or default_cache_dir())
            for leftover in ("cache.sqlite3-wal", "cache.sqlite3-shm", "cache.sqlite3-journal"):
                if (folder / leftover).exists():  # made by an older nasfs, before files were private
                    private_file(folder / leftover)
            db = sqlite3.connect(private_file(folder / "cache.sqlite3"), timeout=2, check_same_thread=False,
                                 isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a lost cache entry after a crash is only recomputed
            db.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
            self._db = db
        except NotPrivate as exc:
            log.warning("disk cache off: %s", exc)
            self._db = None
        except (OSError, sqlite3.Error):
            self._db = None

    def get(self, key: str) -> bytes | None:
        if self._db is None:
            return None
        try:
            with self._lock:
                held = self._pending.get(key) if self._pending is not None else None
                if held is not None:
                    return held
                row = self._db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return bytes(row[0]) if row else None

    def put(self, key: str, value: bytes) -> None:
        if self._db is None:
            return
        with self._lock:
            if self._pending is None:
                try:
                    self._db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (key, value))
                except sqlite3.Error:
                    pass
                return
            self._pending[key] = value
            if len(self._pending) >= self.BATCH:
                self._write(self._pending)
                self._pending = {}

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the writes made inside and write them in one transaction at the
        end (or every ``BATCH`` writes): a commit per write made SQLite 5-7%
        of a cold whole-tree pass. ``get`` sees held writes; other processes
        see them once written."""
        with self._lock:
            if self._pending is not None:  # inside another batch: that one writes
                nested = True
            else:
                nested, self._pending = False, {}
        if nested:
            yield
            return
        try:
            yield
        finally:
            with self._lock:
                pending, self._pending = self._pending, None
                if pending:
                    self._write(pending)

    def _write(self, items: dict[str, bytes]) -> None:
        """Write ``items`` in one transaction, or none of them (the lock is held)."""
        assert self._db is not None
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", items.items())
                self._db.execute("COMMIT")
            except sqlite3.Error:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            pass  # a write lost to a lock race or a full disk only leaves a cache cold
