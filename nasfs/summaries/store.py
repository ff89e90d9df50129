"""The persistent summary cache: records keyed by blob id and path (or folder signature) and the summarizer's identity.

A record holds what the model wrote and what the checker (and the judge)
decided, with each kept sentence's cited ranges and the sha256 of each, so a
read builds its evidence without asking the model or re-reading anything.
The identity (settings.py) is the whole summarizer (command line, or
endpoint and model; context; judge), so two models never share a record;
the tree's name is in every key too, since the rules read it with the path
("AnyIO" in a tree named anyio), so trees of two names sharing the one
cache (DiskCache()) never share a record or a verdict.
The last record of each path is remembered too: after a change it is
served as ``stale=true``, naming the commit it describes, until the new one
is made. Records are written one at a time (never batched), so a
summarizer or daemon that dies loses none that was finished. A judge's
verdicts are kept per (blob, sentence, judge), so a summary held back by a
judge that went down resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..cache import DiskCache

def file_ident(blob_id: str, path: str) -> str:
    """A file summary's key: its blob and its path, since the checker reads the path's names ("pip" for
    pip/_vendor/vendor.txt), so one blob at two paths may keep different sentences."""
    return f"{blob_id}:{hashlib.sha256(path.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


MAX_TRIES = 1000  # failures in a row counted (each read of a summary whose making fails adds one)
FORMAT = 4  # raised when a record's shape or the prompt changes, so older records are made again


@dataclass(frozen=True, slots=True)
class Failure:
    message: str
    when: float  # time.time() of the last failed try
    tries: int  # failed tries in a row
    final: bool  # never worth trying again (a binary file)


class Store:
    def __init__(self, disk: DiskCache | None, root: str, identity: str, tree: str = "") -> None:
        self.disk = disk if disk is not None else DiskCache()
        self.root = root
        self.identity = identity
        self.tree = tree  # the tree's name, which the rules read (files.py)

    def _key(self, kind: str, ident: str) -> str:
        return f"summ{FORMAT}:{kind}:{self.identity}:{self.tree}:{ident}"

    def _last_key(self, kind: str, path: str) -> str:
        return f"summ{FORMAT}:{kind}-last:{self.identity}:{self.root}:{self.tree}:{path}"

    def _load(self, key: str) -> Any:
        raw = self.disk.get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def get(self, kind: str, ident: str) -> dict[str, Any] | None:
        """The record of a blob (kind ``file``) or a folder signature (``folder``)."""
        found = self._load(self._key(kind, ident))
        return found if isinstance(found, dict) else None

    def last(self, kind: str, path: str) -> dict[str, Any] | None:
        """The newest record made for ``path``, whatever content it described."""
        found = self._load(self._last_key(kind, path))
        return found if isinstance(found, dict) else None

    def put(self, kind: str, ident: str, path: str, record: dict[str, Any]) -> None:
        """A finished record: also the path's last one, and no failure to wait out any more."""
        raw = json.dumps(record).encode()
        self.disk.put(self._key(kind, ident), raw)
        self.disk.put(self._last_key(kind, path), raw)
        self.disk.put(self._key(kind + "-failed", ident), b"null")

    def keep(self, kind: str, ident: str, record: dict[str, Any]) -> None:
        """A record on its way (what the rules kept, before the judge): never served."""
        self.disk.put(self._key(kind, ident), json.dumps(record).encode())

    def failure(self, kind: str, ident: str) -> Failure | None:
        found = self._load(self._key(kind + "-failed", ident))
        if not isinstance(found, dict):
            return None
        return Failure(str(found.get("message")), float(found.get("when", 0)), int(found.get("tries", 1)),
                       bool(found.get("final")))

    def failed(self, kind: str, ident: str, message: str, final: bool = False) -> None:
        before = self.failure(kind, ident)
        tries = min(before.tries + 1, MAX_TRIES) if before else 1  # a count that cannot grow without bound
        raw = {"message": message, "when": time.time(), "tries": tries, "final": final}
        self.disk.put(self._key(kind + "-failed", ident), json.dumps(raw).encode())

    def verdict(self, blob: str, sentence: str, cited: str, judge: str) -> bool | None:
        """The judge's remembered answer about ``sentence`` citing ``cited`` lines of ``blob``."""
        found = self._load(self._verdict_key(blob, sentence, cited, judge))
        return found if isinstance(found, bool) else None

    def judged(self, blob: str, sentence: str, cited: str, judge: str, supported: bool) -> None:
        self.disk.put(self._verdict_key(blob, sentence, cited, judge), json.dumps(supported).encode())

    @staticmethod
    def _verdict_key(blob: str, sentence: str, cited: str, judge: str) -> str:
        whole = "\0".join((blob, sentence, cited, judge)).encode("utf-8", "surrogateescape")
        return f"summ{FORMAT}:judged:{hashlib.sha256(whole).hexdigest()}"
