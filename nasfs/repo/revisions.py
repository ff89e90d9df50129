"""Revisions: commits named by id, branch or tag, HEAD, and how commits
relate; each commit read through its own objects (own_objects.py)."""

from __future__ import annotations

from string import hexdigits

import pygit2

from ..errors import NotFound
from .own_objects import not_own
from .private_stores import PrivateStores
from .served import serving


class Revisions(PrivateStores):
    """The commits of the served repository."""

    @serving
    def resolve(self, rev: str) -> pygit2.Commit:
        """A commit from a full or abbreviated id, a branch or a tag, read
        through its own objects: found in ``.git/objects`` first, else in the
        one private store this process reads that names it (a store made by
        another process since is looked for too)."""
        return self._read_at(rev)[1]

    def _read_at(self, rev: str) -> tuple[pygit2.Repository, pygit2.Commit]:
        """The commit ``rev`` names and the handle its objects are read
        through; NotFound when its tree is not among them (a commit of
        ``.git/objects`` naming a private store's tree: libgit2 would raise
        GitError at every ``commit.tree``)."""
        repo, commit = self._found_at(rev)
        if not repo.odb.exists(commit.tree_id):
            raise not_own(str(commit.id), commit.tree_id)
        return repo, commit

    def _found_at(self, rev: str) -> tuple[pygit2.Repository, pygit2.Commit]:
        if not rev or rev.startswith("-") or any(c in rev for c in " \t\n:\0"):
            raise NotFound(f"unknown revision {rev!r}", self.valid_revisions())
        found = _commit_named(self.repo, rev)
        if found is not None:  # read through .git/objects: it is there
            return self.repo, found
        if len(rev) == 40 and all(c in hexdigits for c in rev):  # a full id: the store holding it, by its objects
            place = self._place_of(pygit2.Oid(hex=rev))
            found = place.repo.get(rev) if place is not None else None
            if isinstance(found, pygit2.Commit):
                return place.repo, found
        ids: set[pygit2.Oid] = set()
        for look_again in (False, True):  # in the stores known, then in any made since
            if look_again and not self._add_readable_stores():
                break
            ids = {c.id for c in (_commit_named(self._opened((objects,)).repo, rev) for objects in sorted(self._own)) if c}
            if ids:
                break
        if len(ids) != 1:  # nowhere, or named in two stores: ambiguous
            raise NotFound(f"unknown revision {rev!r}", self.valid_revisions())
        oid = ids.pop()
        repo = self._reader(oid)  # (a store's commit may name one of .git/objects: read there)
        return repo, repo[oid]

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
        return self.resolve(commit).commit_time

    @serving
    def is_ancestor(self, older: str, newer: str) -> bool:
        """True when ``older`` is a strict ancestor of ``newer`` (walked through
        ``newer``'s own objects: an ancestor only another place holds is not one)."""
        a, b = pygit2.Oid(hex=older), pygit2.Oid(hex=newer)
        try:
            return a != b and self._reader(b).descendant_of(b, a)
        except (KeyError, NotFound, pygit2.GitError):
            return False


def _commit_named(repo: pygit2.Repository, rev: str) -> pygit2.Commit | None:
    """The commit ``rev`` names through ``repo``, None when it names none there."""
    try:
        found = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None
    return found if isinstance(found, pygit2.Commit) else None
