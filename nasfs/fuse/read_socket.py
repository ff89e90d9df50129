"""The mount daemon answers ``nasfs read`` over a Unix socket (read_client.py).

The socket is ``<git dir>/nasfs-read.sock``, made by the daemon when it starts
and removed when it ends. One already answering there is left alone (another
daemon serves that tree); a dead one is replaced; anything else there (a
file, a folder, a symlink) is left alone too, said in the log, and the mount
goes on without a socket. The socket is bound in a private folder the daemon
makes inside the git dir (mode 0700), held open by descriptor: the bind, its
mode 0666 and the rename into place (which replaces what is at the final
name and follows no link) go through that descriptor, so an account that may
write the git dir cannot swap the folder for its own and redirect them.

Anyone may connect; each request is answered for the peer's credentials
(SO_PEERCRED) by read_answers.py. The socket can neither end nor wedge the
mount: nothing it meets is raised into the mount's nursery (a failed accept,
EMFILE included, is logged and retried after a pause that doubles up to a
second); at most ``MAX_CONNECTIONS`` are served at once, and one more is
refused with one line; a request is one JSON line of at most
``REQUEST_MAX`` bytes sent within ``READ_S`` seconds, answered and closed;
a client that takes none of the answer for ``SEND_S`` seconds is dropped.
Every refusal is one JSON line, ``{"fallback": true, "error": ...}``, and the
connection is closed.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import struct
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ..read_client import SOCKET_NAME
from .read_answers import FALLBACK, ReadAnswers

if TYPE_CHECKING:
    from .ops import NasOperations

log = logging.getLogger("nasfs.fuse")
REQUEST_MAX = 64 << 10
READ_S = 5.0
SEND_S = 10.0
MAX_CONNECTIONS = 32
BACKLOG = 64
PAUSE_S = (0.01, 1.0)  # the first and the longest pause after a failed accept
PEERCRED = struct.Struct("3i")


class Refused(Exception):
    """A request that is not answered: one line says why."""


class ReadSocket:
    """The socket of one mount; ``serve`` runs beside the request loop and
    returns (never raises) when it cannot serve."""

    def __init__(self, door: NasOperations, allow_other: bool, summaries: bool, mountpoint: str) -> None:
        self.answers = ReadAnswers(door, allow_other, summaries, mountpoint)
        self.path = str(Path(door.nas.tree.git_dir) / SOCKET_NAME)
        self.connections = 0
        self._ino: int | None = None

    async def serve(self) -> None:
        listener = None
        try:
            listener = await self._listen()
            if listener is not None:
                async with trio.open_nursery() as nursery:
                    await self._accept(listener, nursery)
        except Exception:  # the mount goes on; nasfs read runs on its own
            log.exception("read socket %s: stopped by an internal error", self.path)
        finally:
            if listener is not None:
                listener.close()
            self.close()

    async def _listen(self) -> trio.socket.SocketType | None:
        """A listening socket at ``self.path``, or None (logged why)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("no read socket: %s cannot be examined (%s): nasfs read runs on its own", self.path, exc.strerror)
            return None
        else:
            if not stat.S_ISSOCK(st.st_mode):
                log.error("no read socket: %s is there and is not a socket; it is left alone (remove it to let "
                          "nasfs read ask this daemon): nasfs read runs on its own", self.path)
                return None
            if await _answers(self.path):
                log.warning("%s answers already (another daemon of this tree?): nasfs read will ask it", self.path)
                return None
        try:
            sock = _bind_in_place(self.path)
        except OSError as exc:
            log.warning("no read socket at %s (%s): nasfs read runs on its own", self.path, exc.strerror or exc)
            return None
        self._ino = os.lstat(self.path).st_ino
        return trio.socket.from_stdlib_socket(sock)

    async def _accept(self, listener: trio.socket.SocketType, nursery: trio.Nursery) -> None:
        pause, failures = PAUSE_S[0], 0
        while True:
            try:
                conn, _ = await listener.accept()
            except OSError as exc:  # EMFILE, ENFILE, ENOBUFS...: the socket waits, the mount goes on
                if not failures:
                    log.warning("read socket: accept failed (%s); retrying, the mount goes on", exc.strerror or exc)
                failures += 1
                await trio.sleep(pause)
                pause = min(pause * 2, PAUSE_S[1])
                continue
            if failures:
                log.info("read socket: accepting again after %d failed accepts", failures)
            pause, failures = PAUSE_S[0], 0
            if self.connections >= MAX_CONNECTIONS:
                with conn:
                    _write_now(conn, {**FALLBACK, "error": f"busy: {MAX_CONNECTIONS} connections are being answered"})
                continue
            self.connections += 1
            nursery.start_soon(self._handle, conn)

    def close(self) -> None:
        """Remove the socket if it is still this daemon's."""
        try:
            if self._ino is not None and os.lstat(self.path).st_ino == self._ino:
                os.unlink(self.path)
        except OSError:
            pass
        self._ino = None

    async def _handle(self, conn: trio.socket.SocketType) -> None:
        try:
            with conn:
                try:
                    await self._exchange(conn)
                except (OSError, Refused) as exc:
                    log.debug("read socket: %s", exc)
                except Exception:  # the daemon goes on; the client does the read itself
                    log.exception("read socket: internal error")
                    _write_now(conn, {**FALLBACK, "error": "internal error of the daemon (in its log)"})
        finally:
            self.connections -= 1

    async def _exchange(self, conn: trio.socket.SocketType) -> None:
        try:
            request = await _request(conn)
        except Refused as exc:
            log.debug("read socket: refused: %s", exc)
            await _send(conn, _header({**FALLBACK, "error": str(exc)}))
            return
        pid, uid, gid = PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size))
        answer = await self.answers.answer(request, (pid, uid, gid))
        body = answer.pop("body", b"")
        await _send(conn, _header({**answer, "size": len(body)}), body)


