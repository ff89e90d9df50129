"""The Linux calls Python's ``os`` lacks, through libc.

File handles (``name_to_handle_at``/``open_by_handle_at``) name a source
inode for as long as it exists, across renames and unlinks, without holding
a descriptor open: the pass-through keeps one per inode instead of a path.
The ``AT_EMPTY_PATH`` calls act on an ``O_PATH`` descriptor itself, which is
how a symlink or an unlinked file is changed without a name. ``fallocate``
takes every mode (``os.posix_fallocate`` only the plain one).
"""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate64.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]  # off64_t on every architecture

AT_EMPTY_PATH = 0x1000
AT_SYMLINK_NOFOLLOW = 0x100
MAX_HANDLE_SZ = 128
_HEADER = 8  # struct file_handle: unsigned int handle_bytes; int handle_type


class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * MAX_HANDLE_SZ)]


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def file_handle(fd: int, name: bytes = b"") -> tuple[bytes, int] | None:
    """(handle, mount id) of the inode ``fd`` refers to, or of ``name`` in the
    folder ``fd`` (not following a symlink); None when its filesystem cannot
    make handles (the caller falls back to paths) or the name is gone."""
    h = _FileHandle()
    h.handle_bytes = MAX_HANDLE_SZ
    mount_id = ctypes.c_int()
    if _libc.name_to_handle_at(fd, name, ctypes.byref(h), ctypes.byref(mount_id), 0 if name else AT_EMPTY_PATH) < 0:
        return None
    return ctypes.string_at(ctypes.addressof(h), _HEADER + h.handle_bytes), mount_id.value


def open_by_handle(mount_fd: int, handle: bytes, flags: int) -> int:
    """A new descriptor of the inode ``handle`` names; ESTALE once it is gone.
    ``mount_fd`` is any non-O_PATH descriptor on the same filesystem."""
    buf = ctypes.create_string_buffer(handle, len(handle))
    fd = _libc.open_by_handle_at(mount_fd, buf, flags)
    if fd < 0:
        raise _fail("open_by_handle_at")
    return fd


def link_fd(fd: int, dir_fd: int, name: bytes) -> None:
    """A new name for the inode behind an O_PATH descriptor."""
    if _libc.linkat(fd, b"", dir_fd, name, AT_EMPTY_PATH) < 0:
        raise _fail("linkat")


def chown_fd(fd: int, uid: int, gid: int) -> None:
    """chown of the inode behind an O_PATH descriptor, symlinks included."""
    if _libc.fchownat(fd, b"", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0:
        raise _fail("fchownat")


def rename2(old_dir: int, old: bytes, new_dir: int, new: bytes, flags: int) -> None:
    """renameat2, so RENAME_NOREPLACE and RENAME_EXCHANGE are the kernel's own."""
    if _libc.renameat2(old_dir, old, new_dir, new, ctypes.c_uint(flags)) < 0:
        raise _fail("renameat2")


def fallocate(fd: int, mode: int, offset: int, length: int) -> None:
    """fallocate(2) with its ``FALLOC_FL_*`` mode: the filesystem's own errno
    (EOPNOTSUPP for a mode it lacks) comes back as an OSError."""
    if _libc.fallocate64(fd, mode, offset, length) < 0:
        raise _fail("fallocate")
