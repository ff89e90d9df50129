"""pyfuse3 operations: each request goes to the real tree (passthrough.py)
or to the virtual nodes beside it (virtual.py), by inode number.

Every handler turns unexpected exceptions into ``EIO`` and logs them:
pyfuse3 ends the whole daemon on any exception that is not a ``FUSEError``.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pyfuse3
from pyfuse3 import FUSEError

from ..acl import XATTR as ACL_XATTR
from ..cache import LRU
from ..errors import FileChanged, NasError
from ..repo.one_version import stat_key
from ..service import Nas
from . import fast
from .access import caller_of
from .nodes import Node
from .passthrough import PASSTHROUGH, PassThrough
from .real import O_PATH, ROOT, VIRTUAL_BASE
from .virtual import AT, NAS, Virtual, display_name

log = logging.getLogger("nasfs.fuse")

T = TypeVar("T")
# The binding patched by scripts/pyfuse3-patches/ lets opendir ask the kernel to
# cache a listing (FOPEN_CACHE_DIR) and keep it across opens; stock pyfuse3 does not.
CACHED_LISTINGS = hasattr(pyfuse3.FileInfo(), "cache_readdir")
FALLOCATE = hasattr(pyfuse3.Operations, "fallocate")  # the patched binding sends fallocate(2) on; stock pyfuse3 does not
NAME_MAX = 255
VIRTUAL_FH_BASE = 1 << 40  # file handles above this hold bytes, below are real fds
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND


def fuse_op(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Map every error to an errno: NasError to its own, OSError to its errno,
    anything else to EIO (logged), so no exception ends the daemon. A
    request of the thread running a core call is ENOENT, unanswered: a
    walk of it that reached the mount through a link waits for an answer
    that may need that very thread (virtual._as_core)."""

    @functools.wraps(fn)
    async def wrapper(self: NasOperations, *args: Any) -> T:
        if self.core_threads and any(isinstance(arg, pyfuse3.RequestContext) and arg.pid in self.core_threads for arg in args):
            log.debug("%s%r: a request of the core thread itself, refused", fn.__name__, args[:2])
            raise FUSEError(errno.ENOENT)
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


@dataclass
class RealListing:
    """An open real folder: its names, read at the first readdir."""

    ino: int
    names: list[bytes] | None = None


def virtual(ino: int) -> bool:
    return ino >= VIRTUAL_BASE


ACL_NAMES = (ACL_XATTR.encode(), b"system.posix_acl_default")  # the kernel asks these itself (enable_acl)


