"""Whether everyone who may read the repository's objects may also read a
working-tree file at its source: the question that decides where a snapshot
of that file is written (nasfs/repo/private_stores.py).

A snapshot in ``.git/objects`` is readable by every reader of ``.git``; a
file whose folders or mode keep some of them out must not land there. The
readers are judged as representatives, each asked the one access decision
(:mod:`nasfs.access`): every account that owns ``.git``, ``.git/objects``
or an inode on the file's path or is named in one's ACL, the named members
of their groups and of the groups those ACLs name, a member of each such
group who is in no other, and a stranger (an account that
owns nothing and is in no group, who reads by the "other" bits). That
covers every class the kernel puts an account in for those inodes.
The modes, owners and ACLs are asked each time. Accounts' groups, and an answer
for the same inodes with the same modes and owners, are remembered only
while the account databases are as they were: each use stats /etc/passwd,
/etc/group and /etc/nsswitch.conf, so a member removed from a group (a
revocation) is judged without that group at the next question; where
nsswitch names a source other than files or systemd (LDAP, sss), nothing is
remembered.
"""

from __future__ import annotations

import grp
import os
import pwd
import threading
from collections.abc import Callable
from pathlib import Path

from . import acl as acls
from .access import Caller, Seen, decider
from .cache import LRU
from .errors import NasError
from .tree_walk import Inode, way_in_tree

STRANGER_ID = 2**32 - 3  # no account or group has it (-1 and -2 are taken as "none" and nobody by convention)
STRANGER = Caller(STRANGER_ID, STRANGER_ID)


ACCOUNT_FILES = ("/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
LOCAL_SOURCES = {"files", "compat", "systemd"}  # sources whose changes show in the files above (or have no groups to revoke)
_accounts: dict[tuple[str, int], tuple[object, list[Caller]]] = {}
_accounts_lock = threading.Lock()
_answers: LRU[tuple[object, ...], bool] = LRU(4096)
_nsswitch: list[object] = [None, False]  # the stamp nsswitch.conf was read at, and whether it names local sources only


def accounts_stamp() -> tuple[object, ...] | None:
    """What the account databases are now (inode, size, mtime of each file),
    or None when they cannot be told by their files: then nothing that rests
    on them is remembered."""
    try:
        stamp = tuple((st.st_ino, st.st_size, st.st_mtime_ns) for st in map(os.stat, ACCOUNT_FILES))
    except OSError:
        return None
    if _nsswitch[0] != stamp[2]:
        local = True
        try:
            with open(ACCOUNT_FILES[2]) as fh:
                for line in fh:
                    key, _, sources = line.split("#")[0].partition(":")
                    if key.strip() in ("passwd", "group"):
                        local &= all(s.split("[")[0] in LOCAL_SOURCES for s in sources.split() if not s.startswith("["))
        except OSError:
            local = False
        _nsswitch[:] = [stamp[2], local]
    return stamp if _nsswitch[1] else None


def _remembered(kind: str, number: int, look_up: Callable[[int], list[Caller]], stamp: object) -> list[Caller]:
    """An account's or a group's representatives, asked of the system again
    whenever the account databases changed (``stamp``; None: every time):
    ``getgrouplist`` reads the whole group database (3 ms)."""
    with _accounts_lock:
        held = _accounts.get((kind, number))
    if stamp is not None and held is not None and held[0] == stamp:
        return held[1]
    found = look_up(number)
    if stamp is not None:
        with _accounts_lock:
            if len(_accounts) > 4096:
                _accounts.clear()
            _accounts[(kind, number)] = (stamp, found)
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


def _candidates(inodes: list[Inode], stamp: object) -> list[Caller]:
    """The representative accounts for the owners and groups of these
    inodes, and for the users and groups their ACLs name."""
    seen: dict[tuple[int, ...], Caller] = {STRANGER.key: STRANGER}
    uids, gids = {st.st_uid for st, _ in inodes}, {st.st_gid for st, _ in inodes}
    for _, acl in inodes:
        users, groups = acls.named(acl)
        uids |= users
        gids |= groups
    for uid in uids:
        for caller in _remembered("user", uid, _owner, stamp):
            seen.setdefault(caller.key, caller)
    for gid in gids:
        for caller in _remembered("group", gid, _members, stamp):
            seen.setdefault(caller.key, caller)
    return list(seen.values())


def _inode(path: str) -> Inode:
    return os.stat(path), acls.of_path(path, follow=True)


def _path_stats(root: Path, rel: str) -> list[Inode] | None:
    """The root, each folder on the way to ``rel`` and ``rel`` itself (a
    tree-relative path already resolved: the real file's), with their ACLs,
    reached from the root with no symlink followed by the OS (tree_walk.py):
    a folder swapped for a link since it was resolved, into the mount, would
    have the core thread wait on its own daemon. None when that way is no
    longer one of real folders to an entry."""
    try:
        found = way_in_tree(root, rel)
    except OSError:
        return None
    return None if found is None else [*found[0], found[1]]


def git_readers(git_dir: Path, candidates: list[Caller]) -> list[Caller]:
    """Those of ``candidates`` who may search ``.git`` and read its objects folder."""
    (git_st, git_acl), (objects_st, objects_acl) = _inode(str(git_dir)), _inode(str(git_dir / "objects"))
    return [c for c in candidates if c.may(git_st, 0o1, git_acl) and c.may(objects_st, 0o5, objects_acl)]


def narrower_than_git(root: Path, git_dir: Path, paths: list[str]) -> bool:
    """Whether some reader of ``git_dir``'s objects may not see one of
    ``paths`` (tree-relative) in the working tree: a snapshot of them would
    widen who can read them."""
    if not paths:
        return False
    stats = [_inode(str(git_dir)), _inode(str(git_dir / "objects"))]
    for rel in paths:
        way = _path_stats(root, rel)
        if way is None:  # gone, or under a folder made a link: who may read it is unknown, so not all of them
            return True
        stats += way
    # the answer rests on these inodes' owners, modes and ACLs, and on the account databases: all in its key
    stamp = accounts_stamp()
    key = (str(root), *paths, stamp, *((st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid, *acls.flat(acl))
                                       for st, acl in stats))
    held = _answers.get(key) if stamp is not None else None
    if held is not None:
        return held
    answer = False
    for reader in git_readers(git_dir, _candidates(stats, stamp)):
        decision = decider(root, reader)
        if any(decision.decide(rel) is not Seen.ALLOWED for rel in paths):
            answer = True
            break
    if stamp is not None:
        _answers.put(key, answer)
    return answer


__all__ = ["STRANGER", "git_readers", "narrower_than_git"]
