"""Reading a working file as one version while writers may rewrite it in
place: a plain whole-file read can join one version's start to a later
version's end."""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

import pygit2

from ..acl import Acl, flat
from ..errors import NotServable
from .. import tree_walk
from ..tree_walk import open_in_tree

READ_TRIES = 20


def open_regular(real: Path | str, root: Path | str | None = None) -> BinaryIO:
    """``open(real, "rb")`` that never waits: the path is opened without
    blocking and refused unless it is a regular file, since it may name a
    FIFO by now (swapped in after the stat that saw a file), whose open
    would hold the thread until someone writes to it. With ``root`` (the
    tree ``real`` is in), no symlink is followed anywhere on the way: each
    folder is opened from its parent's descriptor, the file itself with
    O_NOFOLLOW (FileNotFoundError when a folder on the way is not a real
    directory, NotServable for a link), so a folder swapped for a link out of
    the tree, or into the mount itself, is never read through."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    if root is None:
        fd = os.open(real, flags)
    else:
        try:
            fd = open_in_tree(root, real, flags)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise NotServable(f"{os.path.basename(str(real))!r} is a link, not a regular file (any more)",
                              "read it again") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotServable(f"{os.path.basename(str(real))!r} is not a regular file (any more)", "read it again")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells one version of a file from the next, as git's index does."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


MODES = 4  # the length of a readers_key's first part, the inode and its owner, group and mode; its ACL follows


def readers_key(st: os.stat_result, acl: Acl = ()) -> tuple[int, ...]:
    """What decides who may read an inode (a file's or a folder's, as
    access.py judges it): the inode, its owner, its group, its permission
    bits and its ACL (an ACL change moves only the ctime, which a write
    moves too). Its folders' count too (:func:`way_in_tree`)."""
    return (st.st_ino, st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), *flat(acl))


Way = tuple[tuple[int, ...], ...]
"""Who may read a working file, as far as an access decision (access.py) and a
snapshot's audience (audience.py) and trail ask: the ``readers_key`` of the
tree's root, of each folder on the way and of the file."""


def way_in_tree(root: Path | str, rel: str) -> tuple[os.stat_result, Way] | None:
    """As :func:`lstat_in_tree` (the same walk, no symlink followed), and
    the :data:`Way` to the entry: while it holds, each version of the file
    (a writer in place) is one the same accounts could read. None when
    there is no such entry."""
    found = tree_walk.way_in_tree(root, rel)
    if found is None:
        return None
    passed, (st, acl) = found
    return st, (*(readers_key(*inode) for inode in passed), readers_key(st, acl))


def read_one_version(real: Path, root: Path | str | None = None) -> tuple[os.stat_result, bytes]:
    """The whole bytes of a file as one version, and their stat.

    ``read()`` of a whole file is several read calls; a writer rewriting the
    file in place between them gave a version's start followed by a later
    version's end, which no one ever wrote. Bytes count when their length is
    the size the file had before the read and the file's stat did not change
    during it; otherwise the read is tried again. ``root``: as for
    :func:`open_regular` (no symlink followed on the way).
    """
    for attempt in range(READ_TRIES):
        with open_regular(real, root) as fh:
            before = os.fstat(fh.fileno())
            data = fh.read()
            after = os.fstat(fh.fileno())
        if len(data) == before.st_size and stat_key(before) == stat_key(after):
            return after, data
        time.sleep(0.001 * attempt)
    raise NotServable(f"{real.name!r} changed during each of {READ_TRIES} reads of it", "read it again once it is written")


def hash_large(real: Path, root: Path | str | None = None) -> tuple[os.stat_result, str]:
    """The blob id of a file too large to hold, hashed from one open file
    (through its ``/proc/self/fd`` link, the same inode), and that file's
    stat: the id is of the inode whose stat is returned, whatever the path
    names meanwhile."""
    with open_regular(real, root) as fh:
        blob_id = str(pygit2.hashfile(f"/proc/self/fd/{fh.fileno()}"))
        return os.fstat(fh.fileno()), blob_id


def blob_of_one_version(repo: pygit2.Repository, real: Path, root: Path | str | None = None) -> pygit2.Oid | None:
    """The blob of a file's bytes as one version (as ``read_one_version``,
    streamed, so a file of any size), for a commit; None when it changed
    during each of READ_TRIES reads (its writer's next close commits it)."""
    for attempt in range(READ_TRIES):
        with open_regular(real, root) as fh:
            before = os.fstat(fh.fileno())
            blob = repo.create_blob_fromiobase(fh)
            read = fh.tell()
            after = os.fstat(fh.fileno())
        if read == before.st_size and stat_key(before) == stat_key(after):
            return blob
        time.sleep(0.001 * attempt)
    return None
