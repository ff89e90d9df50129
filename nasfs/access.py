"""May this reader see this path: the one access decision of nasfs.

Every door (the mount's virtual files, the read socket, the CLI, HTTP, MCP)
and every answer built from many files (folder maps, folder summaries,
search) asks this module, and nothing else decides. It judges a path the way
the kernel judges ``cat path`` on the source tree: each folder walked needs
its search bit, a symlink inside the tree is followed (and the folders of its
target walked in turn), and the file needs its read bit (a folder: read and
search, for its listing). Owner, then group (primary and supplementary), then
other, as the kernel does, and by an inode's POSIX ACL where it has one
(acl.py: named users and groups, the mask); root reads everything.

Nothing here is cached across requests: each call stats the path anew, so a
file made unreadable is unreadable at the next question. A ``Decider`` may
remember folders within one request (one folder map, one search), no longer.

A decision is of a path, read later by path: between the two, whoever may
write a folder on the way may swap the file for a symlink to another. So a
decision that allows a regular file also names it, by its ``Identity``
(device, inode), and the core serves only bytes read from that inode
(``FileChanged`` otherwise: repo/working.py, service.py).
"""

from __future__ import annotations

import enum
import errno
import os
import pwd
import stat
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from . import acl as acls
from .acl import Acl
from .errors import BadPath, NasError
from .tree_walk import FOLDER, NOT_IN_TREE, inode_at, lstat_in_tree, way_in_tree

_MAX_LINKS = 40  # the kernel's limit on symlinks followed in one walk (ELOOP past it)
_HANDLES = 64  # folder descriptors one Decider keeps open at most (a worker may have a limit of 1,024)

Identity = tuple[int, int]  # (st_dev, st_ino): the very file a decision allowed
NOTHING: Identity = (-1, -1)  # a decision that allowed no inode (a missing path): no read matches it


def identity(st: os.stat_result) -> Identity:
    return (st.st_dev, st.st_ino)


def still_names(root: Path | str, real: Path | str, allowed: Identity) -> bool:
    """Whether ``real`` (resolved, under ``root``) names, now, the inode a
    decision allowed (not when it names nothing), reached with no link
    followed: a folder swapped for one since is not walked through."""
    try:
        st = os.stat(root) if os.fspath(real).rstrip("/") == os.fspath(root).rstrip("/") else lstat_in_tree(root, real)
    except OSError:
        return False
    return st is not None and identity(st) == allowed


Step = tuple[int, ...]  # (uid, gid, permission bits, bits wanted as 'other' bits, *its ACL: acl.flat) of one inode of a walk
Trail = tuple[Step, ...]
"""Who could read a file at one moment: each inode a read of it walked (the
root, each folder, the file), with the owner, group, mode and ACL (none in
trails written before ACLs were judged) the kernel judged then. A private snapshot keeps the trail of each file it recorded
(repo/snapshots.py), so that its old content is told only to those who
could have read it when it was recorded, whatever its modes are now."""


class _Modes(NamedTuple):
    """The part of a stat :meth:`Caller.may` reads, as a trail records it."""

    st_uid: int
    st_gid: int
    st_mode: int


