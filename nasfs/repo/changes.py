"""Changes between two commits, file by file, and the unified diff of two
byte strings, as ``git diff`` gives them."""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from ..errors import NotFound
from .own_objects import OWN_OBJECTS_ONLY
from .paths import tree_entry
from .revisions import Revisions
from .served import serving


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change between two commits, as ``git diff -M`` sees it."""

    status: str  # A added, D deleted, M modified, R renamed, T type changed
    old_path: str | None
    new_path: str | None
    added: int
    deleted: int
    binary: bool
    patch: bytes

    def title(self) -> str:
        if self.status == "R":
            where = f"{self.old_path} -> {self.new_path}"
        else:
            where = self.new_path or self.old_path or ""
        what = "binary" if self.binary else f"+{self.added} -{self.deleted}"
        return f"{self.status} {where} | {what}"


@dataclass(frozen=True, slots=True)
class BlobDiff:
    """A unified diff of two byte strings and its line counts."""

    text: bytes
    added: int
    deleted: int
    binary: bool


def diff_bytes(old: bytes, new: bytes, old_path: str, new_path: str, context: int = 3) -> BlobDiff:
    """Unified diff of two contents, as ``git diff`` prints it."""
    patch = pygit2.Patch.create_from(old, new, old_as_path=old_path, new_as_path=new_path, context_lines=context)
    _, added, deleted = patch.line_stats
    return BlobDiff(patch.data, added, deleted, patch.delta.is_binary)


class Changes(Revisions):
    """What changed between two commits of the served repository."""

    @serving
    def changes(self, a: str, b: str) -> list[FileChange]:
        """Files changed from commit ``a`` to commit ``b``, renames found. The
        two may be read through different handles (own_objects.py): the diff
        is made through one reading both, and each side of each change must
        be what that side's commit names through its own handle, or nothing
        of it is told (NotFound)."""
        (repo_a, commit_a), (repo_b, commit_b) = self._read_at(a), self._read_at(b)
        repo = self._joint(repo_a, repo_b)
        try:
            diff = repo.diff(repo[commit_a.tree_id], repo[commit_b.tree_id], context_lines=3)
        except (KeyError, pygit2.GitError):  # a folder of either not among the objects read
            raise NotFound(f"{a[:12]}..{b[:12]} names an object that is not among its commits' own objects",
                           OWN_OBJECTS_ONLY) from None
        for d in diff.deltas:  # before renames are looked for: they read the blobs
            if d.status != pygit2.GIT_DELTA_ADDED:
                self._own_side(repo_a, commit_a, d.old_file)
            if d.status != pygit2.GIT_DELTA_DELETED:
                self._own_side(repo_b, commit_b, d.new_file)
        diff.find_similar()
        out = []
        for patch in diff:
            if patch is None:
                continue
            d = patch.delta
            status = d.status_char()
            _, added, deleted = patch.line_stats
            out.append(FileChange(
                status,
                None if status == "A" else d.old_file.path,
                None if status == "D" else d.new_file.path,
                added, deleted, d.is_binary, patch.data,
            ))
        return out


    def _own_side(self, repo: pygit2.Repository, commit: pygit2.Commit, file: pygit2.DiffFile) -> None:
        """NotFound unless ``file`` (a side of a change) is what ``commit``
        names at its path through ``repo``, the commit's own handle, and its
        blob may be read there (private_stores.PrivateStores._takes; a
        submodule's commit is not read)."""
        try:
            own = tree_entry(commit.tree, file.path).id == file.id
        except KeyError:  # not there, or a folder on its way not among the commit's own objects
            own = False
        if own and file.mode != pygit2.GIT_FILEMODE_COMMIT:
            own = repo.odb.exists(file.id) and self._takes(str(commit.id), file.path, file.id)
        if not own:
            raise NotFound(f"{str(commit.id)[:12]} names at {file.path!r} an object that is not among its own objects",
                           OWN_OBJECTS_ONLY)
