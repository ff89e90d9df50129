"""Who asks the mount: a FUSE request's caller as access.py judges callers.

The mount runs with ``default_permissions``, so the kernel checks the modes
nasfs reports (a view reports its file's owner and read bits); it does not
check the folders above a view's file, a symlink's target, or which files an
answer made from many (a folder map, a search) names. The mount asks
``nasfs.access`` for those, at every lookup and open (virtual.py).
"""

from __future__ import annotations

import pyfuse3

from ..access import Caller, sees_all


def caller_of(ctx: pyfuse3.RequestContext | None) -> Caller:
    """The caller of a request (its groups from /proc); the daemon's own
    account for a call the daemon makes itself (no context)."""
    if ctx is None:
        return Caller.current()
    return Caller.of_process(ctx.pid, ctx.uid, ctx.gid)


def node_key(caller: Caller) -> tuple[int, ...]:
    """What keys a node whose answer depends on who asks (maps, searches):
    () for a caller who sees all (root, the daemon's own account), so their
    answers share one inode; else the caller's uid and groups."""
    return () if sees_all(caller) else caller.key