@dataclass(frozen=True)
class Caller:
    """Who asks: uid, primary group and supplementary groups. ``uid`` 0 is root."""

    uid: int
    gid: int
    groups: frozenset[int] = field(default_factory=frozenset)

    @property
    def is_root(self) -> bool:
        return self.uid == 0

    @property
    def key(self) -> tuple[int, ...]:
        """A stable, hashable form (uid, gid, sorted groups) for request nodes."""
        return (self.uid, self.gid, *sorted(self.groups))

    @classmethod
    def root(cls) -> Caller:
        return cls(0, 0)

    @classmethod
    def current(cls) -> Caller:
        """This process's own account (the CLI run by a user)."""
        return cls(os.geteuid(), os.getegid(), frozenset(os.getgroups()))

    @classmethod
    def of_process(cls, pid: int, uid: int, gid: int) -> Caller:
        """A client process known by the kernel's credentials (FUSE request,
        SO_PEERCRED): its supplementary groups read from ``/proc``; its
        primary group alone once the process is gone (the narrower answer)."""
        groups: set[int] = set()
        owner: int | None = None
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("Uid:"):
                        owner = int(line.split()[2])  # effective uid, as the kernel's credentials give it
                    elif line.startswith("Groups:"):
                        groups.update(int(g) for g in line.split()[1:])
                        break
        except (OSError, ValueError):
            pass
        if owner != uid:  # the pid was reused by another account's process: its groups are not the caller's
            groups = set()
        return cls(uid, gid, frozenset(groups))

    @classmethod
    def of_account(cls, name: str) -> Caller:
        """An account by name or number (an HTTP token's user), with the
        groups the system gives it at login."""
        try:
            entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        except (KeyError, OverflowError):
            raise NasError(f"no account named {name!r} on this machine",
                           "a user name or uid that `id` knows") from None
        return cls(entry.pw_uid, entry.pw_gid, frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid)))

    @classmethod
    def from_key(cls, key: tuple[int, ...]) -> Caller:
        """Inverse of ``key`` (a worker process is handed the key)."""
        return cls(key[0], key[1], frozenset(key[2:]))

    def may(self, st: os.stat_result | _Modes, bits: int, acl: Acl = ()) -> bool:
        """The kernel's check of ``bits`` (given as 'other' bits, e.g. 0o4
        read, 0o1 search) against one inode's owner and mode, or its ``acl``
        when it has one (acl.allows)."""
        if self.is_root:
            return True
        if acl and st.st_mode & 0o070:  # the kernel judges an ACL only while its mask (the group bits) grants something
            return acls.allows(acl, st.st_uid, st.st_gid, self.uid, self.groups | {self.gid}, bits)
        mode = st.st_mode
        if st.st_uid == self.uid:
            return mode & (bits << 6) == bits << 6
        if st.st_gid == self.gid or st.st_gid in self.groups:
            return mode & (bits << 3) == bits << 3
        return mode & bits == bits

    def needs_acl(self, st: os.stat_result, bits: int) -> bool:
        """Whether this check of ``st`` must read the inode's ACL (acl.may_matter): a system call saved otherwise."""
        return not self.is_root and acls.may_matter(self.uid, st.st_uid, st.st_mode, bits)

    def __str__(self) -> str:
        try:
            return pwd.getpwuid(self.uid).pw_name
        except KeyError:
            return f"uid {self.uid}"


class Seen(enum.Enum):
    """The decision. Only ``ALLOWED`` lets a door answer with content;
    ``MISSING`` may be told (the caller could have seen the name is absent);
    ``DENIED`` must be told as a refusal that says nothing of what lies
    behind it (no existence, no link target, no size)."""

    ALLOWED = "allowed"
    DENIED = "denied"
    MISSING = "missing"
    OUTSIDE = "outside"  # a symlink the caller may follow leaves the tree


class AccessDenied(NasError):
    """The caller may not see this path (the same answer whether or not it exists)."""

    exit_code = 2
    http_status = 403
    errno = errno.EACCES
    kind = "access_denied"


