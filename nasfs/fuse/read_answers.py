"""What the mount daemon answers one ``nasfs read`` request on its read socket.

A request the daemon does not answer says ``fallback``, and the client does
the read itself, with its own rights. Who is answered (the peer's uid and
groups, from the kernel): without ``--allow-other`` only the daemon's own
user and root, as only they may use the mount; with it, anyone, at the
working tree only (a read at a past revision is their own CLI's). Every
answer about a path comes after nasfs/access.py's decision for that caller:
first on the path as written (so that splitting ``name@view``, which looks
names up in its folder, happens only in a folder the caller may search),
then on the real path. A folder's map is made with the daemon's own rights,
so only a caller of the daemon's own uid is given one; others make theirs.

Nothing here resolves a path through the mount: the client's current folder
is mapped to the tree by string arithmetic (a folder of the mount is the
same folder of the tree; one of its virtual folders is refused), and the
access decision runs outside the core slot, so a lookup it might make through
the mount (a symlink of the tree into it) cannot wait for the slot the
request holds. A read of a file over ``HEAVY_BYTES`` (a view or its raw
bytes) is left to the client, so that no socket client holds the core thread
long (nor the daemon's memory: an answer is sent from one buffer).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from ..access import AccessDenied, Caller, Decider, Seen, decider
from ..errors import BadPath, NasError
from ..reads import cwd_prefix, read_chunks
from ..repo.paths import clean_path
from .pool import HEAVY_BYTES
from .virtual import AT, NAS

if TYPE_CHECKING:
    from .ops import NasOperations

FALLBACK = {"fallback": True}


class ReadAnswers:
    """The answers of one mount's read socket."""

    def __init__(self, door: NasOperations, allow_other: bool, summaries: bool, mountpoint: str) -> None:
        self.door = door
        self.nas = door.nas
        self.allow_other = allow_other
        self.summaries = summaries  # a summarizer is configured: the CLI reads for itself (serves)
        self.mountpoint = mountpoint  # its real path, taken before the mount: never resolved again
        self._threads = trio.CapacityLimiter(4)  # access decisions, beside the core slot

    async def answer(self, request: dict[str, Any], peer: tuple[int, int, int]) -> dict[str, Any]:
        """``peer``: (pid, uid, gid) of the client, from the kernel."""
        pid, uid, gid = peer
        at = request.get("at")
        if not self.serves(request) or (uid not in (0, os.getuid()) and (not self.allow_other or at is not None)):
            return dict(FALLBACK)
        caller = Caller.of_process(pid, uid, gid)
        try:
            spec = request["spec"]
            if not spec.startswith("/") and not request.get("repo"):
                spec = self.prefix(request.get("cwd") or "/") + spec
            if at is None:
                shown = clean_path(spec)
                if not await self._check(caller, shown, shown):
                    return dict(FALLBACK)
            else:  # a private snapshot is read by the readers of its sources only (its size included)
                await self.door.core(self.nas.commit_for, at, caller)
            path, folder = await self.door.core(self._split, spec, at, caller)
            if at is None and (not await self._check(caller, path, shown) or (folder and uid != os.geteuid())):
                return dict(FALLBACK)
            if await self._heavy(path, at):
                return dict(FALLBACK)
            body = await self.door.core(self._read, spec, at, bool(request.get("json")), caller)
            if body is None:
                return dict(FALLBACK)
        except NasError as exc:
            self.door.socket_reads += 1
            return {"fallback": False, "exit": exc.exit_code, "stderr": f"nasfs read: {exc}\n"}
        self.door.socket_reads += 1
        return {"fallback": False, "exit": 0, "body": body}

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
                and isinstance(request.get("json", False), (bool, type(None)))
                and all(isinstance(request.get(k), (str, type(None))) for k in ("at", "cwd")))

    def prefix(self, cwd: str) -> str:
        """The client's current folder inside the tree, by string arithmetic
        only: a folder of the mount is that folder of the tree; the mount's
        virtual folders (``.at/``, ``.nas/``) have none (BadPath)."""
        here = os.path.normpath(cwd)
        if here == self.mountpoint or here.startswith(self.mountpoint.rstrip("/") + "/"):
            inside = os.path.relpath(here, self.mountpoint)
            top = inside.split("/")[0]
            if top in (AT, NAS):
                raise BadPath(f"the current folder {cwd!r} is inside the mount's virtual {top}/, which has no "
                              "working-tree folder", "run nasfs read from a folder of the tree or of the mount, "
                              "with --at REV for a past revision")
            here = str(self.nas.tree.root / inside)
        return cwd_prefix(self.nas.tree.root, here)

    async def _check(self, caller: Caller, path: str, shown: str) -> bool:
        """nasfs/access.py's decision, in a thread of its own: AccessDenied
        naming the path as the client wrote it (``shown``), so that a private
        file and an absent one, or a link into a private folder and the file
        it names, are refused in the same words. False for a path whose
        symlinks leave the tree: the core would resolve it, through the mount
        itself if it points there, while holding the core slot, so the client
        reads it (and is told what the CLI says of it) for itself."""
        try:
            return await trio.to_thread.run_sync(_judge, decider(self.nas.tree.root, caller), path,
                                                 limiter=self._threads, abandon_on_cancel=True)
        except AccessDenied as exc:
            raise AccessDenied(f"{caller} may not read {shown or '.'}", exc.valid) from None

    def _split(self, spec: str, at: str | None, caller: Caller) -> tuple[str, bool]:
        """In the core thread: (real path, whether it is a folder)."""
        path, _ = self.nas.split(spec, at, caller)
        return path, self.nas.tree.is_dir(path, at)

    async def _heavy(self, path: str, at: str | None) -> bool:
        if at is not None:
            return await self.door.core(self._heavy_at, path, at)
        return await trio.to_thread.run_sync(_larger, self.nas.tree.root, path, HEAVY_BYTES,
                                             limiter=self._threads, abandon_on_cancel=True)

    def _heavy_at(self, path: str, at: str) -> bool:
        item = self.nas.tree.item_at(str(self.nas.tree.resolve(at).id), path) if path else None
        return item is not None and item.size > HEAVY_BYTES

    def _read(self, spec: str, at: str | None, as_json: bool, caller: Caller) -> bytes | None:
        """In the core thread: the CLI's bytes, or None (a raw read of a file
        that grew past ``HEAVY_BYTES`` since it was looked at), read for
        ``caller``: of the very file their decision allowed (Nas.content),
        which the path may no longer name by now."""
        chunks = read_chunks(self.nas, spec, at, as_json, "", HEAVY_BYTES, caller)
        return None if chunks is None else b"".join(chunks)


