"""The mount daemon answers ``nasfs read`` over a Unix socket (read_client.py).

The socket is ``<git dir>/nasfs-read.sock``, made by the daemon when it starts
(one already answering there is left alone: another daemon serves that
tree) and removed when it ends. Anyone may connect; each request is checked
against the peer's credentials (SO_PEERCRED) with the mount's own rules:
without ``--allow-other`` only the daemon's own user may use the mount, so
only that user (and root) is answered; with it, root and the daemon's user
read all, anyone else a working-tree file whose folders they may search and
which they may read (the mount's ``default_permissions`` on the modes a view
copies from its file), and nothing at a past revision. A request the daemon
does not answer says ``fallback``, and the client does the read itself, with
its own rights: the socket never shows what the client could not read
otherwise.

The answer is nasfs/reads.py's, made in the core thread as the mount's views
are; a view of a file over ``HEAVY_BYTES`` and a raw read over ``RAW_LIMIT``
are left to the client, so that no socket client holds the core thread.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ..errors import NasError
from ..read_client import SOCKET_NAME
from ..reads import cwd_prefix, read_chunks
from .pool import HEAVY_BYTES

if TYPE_CHECKING:
    from .ops import NasOperations

log = logging.getLogger("nasfs.fuse")
RAW_LIMIT = 16 << 20
REQUEST_MAX = 64 << 10
FALLBACK = {"fallback": True}


class ReadSocket:
    """The socket of one mount; ``serve`` runs beside the request loop."""

    def __init__(self, door: NasOperations, allow_other: bool, summaries: bool) -> None:
        self.door = door
        self.nas = door.nas
        self.allow_other = allow_other
        self.summaries = summaries  # a summarizer is configured: the CLI reads for itself (below)
        self.path = str(Path(self.nas.tree.git_dir) / SOCKET_NAME)
        self._ino: int | None = None

    async def serve(self) -> None:
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not await self._bind(sock):
                return
            sock.listen(64)
            async with trio.open_nursery() as nursery:
                while True:
                    conn, _ = await sock.accept()
                    nursery.start_soon(self._handle, conn)
        finally:
            sock.close()
            self.close()

    async def _bind(self, sock: trio.socket.SocketType) -> bool:
        if os.path.exists(self.path):
            probe = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                await probe.connect(self.path)
                log.warning("%s answers already (another daemon of this tree?): nasfs read will ask it", self.path)
                return False
            except OSError:
                os.unlink(self.path)  # left by a daemon that ended without removing it
            finally:
                probe.close()
        try:
            await sock.bind(self.path)
            os.chmod(self.path, 0o666)  # every user may ask; each request is checked (see above)
        except OSError as exc:
            log.warning("no read socket at %s (%s): nasfs read runs on its own", self.path, exc.strerror)
            return False
        self._ino = os.stat(self.path).st_ino
        return True

    def close(self) -> None:
        """Remove the socket if it is still this daemon's."""
        try:
            if self._ino is not None and os.stat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        except OSError:
            pass
        self._ino = None

    async def _handle(self, conn: trio.socket.SocketType) -> None:
        with conn:
            try:
                request = await _request(conn)
                pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
                answer = dict(FALLBACK) if request is None else await self.answer(request, (pid, uid, gid))
                body = answer.pop("body", b"")
                await _send_all(conn, json.dumps({**answer, "size": len(body)}).encode() + b"\n" + body)
            except OSError as exc:
                log.debug("read socket: %s", exc)
            except Exception:  # the daemon goes on; the client does the read itself
                log.exception("read socket: internal error")

    async def answer(self, request: dict[str, Any], peer: tuple[int, int, int]) -> dict[str, Any]:
        """``peer``: (pid, uid, gid) of the client, from the kernel."""
        uid = peer[1]
        if not self.serves(request) or (uid not in (0, os.getuid()) and (not self.allow_other or request.get("at"))):
            return dict(FALLBACK)
        return await self.door.core(self.read, request, peer)

    def serves(self, request: dict[str, Any]) -> bool:
        """Whether the CLI would make this read with this daemon's tree and
        settings (the same node, tree and tokenizer names). Where either side
        has a summarizer, the CLI reads for itself: its summary settings come
        from flags and environment variables that the request does not carry."""
        tree = self.nas.tree
        return (isinstance(request.get("spec"), str) and request.get("root") == str(tree.root)
                and (request.get("node") or _host()) == tree.node and (request.get("tree") or tree.root.name) == tree.tree
                and (request.get("tokenizer") or "cl100k_base") == self.nas.tokenizer
                and request.get("summarizer") is None and not self.summaries
                and all(isinstance(request.get(k), (str, type(None))) for k in ("at", "cwd")))

    def read(self, request: dict[str, Any], peer: tuple[int, int, int]) -> dict[str, Any]:
        """In the core thread: the CLI's answer, or FALLBACK."""
        at, spec = request.get("at"), request["spec"]
        prefix = "" if request.get("repo") else cwd_prefix(self.nas.tree.root, request.get("cwd") or "/")
        try:
            path, _ = self.nas.split(spec if spec.startswith("/") else prefix + spec, at)
            if not self.allowed(peer, path) or self.heavy(path, at):
                return dict(FALLBACK)
            chunks = read_chunks(self.nas, spec, at, bool(request.get("json")), prefix, RAW_LIMIT)
            if chunks is None:
                return dict(FALLBACK)
            body = b"".join(chunks)
        except NasError as exc:
            self.door.socket_reads += 1
            return {"fallback": False, "exit": exc.exit_code, "stderr": f"nasfs read: {exc}\n"}
        self.door.socket_reads += 1
        return {"fallback": False, "exit": 0, "body": body}

    def allowed(self, peer: tuple[int, int, int], path: str) -> bool:
        """The mount's rule for another user (allow_other): search on the
        root and every folder down to the file, read on the file itself (a
        view has its file's read bits and owner)."""
        pid, uid, gid = peer
        if uid in (0, os.getuid()):
            return True
        groups = _groups(pid, gid)
        here = str(self.nas.tree.root)
        parts = [p for p in path.split("/") if p]
        try:
            for i in range(len(parts) + 1):
                wanted = stat.S_IROTH if i == len(parts) else stat.S_IXOTH
                if not _may(os.stat(here), uid, groups, wanted):
                    return False
                if i < len(parts):
                    here = os.path.join(here, parts[i])
        except OSError:
            return False
        return True

    def heavy(self, path: str, at: str | None) -> bool:
        if at is not None:
            item = self.nas.tree.item_at(str(self.nas.tree.resolve(at).id), path) if path else None
            return item is not None and item.size > HEAVY_BYTES
        try:
            return os.stat(os.path.join(self.nas.tree.root, path)).st_size > HEAVY_BYTES
        except OSError:
            return False


