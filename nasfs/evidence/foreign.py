"""Pointers of other nodes: the commit a pointer names is fetched from the
node's registered remote into a local cache repository, then verified there
offline, by the same core as local pointers."""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

from ..cache import default_cache_dir
from ..errors import BadPointer, NotFound
from ..pointers import named, parse_pointer
from ..repo import GitTree
from ..repo.remotes import cache_repository, fetch_commit
from ..service import Nas
from . import nodes


class Foreign:
    """What a door hands its core (``Nas.elsewhere``): for a pointer of
    another node, a core over that node's cache repository; None for this
    node's own pointers. ``offline``: never fetch, use what is cached."""

    def __init__(self, nas: Nas | None, offline: bool = False, cache_dir: Path | None = None) -> None:
        """``nas``: this node's core; None outside any tree (every full pointer is another node's)."""
        self.own = (nas.tree.node, nas.tree.tree) if nas is not None else None
        self.tokenizer = nas.tokenizer if nas is not None else "cl100k_base"
        self.offline = offline
        self.cache_dir = (cache_dir or default_cache_dir()) / "nodes"

    def claims(self, text: str) -> bool:
        """Whether ``text`` is another node's pointer (parsing only, no I/O):
        a door serves it outside its core slot, since it may fetch."""
        names = named(text)
        return names is not None and names != self.own

    def __call__(self, text: str) -> Nas | None:
        if not self.claims(text):
            return None
        names = named(text)
        assert names is not None
        node, tree = names
        pointer = parse_pointer(text, node, tree)
        try:
            entry = nodes.lookup(node, tree)
        except BadPointer as exc:
            if self.own is None:
                raise
            mine = f"this is node {self.own[0]!r} tree {self.own[1]!r}"
            raise BadPointer(f"pointer is for node {node!r} tree {tree!r}, {mine}, and {exc.message}", exc.valid) from None
        cache = self.cache_dir / f"{quote(entry.name, safe='-._')}-{hashlib.sha1(entry.remote.encode()).hexdigest()[:10]}"
        if not self.offline:
            fetch_commit(cache, entry.remote, node, pointer.commit)
        elif not (cache / ".git").is_dir():
            raise NotFound(f"nothing of node {node!r} is fetched yet, and --offline fetches nothing",
                           "verify once without --offline")
        return Nas(GitTree(cache, node=node, tree=tree), tokenizer=self.tokenizer, summarizer="")


def core_for(text: str, offline: bool) -> Nas:
    """The core for a full pointer read outside any served tree (a reviewer's
    laptop, a CI job): it serves no tree of its own (an empty repository
    stands in), so every pointer is another node's, fetched and verified as
    in a tree."""
    if named(text) is None:
        raise NotFound("not inside a git work tree, and this is no full pointer naming its node",
                       "a full pointer nas://NODE/TREE/PATH@COMMIT#La-Lb, or --repo with a short one or a SWHID")
    foreign = Foreign(None, offline)
    nas = Nas(GitTree(cache_repository(foreign.cache_dir / "none"), node="-", tree="-"), summarizer="")
    nas.elsewhere = foreign
    return nas