def _judge(decision: Decider, path: str) -> bool:
    """AccessDenied, or whether the path stays in the tree (a second walk,
    its folders remembered; one that changed meanwhile to denied says False).

    Splitting ``name@view`` in the core resolves each left part of the last
    name at an ``@`` (``link`` of ``link@outline``) with realpath: a left part
    whose symlink leaves the tree (into the mount's ``.at/HEAD/``, say) is
    found here, outside the core slot, and left to the client, though the
    path as written (``link@outline``) does not exist; and one the caller
    may not see is refused here, in the same words as the path (the split
    would say where its private symlink leads, or whether what it names
    exists). Longest left part first, as the split takes them, up to the
    first the caller sees."""
    decision.check(path)
    seen = decision.decide(path)
    if seen is not Seen.MISSING:
        return seen is Seen.ALLOWED
    folder, _, leaf = path.rpartition("/")
    prefix = folder + "/" if folder else ""
    pos = len(leaf)
    while (pos := leaf.rfind("@", 0, pos)) > 0:
        seen = decision.decide(prefix + leaf[:pos])
        if seen is Seen.OUTSIDE:
            return False
        if seen is Seen.DENIED:
            decision.check(prefix + leaf[:pos])  # AccessDenied, said of the path as written by _check
        if seen is Seen.ALLOWED:
            break
    return True


def _larger(root: Path, path: str, limit: int) -> bool:
    """Whether ``path`` is over ``limit`` bytes, its links resolved by
    string: a folder swapped for a link (into this mount) is not walked
    through by the OS. False when it cannot be seen: the core says why."""
    st = decider(root, Caller.root()).stat(path)
    return st is not None and st.st_size > limit


def _host() -> str:
    return socket.gethostname().split(".")[0]


__all__ = ["FALLBACK", "ReadAnswers"]