def _may(st: os.stat_result, uid: int, groups: set[int], other_bit: int) -> bool:
    """The kernel's check of one permission bit (given as the 'other' bit)."""
    if st.st_uid == uid:
        return bool(st.st_mode & (other_bit << 6))
    if st.st_gid in groups:
        return bool(st.st_mode & (other_bit << 3))
    return bool(st.st_mode & other_bit)


def _groups(pid: int, gid: int) -> set[int]:
    """The client's group and supplementary groups, as the mount takes them
    (access.caller_of); its group alone once the process is gone."""
    groups = {gid}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Groups:"):
                    groups.update(int(g) for g in line.split()[1:])
    except (OSError, ValueError):
        pass
    return groups


def _host() -> str:
    return socket.gethostname().split(".")[0]


async def _request(conn: trio.socket.SocketType) -> dict[str, Any] | None:
    data = b""
    with trio.move_on_after(5):
        while not data.endswith(b"\n") and len(data) < REQUEST_MAX:
            got = await conn.recv(REQUEST_MAX)
            if not got:
                break
            data += got
    try:
        request = json.loads(data)
    except ValueError:
        return None
    return request if isinstance(request, dict) else None


async def _send_all(conn: trio.socket.SocketType, data: bytes) -> None:
    view = memoryview(data)
    while view:
        sent = await conn.send(view)
        view = view[sent:]


__all__ = ["ReadSocket"]
