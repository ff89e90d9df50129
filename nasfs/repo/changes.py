"""Changes between two commits, file by file, and the unified diff of two
byte strings, as ``git diff`` gives them."""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from .served import ServedTree, serving


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


class Changes(ServedTree):
    """What changed between two commits of the served repository."""

    @serving
    def changes(self, a: str, b: str) -> list[FileChange]:
        """Files changed from commit ``a`` to commit ``b``, renames found."""
        diff = self.repo.diff(self.repo[a], self.repo[b], context_lines=3)
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
