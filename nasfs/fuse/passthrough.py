"""The real tree passed through: plain syscalls on the source, by inode.

Every name is resolved relative to its directory's descriptor and every
inode is reached through its own (``real.RealInodes``), never as root +
path. New entries get the caller's ownership and exactly the mode asked for
(the daemon's own umask and chown's clearing of set-id bits undone), and a
write or truncate by anyone but root clears set-id bits as the kernel does
for a local disk (libfuse 3.14 asks the filesystem to, with handle_killpriv;
from 3.17 the kernel does it, with a SETATTR of the mode).

With the binding patched by scripts/pyfuse3-patches/ (libfuse 3.17) and a
kernel that grants FUSE passthrough, an open of a large, just-changed or
written real regular file hands the kernel the source file itself: its
reads, writes and mmaps go to the source in the kernel, never through the
daemon. Small settled files stay in the page cache, whose warm reads cost
no request at all (``PassThrough.opened``).
"""

from __future__ import annotations

import errno
import os
import stat

import pyfuse3
from pyfuse3 import FUSEError

from . import fast
from .real import O_PATH, ROOT, RealInodes
from .syscalls import chown_fd, fallocate, link_fd, rename2
from .watch import MADE, MOVED_IN, MOVED_OUT, REMOVED, Watcher

SETID = stat.S_ISUID | stat.S_ISGID
RENAME_EXCHANGE = 2  # renameat2(2)
PASS_FROM = 1 << 20  # a settled file this large is passed through, a smaller one read from the page cache (measured: docs/performance.md §4)
PASSTHROUGH = hasattr(pyfuse3, "passthrough_enabled")  # the patched binding: FileInfo.backing_fd
_STAT_FIELDS = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_rdev", "st_size", "st_atime_ns",
                "st_mtime_ns", "st_ctime_ns", "st_blksize", "st_blocks")


def _proc(fd: int) -> str:
    return f"/proc/self/fd/{fd}"


def _has_default_acl(folder_fd: int) -> bool:
    """Whether a folder has a default ACL. Then the filesystem made a new
    entry's mode and ACL from it, the mode asked for cut by the ACL and the
    daemon's umask ignored (POSIX.1e), so there is no umask of the daemon's
    to undo, and a chmod to the mode asked would widen the entry past the ACL
    (``d:o::---`` made 0640 of 0644; the chmod made it 0644 again)."""
    try:
        os.getxattr(_proc(folder_fd), "system.posix_acl_default")
    except OSError:  # ENODATA: none; EOPNOTSUPP: a filesystem that keeps none
        return False
    return True


def passed_through(size: int, hot: bool, writer: bool) -> bool:
    """Whether a regular file's open, with no other open of it held, is
    passed through (PassThrough.opened says why)."""
    return hot or writer or size >= PASS_FROM


def killed_privileges(mode: int) -> int:
    """The mode a non-root write or truncate leaves: set-uid always goes,
    set-gid when group-executable (otherwise it marks mandatory locking)."""
    kill = stat.S_ISUID
    if mode & stat.S_IXGRP:
        kill |= stat.S_ISGID
    return stat.S_IMODE(mode) & ~kill


