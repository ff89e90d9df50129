"""Remembered lookups of working-tree views, answered on the request loop.

A view's name is looked up again at every open (entry timeout 0), so that a
changed file's view shows at once. Making it again costs two trips to the
core thread (the name's split, then the view) even when the core has the
answer cached. Here the loop remembers which versioned node a name gave,
with everything that answer rests on, and gives the same node again while
all of it is unchanged; anything else goes to the core thread as before.

What a working-tree view of ``folder/name`` rests on, checked at each lookup:

- the split of the name: it is remembered only when it split at its last
  ``@`` and its left part is a regular file (not a symlink, not a folder):
  then it splits so again while the whole name is no real entry (ops.py
  looked that up first) and the left part is still a regular file;
- the file's bytes: its (device, inode, size, mtime, ctime), as git's index
  and the core's hash memo key it; a file changed in the SETTLED_NS before
  is never remembered (a rewrite within one timestamp tick keeps its mtime,
  and ctime, which nothing sets back, moves on any later change);
- the commit the header names: HEAD, and the ref that keeps snapshot commits
  reachable (a view of a changed file names a snapshot over HEAD), read with
  the loop's own pygit2 handle (pygit2 objects are not shared across threads).

Views resting on more than their file (``since=``, ``summary``) and folder
maps are never remembered; nor is ``@N`` when summaries are a rung of its
ladder (``--summaries-in-ladder``): its answer changes when the file's
summary is made, with nothing above changed, and the CLI and HTTP would
serve the new one while the mount kept the old.
"""

from __future__ import annotations

import stat
import time
from dataclasses import dataclass

from ..cache import LRU
from ..repo.hashes import SETTLED_NS
from ..repo.ref_state import RefState
from ..tree_walk import lstat_in_tree
from .nodes import Node

SIZE = 8192
UNREMEMBERED = ("since", "summary")  # views that depend on more than their file

Facts = tuple[int, int, int, int, int, str, str]  # the file's dev, ino, size, mtime, ctime; HEAD; the snapshot keeper


@dataclass(frozen=True, slots=True)
class Remembered:
    node: Node  # the versioned view node the name gave
    facts: Facts


class ViewMemo:
    """Names of working-tree views -> the versioned node they gave, while
    the facts it rests on hold. Used from the request loop only."""

    def __init__(self, root: str, git_dir: str, summary_rung: bool = False) -> None:
        """``summary_rung``: ``@N`` may serve a summary (so it rests on the summary cache too)."""
        self.root = root
        self.unremembered = UNREMEMBERED + (("best",) if summary_rung else ())
        self._refs = RefState(git_dir)  # the loop's own handle, for two ref reads a lookup
        self._known: LRU[tuple[str, str], Remembered] = LRU(SIZE)
        self.hits = 0

    def facts(self, folder: str, name: str) -> Facts | None:
        """What a view named ``name`` in ``folder`` rests on now; None when
        it cannot be remembered (no regular file left of the last '@', or
        none reached through real folders only, a file changed too recently,
        refs unreadable)."""
        at = name.rfind("@")
        if at <= 0:
            return None
        try:  # on the loop: a folder above swapped for a link (into this mount) is not walked through
            st = lstat_in_tree(self.root, f"{folder}/{name[:at]}" if folder else name[:at])
        except OSError:
            return None
        if st is None or not stat.S_ISREG(st.st_mode) or time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) <= SETTLED_NS:
            return None
        refs = self._refs.now()
        if refs is None:
            return None  # the repository is unwell: the core says what is wrong
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, *refs)

    def recall(self, folder: str, name: str) -> Node | None:
        """The node this name gave, if nothing it rests on has changed since."""
        known = self._known.get((folder, name))
        if known is None or self.facts(folder, name) != known.facts:
            return None
        self.hits += 1
        return known.node

    def remember(self, folder: str, name: str, node: Node, before: Facts | None) -> None:
        """Keep what a lookup made in the core thread, when ``before`` (the
        facts taken before it was made) still hold after it, so the node is
        of exactly those facts, and the name split at its last '@'."""
        if before is None or node.kind != "view" or node.commit or node.view is None or node.view.kind in self.unremembered:
            return
        left = name[:name.rfind("@")]
        if node.path == (f"{folder}/{left}" if folder else left) and self.facts(folder, name) == before:
            self._known.put((folder, name), Remembered(node, before))
