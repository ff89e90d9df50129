"""The persistent summary cache: records keyed by blob id (or folder signature) and model.

A record holds what the model wrote and what the checker decided, with each
kept sentence's line span and the sha256 of those lines, so a read builds
its evidence without asking the model or re-reading anything. The last
record of each path is remembered too: after a change it is served as
``stale=true``, naming the commit it describes, until the new one is made.
Records are written one at a time (never batched), so a summarizer or
daemon that dies loses none that was finished.
"""

from __future__ import annotations

import json
from typing import Any

from ..cache import DiskCache

FORMAT = 3  # raised when a record's shape or the prompt changes, so older records are made again


class Store:
    def __init__(self, disk: DiskCache | None, root: str, model: str) -> None:
        self.disk = disk if disk is not None else DiskCache()
        self.root = root
        self.model = model

    def _key(self, kind: str, ident: str) -> str:
        return f"summ{FORMAT}:{kind}:{self.model}:{ident}"

    def _last_key(self, kind: str, path: str) -> str:
        return f"summ{FORMAT}:{kind}-last:{self.model}:{self.root}:{path}"

    def _load(self, key: str) -> dict[str, Any] | None:
        raw = self.disk.get(key)
        if raw is None:
            return None
        try:
            found = json.loads(raw)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    def get(self, kind: str, ident: str) -> dict[str, Any] | None:
        """The record of a blob (kind ``file``) or a folder signature (``folder``)."""
        return self._load(self._key(kind, ident))

    def last(self, kind: str, path: str) -> dict[str, Any] | None:
        """The newest record made for ``path``, whatever content it described."""
        return self._load(self._last_key(kind, path))

    def put(self, kind: str, ident: str, path: str, record: dict[str, Any]) -> None:
        raw = json.dumps(record).encode()
        self.disk.put(self._key(kind, ident), raw)
        self.disk.put(self._last_key(kind, path), raw)

    def failure(self, kind: str, ident: str) -> str | None:
        raw = self.disk.get(self._key(kind + "-failed", ident))
        return raw.decode() if raw else None

    def failed(self, kind: str, ident: str, message: str) -> None:
        self.disk.put(self._key(kind + "-failed", ident), message.encode())
