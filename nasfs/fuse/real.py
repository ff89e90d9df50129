"""The inode table of the real tree: one FUSE inode per source inode.

An inode is keyed by the source's (st_dev, st_ino), so hard links are one
inode with one nlink, as on the disk, and the mount's inode numbers are the
source's own: git's index, stat(1) and rsync see the same numbers through
the mount and beside it. Each entry keeps a file handle of the source inode
(``syscalls.file_handle``), not a path: every call goes through a descriptor
reopened from it, and names are resolved with ``*at()`` calls relative to
their directory's descriptor, so renames beside the mount, unlinked-but-open
files and paths near PATH_MAX behave as they do natively. Descriptors are
cached (an LRU, so a tree of any size fits the process's fd limit); a
filesystem without handles, or a daemon that may not open by them
(``open_by_handle_at`` needs CAP_DAC_READ_SEARCH, which a daemon not run as
root lacks), falls back to reopening by path.

Entries the kernel forgot are kept for the last RETAINED ones: NFS and Samba
re-open by handle long after a lookup.
"""

from __future__ import annotations

import errno
import os
import resource
import stat
from collections import OrderedDict
from dataclasses import dataclass

import pyfuse3

from ..tree_walk import open_in_tree
from .syscalls import file_handle, open_by_handle

ROOT = pyfuse3.ROOT_INODE
REMAPPED_BASE = 1 << 62  # source inodes that cannot keep their number (1, other devices)
VIRTUAL_BASE = 1 << 63  # views, history and side files (nodes.py)
RETAINED = 100_000
DESCRIPTORS = 65_536  # descriptors the LRU keeps at most (also bounded by a quarter of the fd limit)
O_PATH = os.O_PATH | os.O_NOFOLLOW


def _raise_fd_limit() -> int:
    """Raise this process's descriptor limit as far as allowed (root may raise
    the hard limit up to fs.nr_open) and return it: the more descriptors the
    LRU holds, the fewer inodes are reopened by handle."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(hard, 4 * DESCRIPTORS + 4096)
    try:
        with open("/proc/sys/fs/nr_open") as fh:
            want = min(want, int(fh.read()))
    except (OSError, ValueError):
        want = hard
    for limit in (want, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
            return limit
        except (OSError, ValueError):
            continue
    return soft


def _may_open_by_handle(mount_fd: int, handle: bytes) -> bool:
    """Whether this process may reopen inodes by handle (EPERM without
    CAP_DAC_READ_SEARCH): tried once, on the root's."""
    try:
        os.close(open_by_handle(mount_fd, handle, O_PATH))
    except OSError:
        return False
    return True


@dataclass(slots=True)
class RealInode:
    key: tuple[int, int]  # (st_dev, st_ino) in the source
    handle: bytes | None
    mount_id: int
    hint: str  # tree-relative path it was last seen at: the fallback without handles
    lookups: int = 0


