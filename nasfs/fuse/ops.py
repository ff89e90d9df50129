"""pyfuse3 operations: the real tree passed through, views and history beside it.

Handlers stay thin: real-file calls are plain syscalls; anything that needs
the core (views, git trees) runs in one worker thread through
``trio.to_thread`` so a slow outline never stalls other reads. Every handler
turns unexpected exceptions into ``EIO`` and logs them: pyfuse3 ends the
whole daemon on any exception that is not a ``FUSEError``.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import pyfuse3
import trio
from pyfuse3 import FUSEError

from ..errors import NasError
from ..grammar import RAW, split_name, split_suffixes
from ..help import HELP
from ..repo import LARGE_BYTES, TreeItem
from ..cache import LRU
from ..declare import Response
from ..service import Nas
from .access import caller_of, readable_by
from .nodes import ROOT, Inodes, Node

log = logging.getLogger("nasfs.fuse")

T = TypeVar("T")
NAME_MAX = 255
VIRTUAL_FH_BASE = 1 << 40  # file handles above this hold bytes, below are real fds
AT = ".at"
NAS = ".nas"
NAS_FILES = ("HELP", "stats", "errors")
RO_FILE = stat.S_IFREG | 0o444
RO_DIR = stat.S_IFDIR | 0o555
XATTR_PREFIX = b"user.nas."


def fuse_op(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Map every error to an errno: NasError to its own, OSError to its errno,
    anything else to EIO (logged), so no exception ends the daemon."""

    @functools.wraps(fn)
    async def wrapper(self: NasOperations, *args: Any) -> T:
        try:
            return await fn(self, *args)
        except FUSEError as exc:
            log.debug("%s%r: errno %s", fn.__name__, args[:2], exc.errno)
            raise
        except NasError as exc:
            log.debug("%s%r refused: %s", fn.__name__, args[:2], exc)
            raise FUSEError(exc.errno) from None
        except OSError as exc:
            log.debug("%s%r: %s", fn.__name__, args[:2], exc)
            raise FUSEError(exc.errno or errno.EIO) from None
        except Exception:
            self.internal_errors += 1
            log.exception("internal error in %s%r", fn.__name__, args[:2])
            raise FUSEError(errno.EIO) from None

    return wrapper


