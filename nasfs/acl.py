"""POSIX access ACLs: read from an inode and judged as the kernel judges them.

An ACL entry can keep an account out of a file its mode bits let it read
(``setfacl -m u:alice:--- f`` on a 0644 file), or let one in that they keep
out; ``st_mode`` alone cannot tell whether an inode has one. So access.py,
audience.py and a private snapshot's trail read the inode's
``system.posix_acl_access`` and judge it here, by POSIX.1e (the kernel's
``posix_acl_permission``). Parsed by hand: the format is 4 + 8n bytes, a
library (pylibacl) would be a C extension for a dozen lines. No nasfs import
here: tree_walk.py uses it too.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Collection

XATTR = "system.posix_acl_access"
VERSION = 2
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
TAGS = (USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER)
NONE_HERE = (errno.ENODATA, errno.EOPNOTSUPP)  # no ACL; a filesystem (or a symlink) that keeps none

Entry = tuple[int, int, int]  # (tag, permission bits rwx as 0o7, uid or gid; -1 for the tags that name none)
Acl = tuple[Entry, ...]
"""An inode's access ACL; () when it has none (its mode bits decide)."""


def parse(raw: bytes) -> Acl:
    """The entries of an xattr's value (little-endian: version u32, then
    tag u16, perm u16, id u32 each). ValueError for another version or a
    length that is not 4 + 8n: the kernel never gives one."""
    if len(raw) < 4 or (len(raw) - 4) % 8 or struct.unpack_from("<I", raw)[0] != VERSION:
        raise ValueError("not a version 2 POSIX ACL")
    entries = tuple(struct.iter_unpack("<HHI", raw[4:]))
    return tuple((tag, perm & 0o7, -1 if tag in (USER_OBJ, GROUP_OBJ, MASK, OTHER) else uid) for tag, perm, uid in entries)


def _read(path: str | int, follow: bool) -> Acl:
    try:
        return parse(os.getxattr(path, XATTR, follow_symlinks=follow))
    except OSError as exc:
        if exc.errno in NONE_HERE:
            return ()
        raise


def of_fd(fd: int) -> Acl:
    """The ACL of the inode ``fd`` holds, an O_PATH descriptor too (fgetxattr
    refuses those, EBADF: read through its ``/proc/self/fd`` link, which is
    the inode itself, whatever its name is now)."""
    return _read(f"/proc/self/fd/{fd}", True)


def of_path(path: str, follow: bool = False) -> Acl:
    """The ACL of the inode ``path`` names (its last link followed only with ``follow``)."""
    return _read(path, follow)


def encode(acl: Acl) -> bytes:
    """Inverse of :func:`parse` (a view's ACL told to the kernel: fuse/virtual.py)."""
    return struct.pack("<I", VERSION) + b"".join(struct.pack("<HHI", tag, perm, who & 0xFFFFFFFF) for tag, perm, who in acl)


def allows(acl: Acl, owner: int, group: int, uid: int, groups: Collection[int], bits: int) -> bool:
    """Whether an account (``uid``, all its ``groups``, primary included) is
    granted ``bits`` (0o4 read, 0o1 search, as 'other' bits) by ``acl`` on
    an inode of ``owner`` and ``group``: the owner entry for the owner; else
    a named user entry, masked; else, if it is in the owning group or a named
    one, granted when one of those entries grants (masked), refused if none
    does; else the other entry."""
    mask = next((perm for tag, perm, _ in acl if tag == MASK), 0o7)
    if uid == owner:
        return any(tag == USER_OBJ and perm & bits == bits for tag, perm, _ in acl)
    for tag, perm, who in acl:
        if tag == USER and who == uid:
            return perm & mask & bits == bits
    matched = False
    for tag, perm, who in acl:
        if (tag == GROUP_OBJ and group in groups) or (tag == GROUP and who in groups):
            if perm & mask & bits == bits:
                return True
            matched = True
    return not matched and any(tag == OTHER and perm & bits == bits for tag, perm, _ in acl)


def may_matter(uid: int, owner: int, mode: int, bits: int) -> bool:
    """Whether an ACL could change what the mode bits say: not for the
    owner (the owner entry is the mode's owner bits), nor when the group
    class (the mask, with an ACL) and 'other' bits both refuse ``bits``
    (then every named entry, masked, and 'other' refuse too), nor when the
    group bits are none (the kernel's acl_permission_check then judges the
    mode bits alone, and a named user or group the ACL would refuse reads by
    'other'): an inode's ACL is read only when this says so."""
    return uid != owner and bool(mode & 0o070) and (mode & (bits << 3) == bits << 3 or mode & bits == bits)


def named(acl: Acl) -> tuple[set[int], set[int]]:
    """The uids and gids ``acl`` names: readers to ask about too (audience.py)."""
    return ({who for tag, _, who in acl if tag == USER}, {who for tag, _, who in acl if tag == GROUP})


def flat(acl: Acl) -> tuple[int, ...]:
    """``acl`` as integers, three an entry, as a trail's step keeps it (access.Step)."""
    return tuple(v for entry in acl for v in entry)


def unflat(values: tuple[int, ...]) -> Acl:
    """Inverse of :func:`flat`."""
    return tuple((values[i], values[i + 1], values[i + 2]) for i in range(0, len(values) - len(values) % 3, 3))


__all__ = ["Acl", "Entry", "XATTR", "allows", "encode", "flat", "may_matter", "named", "of_fd", "of_path", "parse", "unflat"]
