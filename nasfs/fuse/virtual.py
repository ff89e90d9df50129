"""Views, history and side files: the virtual half of the mount.

A virtual file's content is computed once, at lookup, and its inode names
that version (``Node.version``): size, pages and every read of a handle are
of one version's bytes, never a mix, and a change to the file only ever
makes a new inode. Nothing is invalidated from a request handler (libfuse
forbids it and it deadlocks the kernel). Names are looked up again on every
path walk (entry timeout 0), so a changed file's view shows at the next open;
a working-tree view whose file, name and HEAD are unchanged is answered from
what the last lookup gave, on the request loop (view_memo.py).

Anything that needs the core (views, git trees) runs in the core thread
through ``trio.to_thread``, off the request loop. What may take seconds (a
view of a file over ``pool.HEAVY_BYTES``, a search, a diff) runs in a worker
process instead (pool.py), so it holds neither the core thread nor the GIL:
other views and real-file calls go on meanwhile.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import pyfuse3
import trio
from pyfuse3 import FUSEError

from .. import acl as acls
from ..access import AccessDenied, Caller, decider, identity
from ..cache import LRU
from ..declare import Response
from ..errors import FileChanged, Unavailable
from ..grammar import RAW, split_name, split_suffixes
from ..help import HELP
from ..repo import LARGE_BYTES, TreeItem
from ..service import Nas
from ..tree_walk import way_in_tree
from .access import node_key
from .nodes import Inodes, Node
from . import pool
from .pool import HEAVY_BYTES, Pool
from .view_memo import ViewMemo

log = logging.getLogger("nasfs.fuse")
T = TypeVar("T")
AT = ".at"
NAS = ".nas"
NAS_FILES = ("HELP", "stats", "status", "errors")
RO_FILE = stat.S_IFREG | 0o444
RO_DIR = stat.S_IFDIR | 0o555
COMMIT_TIMEOUT = 300.0  # what a full commit id names never changes
VERSIONED = ("view", "nasfile", "search", "diff", "deref")
FULL_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
HEALTH_SECONDS = 2.0
FILES_BYTES = 256 << 20
POINTER_TAIL = re.compile(r".*@[0-9A-Fa-f]{7,64}(#L\d+(-L\d+)?)?")


def _as_core(threads: set[int], fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with this thread known, while it runs, as the core's:
    a FUSE request it makes (a walk that reached the mount through a link)
    is refused at once (ops.fuse_op), since its answer may need this thread."""
    me = threading.get_native_id()
    threads.add(me)
    try:
        return fn(*args)
    finally:
        threads.discard(me)


