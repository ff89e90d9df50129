"""Reaching an entry of the source tree with no symlink followed by the OS.

Whoever may write a folder of the tree may swap it for a symlink: out of the
tree (a reader would be served what lies there), or into the mount itself,
where a system call made by the daemon's request loop or core thread waits
for a FUSE answer that only that same thread could give (the mount hangs for
good). So a path of the tree is walked one name at a time, each folder
opened from its parent's descriptor with O_NOFOLLOW; links inside the tree
are followed by string where that is wanted (access.py). Only acl.py is
imported here: access.py and nasfs/repo/ both use this module.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from . import acl
from .acl import Acl

FOLDER = os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC  # a folder of the tree, never a link to one
NOT_IN_TREE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)  # a name gone, a file or a link on the way
Inode = tuple[os.stat_result, Acl]  # what decides who may reach an inode: its stat and its ACL
T = TypeVar("T")


def _in_tree(root: Path | str, real: Path | str, passed: list[Inode] | None = None) -> tuple[int, str]:
    """(an O_PATH descriptor of ``real``'s folder, ``real``'s last name),
    the folder reached from ``root``'s descriptor one name at a time
    following no symlink. FileNotFoundError when a folder on the way is
    missing or is not a real directory (a link to one, even inside the
    tree, is no folder of the working tree, as git sees it: a file under it
    is deleted), or when ``real`` is not under ``root``. ``passed``, when
    given, receives the stat and ACL of the root and of each folder on the way."""
    root = str(root).rstrip("/") or "/"
    rel = str(real)
    if os.path.isabs(rel):
        inside = root if root == "/" else root + "/"
        if not rel.startswith(inside):
            raise FileNotFoundError(errno.ENOENT, f"{rel} is not under {root}")
        rel = rel[len(inside):]
    names = [n for n in rel.split("/") if n not in ("", ".")]
    if not names or ".." in names:
        raise FileNotFoundError(errno.ENOENT, f"{rel!r} names no file of the tree")
    at = os.open(root, FOLDER)
    try:
        if passed is not None:
            passed.append((os.fstat(at), acl.of_fd(at)))
        for name in names[:-1]:
            fd = os.open(name, FOLDER, dir_fd=at)
            os.close(at)
            at = fd
            if passed is not None:
                passed.append((os.fstat(at), acl.of_fd(at)))
    except OSError as exc:
        os.close(at)
        if exc.errno in NOT_IN_TREE:
            raise FileNotFoundError(errno.ENOENT, f"{rel!r}: a folder on the way is not a folder of the tree") from None
        raise
    except BaseException:
        os.close(at)
        raise
    return at, names[-1]


def open_in_tree(root: Path | str, real: Path | str, flags: int) -> int:
    """``os.open`` of ``real`` with ``flags`` and O_NOFOLLOW, each folder on
    the way opened from its parent's descriptor following no symlink
    (FileNotFoundError when one is not a real directory of the tree)."""
    at, name = _in_tree(root, real)
    try:
        return os.open(name, flags | os.O_NOFOLLOW, dir_fd=at)
    finally:
        os.close(at)


def lstat_in_tree(root: Path | str, rel: str) -> os.stat_result | None:
    """The lstat of ``rel`` (tree-relative, or absolute under ``root``)
    reached from ``root`` with no symlink followed anywhere on the way; None
    when there is no such entry: it is absent, or a folder on the way is not
    a real directory (a link or a file), where git too sees no file."""
    return _at_entry(root, rel, None, lambda at, name: os.stat(name, dir_fd=at, follow_symlinks=False))


def way_in_tree(root: Path | str, rel: str) -> tuple[list[Inode], Inode] | None:
    """As :func:`lstat_in_tree` (the same walk), with the stats and ACLs of
    the root and of each folder on the way, and the entry's (:func:`inode_at`):
    whose search bits decide, with the entry's own, who may read it (a
    snapshot's audience and trail)."""
    passed: list[Inode] = []
    found = _at_entry(root, rel, passed, inode_at)
    return None if found is None else (passed, found)


def inode_at(at: int, name: str) -> Inode:
    """The lstat and ACL of the entry ``name`` of the folder ``at``, of one
    inode (opened O_PATH, no link followed) whatever the name is swapped
    for meanwhile; a symlink's ACL is none."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at)
    try:
        st = os.fstat(fd)
        return st, () if stat.S_ISLNK(st.st_mode) else acl.of_fd(fd)
    finally:
        os.close(fd)


def _at_entry(root: Path | str, rel: str, passed: list[Inode] | None, look: Callable[[int, str], T]) -> T | None:
    """``look(folder descriptor, name)`` of ``rel``'s entry, its folder
    reached as :func:`_in_tree` does; None when there is no such entry."""
    try:
        at, name = _in_tree(root, rel, passed)
    except FileNotFoundError:
        return None
    try:
        return look(at, name)
    except OSError as exc:
        if exc.errno in NOT_IN_TREE:
            return None
        raise
    finally:
        os.close(at)


__all__ = ["FOLDER", "NOT_IN_TREE", "Inode", "inode_at", "lstat_in_tree", "open_in_tree", "way_in_tree"]