class NasOperations(pyfuse3.Operations):
    supports_dot_lookup = True  # NFS re-export looks up '.' and '..' by handle
    enable_writeback_cache = False

    def __init__(self, nas: Nas, autocommit: bool = False, attr_timeout: float = 1.0, faults: bool = False) -> None:
        super().__init__()
        self.nas = nas
        self.tree = nas.tree
        self.root = str(nas.tree.root)
        self.git_dir = nas.tree.repo.path
        self.autocommit = autocommit
        self.attr_timeout = attr_timeout
        self.faults = faults  # test hook: setxattr user.nas.fault on .nas arms a crash
        self.fault_armed = False
        self.inodes = Inodes()
        self.internal_errors = 0
        self._core = trio.CapacityLimiter(1)  # pygit2 and the core run one call at a time
        self._bytes: dict[int, bytes] = {}  # virtual file handles -> the bytes served
        self._views: LRU[tuple[object, ...], Response] = LRU(4096)
        self._next_fh = VIRTUAL_FH_BASE
        self._fd_ino: dict[int, int] = {}  # real fds -> inode
        self._ino_fds: dict[int, set[int]] = {}
        self._written: set[int] = set()  # fds written through the mount
        self._opened_at: dict[int, tuple[int, int]] = {}  # inode -> (mtime, size) at last open
        self._dirs: dict[int, list[tuple[bytes, pyfuse3.EntryAttributes]]] = {}
        self._next_dh = 1
        self.started = time.time()

    # -- helpers ----------------------------------------------------------------
    async def core(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a core call in the worker thread."""
        if self.fault_armed and self.faults:
            self.fault_armed = False
            raise RuntimeError("injected fault in view code (test hook)")
        return await trio.to_thread.run_sync(functools.partial(fn, *args), limiter=self._core)

    def real(self, path: str) -> str:
        return os.path.join(self.root, path) if path else self.root

    def attrs_from_stat(self, ino: int, st: os.stat_result, timeout: float) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        for name in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_rdev", "st_size", "st_atime_ns", "st_mtime_ns", "st_ctime_ns", "st_blksize", "st_blocks"):
            setattr(a, name, getattr(st, name))
        a.st_ino = ino
        a.generation = 0
        a.entry_timeout = timeout
        a.attr_timeout = timeout
        return a

    def virtual_attrs(self, ino: int, mode: int, size: int = 0, mtime_ns: int | None = None) -> pyfuse3.EntryAttributes:
        """Attributes of a virtual node, never cached by the kernel (its content
        can change with the file's). History and side files (``.at``, ``.nas``)
        are exactly as readable as ``.git``, which holds all of it anyway: its
        owner, and its read and search bits."""
        a = pyfuse3.EntryAttributes()
        git_st = os.stat(self.git_dir)
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

    def refuse(self, name: str, exc: NasError) -> None:
        self.nas.refused(name, exc)
        log.info("refused %s: %s", name, exc)

    # -- what a node is --------------------------------------------------------------
    async def attrs(self, ino: int, node: Node) -> pyfuse3.EntryAttributes:
        kind = node.kind
        if kind == "real":
            fds = self._ino_fds.get(ino)
            st = os.fstat(next(iter(fds))) if fds else os.lstat(self.real(node.path))
            return self.attrs_from_stat(ino, st, self.attr_timeout)
        if kind in ("atroot", "nasdir", "searchdir", "diffdir") or (kind == "deref" and node.view is None):
            return self.virtual_attrs(ino, RO_DIR)
        if kind == "at":
            item = await self.core(self.tree.item_at, node.commit, node.path)
            if item is None:
                raise FUSEError(errno.ENOENT)
            return self.at_attrs(ino, node.commit, item, await self.core(self.tree.commit_time, node.commit))
        data = await self.content(node)
        if kind == "view" and not node.commit:
            # a view reads like its file: same owner, the file's read bits (allow_other, Samba, NFS)
            st = os.stat(self.real(node.path))
            a = self.virtual_attrs(ino, stat.S_IFREG | (st.st_mode & 0o444), len(data), st.st_mtime_ns)
            a.st_uid, a.st_gid = st.st_uid, st.st_gid
            return a
        return self.virtual_attrs(ino, RO_FILE, len(data))

    def at_attrs(self, ino: int, commit: str, item: TreeItem, when: int) -> pyfuse3.EntryAttributes:
        if item.kind == "dir":
            mode = RO_DIR
        elif item.kind == "link":
            mode = stat.S_IFLNK | 0o777
        else:
            mode = stat.S_IFREG | (0o555 if item.executable else 0o444)
        a = self.virtual_attrs(ino, mode, item.size, when * 10**9)
        a.entry_timeout = a.attr_timeout = 300  # a commit never changes
        return a

    async def view_response(self, node: Node, record: bool = False) -> Response:
        """A view's response, remembered by the node and its file's stat:
        one open asks for a view's attributes several times, and a stat in the
        event loop is far cheaper than a trip to the core thread. A changed
        file has a new stat, so its views are computed again."""
        assert node.view is not None
        if node.view.kind in ("since", "summary"):  # these also depend on moving refs or a command
            return await self.core(self.nas.read_view, node.path, node.view, node.commit or None, record)
        key: tuple[object, ...] = (node,)
        if not node.commit:  # the working tree changes; a commit does not
            st = os.stat(self.real(node.path))
            key = (node, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        response = self._views.get(key)
        if response is None:
            response = await self.core(self.nas.read_view, node.path, node.view, node.commit or None, record)
            self._views.put(key, response)
        elif record:
            self.nas.stats.lookup(True)
            self.nas.stats.record(response)
        return response

    async def content(self, node: Node, record: bool = False) -> bytes:
        """The bytes a virtual file serves now; ``record`` when it is an open."""
        if node.kind == "view":
            response = await self.view_response(node, record)
            return response.envelope_bytes() if node.view and node.view.json else response.text
        if node.kind == "nasfile":
            if node.path == "HELP":
                return HELP.encode()
            if node.path == "stats":
                extra = f"internal_errors={self.internal_errors}\nuptime_seconds={int(time.time() - self.started)}\n"
                return (self.nas.stats.render() + extra).encode()
            if node.path == "errors":
                return "".join(r.render() + "\n" for r in self.nas.errors).encode()
        if node.kind == "at":
            item = await self.core(self.tree.item_at, node.commit, node.path)
            if item is None or item.kind != "file":
                raise FUSEError(errno.EISDIR if item else errno.ENOENT)
            if item.size > LARGE_BYTES:
                raise FUSEError(errno.EFBIG)
            return await self.core(self.tree.raw_at, node.commit, node.path)
        if node.kind == "deref" and node.view is not None:
            _, body = await self.core(self.nas.deref, node.path)
            return body
        if node.kind in ("search", "diff"):
            response = await self.core(self.side_view, node)
            return response.envelope_bytes() if split_suffixes(node.path)[2] else response.text
        raise FUSEError(errno.EISDIR)

    def side_view(self, node: Node):  # -> Response; runs in the core thread
        """``.nas/search/<query>[@N][.json]`` and ``.nas/diff/<A>..<B>[@N][.json]``."""
        from ..diffs import diff_response
        from ..search import search

        text, budget, _ = split_suffixes(node.path)
        if node.kind == "search":
            readable = readable_by(node.caller, self.root) if node.caller else None
            return search(self.nas, text, at=node.commit or None, budget=budget, readable=readable)
        return diff_response(self.nas, text, None, budget)

    # -- lookup ------------------------------------------------------------------------
    @fuse_op
    async def lookup(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        if len(name) > NAME_MAX:
            raise FUSEError(errno.ENAMETOOLONG)
        parent = self.inodes.node(parent_inode)
        if name == b".":
            return await self.attrs(parent_inode, parent)
        if name == b"..":
            return await self.lookup_parent(parent)
        text = os.fsdecode(name)
        try:  # the one place a refused name is recorded, with its reason
            node = await self.child(parent, text, ctx)
            ino = self.inodes.ino(node, lookup=False)
            try:
                attrs = await self.attrs(ino, node)
            except Exception:
                self.inodes.forget(ino, 0)  # never handed to the kernel: a refused name ages out
                raise
        except NasError as exc:
            self.refuse(self.display(parent, text), exc)
            raise
        self.inodes.ino(node)  # the kernel now holds one more lookup of it
        return attrs

    async def lookup_parent(self, node: Node) -> pyfuse3.EntryAttributes:
        if node.kind == "real":
            up = Node("real", os.path.dirname(node.path))
        elif node.kind == "at":
            up = Node("at", os.path.dirname(node.path), node.commit) if node.path else Node("atroot")
        elif node.kind == "deref" and node.path:
            up = Node("deref", os.path.dirname(node.path))
        elif node.kind in ("deref", "searchdir", "diffdir"):
            up = Node("nasdir", commit=node.commit)
        elif node.kind == "nasdir" and node.commit:
            up = Node("at", "", node.commit)
        else:
            up = Node("real", "")
        ino = self.inodes.ino(up)
        return await self.attrs(ino, up)

    def display(self, parent: Node, name: str) -> str:
        base = {"real": parent.path, "at": f".at/{parent.commit[:12]}/{parent.path}".rstrip("/"), "atroot": ".at",
                "nasdir": ".nas", "deref": f".nas/deref/{parent.path}".rstrip("/"),
                "searchdir": ".nas/search", "diffdir": ".nas/diff"}.get(parent.kind, "")
        return f"{base}/{name}" if base else name

    async def child(self, parent: Node, name: str, ctx: pyfuse3.RequestContext | None = None) -> Node:
        """The node ``name`` names inside ``parent`` (real entries win)."""
        if parent.kind == "real":
            path = f"{parent.path}/{name}" if parent.path else name
            try:
                os.lstat(self.real(path))
                return Node("real", path)
            except FileNotFoundError:
                pass
            if not parent.path and name == AT:
                return Node("atroot")
            if not parent.path and name == NAS:
                return Node("nasdir")
            if "@" not in name:
                raise FUSEError(errno.ENOENT)
            return await self.view_node(parent.path, name, "")
        if parent.kind == "atroot":
            commit = await self.core(self.tree.resolve, unquote(name))
            return Node("at", "", str(commit.id))
        if parent.kind == "at":
            path = f"{parent.path}/{name}" if parent.path else name
            if await self.core(self.tree.item_at, parent.commit, path) is not None:
                return Node("at", path, parent.commit)
            if not parent.path and name == NAS:
                return Node("nasdir", commit=parent.commit)  # .at/<rev>/.nas/search/
            if "@" not in name:
                raise FUSEError(errno.ENOENT)
            return await self.view_node(parent.path, name, parent.commit)
        if parent.kind == "nasdir" and parent.commit:
            if name == "search":
                return Node("searchdir", commit=parent.commit)
            raise FUSEError(errno.ENOENT)
        if parent.kind == "nasdir":
            if name in NAS_FILES:
                return Node("nasfile", name)
            if name == "deref":
                return Node("deref", "")
            if name in ("search", "diff"):
                return Node(f"{name}dir")
            raise FUSEError(errno.ENOENT)
        if parent.kind in ("searchdir", "diffdir"):
            caller = caller_of(ctx) if parent.kind == "searchdir" and not parent.commit else ()
            return Node(parent.kind[:-3], name, parent.commit, caller=caller)  # lookup's attrs runs it
        if parent.kind == "deref" and parent.view is None:
            path = f"{parent.path}/{name}" if parent.path else name
            if "@" in name:
                return Node("deref", path, view=RAW)
            return Node("deref", path)
        raise FUSEError(errno.ENOTDIR)

    async def view_node(self, folder: str, name: str, commit: str) -> Node:
        """Split ``name`` with the grammar against the folder's real entries."""
        prefix = f"{folder}/" if folder else ""
        at = commit or None
        real_name, view = await self.core(
            split_name, name,
            lambda n: self.tree.exists(prefix + n, at),
            lambda n: self.tree.is_file(prefix + n, at),
        )
        if view.kind == "raw":
            raise FUSEError(errno.ENOENT)
        return Node("view", prefix + real_name, commit, view)

    @fuse_op
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        return await self.attrs(inode, self.inodes.node(inode))

    async def forget(self, inode_list: list[tuple[int, int]]) -> None:
        for ino, count in inode_list:
            self.inodes.forget(ino, count)

    @fuse_op
    async def readlink(self, inode: int, ctx: pyfuse3.RequestContext) -> bytes:
        node = self.inodes.node(inode)
        if node.kind == "real":
            return os.fsencode(os.readlink(self.real(node.path)))
        if node.kind == "at":
            return await self.core(self.tree.raw_at, node.commit, node.path)
        raise FUSEError(errno.EINVAL)

    # -- directories ------------------------------------------------------------------
    @fuse_op
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int:
        node = self.inodes.node(inode)
        entries: list[tuple[bytes, pyfuse3.EntryAttributes]] = []
        if node.kind == "real":
            folder = self.real(node.path)
            for name in sorted(os.listdir(folder)):
                child = Node("real", f"{node.path}/{name}" if node.path else name)
                try:
                    st = os.lstat(os.path.join(folder, name))
                except FileNotFoundError:
                    continue
                ino = self.inodes.ino(child, lookup=False)
                entries.append((os.fsencode(name), self.attrs_from_stat(ino, st, self.attr_timeout)))
        elif node.kind == "atroot":
            names = await self.core(lambda: self.tree.branches() + self.tree.tags())
            for name in sorted(set(names)):
                commit = await self.core(self.tree.resolve, name)
                child = Node("at", "", str(commit.id))
                entries.append((os.fsencode(quote(name, safe="")), self.virtual_attrs(self.inodes.ino(child, lookup=False), RO_DIR)))
        elif node.kind == "at":
            items = await self.core(self.tree.listing_at, node.commit, node.path)
            when = await self.core(self.tree.commit_time, node.commit)
            for item in items:
                child = Node("at", f"{node.path}/{item.name}" if node.path else item.name, node.commit)
                entries.append((os.fsencode(item.name), self.at_attrs(self.inodes.ino(child, lookup=False), node.commit, item, when)))
        elif node.kind == "nasdir" and not node.commit:
            for name in NAS_FILES:
                child = Node("nasfile", name)
                entries.append((name.encode(), self.virtual_attrs(self.inodes.ino(child, lookup=False), RO_FILE)))
            for name, child in (("deref", Node("deref", "")), ("search", Node("searchdir")), ("diff", Node("diffdir"))):
                entries.append((name.encode(), self.virtual_attrs(self.inodes.ino(child, lookup=False), RO_DIR)))
        elif node.kind not in ("deref", "searchdir", "diffdir", "nasdir"):
            raise FUSEError(errno.ENOTDIR)
        dh = self._next_dh
        self._next_dh += 1
        self._dirs[dh] = entries
        return dh

    @fuse_op
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        entries = self._dirs.get(fh, [])
        for index in range(start_id, len(entries)):
            name, attrs = entries[index]
            if not pyfuse3.readdir_reply(token, name, attrs, index + 1):
                break
            self.inodes.ino(self.inodes.node(attrs.st_ino))  # readdirplus counts as a lookup

    @fuse_op
    async def releasedir(self, fh: int) -> None:
        self._dirs.pop(fh, None)

    # -- files ----------------------------------------------------------------------------
    @fuse_op
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        node = self.inodes.node(inode)
        if node.kind != "real":
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
                raise FUSEError(errno.EROFS)
            return pyfuse3.FileInfo(fh=self.hold(await self.content(node, record=True)), keep_cache=False)
        fd = os.open(self.real(node.path), (flags & ~os.O_CREAT) | os.O_NOFOLLOW)
        self.track_fd(fd, inode)
        st = os.fstat(fd)
        seen = (st.st_mtime_ns, st.st_size)
        keep = self._opened_at.get(inode) == seen  # unchanged since last open: keep the page cache
        self._opened_at[inode] = seen
        return pyfuse3.FileInfo(fh=fd, keep_cache=keep)

    def hold(self, data: bytes) -> int:
        fh = self._next_fh
        self._next_fh += 1
        self._bytes[fh] = data
        return fh

    def track_fd(self, fd: int, ino: int) -> None:
        self._fd_ino[fd] = ino
        self._ino_fds.setdefault(ino, set()).add(fd)

    @fuse_op
    async def read(self, fh: int, off: int, size: int) -> bytes:
        data = self._bytes.get(fh)
        if data is not None:
            return data[off : off + size]
        return os.pread(fh, size, off)

    @fuse_op
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        if fh >= VIRTUAL_FH_BASE:
            raise FUSEError(errno.EROFS)
        self._written.add(fh)
        return os.pwrite(fh, buf, off)

    @fuse_op
    async def flush(self, fh: int) -> None:
        """close() waits for flush (not for release): settle writes here, so a
        program that closed a file sees its views and its autocommit."""
        if fh in self._written:
            self._written.discard(fh)
            ino = self._fd_ino.get(fh)
            if ino is not None:
                await self.changed(self.inodes.node(ino).path)

    @fuse_op
    async def fsync(self, fh: int, datasync: bool) -> None:
        if fh < VIRTUAL_FH_BASE:
            (os.fdatasync if datasync else os.fsync)(fh)

    @fuse_op
    async def release(self, fh: int) -> None:
        if self._bytes.pop(fh, None) is not None:
            return
        ino = self._fd_ino.pop(fh, None)
        written = fh in self._written  # written after the last flush (mmap, dup'd fds)
        self._written.discard(fh)
        if ino is not None:
            fds = self._ino_fds.get(ino, set())
            fds.discard(fh)
            if not fds:
                self._ino_fds.pop(ino, None)
        os.close(fh)
        if written and ino is not None:
            await self.changed(self.inodes.node(ino).path)

    async def changed(self, path: str) -> None:
        """A real file changed through the mount: drop its views' cached pages
        and, with --autocommit, commit it onto the checked-out branch."""
        for view_ino in self.inodes.views_of(path):
            try:
                pyfuse3.invalidate_inode(view_ino)
            except OSError:
                pass
        if self.autocommit and not path.startswith(".git/") and path != ".git":
            commit = await self.core(self.tree.commit_worktree_path, path, "nasfs autocommit")
            if commit:
                log.info("autocommit %s as %s", path, commit[:12])

    @fuse_op
    async def create(self, parent_inode: int, name: bytes, mode: int, flags: int, ctx: pyfuse3.RequestContext) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        path = await self.new_real_path(parent_inode, name)
        fd = os.open(self.real(path), flags | os.O_CREAT | os.O_NOFOLLOW, mode & ~ctx.umask)
        self.own(path, ctx)
        ino = self.inodes.ino(Node("real", path))
        self.track_fd(fd, ino)
        self._written.add(fd)
        return pyfuse3.FileInfo(fh=fd), self.attrs_from_stat(ino, os.fstat(fd), self.attr_timeout)

    async def new_real_path(self, parent_inode: int, name: bytes) -> str:
        """Where a new entry goes: only in a real folder, never on a view's name."""
        if len(name) > NAME_MAX:
            raise FUSEError(errno.ENAMETOOLONG)
        parent = self.inodes.node(parent_inode)
        if parent.kind != "real":
            raise FUSEError(errno.EROFS)
        text = os.fsdecode(name)
        if "/" in text or name in (b".", b".."):
            raise FUSEError(errno.EINVAL)
        if not parent.path and text in (AT, NAS):
            raise FUSEError(errno.EROFS)
        path = f"{parent.path}/{text}" if parent.path else text
        if "@" in text and not os.path.lexists(self.real(path)):
            try:
                await self.view_node(parent.path, text, "")
            except (NasError, FUSEError):
                pass
            else:
                raise FUSEError(errno.EROFS)  # that name is a view of an existing file
        return path

    def own(self, path: str, ctx: pyfuse3.RequestContext) -> None:
        """New entries belong to the caller, as on a local disk (the daemon may be root)."""
        if os.geteuid() == 0:
            os.chown(self.real(path), ctx.uid, ctx.gid, follow_symlinks=False)

    @fuse_op
    async def mkdir(self, parent_inode: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        path = await self.new_real_path(parent_inode, name)
        os.mkdir(self.real(path), mode & ~ctx.umask)
        self.own(path, ctx)
        ino = self.inodes.ino(Node("real", path))
        return self.attrs_from_stat(ino, os.lstat(self.real(path)), self.attr_timeout)

    @fuse_op
    async def mknod(self, parent_inode: int, name: bytes, mode: int, rdev: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        path = await self.new_real_path(parent_inode, name)
        os.mknod(self.real(path), mode & ~ctx.umask, rdev)
        self.own(path, ctx)
        ino = self.inodes.ino(Node("real", path))
        return self.attrs_from_stat(ino, os.lstat(self.real(path)), self.attr_timeout)

    @fuse_op
    async def symlink(self, parent_inode: int, name: bytes, target: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        path = await self.new_real_path(parent_inode, name)
        os.symlink(target, self.real(path))
        self.own(path, ctx)
        ino = self.inodes.ino(Node("real", path))
        return self.attrs_from_stat(ino, os.lstat(self.real(path)), self.attr_timeout)

    @fuse_op
    async def link(self, inode: int, new_parent_inode: int, new_name: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        node = self.real_node(inode)
        path = await self.new_real_path(new_parent_inode, new_name)
        os.link(self.real(node.path), self.real(path), follow_symlinks=False)
        ino = self.inodes.ino(Node("real", path))
        return self.attrs_from_stat(ino, os.lstat(self.real(path)), self.attr_timeout)

    def real_node(self, inode: int) -> Node:
        node = self.inodes.node(inode)
        if node.kind != "real":
            raise FUSEError(errno.EROFS)
        return node

    def real_child(self, parent_inode: int, name: bytes) -> str:
        parent = self.real_node(parent_inode)
        text = os.fsdecode(name)
        return f"{parent.path}/{text}" if parent.path else text

    @fuse_op
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        path = self.real_child(parent_inode, name)
        os.unlink(self.real(path))
        self.inodes.move(path, f"\0deleted\0{path}\0{time.monotonic_ns()}")
        if self.autocommit:
            await self.changed(path)

    @fuse_op
    async def rmdir(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        path = self.real_child(parent_inode, name)
        os.rmdir(self.real(path))
        self.inodes.move(path, f"\0deleted\0{path}\0{time.monotonic_ns()}")

    @fuse_op
    async def rename(self, old_parent: int, old_name: bytes, new_parent: int, new_name: bytes, flags: int, ctx: pyfuse3.RequestContext) -> None:
        old = self.real_child(old_parent, old_name)
        new = self.real_child(new_parent, new_name)
        if not os.path.lexists(self.real(new)):
            new = await self.new_real_path(new_parent, new_name)  # refuses a view's name
        if flags & pyfuse3.RENAME_EXCHANGE:
            raise FUSEError(errno.EINVAL)
        if flags & pyfuse3.RENAME_NOREPLACE and os.path.lexists(self.real(new)):
            raise FUSEError(errno.EEXIST)
        os.rename(self.real(old), self.real(new))
        self.inodes.move(old, new)
        if self.autocommit:
            await self.changed(old)
            await self.changed(new)

    @fuse_op
    async def setattr(self, inode: int, attr: pyfuse3.EntryAttributes, fields: pyfuse3.SetattrFields, fh: int | None, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        node = self.real_node(inode)
        target: int | str = fh if fh is not None and fh < VIRTUAL_FH_BASE else self.real(node.path)
        follow = isinstance(target, int)
        if fields.update_size:
            os.truncate(target, attr.st_size)
        if fields.update_mode:
            os.chmod(target, stat.S_IMODE(attr.st_mode))
        if fields.update_uid or fields.update_gid:
            uid = attr.st_uid if fields.update_uid else -1
            gid = attr.st_gid if fields.update_gid else -1
            os.chown(target, uid, gid) if follow else os.chown(target, uid, gid, follow_symlinks=False)
        if fields.update_atime or fields.update_mtime:
            st = os.stat(target) if follow else os.lstat(target)
            atime = attr.st_atime_ns if fields.update_atime else st.st_atime_ns
            mtime = attr.st_mtime_ns if fields.update_mtime else st.st_mtime_ns
            if follow:
                os.utime(target, ns=(atime, mtime))
            else:
                os.utime(target, ns=(atime, mtime), follow_symlinks=False)
        if fields.update_size:
            await self.changed(node.path)
        return await self.attrs(inode, node)

    @fuse_op
    async def access(self, inode: int, mode: int, ctx: pyfuse3.RequestContext) -> bool:
        node = self.inodes.node(inode)
        if node.kind != "real":
            return not mode & os.W_OK
        return True  # default_permissions: the kernel checks the mode bits

    @fuse_op
    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        st = os.statvfs(self.root)
        out = pyfuse3.StatvfsData()
        for name in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_namemax"):
            setattr(out, name, getattr(st, name))
        return out

    # -- extended attributes -------------------------------------------------------------
    async def declared_xattrs(self, node: Node) -> dict[bytes, bytes]:
        """``user.nas.*`` of a declared answer: a view, a search or a diff."""
        if node.kind == "view":
            response = await self.view_response(node)
        elif node.kind in ("search", "diff"):
            response = await self.core(self.side_view, node)
        else:
            return {}
        return {k.encode(): v.encode() for k, v in response.xattrs().items()}

    @fuse_op
    async def getxattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> bytes:
        node = self.inodes.node(inode)
        if node.kind == "real":
            return os.getxattr(self.real(node.path), name, follow_symlinks=False)
        value = (await self.declared_xattrs(node)).get(name)
        if value is None:
            raise FUSEError(pyfuse3.ENOATTR)
        return value

    @fuse_op
    async def listxattr(self, inode: int, ctx: pyfuse3.RequestContext) -> list[bytes]:
        node = self.inodes.node(inode)
        if node.kind == "real":
            return [os.fsencode(n) for n in os.listxattr(self.real(node.path), follow_symlinks=False)]
        return list(await self.declared_xattrs(node))

    @fuse_op
    async def setxattr(self, inode: int, name: bytes, value: bytes, ctx: pyfuse3.RequestContext) -> None:
        node = self.inodes.node(inode)
        if node.kind == "nasdir" and name == b"user.nas.fault" and self.faults:
            self.fault_armed = True
            return
        if node.kind != "real":
            raise FUSEError(errno.EROFS)
        os.setxattr(self.real(node.path), name, value, follow_symlinks=False)

    @fuse_op
    async def removexattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        node = self.real_node(inode)
        os.removexattr(self.real(node.path), name, follow_symlinks=False)


__all__ = ["NasOperations", "ROOT"]