class RealInodes:
    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/") or "/"
        fd = os.open(self.root, O_PATH | os.O_DIRECTORY)
        st = os.fstat(fd)
        self.dev = st.st_dev
        found = file_handle(fd)
        handle, mount_id = found if found else (None, -1)
        self._entries: dict[int, RealInode] = {ROOT: RealInode((st.st_dev, st.st_ino), handle, mount_id, "", 1)}
        self._by_key: dict[tuple[int, int], int] = {(st.st_dev, st.st_ino): ROOT}
        self._mount_fds: dict[int, int] = {mount_id: os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)}
        self._fds: OrderedDict[int, int] = OrderedDict({ROOT: fd})
        self.by_handle = handle is not None and _may_open_by_handle(self._mount_fds[mount_id], handle)
        self._forgotten: OrderedDict[int, None] = OrderedDict()
        self._next_remapped = REMAPPED_BASE
        self.capacity = max(64, min(DESCRIPTORS, _raise_fd_limit() // 4))
        self.opened: dict[int, set[int]] = {}  # inode -> the open descriptors of it (PassThrough's), reopened from first

    def __contains__(self, ino: int) -> bool:
        return ino in self._entries

    # -- descriptors ------------------------------------------------------------
    def fd(self, ino: int) -> int:
        """An O_PATH descriptor of the inode, owned by the table: use it before
        the next call into the table (which may close it to make room)."""
        fd = self._fds.get(ino)
        if fd is not None:
            self._fds.move_to_end(ino)
            return fd
        entry = self._entries.get(ino)
        if entry is None:
            raise pyfuse3.FUSEError(errno.ESTALE)
        fd = self._reopen(ino, entry)
        self._cache(ino, fd)
        return fd

    def _reopen(self, ino: int, entry: RealInode) -> int:
        mount_fd = self._mount_fds.get(entry.mount_id)
        if self.by_handle and entry.handle is not None and mount_fd is not None:
            return open_by_handle(mount_fd, entry.handle, O_PATH)
        for held in self.opened.get(ino, ()):  # no handles: by an open of it, the very inode, deleted or renamed
            fd = os.open(f"/proc/self/fd/{held}", os.O_PATH)
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == entry.key:
                return fd
            os.close(fd)
        fd = self._open_hint(entry.hint)  # else by the last path
        st = os.fstat(fd)
        same = (st.st_dev, st.st_ino) == entry.key
        if same and entry.handle is not None:  # (name_to_handle_at needs no privilege) its generation too:
            same = (file_handle(fd) or (None,))[0] == entry.handle  # an inode number given to a new file is not it
        if not same:
            os.close(fd)
            raise OSError(errno.ESTALE, f"{entry.hint} is no longer the file it was")
        return fd

    def _open_hint(self, hint: str) -> int:
        """An O_PATH descriptor of what ``hint`` names now, each folder on the
        way opened from its parent's following no symlink (open_in_tree): a
        folder swapped for a link (into the mount itself: the daemon would
        wait on its own request) or a path longer than PATH_MAX is ESTALE or
        opened as on the disk, never followed."""
        try:
            return open_in_tree(self.root, hint, os.O_PATH)
        except (FileNotFoundError, NotADirectoryError):
            raise OSError(errno.ESTALE, f"{hint} is gone") from None

    def _cache(self, ino: int, fd: int) -> None:
        old = self._fds.pop(ino, None)
        if old is not None and old != fd:
            os.close(old)
        self._fds[ino] = fd
        while len(self._fds) > self.capacity:
            victim, vfd = next(iter(self._fds.items()))
            if victim == ROOT:
                self._fds.move_to_end(ROOT)
                continue
            del self._fds[victim]
            os.close(vfd)

    def path(self, ino: int) -> str | None:
        """Where the inode is in the tree now (one of its names), or None when
        it has no name inside the tree (deleted, or moved out beside the mount)."""
        if ino == ROOT:
            return ""
        try:
            where = os.readlink(f"/proc/self/fd/{self.fd(ino)}")
        except OSError:  # not reopened: its last path names nothing, or another file (ESTALE)
            return None
        if where.endswith(" (deleted)") or not where.startswith(self.root + "/"):
            return None
        return where[len(self.root) + 1:]

    def handle(self, ino: int) -> tuple[int, bytes] | None:
        """(a descriptor on its filesystem, its file handle) for
        ``open_by_handle_at``; None without handles."""
        entry = self._entries.get(ino)
        if entry is None or entry.handle is None or entry.mount_id not in self._mount_fds:
            return None
        return self._mount_fds[entry.mount_id], entry.handle

    def hint(self, ino: int) -> str:
        entry = self._entries.get(ino)
        return entry.hint if entry else ""

    # -- learning and forgetting --------------------------------------------------
    def learn(self, fd: int, st: os.stat_result, hint: str, owned: bool = True, lookup: bool = True) -> int:
        """The inode of a source entry seen through ``fd`` (an O_PATH descriptor
        the table takes over when ``owned``); counts one kernel lookup."""
        key = (st.st_dev, st.st_ino)
        ino = self._by_key.get(key)
        found = file_handle(fd)
        handle, mount_id = found if found else (None, -1)
        if found and mount_id not in self._mount_fds and os.path.isdir(f"/proc/self/fd/{fd}"):
            self._mount_fds[mount_id] = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_DIRECTORY)
        if ino is None:
            ino = self._number(st)
            self._by_key[key] = ino
            self._entries[ino] = RealInode(key, handle, mount_id, hint)
        else:
            entry = self._entries[ino]
            if handle is not None and handle != entry.handle:  # the number was reused by a new file
                entry.handle, entry.mount_id = handle, mount_id
                stale = self._fds.pop(ino, None)
                if stale is not None:
                    os.close(stale)
            entry.hint = hint
        if owned:
            self._cache(ino, fd)
        if lookup:
            self.looked_up(ino)
        return ino

    def learn_listed(self, dir_fd: int, name: bytes, hint: str) -> tuple[int, os.stat_result] | None:
        """learn() of an entry met in a listing; None when it is gone. A known
        entry is not opened again. If the table holds a descriptor of it, a
        stat is enough: while that descriptor is open, its inode number
        cannot have been given to another file. Otherwise its handle, taken
        after the stat, must be the one known: the name then still named that
        very file, which was alive at the stat, so the stat was of it."""
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        ino = self._by_key.get((st.st_dev, st.st_ino))
        if ino is not None:
            entry = self._entries[ino]
            held = ino in self._fds
            if held or (entry.handle is not None and (file_handle(dir_fd, name) or (None,))[0] == entry.handle):
                if held:
                    self._fds.move_to_end(ino)
                entry.hint = hint
                self.looked_up(ino)
                return ino, st
        try:
            fd = os.open(name, O_PATH, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        st = os.fstat(fd)
        return self.learn(fd, st, hint), st

    def moved(self, moves: list[tuple[os.stat_result, str]]) -> None:
        """Known entries were renamed through the mount, each to its ``hint``
        (two at once: RENAME_EXCHANGE): the path each is reopened by without
        handles. A folder's entries below it move with it, or a shell whose
        folder is below it, an open file's fstat, would be ESTALE for good
        (the kernel looks up no name again for them); one pass over the
        table, only when reopening by path."""
        prefixes: list[tuple[str, str]] = []
        for st, hint in moves:
            ino = self._by_key.get((st.st_dev, st.st_ino))
            if ino is None:
                continue
            entry = self._entries[ino]
            if stat.S_ISDIR(st.st_mode) and entry.hint and entry.hint != hint:
                prefixes.append((entry.hint + "/", hint + "/"))
            entry.hint = hint
        if not prefixes or self.by_handle:
            return
        prefixes.sort(key=lambda p: -len(p[0]))  # the deepest first
        for entry in self._entries.values():
            for old, new in prefixes:
                if entry.hint.startswith(old):
                    entry.hint = new + entry.hint[len(old):]
                    break

    def looked_up(self, ino: int) -> None:
        entry = self._entries[ino]
        entry.lookups += 1
        self._forgotten.pop(ino, None)

    def number_of(self, st: os.stat_result) -> int:
        """The inode number a known source entry has on the mount (its own when unknown)."""
        return self._by_key.get((st.st_dev, st.st_ino), st.st_ino)

    def _number(self, st: os.stat_result) -> int:
        if st.st_dev == self.dev and 1 < st.st_ino < REMAPPED_BASE:
            return st.st_ino
        self._next_remapped += 1
        return self._next_remapped

    def forget(self, ino: int, count: int) -> bool:
        """Count the kernel's forgets; True once it holds no lookup of ``ino``."""
        entry = self._entries.get(ino)
        if entry is None or ino == ROOT:
            return False
        entry.lookups -= count
        if entry.lookups > 0:
            return False
        entry.lookups = 0
        fd = self._fds.pop(ino, None)
        if fd is not None:
            os.close(fd)
        self._forgotten[ino] = None
        while len(self._forgotten) > RETAINED:
            old, _ = self._forgotten.popitem(last=False)
            gone = self._entries.pop(old, None)
            if gone is not None and self._by_key.get(gone.key) == old:
                del self._by_key[gone.key]
        return True
