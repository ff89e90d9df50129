"""A bare read-only pyfuse3 + trio pass-through: the binding's floor for scripts/bench/tools.py.

    .venv/bin/python -P scripts/bench/bare_passthrough.py SOURCE MOUNTPOINT [TIMEOUT] [--cache-readdir] [--rw] [--passthrough]

Not part of nasfs and not used by it. It serves SOURCE at MOUNTPOINT with the
least a pass-through needs (lookup, getattr, opendir/readdir as readdirplus,
open with keep_cache, read, release, statfs, readlink), entry and attribute
timeouts of TIMEOUT seconds (default 1; nasfs, watching its source, uses
3600), the source's inode numbers, and no flush handler (so the
kernel sends FLUSH once, gets ENOSYS and never again). --cache-readdir lets
the kernel cache every listing (opendir returns a FileInfo with
cache_readdir and keep_cache: needs the patched binding of
scripts/pyfuse3-patches/; the source is not watched, so listings go stale).
--rw mounts without ``ro`` (writes are still refused), as nasfs mounts: the
kernel then drops a folder's atime after each listing it did not cache, and
the next stat of the folder reaches the daemon. --passthrough hands each
open's fd to the kernel (FUSE passthrough: needs the patched binding and
libfuse 3.17 that scripts/setup builds): reads then never reach the daemon.
Every request is served
in the trio thread with plain os calls: whatever nasfs costs above this is
nasfs, not pyfuse3. Unmount with ``fusermount3 -u MOUNTPOINT`` (or SIGTERM).
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import sys

import pyfuse3
import trio

class Bare(pyfuse3.Operations):
    enable_writeback_cache = False

    def __init__(self, source: str, timeout: float, cache_readdir: bool = False, passthrough: bool = False) -> None:
        super().__init__()
        self.timeout = timeout
        self.cache_readdir = cache_readdir
        self.enable_passthrough = passthrough
        self.paths: dict[int, str] = {pyfuse3.ROOT_INODE: source}
        self.root_ino = os.lstat(source).st_ino
        self.dirs: dict[int, str | list[tuple[bytes, os.stat_result]]] = {}  # a folder's path until listed
        self.next_dh = 1

    # -- helpers
    def _path(self, inode: int) -> str:
        try:
            return self.paths[inode]
        except KeyError:
            raise pyfuse3.FUSEError(errno.ESTALE) from None

    def _attrs(self, st: os.stat_result) -> pyfuse3.EntryAttributes:
        a = pyfuse3.EntryAttributes()
        a.st_ino = pyfuse3.ROOT_INODE if st.st_ino == self.root_ino else st.st_ino
        a.generation = 0
        a.entry_timeout = self.timeout
        a.attr_timeout = self.timeout
        a.st_mode = st.st_mode
        a.st_nlink = st.st_nlink
        a.st_uid = st.st_uid
        a.st_gid = st.st_gid
        a.st_rdev = st.st_rdev
        a.st_size = st.st_size
        a.st_blksize = st.st_blksize
        a.st_blocks = st.st_blocks
        a.st_atime_ns = st.st_atime_ns
        a.st_mtime_ns = st.st_mtime_ns
        a.st_ctime_ns = st.st_ctime_ns
        return a

    def _stat(self, path: str) -> os.stat_result:
        try:
            return os.lstat(path)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno) from None

    # -- requests
    async def lookup(self, parent_inode, name, ctx=None):
        parent = self._path(parent_inode)
        if name == b".":
            path = parent
        elif name == b"..":
            path = os.path.dirname(parent) if parent_inode != pyfuse3.ROOT_INODE else parent
        else:
            path = os.path.join(parent, os.fsdecode(name))
        st = self._stat(path)
        attrs = self._attrs(st)
        self.paths[attrs.st_ino] = path
        return attrs

    async def getattr(self, inode, ctx=None):
        return self._attrs(self._stat(self._path(inode)))

    async def readlink(self, inode, ctx):
        try:
            return os.fsencode(os.readlink(self._path(inode)))
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno) from None

    async def opendir(self, inode, ctx):
        """The folder is listed at its first readdir: one the kernel answers
        from its cache (--cache-readdir) costs the daemon nothing."""
        dh = self.next_dh
        self.next_dh += 1
        self.dirs[dh] = self._path(inode)
        if self.cache_readdir:
            return pyfuse3.FileInfo(fh=dh, keep_cache=True, cache_readdir=True)
        return dh

    def _listing(self, path: str) -> list[tuple[bytes, os.stat_result]]:
        entries = []
        try:
            with os.scandir(path) as it:
                for e in it:
                    try:
                        entries.append((os.fsencode(e.name), e.stat(follow_symlinks=False)))
                    except OSError:
                        pass
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno) from None
        entries.sort()
        for name, st in entries:  # readdirplus makes lookups: remember the paths
            self.paths[st.st_ino] = os.path.join(path, os.fsdecode(name))
        return entries

    async def readdir(self, fh, start_id, token):
        entries = self.dirs.get(fh, [])
        if isinstance(entries, str):
            entries = self.dirs[fh] = self._listing(entries)
        for i in range(start_id, len(entries)):
            name, st = entries[i]
            if not pyfuse3.readdir_reply(token, name, self._attrs(st), i + 1):
                return

    async def releasedir(self, fh):
        self.dirs.pop(fh, None)

    async def open(self, inode, flags, ctx):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC | os.O_CREAT):
            raise pyfuse3.FUSEError(errno.EROFS)
        try:
            fd = os.open(self._path(inode), os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno) from None
        if self.enable_passthrough:
            return pyfuse3.FileInfo(fh=fd, backing_fd=fd)
        return pyfuse3.FileInfo(fh=fd, keep_cache=True)

    async def read(self, fh, off, size):
        try:
            return os.pread(fh, size, off)
        except OSError as exc:
            raise pyfuse3.FUSEError(exc.errno) from None

    async def release(self, fh):
        try:
            os.close(fh)
        except OSError:
            pass

    async def statfs(self, ctx):
        s = os.statvfs(self.paths[pyfuse3.ROOT_INODE])
        out = pyfuse3.StatvfsData()
        for key in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_namemax"):
            setattr(out, key, getattr(s, key))
        return out

    async def forget(self, inode_list):
        pass  # paths are kept: the benchmark's trees are bounded


def main() -> None:
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) not in (2, 3) or flags - {"--cache-readdir", "--rw", "--passthrough"}:
        sys.exit(__doc__.split("\n\n")[1])
    source, mountpoint = os.path.abspath(args[0]), args[1]
    timeout = float(args[2]) if len(args) == 3 else 1.0
    if not stat.S_ISDIR(os.stat(source).st_mode):
        sys.exit(f"{source} is not a folder")
    if "--cache-readdir" in flags and not hasattr(pyfuse3.FileInfo(), "cache_readdir"):
        sys.exit(f"--cache-readdir: this pyfuse3 ({pyfuse3.__file__}) has no FileInfo.cache_readdir; "
                 "build it with scripts/pyfuse3-patches/")
    if "--passthrough" in flags and not hasattr(pyfuse3, "passthrough_enabled"):
        sys.exit(f"--passthrough: this pyfuse3 ({pyfuse3.__file__}) has no passthrough; "
                 "build it with scripts/pyfuse3-patches/ (scripts/setup)")
    ops = Bare(source, timeout, "--cache-readdir" in flags, "--passthrough" in flags)
    options = set(pyfuse3.default_options)
    options |= {"fsname=bare-passthrough"} | (set() if "--rw" in flags else {"ro"})
    pyfuse3.init(ops, mountpoint, options)

    def stop(signum, frame):  # noqa: ANN001
        pyfuse3.terminate()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        trio.run(pyfuse3.main)
    finally:
        pyfuse3.close(unmount=True)


if __name__ == "__main__":
    main()
