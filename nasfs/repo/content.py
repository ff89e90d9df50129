"""What a view is made of: one file's exact bytes, the blob they hash to and
a commit that holds them, read whole or streamed so a large file never is
held whole. A working file read again later by path is read from the inode
it was hashed from (the one the access decision allowed), or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import os

import pygit2

from ..access import Identity, identity
from ..errors import FileChanged, NotServable
from .one_version import open_regular

LARGE_BYTES = 32 << 20  # above this a file is streamed, never held whole
CHUNK = 1 << 20
FILE_MODES = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)  # a tree entry that is a file's content


@dataclass(frozen=True, slots=True)
class Content:
    """Exact bytes of one file, the blob they hash to and a commit holding them."""

    path: str
    blob_id: str
    size: int
    commit: str
    _repo: pygit2.Repository = field(repr=False, compare=False)
    _disk: str | None = field(default=None, repr=False, compare=False)
    _data: bytes | None = field(default=None, repr=False, compare=False)  # the bytes that were hashed, when read
    _source: Identity | None = field(default=None, repr=False, compare=False)  # the inode ``_disk`` was hashed from
    _root: str | None = field(default=None, repr=False, compare=False)  # the tree ``_disk`` is in: read with no link followed

    @property
    def large(self) -> bool:
        return self.size > LARGE_BYTES

    @property
    def source(self) -> Identity | None:
        """The inode a working file's bytes were read from; None at a commit."""
        return self._source

    @property
    def held(self) -> bytes | None:
        """The bytes, when they were read already (to be hashed): None otherwise."""
        return self._data

    def read(self) -> bytes:
        """The whole content; refused for large files, which are streamed."""
        if self.large:
            raise NotServable(f"{self.path} is {self.size} bytes, too large to serve whole", "a line range @La-Lb or @outline")
        if self._data is not None:
            return self._data
        if self._disk is not None:
            try:
                with open_regular(self._disk, self._root) as fh:
                    data = fh.read()
            except (NotServable, FileNotFoundError):  # not a file (of the tree) any more: the blob named, below
                data = None
            if data is not None and pygit2.hash(data) == pygit2.Oid(hex=self.blob_id):
                return data
            # Changed since it was hashed: serve the committed bytes we named.
        return self._repo[self.blob_id].data

    def stream(self) -> Iterator[bytes]:
        """The content in chunks. Working-tree files stream from disk in
        bounded memory; libgit2 loads a blob whole, so a large file at a past
        commit costs its size in memory while it is read."""
        if self._disk is not None:
            try:
                fh = open_regular(self._disk, self._root)
            except (NotServable, FileNotFoundError):  # not a file (of the tree) any more: another file, or none
                fh = None
            if fh is not None:
                with fh:
                    if self._source is None or identity(os.fstat(fh.fileno())) == self._source:
                        while chunk := fh.read(CHUNK):
                            yield chunk
                        return
            if self.blob_id not in self._repo:  # another file by now: the blob named, if it was recorded
                raise FileChanged(f"{self.path!r} changed while it was read (it names another file now)", "read it again")
        data = self._repo[self.blob_id].data
        for start in range(0, len(data), CHUNK):
            yield data[start : start + CHUNK]

    def head(self, n: int = 8192) -> bytes:
        for chunk in self.stream():
            return chunk[:n]
        return b""
