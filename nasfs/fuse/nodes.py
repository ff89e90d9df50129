"""The inode table of virtual nodes: views, history and side files.

Their numbers are ours, from VIRTUAL_BASE up, so they never meet a source
inode number (real.py). A virtual file is immutable: its node names the
version of its content (a digest), so a changed file's view is a new inode
and a reader holding the old one keeps reading exactly the old bytes; the
kernel may cache every page of it and nothing is ever invalidated. Forgotten
nodes are kept for the last RETAINED ones, so a re-export's handles stay
valid while bounding memory.
"""

from __future__ import annotations

import errno
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyfuse3

from ..access import Identity
from ..grammar import View
from .real import VIRTUAL_BASE

RETAINED = 50_000


@dataclass(frozen=True, slots=True)
class Node:
    """What an inode stands for.

    kind: ``view`` (a view of ``path``, at ``commit``
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
    caller: tuple[int, ...] = ()  # who an answer is made for (Caller.key): maps, searches, diffs, derefs, .nas/errors; () for all
    version: str = ""  # digest of a file's content: one inode per version
    source: Identity | None = None  # a working-tree view's: the inode it is made of, as a caller's decision allowed it

    def versioned(self, version: str) -> Node:
        return Node(self.kind, self.path, self.commit, self.view, self.caller, version, self.source)

    def made_of(self, source: Identity | None) -> Node:
        return Node(self.kind, self.path, self.commit, self.view, self.caller, self.version, source)


class Inodes:
    def __init__(self) -> None:
        self._by_node: dict[Node, int] = {}
        self._by_ino: dict[int, Node] = {}
        self._lookups: dict[int, int] = {}
        self._next = VIRTUAL_BASE + 1
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
            if ino not in self._by_ino:
                return
            self._forgotten[ino] = None
            while len(self._forgotten) > RETAINED:
                old, _ = self._forgotten.popitem(last=False)
                gone = self._by_ino.pop(old, None)
                if gone is not None:
                    self._by_node.pop(gone, None)

    def __contains__(self, ino: int) -> bool:
        return ino in self._by_ino