class Virtual:
    nas: Nas
    attr_timeout: float
    root: str

    def __init__(self, nas: Nas) -> None:
        self.inodes = Inodes()
        self._core = trio.CapacityLimiter(1)  # pygit2 and the core run one call at a time
        self.core_threads: set[int] = set()  # the native id of the thread running a core call now (ops.fuse_op)
        self.workers = Pool(nas.tree, nas.tokenizer, summarizer=nas.summaries.settings if nas.summaries else None)
        self._waiting = trio.CapacityLimiter(64)  # threads that only wait for a worker's answer
        # versioned content by inode: what a lookup made, for the getattr and open that follow
        self._files: LRU[int, tuple[bytes, Response | None]] = LRU(8192, lambda made: len(made[0]), FILES_BYTES)
        self._git_stat = os.stat(nas.tree.git_dir)
        self.views = ViewMemo(str(nas.tree.root), str(nas.tree.git_dir),  # lookups of unchanged views, on the loop
                              summary_rung=nas.summaries is not None and nas.summaries.settings.in_ladder)
        self.faults = False
        self.fault_armed = False
        self.started = time.time()
        self.internal_errors = 0
        self.problem: str | None = None  # what is wrong with the repository, if anything

    async def watch_repository(self) -> None:
        """Say when the repository goes (its .git deleted under the mount) and
        comes back: in the log, in .nas/errors, in .nas/stats (which
        ``nasfs status`` reads). Runs beside the request loop."""
        while True:
            problem = await self.core(self.nas.tree.health)
            if problem != self.problem:
                if problem:
                    log.error("%s", problem)
                    self.nas.refused("(the repository)", Unavailable(problem))
                else:
                    log.warning("the repository %s can be served again", self.nas.tree.git_dir)
                self.problem = problem
            await trio.sleep(HEALTH_SECONDS)

    def _fault(self) -> None:
        if self.fault_armed and self.faults:
            self.fault_armed = False
            raise RuntimeError("injected fault in view code (test hook)")

    async def core(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a core call in the core thread."""
        self._fault()
        return await trio.to_thread.run_sync(functools.partial(_as_core, self.core_threads, fn, *args), limiter=self._core)

    async def worker(self, fn: Callable[..., bytes], *args: Any) -> Response:
        """Run a slow call in a worker process (pool.py); a thread waits for it."""
        self._fault()
        return await trio.to_thread.run_sync(self.workers.answer, fn, *args, limiter=self._waiting)

    async def heavy(self, node: Node) -> bool:
        """Whether a view's file is large enough to be made in a worker."""
        if node.commit:
            item = await self.core(self.nas.tree.item_at, node.commit, node.path)
            return item is not None and item.size > HEAVY_BYTES
        st = decider(self.root, Caller.root()).stat(node.path)  # on the loop: no link followed by the OS
        return st is not None and st.st_size > HEAVY_BYTES  # None: the core says what is wrong with it

    def git_stat(self) -> os.stat_result:
        """``.git``'s owner and mode, which history and side files follow;
        the last known ones while ``.git`` is gone (``.nas/`` must still answer)."""
        try:
            self._git_stat = os.stat(self.nas.tree.git_dir)
        except OSError:
            pass
        return self._git_stat

    def virtual_attrs(self, ino: int, mode: int, size: int = 0, mtime_ns: int | None = None) -> pyfuse3.EntryAttributes:
        """Attributes of a virtual node. History and side files (``.at``,
        ``.nas``) are exactly as readable as ``.git``, which holds all of it
        anyway: its owner, and its read and search bits."""
        a = pyfuse3.EntryAttributes()
        git_st = self.git_stat()
        a.st_ino = ino
        a.st_mode = stat.S_IFMT(mode) | (stat.S_IMODE(mode) & git_st.st_mode)
        a.st_nlink = 2 if stat.S_ISDIR(mode) else 1
        a.st_uid = git_st.st_uid
        a.st_gid = git_st.st_gid
        a.st_size = size
        a.st_blksize = 4096
        a.st_blocks = (size + 511) // 512
        t = mtime_ns if mtime_ns is not None else int(self.started * 1e9)
        a.st_atime_ns = a.st_mtime_ns = a.st_ctime_ns = t
        a.entry_timeout = 0
        a.attr_timeout = 0
        return a

    def at_attrs(self, ino: int, item: TreeItem, when: int) -> pyfuse3.EntryAttributes:
        if item.kind == "dir":
            mode = RO_DIR
        elif item.kind == "link":
            mode = stat.S_IFLNK | 0o777
        else:
            mode = stat.S_IFREG | (0o555 if item.executable else 0o444)
        a = self.virtual_attrs(ino, mode, item.size, when * 10**9)
        a.entry_timeout = a.attr_timeout = COMMIT_TIMEOUT
        return a

    # -- what a virtual node is ---------------------------------------------------
    async def node_attrs(self, ino: int, node: Node) -> pyfuse3.EntryAttributes:
        kind = node.kind
        if kind in ("atroot", "nasdir", "searchdir", "diffdir") or (kind == "deref" and node.view is None):
            return self.virtual_attrs(ino, RO_DIR)
        if kind == "at":
            item = await self.core(self.nas.tree.item_at, node.commit, node.path)
            if item is None:
                raise FUSEError(errno.ENOENT)
            a = self.at_attrs(ino, item, await self.core(self.nas.tree.commit_time, node.commit))
            if not node.path and (not FULL_COMMIT.fullmatch(node.version)
                                  or not await self.core(self.nas.tree.in_shared_store, node.commit)):
                a.entry_timeout = 0  # .at/main, .at/HEAD: the name moves; a private snapshot: asked each walk
            return a
        data, _ = await self.file_content(ino, node)
        if kind == "view" and not node.commit:
            # a view reads like its file: same owner, the file's read bits (allow_other, Samba, NFS);
            # its name, or a folder above it, may since have become a link out of the tree (into this
            # mount: the loop would wait on its own answer), resolved by string, never by the OS
            st = decider(self.root, Caller.root()).stat(node.path)
            if st is None or (node.source is not None and identity(st) != node.source):
                raise FUSEError(errno.ESTALE)  # the name is another file now: its owner, mode and times are not this view's
            a = self.virtual_attrs(ino, stat.S_IFREG | (st.st_mode & 0o444), len(data), st.st_mtime_ns)
            a.st_uid, a.st_gid = st.st_uid, st.st_gid  # and its ACL, cut so (node_acl)
        else:
            a = self.virtual_attrs(ino, RO_FILE, len(data))
        a.attr_timeout = self.attr_timeout  # the content never changes; owner and mode may
        return a

    async def node_acl(self, ino: int, node: Node) -> bytes | None:
        """The POSIX ACL a virtual node tells the kernel, which judges ACLs
        (ops.py, ``enable_acl``): a working-tree view (or map), its source's;
        anything else (``.at``, ``.nas``: history and side files), ``.git``'s,
        whose owner and mode they take. Cut to the node's own mode (owner
        bits, group bits as the mask, 'other' bits), so it narrows as the
        source's does and widens nothing past the mode: an account the file's
        ACL lets read a 0600 file passes the kernel's check of its view, and
        one an ACL on ``.git`` keeps out is kept out of ``.at`` as ``git
        show`` keeps it out. None: the source has no ACL."""
        acl = self._source_acl(node) if node.kind == "view" and not node.commit else self._git_acl()
        if not acl:
            return None
        mode = (await self.node_attrs(ino, node)).st_mode
        cut = {acls.USER_OBJ: mode >> 6 & 0o7, acls.MASK: mode >> 3 & 0o7, acls.OTHER: mode & 0o7}
        return acls.encode(tuple((tag, cut.get(tag, perm), who) for tag, perm, who in acl))

    def _source_acl(self, node: Node) -> acls.Acl:
        """The ACL of a working-tree view's file or folder, reached with no
        link followed by the OS (on the loop); () when it is none or no
        longer the view's."""
        _, resolved, st = decider(self.root, Caller.root()).resolve(node.path)
        if st is None or (node.source is not None and identity(st) != node.source):
            return ()
        if not resolved:
            return acls.of_path(self.root, follow=True)  # the tree's root, the daemon's own argument
        found = way_in_tree(self.root, resolved)
        return found[1][1] if found is not None and identity(found[1][0]) == identity(st) else ()

    def _git_acl(self) -> acls.Acl:
        try:
            return acls.of_path(str(self.nas.tree.git_dir), follow=True)
        except OSError:
            return ()  # gone: its last known owner and mode stand (git_stat)

    async def file_content(self, ino: int, node: Node) -> tuple[bytes, Response | None]:
        """The bytes of a versioned file's inode, computed again when they
        were dropped: ESTALE when that version can no longer be made."""
        held = self._files.get(ino)
        if held is not None:
            return held
        made = await self.content(node)
        if _digest(made[0]) != node.version:
            raise FUSEError(errno.ESTALE)
        self._files.put(ino, made)
        return made

    async def materialize(self, node: Node) -> tuple[int, pyfuse3.EntryAttributes]:
        """Look up a virtual node: a file is computed now, and its inode is
        the one of this version of its content."""
        if node.kind not in VERSIONED or (node.kind == "deref" and node.view is None):
            ino = self.inodes.ino(node, lookup=False)
            return ino, await self.node_attrs(ino, node)
        made = await self.content(node)
        node = node.versioned(_digest(made[0]))
        ino = self.inodes.ino(node, lookup=False)
        self._files.put(ino, made)
        return ino, await self.node_attrs(ino, node)

    def admit(self, node: Node, caller: Caller) -> Node:
        """The access decision for a virtual file ``caller`` looks up or
        opens, asked every time, whatever is remembered (view_memo.py, the
        bytes by inode, the disk cache): a view's file (the folders above it,
        a symlink's target), a pointer's path, and a node made for another
        caller (a map, a search). The kernel judged the rest (modes).

        A working-tree view is made once and served to many callers, each
        deciding on its path: it is the node as this caller may be served
        it, made of the inode their decision allows now (``source``; root's
        views of any). One made of another inode (its file swapped since)
        is refused as FileChanged (ESTALE: the kernel looks the name up
        again); one not made yet is given that source to be made of."""
        if (node.caller or (node.kind == "nasfile" and node.path in ("errors", "status"))) and node.caller != node_key(caller):
            raise AccessDenied(f"{caller} may not read an answer made for another account",
                               "the same name, looked up again as this account")
        if node.kind == "view" and not node.commit:
            allowed = decider(self.root, caller).check(node.path)
            if allowed is None or allowed == node.source:
                return node
            if node.version:
                raise FileChanged(f"{node.path!r} changed since its view was made", "read it again")
            return node.made_of(allowed)
        if node.kind == "deref" and node.view is not None:
            self.nas.admit_pointer(node.path, caller)
        return node

    async def working_view(self, folder: str, name: str, caller: Caller) -> tuple[int, pyfuse3.EntryAttributes]:
        """Look up the view ``name`` of a working-tree file in ``folder``,
        once the caller may see every path the name could split into: the
        node it gave last time when nothing that view rests on has changed
        (view_memo.py; answered here, on the request loop, with a few stat
        calls and two ref reads), else made in the core thread or a worker."""
        self.nas.admit(f"{folder}/{name}" if folder else name, None, caller)  # a few stat calls, on the loop
        known = None if self.fault_armed else self.views.recall(folder, name)  # an armed fault is for view code
        if known is not None:
            try:
                self.admit(known, caller)  # made of the inode this caller may read now
            except FileChanged:
                known = None  # of another account's decision, or of a file since swapped: made anew
        if known is not None:
            ino = self.inodes.ino(known, lookup=False)
            return ino, await self.node_attrs(ino, known)
        before = self.views.facts(folder, name)
        node = self.admit(await self.view_node(folder, name, "", caller), caller)
        ino, attrs = await self.materialize(node)
        self.views.remember(folder, name, self.inodes.node(ino), before)
        return ino, attrs

    async def content(self, node: Node) -> tuple[bytes, Response | None]:
        """A virtual file's bytes now, and the declared response they carry."""
        if node.kind == "view":
            assert node.view is not None
            # a summary is a cache lookup; a map made for a caller (node.caller) is filtered in the core
            # a working file's view is made of the inode its caller's decision allowed (node.source; admit)
            if node.view.kind != "summary" and not node.caller and await self.heavy(node):
                response = await self.worker(pool.read_view, node.path, node.view, node.commit or None, node.source)
            else:
                caller = Caller.from_key(node.caller) if node.caller else None  # a map: what its caller may see
                response = await self.core(self.nas.read_view, node.path, node.view, node.commit or None, False, caller,
                                           node.source)
            return (response.envelope_bytes() if node.view.json else response.text), response
        if node.kind == "nasfile":
            return self.nas_file(node.path, Caller.from_key(node.caller) if node.caller else None), None
        if node.kind == "deref" and node.view is not None:
            _, body = await self.core(self.nas.deref, node.path, Caller.from_key(node.caller) if node.caller else None)
            return body, None
        if node.kind in ("search", "diff"):
            response = await self.worker(pool.side_view, node)
            return (response.envelope_bytes() if split_suffixes(node.path)[2] else response.text), response
        raise FUSEError(errno.EISDIR)

    def mount_stats(self) -> str:
        """More ``.nas/stats`` lines, of the mount's real half (ops.py)."""
        return ""

    def nas_file(self, name: str, viewer: Caller | None = None) -> bytes:
        """``.nas/HELP``, ``stats``, ``status``, ``errors`` (``viewer``'s own
        refusals and the mount's, its own tasks in detail and that others
        run; None: all of them)."""
        if name == "HELP":
            return HELP.encode()
        if name == "stats":
            extra = f"internal_errors={self.internal_errors}\nuptime_seconds={int(time.time() - self.started)}\n"
            extra += self.mount_stats()
            if self.problem:
                extra += f"repository_problem={self.problem}\n"
            return (self.nas.stats.render() + extra).encode()
        if name == "status":  # made on the loop: readable while the core thread is busy with that work
            return self.nas.progress.render(None if viewer is None else node_key(viewer) or None).encode()
        return "".join(r.render() + "\n" for r in self.nas.errors_for(viewer)).encode("utf-8", "backslashreplace")

    async def at_content(self, node: Node) -> bytes:
        item = await self.core(self.nas.tree.item_at, node.commit, node.path)
        if item is None or item.kind != "file":
            raise FUSEError(errno.EISDIR if item else errno.ENOENT)
        if item.size > LARGE_BYTES:
            raise FUSEError(errno.EFBIG)
        return await self.core(self.nas.tree.raw_at, node.commit, node.path)

    # -- names ----------------------------------------------------------------------
    async def child(self, parent: Node, name: str, caller: Caller) -> Node:
        """The node ``name`` names inside a virtual folder; what depends on
        who asks (working-tree searches and diffs, pointers' bytes,
        ``.nas/errors``) is made for ``caller``."""
        if parent.kind == "atroot":  # a private snapshot is entered by those who may read its sources only
            commit = await self.core(self.nas.commit_for, unquote(name), caller)
            return Node("at", "", commit, version=name)  # version: the name it was reached by
        if parent.kind == "at":
            path = f"{parent.path}/{name}" if parent.path else name
            if await self.core(self.nas.tree.item_at, parent.commit, path) is not None:
                return Node("at", path, parent.commit)
            if not parent.path and name == NAS:
                return Node("nasdir", commit=parent.commit)  # .at/<rev>/.nas/search/
            if "@" not in name:
                raise FUSEError(errno.ENOENT)
            return await self.view_node(parent.path, name, parent.commit, caller)
        if parent.kind == "nasdir" and parent.commit:
            if name == "search":
                return Node("searchdir", commit=parent.commit)
            raise FUSEError(errno.ENOENT)
        if parent.kind == "nasdir":
            if name in ("errors", "status"):  # made for who asks
                return Node("nasfile", name, caller=node_key(caller))
            if name in NAS_FILES:
                return Node("nasfile", name)
            if name == "deref":
                return Node("deref", "")
            if name in ("search", "diff"):
                return Node(f"{name}dir")
            raise FUSEError(errno.ENOENT)
        if parent.kind in ("searchdir", "diffdir"):
            key = node_key(caller) if not parent.commit else ()  # answers of the working tree: by who asks
            return Node(parent.kind[:-3], name, parent.commit, caller=key)
        if parent.kind == "deref" and parent.view is None:
            path = f"{parent.path}/{name}" if parent.path else name
            # the pointer's last part is 'name@commit[#La-Lb]'; '@' alone may be a folder's (npm's @scope)
            if POINTER_TAIL.fullmatch(name):  # the bytes depend on who asks (a private snapshot's)
                return Node("deref", path, view=RAW, caller=node_key(caller))
            return Node("deref", path)
        raise FUSEError(errno.ENOTDIR)

    def root_child(self, name: str) -> Node | None:
        return {AT: Node("atroot"), NAS: Node("nasdir")}.get(name)

    async def view_node(self, folder: str, name: str, commit: str, caller: Caller | None = None) -> Node:
        """Split ``name`` with the grammar against the folder's real entries;
        a working-tree folder's view (its map or summary) is made for its
        caller (what it lists depends on who asks)."""
        prefix = f"{folder}/" if folder else ""
        at = commit or None
        real_name, view = await self.core(
            split_name, name,
            lambda n: self.nas.tree.exists(prefix + n, at),
            lambda n: self.nas.tree.is_file(prefix + n, at),
        )
        if view.kind == "raw":
            raise FUSEError(errno.ENOENT)
        if view.name_with_json() is not None:  # section=NAME.json: the file's own section first
            view = await self.core(self.nas.settle, prefix + real_name, view, at, caller)
        path = prefix + real_name
        st = decider(self.root, Caller.root()).stat(path) if caller is not None and not commit else None
        folder_view = st is not None and stat.S_ISDIR(st.st_mode)  # on the loop: no link followed by the OS
        # a summary, a file's or a folder's, here or at a revision, may be the path's last (stale) one,
        # told only to a caller who may read what it was made from (service.py, _may_hold)
        for_caller = caller is not None and (folder_view or view.kind == "summary")
        return Node("view", path, commit, view, caller=node_key(caller) if for_caller else ())

    def virtual_parent(self, node: Node) -> Node | None:
        """The folder holding a virtual node; None for the tree's root."""
        if node.kind == "at":
            return Node("at", os.path.dirname(node.path), node.commit) if node.path else Node("atroot")
        if node.kind == "deref" and node.path:
            return Node("deref", os.path.dirname(node.path))
        if node.kind in ("deref", "searchdir", "diffdir"):
            return Node("nasdir", commit=node.commit)
        if node.kind == "nasdir" and node.commit:
            return Node("at", "", node.commit)
        return None

    def display(self, parent: Node | None, parent_path: str, name: str) -> str:
        """How a refused name is shown in .nas/errors and the log."""
        if parent is None:
            base = parent_path
        else:
            base = {"at": f".at/{parent.commit[:12]}/{parent.path}".rstrip("/"), "atroot": ".at",
                    "nasdir": ".nas", "deref": f".nas/deref/{parent.path}".rstrip("/"),
                    "searchdir": ".nas/search", "diffdir": ".nas/diff"}.get(parent.kind, "")
        return f"{base}/{name}" if base else name

    # -- folders ------------------------------------------------------------------------
    async def virtual_listing(self, node: Node) -> list[tuple[bytes, pyfuse3.EntryAttributes]]:
        entries: list[tuple[bytes, pyfuse3.EntryAttributes]] = []
        if node.kind == "atroot":
            names = await self.core(lambda: self.nas.tree.branches() + self.nas.tree.tags())
            for name in sorted(set(names)):
                commit = await self.core(self.nas.tree.resolve, name)
                shown = quote(name, safe="")
                child = Node("at", "", str(commit.id), version=shown)
                a = self.virtual_attrs(self.inodes.ino(child, lookup=False), RO_DIR)
                entries.append((os.fsencode(shown), a))
        elif node.kind == "at":
            items = await self.core(self.nas.tree.listing_at, node.commit, node.path)
            when = await self.core(self.nas.tree.commit_time, node.commit)
            for item in items:
                child = Node("at", f"{node.path}/{item.name}" if node.path else item.name, node.commit)
                entries.append((os.fsencode(item.name), self.at_attrs(self.inodes.ino(child, lookup=False), item, when)))
        elif node.kind == "nasdir" and not node.commit:
            for name in NAS_FILES:
                ino, a = await self.materialize(Node("nasfile", name))
                entries.append((name.encode(), a))
            for name, child in (("deref", Node("deref", "")), ("search", Node("searchdir")), ("diff", Node("diffdir"))):
                entries.append((name.encode(), self.virtual_attrs(self.inodes.ino(child, lookup=False), RO_DIR)))
        elif node.kind not in ("deref", "searchdir", "diffdir", "nasdir"):
            raise FUSEError(errno.ENOTDIR)
        return entries


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def display_name(name: bytes) -> str:
    """A name as text for people: bytes that are not UTF-8 shown as \\xNN."""
    return name.decode("utf-8", "backslashreplace")