class NasOperations(PassThrough, Virtual, pyfuse3.Operations):
    supports_dot_lookup = True  # NFS re-export looks up '.' and '..' by handle
    enable_writeback_cache = False  # (it would also rule out passthrough)
    # the kernel judges POSIX ACLs (FUSE_POSIX_ACL, in stock pyfuse3 too): with
    # default_permissions alone it judges the mode bits only, and a real file an
    # ACL keeps an account out of was read through the mount (docs/mount.md)
    enable_acl = True
    # Read by the binding patched by scripts/pyfuse3-patches/ (stock pyfuse3 ignores
    # them): lookups in one folder run side by side (a slow view holds up no other
    # name there), and real files' opens are handed to the kernel (passthrough.py).
    enable_parallel_dirops = True
    enable_passthrough = True

    def __init__(self, nas: Nas, autocommit: bool = False, attr_timeout: float = 1.0, faults: bool = False) -> None:
        pyfuse3.Operations.__init__(self)
        self.nas = nas
        self.root = str(nas.tree.root)
        self.autocommit = autocommit
        self.attr_timeout = attr_timeout
        PassThrough.__init__(self, self.root, attr_timeout)
        Virtual.__init__(self, nas)
        self.faults = faults  # test hook: setxattr user.nas.fault on .nas arms a crash
        self._bytes: dict[int, bytes] = {}  # virtual file handles -> the bytes served
        self._next_fh = VIRTUAL_FH_BASE
        self._written: set[int] = set()  # fds written through the mount
        # autocommit of passthrough writers' fds, whose writes the daemon never sees:
        # fd -> the file's stat when opened or last committed, and whether it was committed since opening
        self._unseen: dict[int, tuple[tuple[int, int, int, int], bool]] = {}
        self._dirs: dict[int, RealListing | list[tuple[bytes, pyfuse3.EntryAttributes]]] = {}
        self._fast_listings: LRU[int, RealListing] = LRU(256)  # folders opened in C, listed here (no releasedir comes)
        self._next_dh = 1
        self.real_asks = 0  # lookups of real names (or of nothing) and getattrs of real nodes: what the kernel did not cache
        self.real_listings = 0  # real folders listed: what the kernel's cache of listings did not answer
        self.real_reads = 0  # reads of real files that reached the daemon: none for passthrough opens
        self.socket_reads = 0  # nasfs read answers given over the read socket (read_socket.py)

    def close(self) -> None:
        """End the view workers and the source watcher (before pyfuse3.close)."""
        self.workers.close()
        self.watcher.stop()

    def mount_stats(self) -> str:
        w = self.watcher
        return (f"real_lookups_and_getattrs={self.real_asks}\nreal_entry_timeout={w.timeout:g}\n"
                f"watched_folders={w.folders}\nsource_events={w.events}\n"
                f"kernel_cached_listings={'yes' if CACHED_LISTINGS else 'no (stock pyfuse3)'}\nreal_listings={self.real_listings}\n"
                f"view_lookups_remembered={self.views.hits}\nsocket_reads={self.socket_reads}\n"
                f"passthrough={self.passthrough_state()}\nreal_reads={self.real_reads}\n"
                f"fallocate={'yes' if FALLOCATE else 'no (stock pyfuse3)'}\n" + fast.stats())

    def init(self) -> None:
        """At the kernel's INIT (the binding has negotiated passthrough)."""
        self.passthrough_granted = PASSTHROUGH and pyfuse3.passthrough_enabled()
        fast.enable(self.watcher.timeout, self.real.handle(ROOT))

    # -- lookup ------------------------------------------------------------------------
    @fuse_op
    async def lookup(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        if len(name) > NAME_MAX:
            raise FUSEError(errno.ENAMETOOLONG)
        if not virtual(parent_inode):
            if name == b".":
                self.real.looked_up(parent_inode)
                return self.real_getattr(parent_inode)
            if name == b"..":
                return self.real_parent(parent_inode)
            found = self.real_lookup(parent_inode, name)
            if found is not None:
                self.real_asks += 1
                return found
            if b"@" not in name and not (parent_inode == ROOT and name in (AT.encode(), NAS.encode())):
                self.real_asks += 1
                return self.absent()
        parent = self.inodes.node(parent_inode) if virtual(parent_inode) else None
        if parent is not None and name == b".":
            self.inodes.ino(parent)
            return await self.node_attrs(parent_inode, parent)
        if parent is not None and name == b"..":
            up = self.virtual_parent(parent)
            if up is None:
                return self.real_parent(ROOT)
            ino, attrs = await self.materialize(up)
            self.inodes.ino(up)
            return attrs
        return await self.virtual_lookup(parent_inode, parent, name, ctx)

    def absent(self) -> pyfuse3.EntryAttributes:
        """A name that is nothing, cached by the kernel like a real entry
        (tools look up .gitignore and friends in every folder). Names with
        '@' are never cached: each lookup of a view is made anew."""
        a = pyfuse3.EntryAttributes()
        a.st_ino = 0
        a.entry_timeout = self.watcher.timeout
        return a

    def real_parent(self, ino: int) -> pyfuse3.EntryAttributes:
        if ino == ROOT:
            self.real.looked_up(ROOT)
            return self.real_getattr(ROOT)
        fd = os.open(b"..", O_PATH, dir_fd=self.real.fd(ino))
        st = os.fstat(fd)
        up = self.real.learn(fd, st, os.path.dirname(self.real.hint(ino)))
        self.watcher.watch(up, self.real.fd(up))
        return self.real_attrs(up, st)

    async def virtual_lookup(self, parent_inode: int, parent: Node | None, name: bytes, ctx: pyfuse3.RequestContext | None) -> pyfuse3.EntryAttributes:
        """A name that is no real entry: a view, history or a side file."""
        text = os.fsdecode(name)
        parent_path = "" if parent is not None else self.real.path(parent_inode)
        caller = caller_of(ctx)
        try:  # the one place a refused name is recorded, with its reason and who asked
            if parent is not None:
                node = self.admit(await self.child(parent, text, caller), caller)
                ino, attrs = await self.materialize(node)
            elif parent_inode == ROOT and (side := self.root_child(text)) is not None:
                ino, attrs = await self.materialize(side)
            elif "@" in text and parent_path is not None:
                ino, attrs = await self.working_view(parent_path, text, caller)
            else:
                raise FUSEError(errno.ENOENT)
        except NasError as exc:
            shown = self.display(parent, parent_path or "", display_name(name))
            self.nas.refused(shown, exc, caller)
            log.info("refused %s: %s", shown, exc)
            raise
        self.inodes.ino(self.inodes.node(ino))  # the kernel now holds one more lookup of it
        return attrs

    async def forget(self, inode_list: list[tuple[int, int]]) -> None:
        for ino, count in inode_list:
            if virtual(ino):
                self.inodes.forget(ino, count)
            elif self.real.forget(ino, count):
                self.watcher.forgot(ino)
                fast.drop_file(ino)  # its number may name another file next time
                fast.drop_dir(ino)

    @fuse_op
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext | None = None) -> pyfuse3.EntryAttributes:
        if virtual(inode):
            return await self.node_attrs(inode, self.inodes.node(inode))
        self.real_asks += 1
        return self.real_getattr(inode)

    @fuse_op
    async def readlink(self, inode: int, ctx: pyfuse3.RequestContext) -> bytes:
        if not virtual(inode):
            return self.real_readlink(inode)
        node = self.inodes.node(inode)
        if node.kind == "at":
            return await self.core(self.nas.tree.raw_at, node.commit, node.path)
        raise FUSEError(errno.EINVAL)

    # -- directories ------------------------------------------------------------------
    @fuse_op
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int | pyfuse3.FileInfo:
        """A real folder is listed at its first readdir, which the kernel does
        not send while it holds the listing: with the patched binding and the
        folder watched, the kernel caches real listings until the watcher
        drops them (watch.py). Virtual folders are never cached."""
        dh = self._next_dh
        self._next_dh += 1
        if virtual(inode):
            self._dirs[dh] = await self.virtual_listing(self.inodes.node(inode))
            return dh
        self.real.fd(inode)  # a folder the daemon no longer knows fails here, as before
        self._dirs[dh] = RealListing(inode)
        if CACHED_LISTINGS and self.watcher.watching(inode):
            return pyfuse3.FileInfo(fh=dh, keep_cache=True, cache_readdir=True)
        return dh

    @fuse_op
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        listing = self._dirs.get(fh)
        if listing is None and fast.is_fast(fh):  # opened in C; the kernel no longer holds its listing
            listing = self._fast_listings.get(fh) if start_id else None  # (each opendir's handle is its own)
            if listing is None:
                ino = fast.inode_of(fh)
                if not ino:
                    raise FUSEError(errno.EBADF)
                listing = RealListing(ino)
            self._fast_listings.put(fh, listing)
        if isinstance(listing, RealListing):
            if listing.names is None:
                listing.names = self.real_listing(listing.ino)
                self.real_listings += 1
            whole = self.real_readdir(listing.ino, listing.names, start_id, token)
            if whole and CACHED_LISTINGS and self.watcher.watching(listing.ino):
                fast.add_dir(listing.ino, self.real.handle(listing.ino))  # the kernel caches this listing: its next opendir is answered in C
            return
        for index in range(start_id, len(listing or [])):
            name, attrs = listing[index]
            if not pyfuse3.readdir_reply(token, name, attrs, index + 1):
                break
            self.inodes.ino(self.inodes.node(attrs.st_ino))  # readdirplus counts as a lookup

    def real_readdir(self, ino: int, names: list[bytes], start_id: int, token: pyfuse3.ReaddirToken) -> bool:
        """'.', '..', then the entries; each one sent counts as a lookup
        (readdirplus). Whether the listing's end was reached and sent."""
        if start_id < 2:
            for index, (name, attrs) in enumerate(self.real_dots(ino)[start_id:], start_id):
                if not pyfuse3.readdir_reply(token, name, attrs, index + 1):
                    return False
        for index in range(max(start_id, 2), len(names) + 2):
            name = names[index - 2]
            found = self.real.learn_listed(self.real.fd(ino), name, self.hint_of(ino, name))
            if found is None:
                continue  # removed since the folder was opened
            child, st = self.told(ino, name, *found), found[1]
            if not pyfuse3.readdir_reply(token, name, self.real_attrs(child, st), index + 1):
                self.real.forget(child, 1)
                return False
        return True

    @fuse_op
    async def releasedir(self, fh: int) -> None:
        self._dirs.pop(fh, None)

    # -- files ----------------------------------------------------------------------------
    @fuse_op
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        if not virtual(inode):
            info = self.real_open(inode, flags, ctx)
            if PASSTHROUGH and info.backing_fd >= 0 and flags & os.O_ACCMODE != os.O_RDONLY:
                self.unseen(info.fh)
            return info
        if flags & WRITE_FLAGS:
            raise FUSEError(errno.EROFS)
        node = self.inodes.node(inode)
        if node.kind == "at":
            return pyfuse3.FileInfo(fh=self.hold(await self.at_content(node)), keep_cache=True)
        if self.admit(node, caller_of(ctx)) is not node:  # again at every open: a remembered view is judged anew
            raise FileChanged(f"{node.path!r} changed since it was looked up", "read it again")  # another inode's view
        data, response = await self.file_content(inode, node)
        if response is not None and node.kind == "view":
            self.nas.stats.record(response)
        if response is not None:
            self.nas.cite(response)  # search hits and diffs too: their commits are published
        return pyfuse3.FileInfo(fh=self.hold(data), keep_cache=True)  # this inode's bytes never change

    def hold(self, data: bytes) -> int:
        fh = self._next_fh
        self._next_fh += 1
        self._bytes[fh] = data
        return fh

    @fuse_op
    async def read(self, fh: int, off: int, size: int) -> bytes:
        data = self._bytes.get(fh)
        if data is not None:
            return data[off : off + size]
        self.real_reads += 1
        if fast.is_fast(fh):  # opened in C, with a descriptor of its own (fast.py)
            return os.pread(fast.fd_of(fh), size, off)
        return os.pread(fh, size, off)

    @fuse_op
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        if fh >= VIRTUAL_FH_BASE:
            raise FUSEError(errno.EROFS)
        self._written.add(fh)
        return self.real_write(fh, off, buf)

    def unseen(self, fh: int) -> None:
        """With autocommit, follow a passthrough writer's fd: its writes go to
        the source in the kernel and never reach ``write``."""
        if self.autocommit:
            self._unseen[fh] = (stat_key(os.fstat(fh)), False)

    def changed_unseen(self, fh: int, release: bool = False) -> bool:
        """Whether a passthrough writer's file is to be committed now: it
        changed since its fd was opened or last committed (its stat tells:
        with the multigrain timestamps of Linux 6.13 on, ext4's among them,
        each change after a stat gets a new ctime), or, at release, it was
        never committed (a file created and left empty)."""
        seen = self._unseen.get(fh)
        if seen is None:
            return False
        now = stat_key(os.fstat(fh))
        if now == seen[0] and (seen[1] or not release):
            return False
        self._unseen[fh] = (now, True)
        return True

    @fuse_op
    async def fallocate(self, fh: int, mode: int, offset: int, length: int) -> None:
        """Called only by the binding patched by scripts/pyfuse3-patches/ (stock
        pyfuse3 has no fallocate: the kernel answers EOPNOTSUPP). Views and
        side files open only read-only, whose fallocate the kernel refuses
        itself (EBADF, as for a native read-only descriptor); so would this."""
        if fh >= VIRTUAL_FH_BASE:
            raise FUSEError(errno.EBADF)
        self._written.add(fh)
        self.real_fallocate(fh, mode, offset, length)

    @fuse_op
    async def flush(self, fh: int) -> None:
        """close() waits for flush (not for release): autocommit here, so a
        program that closed a file finds its commit. Without autocommit there
        is nothing to do, and ENOSYS tells the kernel to send no more flushes.
        A passthrough writer's fd is committed at each close (of each of its
        dups) that finds its file changed: the writes after an earlier close
        are never seen here (a shell's ``> file`` closes its first descriptor
        before it writes, which commits nothing, as nothing changed yet)."""
        if not self.autocommit:
            raise FUSEError(errno.ENOSYS)
        if fh in self._written or self.changed_unseen(fh):
            self._written.discard(fh)
            ino = self._fd_ino.get(fh)
            if ino is not None:
                await self.changed(self.committed_path(ino))

    @fuse_op
    async def fsync(self, fh: int, datasync: bool) -> None:
        if fast.is_fast(fh):  # an open answered in C: its own descriptor, as any read-only open's
            fh = fast.fd_of(fh)
        if fh < VIRTUAL_FH_BASE:
            (os.fdatasync if datasync else os.fsync)(fh)

    @fuse_op
    async def release(self, fh: int) -> None:
        if self._bytes.pop(fh, None) is not None:
            return
        written = fh in self._written or self.changed_unseen(fh, release=True)  # after the last flush (mmap, dup'd fds)
        self._written.discard(fh)
        self._unseen.pop(fh, None)
        path = self.committed_path(self._fd_ino[fh]) if written and fh in self._fd_ino else None
        self.real_release(fh)
        if written:
            await self.changed(path)

    def committed_path(self, ino: int) -> str | None:
        """Where a changed file is, for autocommit; None without --autocommit
        (finding a name costs a readlink the mount need not pay)."""
        return self.real.path(ino) if self.autocommit else None

    async def changed(self, path: str | None) -> None:
        """A real file changed through the mount (``path`` from committed_path
        or entry_path): commit it onto the checked-out branch. (Views need
        nothing: each lookup makes the view of what the file holds then.)"""
        if path and path != ".git" and not path.startswith(".git/"):
            commit = await self.core(self.nas.tree.commit_worktree_path, path, "nasfs autocommit")
            if commit:
                log.info("autocommit %s as %s", path, commit[:12])

    # -- new, removed and renamed entries ---------------------------------------------------
    async def check_new_name(self, parent_inode: int, name: bytes) -> None:
        """A new entry goes only in a real folder, never on a view's name."""
        if len(name) > NAME_MAX:
            raise FUSEError(errno.ENAMETOOLONG)
        if virtual(parent_inode):
            raise FUSEError(errno.EROFS)
        if b"/" in name or name in (b".", b".."):
            raise FUSEError(errno.EINVAL)
        text = os.fsdecode(name)
        if parent_inode == ROOT and text in (AT, NAS):
            raise FUSEError(errno.EROFS)
        if "@" in text and not self.real_exists(parent_inode, name):
            folder = self.real.path(parent_inode)
            if folder is None:
                return
            try:
                await self.view_node(folder, text, "")
            except (NasError, FUSEError):
                return
            raise FUSEError(errno.EROFS)  # that name is a view of an existing file

    @fuse_op
    async def create(self, parent_inode: int, name: bytes, mode: int, flags: int, ctx: pyfuse3.RequestContext) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        await self.check_new_name(parent_inode, name)
        info, attrs = self.real_create(parent_inode, name, mode, flags, ctx)
        if PASSTHROUGH and info.backing_fd >= 0:
            self.unseen(info.fh)
        else:
            self._written.add(info.fh)  # a new file: committed at close even if nothing is written
        return info, attrs

    @fuse_op
    async def mkdir(self, parent_inode: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        await self.check_new_name(parent_inode, name)
        return self.real_mkdir(parent_inode, name, mode, ctx)

    @fuse_op
    async def mknod(self, parent_inode: int, name: bytes, mode: int, rdev: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        await self.check_new_name(parent_inode, name)
        return self.real_mknod(parent_inode, name, mode, rdev, ctx)

    @fuse_op
    async def symlink(self, parent_inode: int, name: bytes, target: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        await self.check_new_name(parent_inode, name)
        return self.real_symlink(parent_inode, name, target, ctx)

    @fuse_op
    async def link(self, inode: int, new_parent_inode: int, new_name: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        if virtual(inode):
            raise FUSEError(errno.EROFS)
        await self.check_new_name(new_parent_inode, new_name)
        return self.real_link(inode, new_parent_inode, new_name)

    def entry_path(self, parent_inode: int, name: bytes) -> str | None:
        """Where an entry being removed or renamed is, for autocommit (None
        without --autocommit); a virtual folder is refused (EROFS)."""
        if virtual(parent_inode):
            raise FUSEError(errno.EROFS)
        if not self.autocommit:
            return None
        base = self.real.path(parent_inode)
        if base is None:
            return None
        return f"{base}/{os.fsdecode(name)}" if base else os.fsdecode(name)

    @fuse_op
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        path = self.entry_path(parent_inode, name)
        self.real_unlink(parent_inode, name)
        await self.changed(path)

    @fuse_op
    async def rmdir(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        if virtual(parent_inode):
            raise FUSEError(errno.EROFS)
        self.real_rmdir(parent_inode, name)

    @fuse_op
    async def rename(self, old_parent: int, old_name: bytes, new_parent: int, new_name: bytes, flags: int, ctx: pyfuse3.RequestContext) -> None:
        old = self.entry_path(old_parent, old_name)
        new = self.entry_path(new_parent, new_name)
        await self.check_new_name(new_parent, new_name)
        self.real_rename(old_parent, old_name, new_parent, new_name, flags)
        await self.changed(old)
        await self.changed(new)

    @fuse_op
    async def setattr(self, inode: int, attr: pyfuse3.EntryAttributes, fields: pyfuse3.SetattrFields, fh: int | None, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        if virtual(inode):
            raise FUSEError(errno.EROFS)
        fast.drop_file(inode)  # (its stat changes too, which the C handler checks; no need to wait for that)
        attrs = self.real_setattr(inode, attr, fields, fh, ctx)
        if fields.update_size:
            await self.changed(self.committed_path(inode))
        return attrs

    @fuse_op
    async def access(self, inode: int, mode: int, ctx: pyfuse3.RequestContext) -> bool:
        if virtual(inode):
            return not mode & os.W_OK
        return True  # default_permissions: the kernel checks the mode bits and ACLs

    @fuse_op
    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        st = os.statvfs(self.root)
        out = pyfuse3.StatvfsData()
        for name in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_namemax"):
            setattr(out, name, getattr(st, name))
        return out

    # -- extended attributes -------------------------------------------------------------
    async def declared_xattrs(self, inode: int) -> dict[bytes, bytes]:
        """``user.nas.*`` of a declared answer: a view, a search or a diff."""
        node = self.inodes.node(inode)
        if node.kind not in ("view", "search", "diff"):
            return {}
        _, response = await self.file_content(inode, node)
        if response is None:
            return {}
        return {k.encode(): v.encode() for k, v in response.xattrs().items()}

    def xattr_path(self, inode: int) -> str:
        return f"/proc/self/fd/{self.real.fd(inode)}"  # the inode itself, a symlink too

    @fuse_op
    async def getxattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> bytes:
        if not virtual(inode):
            try:
                return os.getxattr(self.xattr_path(inode), name)
            except OSError as exc:
                # a source filesystem that keeps no ACLs (ramfs, vfat, an NFS export): the kernel's permission
                # check asks for the ACL (enable_acl) and fails every non-owner's access with any error but
                # ENODATA, so "none kept" is told as "none"
                if exc.errno == errno.EOPNOTSUPP and name in ACL_NAMES:
                    raise FUSEError(pyfuse3.ENOATTR) from None
                raise
        if name == ACL_XATTR.encode():  # asked by the kernel's permission check (enable_acl)
            value = await self.node_acl(inode, self.inodes.node(inode))
        else:
            value = (await self.declared_xattrs(inode)).get(name)
        if value is None:
            raise FUSEError(pyfuse3.ENOATTR)
        return value

    @fuse_op
    async def listxattr(self, inode: int, ctx: pyfuse3.RequestContext) -> list[bytes]:
        if not virtual(inode):
            return [os.fsencode(n) for n in os.listxattr(self.xattr_path(inode))]
        return list(await self.declared_xattrs(inode))

    @fuse_op
    async def setxattr(self, inode: int, name: bytes, value: bytes, ctx: pyfuse3.RequestContext) -> None:
        if virtual(inode):
            if self.inodes.node(inode).kind == "nasdir" and name == b"user.nas.fault" and self.faults:
                self.fault_armed = True
                return
            raise FUSEError(errno.EROFS)
        os.setxattr(self.xattr_path(inode), name, value)

    @fuse_op
    async def removexattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        if virtual(inode):
            raise FUSEError(errno.EROFS)
        os.removexattr(self.xattr_path(inode), name)


__all__ = ["NasOperations", "ROOT"]