@dataclass
class Decider:
    """The decision for one tree root, for the span of one request.

    ``folders`` remembers, within this object only, which folders the caller
    may search, so that a folder map of ten thousand entries stats each folder
    once; make a new ``Decider`` for each request."""

    root: Path
    caller: Caller
    folders: dict[str, bool] = field(default_factory=dict)
    listable: dict[str, bool] = field(default_factory=dict)
    _handles: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _closer: weakref.finalize | None = field(default=None, init=False, repr=False, compare=False)

    def decide(self, path: str, want_dir: bool = False) -> Seen:
        """May the caller see ``path`` (relative to the root, '' for the root
        itself)? A file needs read; a folder (or ``want_dir``) read and search.
        Links are resolved by string, for root too: nothing outside the root
        is ever stat'ed (a link into the mount itself would wedge its daemon)."""
        return self.judge(path, want_dir)[0]

    def judge(self, path: str, want_dir: bool = False) -> tuple[Seen, Identity | None]:
        """``decide``, and the identity of what it allowed (the last
        component's lstat: what a read of the path must find); None for a
        refusal."""
        seen, st, _ = self._walk(path, want_dir)
        return seen, None if st is None else identity(st)

    def stat(self, path: str) -> os.stat_result | None:
        """The stat of what ``path`` names, its links inside the tree
        followed by string and none by the OS (the last component's lstat
        once they are resolved), for a door that shows or sizes a view of it
        on the request loop or the core thread; None when the caller may not
        see it, it is missing, or it leads out of the tree."""
        seen, st, _ = self._walk(path, False)
        return st if seen is Seen.ALLOWED else None

    def resolve(self, path: str) -> tuple[Seen, str, os.stat_result | None]:
        """The decision, ``path`` with its links resolved by string (as
        ``realpath`` would, the OS following none: tree-relative, '' for the
        root; for a MISSING path, its resolved part and the names left), and
        the stat of what it names (as ``stat``)."""
        seen, st, resolved = self._walk(path, False)
        return seen, resolved, st if seen is Seen.ALLOWED else None

    def lstat(self, path: str) -> os.stat_result | None:
        """The lstat of ``path``'s last name (a link there not followed) in
        its folder, that folder's links resolved by string; None when the
        caller may not see the folder or it is missing or out of the tree."""
        folder, _, name = path.rstrip("/").rpartition("/")
        if name in ("", ".", ".."):
            return self.stat(path)
        seen, where, st = self.resolve(folder)
        if st is None or not stat.S_ISDIR(st.st_mode):
            return None
        try:
            return os.stat(name, dir_fd=self._handle(where), follow_symlinks=False)
        except OSError:
            return None

    def _walk(self, path: str, want_dir: bool) -> tuple[Seen, os.stat_result | None, str]:
        """The decision, the lstat of what it allowed, and its resolved
        path (``resolve``; '' when refused or outside). Each name is
        stat'ed from its folder's descriptor (``_handle``), never by a path
        the OS would walk: a folder on the way swapped for a symlink (into
        the mount itself, whose daemon this may be) is seen as a link, and
        its target followed by string, or not at all."""
        if len(self._handles) > _HANDLES:
            _close(self._handles)
        parts = [p for p in path.split("/") if p not in ("", ".")]
        here: list[str] = []
        links = 0
        if not self._search(""):
            return Seen.DENIED, None, ""
        while parts:
            name = parts.pop(0)
            if name == "..":
                if not here:
                    return Seen.OUTSIDE, None, ""
                here.pop()
                continue
            folder = "/".join(here)
            rel = f"{folder}/{name}" if folder else name
            try:
                at = self._handle(folder)
                entered = self._enter(at, name, rel) if parts else None  # a folder to walk through: opened at once
                st = entered or os.stat(name, dir_fd=at, follow_symlinks=False)
            except FileNotFoundError:
                return _missing([*here, name, *parts])
            except OSError:
                return Seen.DENIED, None, ""
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    return Seen.DENIED, None, ""
                try:
                    target = os.readlink(name, dir_fd=at)
                except OSError:
                    return Seen.DENIED, None, ""
                if target.startswith("/"):
                    inside = _inside(self.root, target)
                    if inside is None:
                        return Seen.OUTSIDE, None, ""
                    here, parts = [], [*inside.split("/"), *parts]
                else:
                    parts = [*target.split("/"), *parts]
                parts = [p for p in parts if p not in ("", ".")]
                continue
            if parts:  # a folder walked through: search
                if not stat.S_ISDIR(st.st_mode):
                    return _missing([*here, name, *parts])
                if not self._search(rel, entered):
                    return Seen.DENIED, None, ""
                here.append(name)
                continue
            bits = 0o5 if want_dir or stat.S_ISDIR(st.st_mode) else 0o4
            allowed = self._entry_allows(at, name, st, bits)
            return (Seen.ALLOWED, allowed, rel) if allowed is not None else (Seen.DENIED, None, "")
        resolved = "/".join(here)
        try:
            fd = self._handle(resolved)
            st = os.fstat(fd)
            allowed = self.caller.may(st, 0o5, acls.of_fd(fd) if self.caller.needs_acl(st, 0o5) else ())
        except OSError:
            return Seen.DENIED, None, ""
        return (Seen.ALLOWED, st, resolved) if allowed else (Seen.DENIED, None, "")

    def _entry_allows(self, at: int, name: str, st: os.stat_result, bits: int) -> os.stat_result | None:
        """The stat of the entry ``name`` of the folder ``at`` (``st``, its
        lstat) if the caller is granted ``bits`` on it, else None. Where its
        ACL may matter it is read from the inode opened (O_PATH), and that
        inode's stat is the one returned: the decision's identity is of
        the inode whose ACL was judged, though the name was swapped since."""
        if not self.caller.needs_acl(st, bits):
            return st if self.caller.may(st, bits) else None
        try:
            now, acl = inode_at(at, name)
        except OSError:
            return None
        if stat.S_IFMT(now.st_mode) != stat.S_IFMT(st.st_mode):
            return None
        return now if self.caller.may(now, bits, acl) else None

    def may_see(self, path: str) -> bool:
        return self.decide(path) is Seen.ALLOWED

    def may_see_folder(self, path: str) -> bool:
        return self.decide(path, want_dir=True) is Seen.ALLOWED

    def may_find(self, path: str, base: str = "") -> bool:
        """Whether an answer built from many files (a folder map of ``base``,
        a search under it) may name ``path``, a real path below ``base`` as
        a walk finds it: the caller may read it and list every folder from
        ``base`` down to it (``ls`` would show them the name)."""
        return self.caller.is_root or self.finds(path, base) is not None

    def finds(self, path: str, base: str = "") -> Identity | None:
        """``may_find``, and the identity of what it allowed (the last
        component's lstat, as ``judge``): an answer made from a walk is
        this caller's only if the walk saw that very inode. None: refused."""
        if not self._lists_down(path, base):
            return None
        seen, allowed = self.judge(path)
        return allowed if seen is Seen.ALLOWED else None

    def vanished(self, path: str, base: str = "") -> bool:
        """Whether ``path``, a file a walk of ``base`` found, names nothing
        now (deleted or renamed since) where the caller could have seen it
        go: every folder from ``base`` down to its own may be listed (as
        ``finds`` asks) and the path is MISSING to them. Below a folder they
        may search but not list (0711), or may not search, it is not."""
        return self._lists_down(path, base) and self.decide(path) is Seen.MISSING

    def _lists_down(self, path: str, base: str) -> bool:
        """Whether the caller may list every folder from ``base`` down to ``path``'s own (remembered)."""
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        while True:
            if folder not in self.listable:
                self.listable[folder] = self.may_see_folder(folder)
            if not self.listable[folder]:
                return False
            if folder == base or not folder:
                return True
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ""

    def check(self, path: str, want_dir: bool = False) -> Identity | None:
        """Raise ``AccessDenied`` unless the caller may see ``path``; a missing
        path the caller could have looked for is left to the door's own
        NotFound (the caller may know it is absent), and a symlink out of the
        tree to the door's BadPath (the caller may read where it points).
        Returns the identity of what it allowed, the one inode the caller
        may be served of ``path`` (``NOTHING`` when it was missing); None
        for root, who is never denied (no walk: a hot path of every door)."""
        if self.caller.is_root:
            return None
        seen, allowed = self.judge(path, want_dir)
        if seen is Seen.DENIED:
            raise AccessDenied(f"{self.caller} may not read {path or '.'}",
                               "paths this account could cat on the source tree")
        return allowed or NOTHING

    def admit(self, path: str) -> None:
        """``check``, for root too, and ``BadPath`` for a path whose symlinks
        lead out of the tree: a door asks this before its core resolves the
        path, which follows links with ``realpath`` (a link into the mount's
        own ``.at/HEAD`` resolved in the daemon's core thread wedges it)."""
        seen = self.decide(path)
        if seen is Seen.DENIED and not self.caller.is_root:
            raise AccessDenied(f"{self.caller} may not read {path or '.'}",
                               "paths this account could cat on the source tree")
        if seen is Seen.OUTSIDE:
            parts = path.split("/")
            before = "/".join(parts[:parts.index("..")]) if ".." in parts else None
            if before is None or self.decide(before) is Seen.OUTSIDE:  # not '..' alone: the door's parse says that
                raise BadPath(f"{path!r} leads outside the tree through a symlink", "a path of a file in the tree")

    def _search(self, rel: str, st: os.stat_result | None = None) -> bool:
        """Whether the caller may search the folder ``rel`` (resolved, no
        link in it), as this request first found it: the folder its handle
        holds, the one the walk goes on through (``st``: its stat, when the
        caller has it), by its mode and its ACL."""
        if rel not in self.folders:
            try:
                fd = self._handle(rel)
                st = st or os.fstat(fd)
                self.folders[rel] = self.caller.may(st, 0o1, acls.of_fd(fd) if self.caller.needs_acl(st, 0o1) else ())
            except OSError:
                self.folders[rel] = False
        return self.folders[rel]

    def _enter(self, at: int, name: str, rel: str) -> os.stat_result | None:
        """The stat of the folder ``name`` in ``at``, opened (O_NOFOLLOW) and
        kept as ``rel``'s handle: one call fewer than a stat before the open.
        None when it is no real folder (a link, a file: the caller stats it
        to know which) or its handle is kept already (stat'ed anew, so a
        swap within the request is seen)."""
        if rel in self._handles:
            return None
        self._few(rel.rpartition("/")[0])
        try:
            fd = os.open(name, FOLDER, dir_fd=at)
        except OSError as exc:
            if exc.errno in NOT_IN_TREE:
                return None
            raise
        self._handles[rel] = fd
        return os.fstat(fd)

    def _handle(self, rel: str) -> int:
        """An O_PATH descriptor of the folder ``rel``, opened from its
        parent's, each with O_NOFOLLOW and O_DIRECTORY (OSError when one on
        the way is a link or a file now); kept for this request (closed when
        the Decider goes, or when more than _HANDLES are held)."""
        fd = self._handles.get(rel)
        if fd is not None:
            return fd
        names = rel.split("/") if rel else []
        depth = len(names)
        while depth and "/".join(names[:depth]) not in self._handles:
            depth -= 1
        if depth == 0 and "" not in self._handles:
            self._handles[""] = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            self._closer = self._closer or weakref.finalize(self, _close, self._handles)  # not for root's check: no walk
        for end in range(depth, len(names)):
            here = "/".join(names[:end])
            self._few(here)
            self._handles["/".join(names[:end + 1])] = os.open(names[end], FOLDER, dir_fd=self._handles[here])
        return self._handles[rel]

    def _few(self, keep: str) -> None:
        """Before a folder is opened: at _HANDLES held, every one closed but
        ``keep`` (the folder the walk stands in, whose descriptor it is
        using), so that one walk of a deep path (a thousand folders, or
        links that lengthen it) holds no more than a request's share of the
        process's descriptors; those closed are opened again if walked."""
        if len(self._handles) < _HANDLES:
            return
        fd = self._handles.pop(keep, None)
        _close(self._handles)
        if fd is not None:
            self._handles[keep] = fd


