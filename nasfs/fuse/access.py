"""Who asks: a request's caller, and which working-tree files that caller may read.

The mount runs with ``default_permissions``, so the kernel checks ordinary
files against the modes nasfs reports. A search reads many files at once on
the caller's behalf, so it checks each hit here instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

import pyfuse3

from ..access import Caller


def caller_of(ctx: pyfuse3.RequestContext | None) -> tuple[int, ...]:
    """(uid, gid, supplementary groups...) of a request; () for root, who reads all."""
    if ctx is None or ctx.uid == 0:
        return ()
    try:
        groups = sorted(pyfuse3.get_sup_groups(ctx.pid))
    except (OSError, ValueError):  # the process is gone: its primary group only
        groups = []
    return (ctx.uid, ctx.gid, *groups)


def caller_of_request(ctx: pyfuse3.RequestContext | None) -> Caller | None:
    """The request's caller for the access decision (None: the daemon's own account)."""
    key = caller_of(ctx)
    return Caller.from_key(key) if key else None


def readable_by(caller: tuple[int, ...], root: str) -> Callable[[str], bool]:
    """Whether the caller may read a working-tree file, by its mode bits: a
    search on the mount shows nobody a hit from a file they could not cat."""
    uid, groups = caller[0], set(caller[1:])

    def readable(path: str) -> bool:
        try:
            st = os.stat(os.path.join(root, path))
        except OSError:
            return False
        if st.st_uid == uid:
            return bool(st.st_mode & stat.S_IRUSR)
        if st.st_gid in groups:
            return bool(st.st_mode & stat.S_IRGRP)
        return bool(st.st_mode & stat.S_IROTH)

    return readable
