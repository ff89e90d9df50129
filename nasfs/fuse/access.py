"""Who asks the mount: a FUSE request's caller as access.py judges callers.

The mount runs with ``default_permissions``, so the kernel checks the modes
nasfs reports (a view reports its file's owner and read bits); it does not
check the folders above a view's file, a symlink's target, or which files an
answer made from many (a folder map, a search) names. The mount asks
``nasfs.access`` for those, at every lookup and open (virtual.py).
"""

from __future__ import annotations

import os

import pyfuse3

from ..access import Caller, sees_all


def caller_of(ctx: pyfuse3.RequestContext | None) -> Caller:
    """The caller of a request (its groups from /proc); the daemon's own
    account for a call the daemon makes itself (no context)."""
    if ctx is None:
        return Caller.current()
    return Caller.of_process(ctx.pid, ctx.uid, ctx.gid)


def from_this_daemon(ctx: pyfuse3.RequestContext) -> bool:
    """Whether a request comes from a thread of this daemon itself (the
    kernel gives the calling thread's id): a walk of the core thread (or
    any other) that reached the mount through a link, libgit2's status of
    a folder swapped for one into the mount, say. Its answer may need the
    very thread that waits for it, and neither could go on: the mount
    would hang for good. Such a request is refused at once."""
    return ctx.pid > 0 and os.path.exists(f"/proc/self/task/{ctx.pid}")


def node_key(caller: Caller) -> tuple[int, ...]:
    """What keys a node whose answer depends on who asks (maps, searches):
    () for a caller who sees all (root, the daemon's own account), so their
    answers share one inode; else the caller's uid and groups."""
    return () if sees_all(caller) else caller.key
