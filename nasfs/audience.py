"""Whether everyone who may read the repository's objects may also read a
working-tree file at its source: the question that decides where a snapshot
of that file is written (nasfs/repo/private_stores.py).

A snapshot in ``.git/objects`` is readable by every reader of ``.git``; a
file whose folders or mode keep some of them out must not land there. The
readers are judged as representatives, each asked the one access decision
(:mod:`nasfs.access`): every account that owns ``.git``, ``.git/objects``
or an inode on the file's path, the named members of their groups, a member
of each such group who is in no other, and a stranger (an account that
owns nothing and is in no group, who reads by the "other" bits). That
covers every class the kernel puts an account in for those inodes.
The modes and owners are asked each time; an answer for the same inodes
with the same modes and owners, and accounts' groups, are remembered for a
minute (a login takes new groups only at the next one anyway).
"""

from __future__ import annotations

import grp
import os
import pwd
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .access import Caller, Seen, decider
from .cache import LRU
from .errors import NasError

STRANGER_ID = 2**32 - 3  # no account or group has it (-1 and -2 are taken as "none" and nobody by convention)
STRANGER = Caller(STRANGER_ID, STRANGER_ID)


ACCOUNTS_SECONDS = 60.0  # how long an account's groups are remembered (a login takes new groups only at the next one)
_accounts: dict[tuple[str, int], tuple[float, list[Caller]]] = {}
_accounts_lock = threading.Lock()
_answers: LRU[tuple[object, ...], tuple[float, bool]] = LRU(4096)


def _remembered(kind: str, number: int, look_up: Callable[[int], list[Caller]]) -> list[Caller]:
    """An account's or a group's representatives, asked of the system at most
    once a minute: ``getgrouplist`` reads the whole group database (3 ms)."""
    now = time.monotonic()
    with _accounts_lock:
        held = _accounts.get((kind, number))
    if held is not None and now - held[0] < ACCOUNTS_SECONDS:
        return held[1]
    found = look_up(number)
    with _accounts_lock:
        if len(_accounts) > 4096:
            _accounts.clear()
        _accounts[(kind, number)] = (now, found)
    return found


def _owner(uid: int) -> list[Caller]:
    try:
        return [Caller.of_account(pwd.getpwuid(uid).pw_name)]
    except (KeyError, NasError):
        return [Caller(uid, STRANGER_ID)]


def _members(gid: int) -> list[Caller]:
    found = [Caller(STRANGER_ID, gid)]
    try:
        names = grp.getgrgid(gid).gr_mem
    except KeyError:
        return found
    for name in names:
        try:
            found.append(Caller.of_account(name))
        except NasError:  # a member the group names but passwd does not know: the generic member stands for it
            continue
    return found


def _candidates(stats: list[os.stat_result]) -> list[Caller]:
    """The representative accounts for the owners and groups of these inodes."""
    seen: dict[tuple[int, ...], Caller] = {STRANGER.key: STRANGER}
    for uid in {st.st_uid for st in stats}:
        for caller in _remembered("user", uid, _owner):
            seen.setdefault(caller.key, caller)
    for gid in {st.st_gid for st in stats}:
        for caller in _remembered("group", gid, _members):
            seen.setdefault(caller.key, caller)
    return list(seen.values())


def _path_stats(root: Path, rel: str) -> list[os.stat_result]:
    """The root, each folder on the way to ``rel`` and ``rel`` itself (a
    tree-relative path already resolved: the real file's)."""
    here = str(root)
    stats = [os.stat(here)]
    for part in rel.split("/"):
        here = f"{here}/{part}"
        try:
            stats.append(os.stat(here))
        except OSError:
            break
    return stats


def git_readers(git_dir: Path, candidates: list[Caller]) -> list[Caller]:
    """Those of ``candidates`` who may search ``.git`` and read its objects folder."""
    git_st, objects_st = os.stat(git_dir), os.stat(git_dir / "objects")
    return [c for c in candidates if c.may(git_st, 0o1) and c.may(objects_st, 0o5)]


def narrower_than_git(root: Path, git_dir: Path, paths: list[str]) -> bool:
    """Whether some reader of ``git_dir``'s objects may not see one of
    ``paths`` (tree-relative) in the working tree: a snapshot of them would
    widen who can read them."""
    if not paths:
        return False
    stats = [os.stat(git_dir), os.stat(git_dir / "objects")]
    for rel in paths:
        stats += _path_stats(root, rel)
    # the answer rests on these inodes' owners and modes, and on accounts' groups (remembered a minute)
    key = (str(root), *paths, *((st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid) for st in stats))
    now = time.monotonic()
    held = _answers.get(key)
    if held is not None and now - held[0] < ACCOUNTS_SECONDS:
        return held[1]
    answer = False
    for reader in git_readers(git_dir, _candidates(stats)):
        decision = decider(root, reader)
        if any(decision.decide(rel) is not Seen.ALLOWED for rel in paths):
            answer = True
            break
    _answers.put(key, (now, answer))
    return answer


__all__ = ["STRANGER", "git_readers", "narrower_than_git"]
