"""The inode table: which FUSE inode is which node, real or virtual.

Inode numbers are ours, allocated on first sight and stable for the daemon's
life (NFS and Samba re-open by handle long after a lookup, also after the
kernel forgot the inode). Real nodes are never dropped; virtual ones (views,
history, side files) are kept for the last RETAINED forgotten ones, so a
re-export's handles stay valid while bounding memory.
"""

from __future__ import annotations

import errno
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyfuse3

from ..grammar import View

ROOT = pyfuse3.ROOT_INODE
RETAINED = 50_000


@dataclass(frozen=True, slots=True)
class Node:
    """What an inode stands for.

    kind: ``real`` (a source path), ``view`` (a view of ``path``, at ``commit``
    when non-empty), ``atroot`` (``.at``), ``at`` (``path`` in ``commit``),
    ``nasdir`` / ``nasfile`` (``.nas`` and its files, named by ``path``; a
    ``nasdir`` with a commit is ``.at/<rev>/.nas``), ``deref`` (a pointer
    prefix under ``.nas/deref``; a file when ``view`` is set), ``searchdir`` /
    ``search`` and ``diffdir`` / ``diff`` (``.nas/search/<query>``,
    ``.nas/diff/<A>..<B>``, the name with its ``@N``/``.json`` in ``path``).
    """

    kind: str
    path: str = ""
    commit: str = ""
    view: View | None = None
    caller: tuple[int, ...] = ()  # a search's reader (uid, gids): hits depend on who asks

    @property
    def virtual(self) -> bool:
        return self.kind != "real"


ROOT_NODE = Node("real", "")


class Inodes:
    def __init__(self) -> None:
        self._by_node: dict[Node, int] = {ROOT_NODE: ROOT}
        self._by_ino: dict[int, Node] = {ROOT: ROOT_NODE}
        self._lookups: dict[int, int] = {}
        self._next = ROOT + 1
        self._lock = threading.Lock()
        self._forgotten: OrderedDict[int, None] = OrderedDict()  # virtual inodes the kernel let go

    def ino(self, node: Node, lookup: bool = True) -> int:
        """The inode of ``node``, allocated if new; counts a kernel lookup."""
        with self._lock:
            ino = self._by_node.get(node)
            if ino is None:
                ino = self._next
                self._next += 1
                self._by_node[node] = ino
                self._by_ino[ino] = node
            if lookup:
                self._lookups[ino] = self._lookups.get(ino, 0) + 1
                self._forgotten.pop(ino, None)
            return ino

    def node(self, ino: int) -> Node:
        node = self._by_ino.get(ino)
        if node is None:
            raise pyfuse3.FUSEError(errno.ESTALE)
        return node

    def forget(self, ino: int, count: int) -> None:
        with self._lock:
            left = self._lookups.get(ino, 0) - count
            if left > 0:
                self._lookups[ino] = left
                return
            self._lookups.pop(ino, None)
            node = self._by_ino.get(ino)
            if node is None or not node.virtual:
                return
            self._forgotten[ino] = None
            while len(self._forgotten) > RETAINED:
                old, _ = self._forgotten.popitem(last=False)
                gone = self._by_ino.pop(old, None)
                if gone is not None:
                    self._by_node.pop(gone, None)

    def views_of(self, path: str) -> list[int]:
        """Inodes of the current-content views of the file at ``path``."""
        with self._lock:
            return [i for n, i in self._by_node.items() if n.kind == "view" and not n.commit and n.path == path]

    def move(self, old: str, new: str) -> None:
        """A real path (and everything below it) was renamed: keep its inodes."""
        with self._lock:
            prefix = old + "/"
            moved = [(n, i) for n, i in self._by_node.items() if n.kind == "real" and (n.path == old or n.path.startswith(prefix))]
            displaced = self._by_node.pop(Node("real", new), None)
            if displaced is not None:
                self._by_ino.pop(displaced, None)
            for n, i in moved:
                renamed = Node("real", new + n.path[len(old):])
                del self._by_node[n]
                self._by_node[renamed] = i
                self._by_ino[i] = renamed