def _bind_in_place(path: str) -> socket.socket:
    """A listening socket bound at ``path`` with mode 0666, made in a private
    folder beside it and renamed over ``path`` (a dead socket there).

    The git dir may be writable by another account (a daemon run as root over
    a user's repository): that account can rename the private folder away and
    put its own, or a symlink, at its name at any moment. So the folder is
    named by names only once, to open it (no symlink followed; it must be this
    daemon's and 0700); the bind, the chmod and the rename then go through
    that descriptor (``/proc/self/fd/N``, ``dir_fd``), inside a folder no one
    else may write, and no path anyone else controls is followed."""
    parent, name = os.path.split(path)
    private = tempfile.mkdtemp(prefix=".nasfs-read-", dir=parent)  # 0700, this daemon's
    gitfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        here = os.open(private, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        os.close(gitfd)
        raise
    try:
        st = os.fstat(here)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) != 0o700:
            raise OSError(f"{private} was replaced by someone else's folder before the socket was bound in it")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(f"/proc/self/fd/{here}/sock")
            os.chmod("sock", 0o666, dir_fd=here)  # every user may ask; each request is decided (read_answers.py)
            os.rename("sock", name, src_dir_fd=here, dst_dir_fd=gitfd)
            sock.listen(BACKLOG)
        except BaseException:
            sock.close()
            try:
                os.unlink("sock", dir_fd=here)
            except OSError:
                pass
            raise
    finally:
        try:
            os.rmdir(os.path.basename(private), dir_fd=gitfd)  # an empty folder at that name, whosever
        except OSError:
            pass
        os.close(here)
        os.close(gitfd)
    return sock


async def _answers(path: str) -> bool:
    """Whether a daemon listens at ``path`` (a socket, checked by the caller)."""
    probe = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with trio.move_on_after(1):
            await probe.connect(path)
            return True
        return True  # a daemon too busy to take a connection is still there
    except OSError:
        return False
    finally:
        probe.close()


async def _request(conn: trio.socket.SocketType) -> dict[str, Any]:
    """One request: a JSON object on one line (what follows it is not read)."""
    data = bytearray()
    with trio.move_on_after(READ_S):
        while b"\n" not in data and len(data) <= REQUEST_MAX:
            got = await conn.recv(REQUEST_MAX)
            if not got:
                raise Refused("the connection ended before the request's newline; a request is one JSON object on one line")
            data += got
    end = data.find(b"\n")
    if end > REQUEST_MAX or (end < 0 and len(data) > REQUEST_MAX):
        raise Refused(f"the request is longer than {REQUEST_MAX} bytes")
    if end < 0:
        raise Refused(f"no request line within {READ_S:g} s")
    try:
        request = json.loads(bytes(data[:end]))
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser's stack
        raise Refused(f"the request is not JSON ({type(exc).__name__}); a request is one JSON object on one line") from None
    if not isinstance(request, dict):
        raise Refused(f"the request is a JSON {type(request).__name__}, not an object")
    return request


def _header(fields: dict[str, Any]) -> bytes:
    return json.dumps({"size": 0, **fields}).encode() + b"\n"


async def _send(conn: trio.socket.SocketType, *parts: bytes) -> None:
    """Send everything, or drop a client that takes nothing for ``SEND_S`` seconds."""
    for part in parts:
        view = memoryview(part)
        while view:
            with trio.move_on_after(SEND_S) as waited:
                sent = await conn.send(view)
            if waited.cancelled_caught:
                raise Refused(f"the client took nothing of the answer for {SEND_S:g} s: dropped")
            view = view[sent:]


def _write_now(conn: trio.socket.SocketType, fields: dict[str, Any]) -> None:
    """One line, written at once or not at all (a new connection's buffer
    takes it; a client that filled it gets none): never waits."""
    try:
        os.write(conn.fileno(), _header(fields))
    except OSError:
        pass


__all__ = ["ReadSocket"]
