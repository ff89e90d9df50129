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


def may_read_version(tree: GitTree, commit: str, caller: Caller | None) -> bool:
    """Whether ``caller`` may be told what a commit recorded of a path even
    though the path may have held other content since (a summary made then,
    served stale): :func:`check_commit`, and for a private snapshot also
    the right to read its store (its owner's). check_commit lets every
    reader of a private snapshot's sources *now* read it, so once its owner
    wrote other text to a 0600 file and made it 0644, the old version's
    summary would be told to readers who could never read that version."""
    try:
        check_commit(tree, commit, caller)
    except AccessDenied:
        return False
    private = tree.private_sources(commit)
    if private is None:
        return True
    who = caller or Caller.current()
    return who.is_root or (private[0] != NOWHERE and _may_read(who, private[0]))


def _may_read(caller: Caller, folder: str) -> bool:
    try:
        return caller.may(os.stat(folder), 0o5)
    except OSError:
        return False
