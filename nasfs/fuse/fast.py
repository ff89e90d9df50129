"""Opens answered without Python: the binding patched by
scripts/pyfuse3-patches/ (3.5.0-fast-opens.patch) answers OPEN and RELEASE of
a registered regular file, and OPENDIR and RELEASEDIR of a registered folder,
in its C request handlers: a warm ``rg`` or ``find`` over a settled tree then
sends the daemon no request that reaches Python (docs/performance.md,
"Opens in C").

What is registered, and why each open stays what the Python handler would
have answered (passthrough.py, ``PassThrough.opened``):

- a regular file, when a read-only open of it kept its page cache (it is
  unchanged since the last open, settled for 2 s, under ``PASS_FROM``, not
  passed through): with a read-only descriptor of its own, which fast opens
  read through on a page-cache miss, and the file's (mtime, ctime, size)
  then. The C handler answers an open only while the descriptor's ``fstat``
  still says so and the file changed more than ``HOT_NS`` ago, and only a
  read-only open with no flag but ``PLAIN_FLAGS``; anything else goes to
  Python as before. A writer's or passed-through open drops the entry, and
  an open while fast opens are held is never passed through (the kernel
  fails a mix of both modes);
- a watched folder whose whole listing the kernel was just given to cache
  (``cache_readdir``): the watcher drops it with the kernel's copy, before
  it tells the kernel (watch.py). Should the kernel have dropped its copy
  itself, the READDIR of a fast handle reaches Python and is listed anew.

Registered files hold a descriptor each, so at most ``budget`` of them
(half the process's descriptor limit). On stock pyfuse3 none of this exists
and every call here does nothing.
"""

from __future__ import annotations

import os

import pyfuse3

ON = hasattr(pyfuse3, "fast_file_add")
FAST_FH: int = getattr(pyfuse3, "FAST_FH", 1 << 62)
# open(2) flags a read-only open answered in C may carry: none changes what a
# read returns (O_LARGEFILE is the kernel's own, 0o100000 on every 64-bit arch)
PLAIN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOATIME | os.O_NOCTTY | 0o100000


def enable(hot_ns: int) -> None:
    if ON:
        pyfuse3.fast_opens_enable(PLAIN_FLAGS, hot_ns)


def plain_read_only(flags: int) -> bool:
    """An open the C handler would take: read-only with plain flags only."""
    return flags & os.O_ACCMODE == os.O_RDONLY and not flags & ~(PLAIN_FLAGS | os.O_ACCMODE)


def is_fast(fh: int) -> bool:
    return bool(fh & FAST_FH)


def inode_of(fh: int) -> int:
    return fh & ~FAST_FH


def add_file(ino: int, path_fd: int, st: os.stat_result, budget: int) -> None:
    """Register ``ino`` (``path_fd``: any descriptor of it) with its stat ``st``."""
    if not ON or pyfuse3.fast_file_current(ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size):
        return
    if pyfuse3.fast_stats()[0] >= budget and pyfuse3.fast_file_fd(ino) < 0:
        return
    try:  # (an optimisation: a failure here leaves the file to Python, never fails the open)
        fd = os.open(f"/proc/self/fd/{path_fd}", os.O_RDONLY)
    except OSError:
        return
    now = os.fstat(fd)
    if (now.st_ino, now.st_mtime_ns, now.st_ctime_ns, now.st_size) != (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size):
        os.close(fd)  # changed since: not registered
        return
    pyfuse3.fast_file_add(ino, fd, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def drop_file(ino: int) -> None:
    if ON:
        pyfuse3.fast_file_drop(ino)


def opens(ino: int) -> int:
    """Opens of ``ino`` answered in C and not released yet."""
    return pyfuse3.fast_file_opens(ino) if ON else 0


def file_fd(ino: int) -> int:
    return pyfuse3.fast_file_fd(ino) if ON else -1


def add_dir(ino: int) -> None:
    if ON:
        pyfuse3.fast_dir_add(ino)


def drop_dir(ino: int) -> None:
    if ON:
        pyfuse3.fast_dir_drop(ino)


def stats() -> str:
    """``.nas/stats`` lines."""
    if not ON:
        return "fast_opens=no (stock pyfuse3)\n"
    files, dirs, opened, released, dir_opened, dir_released = pyfuse3.fast_stats()
    return (f"fast_opens=yes\nfast_files={files}\nfast_folders={dirs}\nfast_file_opens={opened}\n"
            f"fast_file_releases={released}\nfast_folder_opens={dir_opened}\nfast_folder_releases={dir_released}\n")
