"""Opens answered without Python: the binding patched by
scripts/pyfuse3-patches/ (3.5.0-fast-opens.patch) answers OPEN and RELEASE of
a registered regular file, and OPENDIR and RELEASEDIR of a registered folder,
in its C request handlers: a warm ``rg`` or ``find`` over a settled tree then
sends the daemon almost no request that reaches Python (docs/performance.md,
section 8).

What is registered, and why each open stays what the Python handler would
have answered (passthrough.py, ``PassThrough.opened``):

- a regular file, when a read-only open of it kept its page cache (it is
  unchanged since the last open, settled for ``HOT_NS``, under ``PASS_FROM``,
  not passed through): its file handle and its (mtime, ctime, size) then. The
  C handler opens the file anew by that handle (as the daemon does: one
  descriptor per open, closed at its release, so an open file stays
  readable whatever happens to its name), and answers the open with it only
  while ``fstat`` of it still shows that stat and the file changed more than
  ``HOT_NS`` ago, and only a read-only open with no flag but ``PLAIN_FLAGS``;
  anything else goes to Python as before. A writer's or passed-through open
  drops the entry, and an open while opens answered in C are held is never
  passed through (the kernel fails a mix of both modes);
- a watched folder whose whole listing the kernel was just given to cache
  (``cache_readdir``): the watcher drops it, with the kernel's copy, before
  it tells the kernel (watch.py). Should the kernel have dropped its copy
  itself, the READDIR of a fast handle reaches Python and is listed anew.

A GETATTR of a registered file or folder is answered in C as Python's
``real_getattr`` answers it: the ``fstat`` of the inode (opened by its
handle), with the inode number asked for and the watcher's timeout (after a
listing the kernel drops a read-write mount's folder atime, so ``rg`` stats
every folder it enters again).

The kernel's FORGET of an inode drops both (its number may name another file
next time). On stock pyfuse3 none of this exists and every call here does
nothing.
"""

from __future__ import annotations

import errno
import os
import time

import pyfuse3

from .real import O_PATH
from .syscalls import open_by_handle

ON = hasattr(pyfuse3, "fast_file_add")
FAST_FH: int = getattr(pyfuse3, "FAST_FH", 1 << 62)
MAX_FILES = 1 << 20  # entries are a file handle and three numbers each
# open(2) flags a read-only open answered in C may carry: none changes what a
# read returns (O_LARGEFILE is the kernel's own, 0o100000 on every 64-bit arch)
PLAIN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOATIME | os.O_NOCTTY | 0o100000
HOT_NS = 2_000_000_000  # a file changed this recently may be mid-rewrite (git's racy window is the same 2 s)


_off = "stock pyfuse3" if not ON else None  # why nothing is answered in C, if it is not


def enable(attr_timeout: float, root: tuple[int, bytes] | None) -> None:
    """Opens as above; GETATTR of a registered inode answered in C too, with
    ``attr_timeout`` (the real entries' timeout: the watcher's). ``root``:
    the source root's handle (RealInodes.handle), opened here once by it: a
    daemon that may not (``open_by_handle_at`` needs CAP_DAC_READ_SEARCH,
    which a daemon not run as root lacks: EPERM) registers nothing, and
    every open goes to Python, which says so in ``.nas/stats``."""
    global _off
    if _off is not None:
        return
    if root is None:
        _off = "the source filesystem gives no file handles"
        return
    try:
        os.close(open_by_handle(root[0], root[1], O_PATH))
    except OSError as exc:
        why = " (it needs CAP_DAC_READ_SEARCH)" if exc.errno == errno.EPERM else ""
        _off = f"open_by_handle_at: {os.strerror(exc.errno or errno.EIO)}{why}"
        return
    pyfuse3.fast_opens_enable(PLAIN_FLAGS, HOT_NS, attr_timeout)


def attrs_cached_for(attr_timeout: float) -> None:
    """The watcher's timeout changed (it can no longer watch): GETATTRs
    answered in C say so from now on."""
    if _off is None:
        pyfuse3.fast_opens_enable(PLAIN_FLAGS, HOT_NS, attr_timeout)


def plain_read_only(flags: int) -> bool:
    """An open the C handler would take: read-only with plain flags only."""
    return flags & os.O_ACCMODE == os.O_RDONLY and not flags & ~(PLAIN_FLAGS | os.O_ACCMODE)


def is_fast(fh: int) -> bool:
    return bool(fh & FAST_FH)


def fd_of(fh: int) -> int:
    """The descriptor of a file handle answered in C (open until its release)."""
    return fh & ~FAST_FH


def inode_of(fh: int) -> int:
    """The folder of a folder handle answered in C (each opendir has one of
    its own); 0 for a handle already released."""
    return pyfuse3.fast_dir_inode(fh)


def version(st: os.stat_result) -> tuple[int, int, int]:
    """The keep-cache rule, the one place it is written: a regular file's
    page cache is kept across opens while this is what it was at the last
    open (and the file is settled: ``hot``). The open answered in C checks
    the same three (registered by ``add_file``). The ctime because the mtime
    can be set back (``utime``, ``touch -d``, ``tar``, ``rsync -t``) after a
    same-size rewrite nothing announced (a write through a map, or any write
    while the watcher is down); no call sets the ctime."""
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size


def hot(st: os.stat_result) -> bool:
    """Changed within the last ``HOT_NS``: its page cache is never kept (the
    C handler leaves it to Python)."""
    return time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < HOT_NS


def add_file(ino: int, handle: tuple[int, bytes] | None, st: os.stat_result) -> None:
    """Register ``ino`` (``handle``: RealInodes.handle; None on a filesystem
    without file handles: then never) with its ``version(st)``."""
    if _off is None and handle is not None and not pyfuse3.fast_file_current(ino, *version(st)) \
            and pyfuse3.fast_stats()[0] < MAX_FILES:
        pyfuse3.fast_file_add(ino, handle[0], handle[1], *version(st))


def drop_file(ino: int) -> None:
    if ON:
        pyfuse3.fast_file_drop(ino)


def opens(ino: int) -> int:
    """Opens of ``ino`` answered in C and not released yet."""
    return pyfuse3.fast_file_opens(ino) if ON else 0


def add_dir(ino: int, handle: tuple[int, bytes] | None) -> None:
    if _off is None and handle is not None:
        pyfuse3.fast_dir_add(ino, handle[0], handle[1])


def drop_dir(ino: int) -> None:
    if ON:
        pyfuse3.fast_dir_drop(ino)


def stats() -> str:
    """``.nas/stats`` lines."""
    if _off is not None:
        return f"fast_opens=no ({_off})\n"
    files, dirs, opened, released, dir_opened, dir_released, getattrs = pyfuse3.fast_stats()
    return (f"fast_opens=yes\nfast_files={files}\nfast_folders={dirs}\nfast_file_opens={opened}\n"
            f"fast_file_releases={released}\nfast_folder_opens={dir_opened}\nfast_folder_releases={dir_released}\n"
            f"fast_getattrs={getattrs}\n")
