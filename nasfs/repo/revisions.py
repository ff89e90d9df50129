"""Revisions: commits named by id, branch or tag, HEAD, and how commits
relate."""

from __future__ import annotations

import pygit2

from ..errors import NotFound
from .served import ServedTree, serving


class Revisions(ServedTree):
    """The commits of the served repository."""

    @serving
    def resolve(self, rev: str) -> pygit2.Commit:
        """A commit from a full or abbreviated id, a branch or a tag."""
        if not rev or rev.startswith("-") or any(c in rev for c in " \t\n:\0"):
            raise NotFound(f"unknown revision {rev!r}", self.valid_revisions())
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise NotFound(f"unknown revision {rev!r}", self.valid_revisions()) from None
        return commit

    def valid_revisions(self) -> str:
        names = self.branches()[:10] + self.tags()[:10]
        return "a commit id (7+ hex digits)" + (", or one of: " + ", ".join(names) if names else "")

    @serving
    def branches(self) -> list[str]:
        return sorted(self.repo.branches.local)

    @serving
    def tags(self) -> list[str]:
        prefix = "refs/tags/"
        return sorted(r[len(prefix):] for r in self.repo.references if r.startswith(prefix))

    @serving
    def head(self) -> pygit2.Commit | None:
        try:
            return self.repo.head.peel(pygit2.Commit)
        except (pygit2.GitError, KeyError):
            return None  # an unborn branch: no commit yet

    @serving
    def commit_time(self, commit: str) -> int:
        return self.repo[commit].commit_time

    @serving
    def is_ancestor(self, older: str, newer: str) -> bool:
        """True when ``older`` is a strict ancestor of ``newer``."""
        a, b = pygit2.Oid(hex=older), pygit2.Oid(hex=newer)
        return a != b and self.repo.descendant_of(b, a)