def _missing(names: list[str]) -> tuple[Seen, None, str]:
    """MISSING, with the path a ``realpath`` of it would give (its '..' taken
    lexically past the first missing name); OUTSIDE when they climb out."""
    resolved = os.path.normpath("/".join(names)) if names else ""
    if resolved == ".." or resolved.startswith("../"):
        return Seen.OUTSIDE, None, ""
    return Seen.MISSING, None, "" if resolved == "." else resolved


def _close(handles: dict[str, int]) -> None:
    for fd in handles.values():
        os.close(fd)
    handles.clear()


def _inside(root: Path, absolute: str) -> str | None:
    """``absolute`` relative to the tree root ('' for the root), or None when
    it lies outside the tree (the root's own real path counts too)."""
    for base in {str(root), os.path.realpath(root)}:
        rel = os.path.relpath(os.path.normpath(absolute), base)
        if rel == ".":
            return ""
        if not rel.startswith(".."):
            return rel
    return None


def sees_all(caller: Caller | None) -> bool:
    """Whether answers built from many files need no filtering for this
    caller: root, or the process's own account (``None`` too), whose walks
    the kernel already limits to what it may list and read."""
    return caller is None or caller.is_root or caller == Caller.current()


def check_history(git_dir: Path | str, caller: Caller | None) -> None:
    """Raise ``AccessDenied`` unless the caller may read the repository
    itself (``.git``: read and search): what a commit holds is told to
    exactly those who could ``git show`` it, as the mount's ``.at`` is."""
    git = Path(git_dir)
    if decider(git.parent, caller).decide(git.name, want_dir=True) is Seen.DENIED:  # gone: the door says so
        raise AccessDenied(f"{caller or Caller.current()} may not read the repository's history ({git.name})",
                           "the working tree's files this account may read, without a revision")


