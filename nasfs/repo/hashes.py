"""Blob ids of working files, kept by stat as git's index keeps them, in
memory and on disk; a file touched just before it was hashed is hashed again
before a view uses it, as git re-checks a "racily clean" entry."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pygit2

from .content import LARGE_BYTES
from .one_version import hash_large, read_one_version, stat_key
from .served import ServedTree

SETTLED_NS = 2_000_000_000  # a file untouched this long is past any rewrite within one timestamp tick


def _store_key(real: str | Path, key: tuple[int, int, int, int]) -> str:
    return f"hash:{real}:{':'.join(map(str, key))}"


class WorkingHashes(ServedTree):
    """The blob id of a working file, hashed only when its stat says it may
    have changed."""

    def cached_blob_id(self, real: str, st: os.stat_result) -> str | None:
        """The blob id of a file if already known for this stat (never hashes):
        a listing's token hint, which a rewrite within one timestamp tick may
        leave one version behind; views go through ``_hash``, which re-checks."""
        key = stat_key(st)
        hit = self._hashes.get(real)
        if hit and hit[0] == key:
            return hit[1]
        stored = self._hash_store.get(_store_key(real, key)) if self._hash_store else None
        return stored.decode() if stored else None

    def _hash(self, real: Path, st: os.stat_result) -> tuple[str, bytes | None, os.stat_result]:
        """Blob id of a file, its bytes when they had to be read for it, and
        the stat they belong to (of the inode read, when one was: the path
        may name another by then).

        Cached by (inode, size, mtime, ctime) as git's index does, in memory
        and on disk; but a file touched in the two seconds before it was
        hashed is hashed again on its next view (and not stored on disk), as
        git re-checks a "racily clean" entry: a rewrite within one timestamp
        tick keeps that key, and would be served as the version before it. A file small enough to hold is read
        once, as one version (see ``read_one_version``), and hashed in
        memory; its views then use those very bytes.
        """
        key = stat_key(st)
        hit = self._hashes.get(str(real))
        if hit and hit[0] == key and hit[2]:
            return hit[1], None, st
        stored = self._hash_store.get(_store_key(real, key)) if self._hash_store else None
        data = None
        if stored:
            blob_id = stored.decode()
        elif st.st_size <= LARGE_BYTES:
            st, data = read_one_version(real, self.root)  # no symlink followed on the way
            key = stat_key(st)
            blob_id = str(pygit2.hash(data))
        else:
            st, blob_id = hash_large(real, self.root)
            key = stat_key(st)
        settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS
        self._hashes.put(str(real), (key, blob_id, settled))
        if settled and self._hash_store is not None and stored is None:
            self._hash_store.put(_store_key(real, key), blob_id.encode())
        return blob_id, data, st
