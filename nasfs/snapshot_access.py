"""Who may read a commit's content: everyone who may read the repository,
unless the commit is a private snapshot (nasfs/repo/private_stores.py), whose
content only those may read who may read its sources now and could read
them when it was recorded. Every door that serves a commit's content
(``.at/<rev>/``, ``.nas/deref``, ``--at``, pointers over HTTP and MCP, a
stale summary's record) asks :func:`check_commit` with its caller first."""

from __future__ import annotations

import os

from .access import AccessDenied, Caller, Seen, decider, may_have_read
from .repo import GitTree
from .repo.private_stores import NOWHERE


def check_commit(tree: GitTree, commit: str, caller: Caller | None) -> None:
    """Raise :class:`AccessDenied` unless ``caller`` (None: this process's
    own account) may read what the full commit id ``commit`` holds. For a
    private snapshot, each source path it records must be one the caller
    may see in the working tree now *and* could have read when it was
    recorded (its trail: owners and modes then, so a 0600 file made 0644
    since does not open its old versions); its store's owner, who reads the
    store with plain git anyway, needs the first only, or nothing for a
    source since removed. A snapshot that kept no trail is its owner's
    (and root's) alone. The refusal names no path."""
    private = tree.private_sources(commit)
    if private is None:
        return
    decision = decider(tree.root, caller)
    who = decision.caller
    if who.is_root:
        return
    owner = private.store != NOWHERE and _may_read(who, private.store)
    for path in private.paths if private.store != NOWHERE else ("",):
        seen = decision.decide(path)
        if seen is Seen.ALLOWED and private.store != NOWHERE and (owner or may_have_read(who, private.trails.get(path, ()))):
            continue
        if seen is Seen.MISSING and owner:
            continue
        raise AccessDenied(f"{who} may not read {commit[:12]}: it is a private snapshot of files "
                           "this account may not read, or could not when it was recorded",
                           "commits of the repository, and snapshots of files this account may read and could then")


def may_read_version(tree: GitTree, commit: str, caller: Caller | None) -> bool:
    """Whether ``caller`` may be told what a commit recorded of a path even
    though the path may have held other content since (a summary made then,
    served stale): exactly when they may read the commit (:func:`check_commit`)."""
    try:
        check_commit(tree, commit, caller)
    except AccessDenied:
        return False
    return True


def _may_read(caller: Caller, folder: str) -> bool:
    try:
        return caller.may(os.stat(folder), 0o5)
    except OSError:
        return False