def trail_of(root: Path | str, rel: str) -> Trail | None:
    """The trail of the working file ``rel`` now: the root, each folder on
    the way and the file, reached with no symlink followed (a snapshot reads
    its sources so: tree_walk.py), each with its ACL where it has one; None
    when one of them is not a real folder, or the end not a regular file."""
    try:
        found = way_in_tree(root, rel)
    except (OSError, ValueError):  # a folder the daemon may not search, a NUL in the path
        return None
    if found is None or not stat.S_ISREG(found[1][0].st_mode):
        return None
    return tuple((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), bits, *acls.flat(acl))
                 for (st, acl), bits in zip((*found[0], found[1]), (*(0o1 for _ in found[0]), 0o4)))


def may_have_read(caller: Caller, trails: Sequence[Trail]) -> bool:
    """Whether ``caller`` (with the groups it has now) could have read a
    file at every moment these trails were taken; False for none taken (a
    snapshot that recorded none, or an empty trail: who could read it then
    is unknown). A step without an ACL (every step of a trail written
    before ACLs were judged) is judged by its mode bits."""
    return caller.is_root or (bool(trails) and all(
        trail and all(caller.may(_Modes(*step[:3]), step[3], acls.unflat(step[4:])) for step in trail) for trail in trails))


def decider(root: Path | str, caller: Caller | None) -> Decider:
    """The decision for one request; ``None`` means the daemon's own account
    asking for itself (the CLI, a single-user door): root-equivalent only if
    that account is root, else judged as that account."""
    return Decider(Path(root), caller if caller is not None else Caller.current())


__all__ = ["AccessDenied", "Caller", "Decider", "Identity", "NOTHING", "Seen", "Trail", "check_history", "decider", "identity",
           "may_have_read", "sees_all", "still_names", "trail_of"]