class PassThrough:
    real: RealInodes

    def __init__(self, root: str, attr_timeout: float) -> None:
        self.real = RealInodes(root)
        self.watcher = Watcher(attr_timeout)  # real entries are cached for as long as it watches
        self.watcher.watch(ROOT, self.real.fd(ROOT))
        self._fd_ino: dict[int, int] = {}  # open real fds -> inode
        self._ino_fds: dict[int, set[int]] = self.real.opened  # (the table reopens an inode from them)
        self._unprivileged: set[int] = set()  # fds opened by a non-root caller
        self._opened_at: dict[int, tuple[int, int, int]] = {}  # inode -> fast.version at last open
        self._passed: dict[int, bool] = {}  # inode -> whether its opens are passed through, while it has any
        self.passthrough_granted = False  # set at the kernel's INIT (ops.init)

    def passthrough_state(self) -> str:
        """``.nas/stats``' passthrough line: yes, or why not."""
        if not PASSTHROUGH:
            return "no (stock pyfuse3)"
        if not self.passthrough_granted:
            return "no (the kernel did not offer it)"
        if not pyfuse3.passthrough_enabled():
            return "no (the kernel refused a backing file, see the log; files opened before keep it)"
        return "yes"

    def real_attrs(self, ino: int, st: os.stat_result) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        for name in _STAT_FIELDS:
            setattr(a, name, getattr(st, name))
        a.st_ino = ino
        a.generation = 0
        a.entry_timeout = a.attr_timeout = self.watcher.timeout
        return a

    def learn_entry(self, parent: int, name: bytes, fd: int, st: os.stat_result) -> int:
        """The inode of ``name`` in ``parent`` (``fd``: O_PATH, taken over), as
        the kernel is about to be given it."""
        return self.told(parent, name, self.real.learn(fd, st, self.hint_of(parent, name)), st)

    def told(self, parent: int, name: bytes, ino: int, st: os.stat_result) -> int:
        """The kernel is about to be given ``ino`` as ``name`` in ``parent``:
        the watcher remembers it, and watches a folder before anything in it
        is answered."""
        self.watcher.seen(parent, name, ino)
        if stat.S_ISDIR(st.st_mode):
            self.watcher.watch(ino, self.real.fd(ino))
        return ino

    # -- names ----------------------------------------------------------------
    def real_lookup(self, parent: int, name: bytes) -> pyfuse3.EntryAttributes | None:
        """The real entry ``name`` in ``parent``, or None when there is none."""
        try:
            fd = os.open(name, O_PATH, dir_fd=self.real.fd(parent))
        except FileNotFoundError:
            return None
        st = os.fstat(fd)
        return self.real_attrs(self.learn_entry(parent, name, fd, st), st)

    def real_exists(self, parent: int, name: bytes) -> bool:
        try:
            os.stat(name, dir_fd=self.real.fd(parent), follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def hint_of(self, parent: int, name: bytes) -> str:
        base = self.real.hint(parent)
        return f"{base}/{os.fsdecode(name)}" if base else os.fsdecode(name)

    def real_getattr(self, ino: int) -> pyfuse3.EntryAttributes:
        return self.real_attrs(ino, os.fstat(self.real.fd(ino)))

    def real_readlink(self, ino: int) -> bytes:
        return os.readlink(b"", dir_fd=self.real.fd(ino))

    # -- new entries ------------------------------------------------------------
    def settle_new(self, parent: int, name: bytes, fd: int, mode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        """Give a new entry (``fd``: O_PATH, taken over) the caller's ownership
        and the mode asked for, then count the kernel's lookup of it."""
        st = os.fstat(fd)
        if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (ctx.uid, ctx.gid):
            inherit = os.fstat(self.real.fd(parent)).st_mode & stat.S_ISGID  # a set-gid folder gives its group
            chown_fd(fd, ctx.uid, -1 if inherit else ctx.gid)
        want = stat.S_IMODE(mode) & ~ctx.umask
        if stat.S_ISDIR(st.st_mode):
            want |= st.st_mode & stat.S_ISGID  # inherited from a set-gid parent
        if not stat.S_ISLNK(st.st_mode) and not _has_default_acl(self.real.fd(parent)):
            st = os.fstat(fd)
            if stat.S_IMODE(st.st_mode) != want:
                os.chmod(_proc(fd), want)
        st = os.fstat(fd)
        return self.real_attrs(self.learn_entry(parent, name, fd, st), st)

    def real_create(self, parent: int, name: bytes, mode: int, flags: int, ctx: pyfuse3.RequestContext) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        dir_fd = self.real.fd(parent)
        made = () if self.real_exists(parent, name) else ((parent, name, MADE),)
        with self.watcher.own(*made):
            fd = os.open(name, flags | os.O_CREAT | os.O_NOFOLLOW, stat.S_IMODE(mode) & ~ctx.umask, dir_fd=dir_fd)
        try:
            attrs = self.settle_new(parent, name, os.open(_proc(fd), os.O_PATH), mode, ctx)
        except BaseException:
            os.close(fd)
            raise
        return self.opened(fd, attrs.st_ino, flags, ctx), attrs

    def real_mkdir(self, parent: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        dir_fd = self.real.fd(parent)
        with self.watcher.own((parent, name, MADE)):
            os.mkdir(name, stat.S_IMODE(mode) & ~ctx.umask, dir_fd=dir_fd)
        return self.settle_new(parent, name, os.open(name, O_PATH, dir_fd=dir_fd), mode, ctx)

    def real_mknod(self, parent: int, name: bytes, mode: int, rdev: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        dir_fd = self.real.fd(parent)
        with self.watcher.own((parent, name, MADE)):
            os.mknod(name, mode & ~ctx.umask, rdev, dir_fd=dir_fd)
        return self.settle_new(parent, name, os.open(name, O_PATH, dir_fd=dir_fd), mode, ctx)

    def real_symlink(self, parent: int, name: bytes, target: bytes, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        dir_fd = self.real.fd(parent)
        with self.watcher.own((parent, name, MADE)):
            os.symlink(target, name, dir_fd=dir_fd)
        return self.settle_new(parent, name, os.open(name, O_PATH, dir_fd=dir_fd), 0o777, ctx)

    def real_link(self, ino: int, parent: int, name: bytes) -> pyfuse3.EntryAttributes:
        fd = self.real.fd(ino)
        with self.watcher.own((parent, name, MADE)):
            link_fd(fd, self.real.fd(parent), name)
        self.real.looked_up(ino)
        self.watcher.seen(parent, name, ino)
        return self.real_attrs(ino, os.fstat(self.real.fd(ino)))

    # -- removing and renaming -----------------------------------------------------
    def real_unlink(self, parent: int, name: bytes) -> None:
        with self.watcher.own((parent, name, REMOVED)):
            os.unlink(name, dir_fd=self.real.fd(parent))

    def real_rmdir(self, parent: int, name: bytes) -> None:
        with self.watcher.own((parent, name, REMOVED)):
            os.rmdir(name, dir_fd=self.real.fd(parent))

    def real_rename(self, old_parent: int, old: bytes, new_parent: int, new: bytes, flags: int) -> None:
        old_fd = self.real.fd(old_parent)
        new_fd = self.real.fd(new_parent)
        echoes = [(old_parent, old, MOVED_OUT), (new_parent, new, MOVED_IN)]
        if flags & RENAME_EXCHANGE:
            echoes += [(new_parent, new, MOVED_OUT), (old_parent, old, MOVED_IN)]
        with self.watcher.own(*echoes):
            if flags:
                rename2(old_fd, old, new_fd, new, flags)
            else:
                os.rename(old, new, src_dir_fd=old_fd, dst_dir_fd=new_fd)
        names = [(new_parent, new), (old_parent, old)] if flags & RENAME_EXCHANGE else [(new_parent, new)]
        moved = []
        for parent, name in names:  # the kernel now holds each moved inode under its new name
            try:
                st = os.stat(name, dir_fd=self.real.fd(parent), follow_symlinks=False)
            except OSError:
                continue
            moved.append((st, self.hint_of(parent, name)))
            if parent == new_parent and name == new:
                self.watcher.seen(parent, name, self.real.number_of(st))
        self.real.moved(moved)

    # -- attributes -----------------------------------------------------------------
    def real_setattr(self, ino: int, attr: pyfuse3.EntryAttributes, fields: pyfuse3.SetattrFields,
                     fh: int | None, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        fd = self.real.fd(ino)
        st = os.fstat(fd)
        if fields.update_size:
            if fh is not None and fh in self._fd_ino:
                os.ftruncate(fh, attr.st_size)
            else:
                os.truncate(_proc(fd), attr.st_size)
            if ctx.uid != 0 and st.st_mode & SETID and not fields.update_mode:
                os.chmod(_proc(fd), killed_privileges(st.st_mode))
        if fields.update_mode:
            if stat.S_ISLNK(st.st_mode):
                raise FUSEError(errno.EOPNOTSUPP)
            os.chmod(_proc(fd), stat.S_IMODE(attr.st_mode))
        if fields.update_uid or fields.update_gid:
            chown_fd(fd, attr.st_uid if fields.update_uid else -1, attr.st_gid if fields.update_gid else -1)
        if fields.update_atime or fields.update_mtime:
            now = os.fstat(fd)
            atime = attr.st_atime_ns if fields.update_atime else now.st_atime_ns
            mtime = attr.st_mtime_ns if fields.update_mtime else now.st_mtime_ns
            os.utime(_proc(fd), ns=(atime, mtime))  # the magic link is the inode itself, symlinks too
        return self.real_getattr(ino)

    # -- open files ----------------------------------------------------------------
    def real_open(self, ino: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        """Open a real file for the kernel: passed through, or served from
        the page cache, as ``opened`` decides."""
        fd = os.open(_proc(self.real.fd(ino)), flags & ~(os.O_CREAT | os.O_EXCL | os.O_NOCTTY | os.O_NOFOLLOW))
        return self.opened(fd, ino, flags, ctx)

    def opened(self, fd: int, ino: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        """How the kernel is to serve a new open ``fd`` of ``ino``.

        With passthrough (the patched binding, granted by the kernel), an
        open of an inode the daemon holds no other open of is passed through
        (``backing_fd``: the kernel reads, writes and maps the source file
        itself) when the file is large (``PASS_FROM``), changed in the last
        ``HOT_NS``, or opened for writing; any other is served from the
        page cache. A passed-through read costs the next ``stat`` of the
        file a GETATTR (the kernel drops a FUSE inode's atime after each),
        which a warm page-cache read does not, while a large file reads far
        faster passed through, cold and warm (docs/performance.md §4). An
        open of an inode that has opens takes their mode: the kernel fails
        (EIO) an open that is not passed through beside one that is, and the
        reverse, so a file that grows or changes while held never gets a
        mixed open. The daemon drops an inode's mode at its last RELEASE,
        which the kernel sends after it dropped its own: a count that is
        stale only makes an open follow the old mode, which is always allowed.

        Opens not passed through (page-cache mode, stock pyfuse3, or the
        kernel refused a backing file): a file changed in the last
        ``HOT_NS`` is read around the page cache (``direct_io``) by
        read-only opens: while it is being rewritten a page-cache read can
        come back short (the file was just truncated) as an invalidation
        bumps the kernel's attribute version, and the kernel then serves the
        page's zero fill up to the size it still believes (torn reads of
        NULs). A direct read returns what the file holds, as a native read
        would. Writers' opens keep the page cache (mmap, fsx), which is kept
        across opens while ``fast.version`` (mtime, ctime, size) is unchanged."""
        st = os.fstat(fd)
        writer = flags & os.O_ACCMODE != os.O_RDONLY
        hot = fast.hot(st)
        seen = fast.version(st)
        keep = not hot and self._opened_at.get(ino) == seen  # unchanged since the last open: keep the page cache
        # (a passed-through open drops it: the binding clears keep_cache; tried, with a change no watch saw)
        self._opened_at[ino] = seen
        info = pyfuse3.FileInfo(fh=fd, keep_cache=keep, direct_io=hot and not writer)
        wanted = PASSTHROUGH and stat.S_ISREG(st.st_mode) and passed_through(st.st_size, hot, writer)
        passed = self.track_fd(fd, ino, ctx, wanted)
        if passed:
            info.backing_fd = fd  # (stock pyfuse3's FileInfo has no backing_fd: then never passed)
        if writer or passed:
            fast.drop_file(ino)  # opens of it are answered here again, in the mode of this one
        elif keep and stat.S_ISREG(st.st_mode) and fast.plain_read_only(flags):
            fast.add_file(ino, self.real.handle(ino), st)  # the next such open is answered in C
        return info

    def track_fd(self, fd: int, ino: int, ctx: pyfuse3.RequestContext, passed: bool) -> bool:
        """Count ``fd`` as an open of ``ino``; whether it is passed through:
        as the inode's other opens are, else ``passed``."""
        self._fd_ino[fd] = ino
        fds = self._ino_fds.setdefault(ino, set())
        if not fds:
            self._passed[ino] = passed and not fast.opens(ino)  # opens answered in C are never passed through
        fds.add(fd)
        if ctx.uid != 0:
            self._unprivileged.add(fd)
        return self._passed[ino]

    def kill_privileges(self, fh: int) -> None:
        """Before a change of content through ``fh``: a non-root opener's
        change clears set-id bits, as the kernel does on a local disk. Ours
        to do when libfuse asks for handle_killpriv (3.14); from 3.17 the
        kernel has sent the mode change itself by then, and this finds no bit."""
        if fh in self._unprivileged:
            mode = os.fstat(fh).st_mode
            if mode & SETID:
                os.fchmod(fh, killed_privileges(mode))

    def real_write(self, fh: int, off: int, buf: bytes) -> int:
        self.kill_privileges(fh)
        return os.pwrite(fh, buf, off)

    def real_fallocate(self, fh: int, mode: int, offset: int, length: int) -> None:
        """fallocate(2) of the source file through the open's own descriptor
        (opened with the caller's flags): the modes and errnos are the source
        filesystem's. It reaches the daemon even for a passthrough open."""
        self.kill_privileges(fh)
        fallocate(fh, mode, offset, length)

    def real_release(self, fh: int) -> int | None:
        """Close a real fd; returns its inode."""
        ino = self._fd_ino.pop(fh, None)
        self._unprivileged.discard(fh)
        if ino is not None:
            fds = self._ino_fds.get(ino, set())
            fds.discard(fh)
            if not fds:
                self._ino_fds.pop(ino, None)
                self._passed.pop(ino, None)
        os.close(fh)
        return ino

    # -- folders ---------------------------------------------------------------------
    def real_listing(self, ino: int) -> list[bytes]:
        fd = os.open(_proc(self.real.fd(ino)), os.O_RDONLY | os.O_DIRECTORY)
        try:
            return [os.fsencode(n) for n in os.listdir(fd)]
        finally:
            os.close(fd)

    def real_dots(self, ino: int) -> list[tuple[bytes, pyfuse3.EntryAttributes]]:
        """'.' and '..' of a real folder (no lookup counted: the kernel takes none)."""
        here = self.real_getattr(ino)
        if ino == ROOT:
            return [(b".", here), (b"..", here)]
        st = os.stat(b"..", dir_fd=self.real.fd(ino))
        return [(b".", here), (b"..", self.real_attrs(self.real.number_of(st), st))]
