"""Trees at a commit as a read-only filesystem shows them (``.at/<rev>/``):
entries listed and read as they are, symlinks not followed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..errors import NotFound
from .content import FILE_MODES
from .paths import tree_entry
from .revisions import Revisions
from .served import serving


@dataclass(frozen=True, slots=True)
class TreeItem:
    """One entry of a tree at a commit, as a read-only filesystem shows it."""

    name: str
    kind: str  # "file", "dir" or "link"
    size: int
    executable: bool = False


class CommitTrees(Revisions):
    """Browsing the tree of a commit, entry by entry, through the commit's own
    objects (own_objects.py): an entry whose object is not among them is not
    there (a folder lists the rest)."""

    def _item(self, repo: pygit2.Repository, commit: str, path: str, filemode: int, oid: pygit2.Oid) -> TreeItem | None:
        """The entry at ``path`` of ``commit`` (read through ``repo``, its own
        handle); None when its object may not be read there (:meth:`_named`)."""
        name = path.rpartition("/")[2]
        if filemode == pygit2.GIT_FILEMODE_COMMIT:
            return TreeItem(name, "dir", 0)  # a submodule shows as an empty folder
        try:
            kind_of, size = repo.odb.read_header(oid)
        except KeyError:
            return None
        folder = filemode == pygit2.GIT_FILEMODE_TREE
        if folder != (kind_of == pygit2.GIT_OBJECT_TREE) or not self._takes(commit, path, oid, folder):
            return None
        if folder:
            return TreeItem(name, "dir", 0)
        kind = "link" if filemode == pygit2.GIT_FILEMODE_LINK else "file"
        return TreeItem(name, kind, size, filemode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)

    @serving
    def item_at(self, commit: str, path: str) -> TreeItem | None:
        """The entry at ``path`` in ``commit``, symlinks not followed."""
        if not path:
            return TreeItem("", "dir", 0)
        repo, found = self._read_at(commit)
        try:
            entry = tree_entry(found.tree, path)
        except KeyError:
            return None
        return self._item(repo, str(found.id), path, entry.filemode, entry.id)

    @serving
    def listing_at(self, commit: str, path: str) -> list[TreeItem]:
        repo, found = self._read_at(commit)
        full = str(found.id)
        sub = found.tree if not path else self._named(repo, full, path, tree_entry(found.tree, path).id)
        if not isinstance(sub, pygit2.Tree):
            return []
        prefix = path + "/" if path else ""
        return [item for e in sub if (item := self._item(repo, full, prefix + e.name, e.filemode, e.id)) is not None]

    @serving
    def write_tree_at(self, commit: str, folder: Path) -> None:
        """Write the files of ``commit`` under ``folder`` (symlinks as links
        whose targets stay as they are; submodules skipped)."""
        repo, found = self._read_at(commit)
        full = str(found.id)
        stack: list[tuple[pygit2.Tree, str, Path]] = [(found.tree, "", folder)]
        while stack:
            tree, rel, where = stack.pop()
            where.mkdir(exist_ok=True)
            for entry in tree:
                target, path = where / entry.name, f"{rel}{entry.name}"
                if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                    stack.append((self._named(repo, full, path, entry.id), f"{path}/", target))
                elif entry.filemode == pygit2.GIT_FILEMODE_LINK:
                    os.symlink(self._named(repo, full, path, entry.id).data, target)
                elif entry.filemode in FILE_MODES:
                    target.write_bytes(self._named(repo, full, path, entry.id).data)

    @serving
    def ls_tree_at(self, commit: str, path: str) -> bytes | None:
        """A folder at ``commit`` as ``git -c core.quotePath=false ls-tree
        COMMIT PATH/`` prints it (what a folder pointer names), or None when
        ``path`` is not a folder there."""
        repo, found = self._read_at(commit)
        root = found.tree
        if path:
            try:
                sub = self._named(repo, str(found.id), path, tree_entry(root, path).id)
            except (KeyError, NotFound):  # no such path, or a folder not among the commit's own objects
                return None
            if not isinstance(sub, pygit2.Tree):
                return None
        else:
            sub = root
        prefix = path + "/" if path else ""
        kinds = {pygit2.GIT_FILEMODE_TREE: "tree", pygit2.GIT_FILEMODE_COMMIT: "commit"}
        return b"".join(f"{e.filemode:06o} {kinds.get(e.filemode, 'blob')} {e.id}\t".encode()
                        + _quoted(os.fsencode(prefix + e.name)) + b"\n" for e in sub)

    @serving
    def raw_at(self, commit: str, path: str) -> bytes:
        """The blob bytes at ``path`` (a symlink's target text, not followed)."""
        repo, found = self._read_at(commit)
        try:
            oid = tree_entry(found.tree, path).id
        except KeyError:
            raise NotFound(f"{path!r} does not exist at {commit[:12]}") from None
        return self._named(repo, str(found.id), path, oid).data


_ESCAPES = {ord('"'): b'\\"', ord("\\"): b"\\\\", ord("\t"): b"\\t", ord("\n"): b"\\n", 7: b"\\a", 8: b"\\b",
            11: b"\\v", 12: b"\\f", 13: b"\\r"}


def _quoted(name: bytes) -> bytes:
    """A path as git prints it with quotePath off: in double quotes, C-escaped,
    when it holds a quote, a backslash or a control character."""
    if not any(b in _ESCAPES or b < 0x20 or b == 0x7F for b in name):
        return name
    return b'"' + b"".join(_ESCAPES.get(b) or (f"\\{b:03o}".encode() if b < 0x20 or b == 0x7F else bytes([b])) for b in name) + b'"'
