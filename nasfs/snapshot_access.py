"""Who may read a commit's content: everyone who may read the repository,
unless the commit is a private snapshot (nasfs/repo/private_stores.py), whose
content only the readers of its source may read. Every door that serves a
commit's content (``.at/<rev>/``, ``.nas/deref``, ``--at``, pointers over
HTTP and MCP) asks :func:`check_commit` with its caller first."""

from __future__ import annotations

import os

from .access import AccessDenied, Caller, Seen, decider
from .repo import GitTree
from .repo.private_stores import NOWHERE


def check_commit(tree: GitTree, commit: str, caller: Caller | None) -> None:
    """Raise :class:`AccessDenied` unless ``caller`` (None: this process's
    own account) may read what the full commit id ``commit`` holds: for a
    private snapshot, each source path it records must be one the caller may
    see in the working tree now; a source since removed, one the caller could
    read from the store itself (its owner). The refusal names no path."""
    private = tree.private_sources(commit)
    if private is None:
        return
    store, paths = private
    decision = decider(tree.root, caller)
    if decision.caller.is_root:
        return
    for path in paths if store != NOWHERE else ("",):
        seen = decision.decide(path)
        if seen is Seen.ALLOWED and store != NOWHERE:
            continue
        if seen is Seen.MISSING and _may_read(decision.caller, store):
            continue
        raise AccessDenied(f"{decision.caller} may not read {commit[:12]}: it is a private snapshot of files "
                           "this account may not read", "commits of the repository, and snapshots of files this account may read")


def _may_read(caller: Caller, folder: str) -> bool:
    try:
        return caller.may(os.stat(folder), 0o5)
    except OSError:
        return False
