"""The refs a working-tree view's header rests on, read cheaply.

A view of a working file names HEAD, or a snapshot commit over HEAD kept
reachable by KEEP_REF; when neither ref moved, a remembered view still names
the right commit. Its own repository handle, since pygit2 objects are not
shared across threads (the mount reads these on its request loop).
"""

from __future__ import annotations

import pygit2

from .snapshots import KEEP_REF


class RefState:
    """HEAD's target and the snapshot keeper's, from a handle of its own."""

    def __init__(self, git_dir: str) -> None:
        self._repo = pygit2.Repository(git_dir)

    def now(self) -> tuple[str, str] | None:
        """(HEAD's commit or "" when unborn, the keeper's commit or ""), or
        None when the repository cannot be read (the core then says why)."""
        try:
            try:
                head = str(self._repo.head.target)
            except pygit2.GitError:
                if not self._repo.head_is_unborn:
                    raise
                head = ""  # no commit yet: views name snapshots over none
            keeper = self._repo.references.get(KEEP_REF)
        except (pygit2.GitError, KeyError, OSError):
            return None
        return head, str(keeper.target) if keeper is not None else ""
