"""Git through pygit2 (never the git command): revisions, blobs, paths,
snapshots. The rest of nasfs reaches git through :class:`GitTree`; this
package is the only one that imports pygit2 (tests/test_layout.py holds to it).

Content is served from two places: the working tree (the real files, which
may differ from any commit) and commits (``--at REV``, ``.at/<rev>/``). Every
piece of content handed out names a commit that holds exactly those bytes at
that path, so every pointer verifies with plain ``git show``: working-tree
content that differs from HEAD is first recorded as a *snapshot commit*
(parent: HEAD) kept reachable under ``refs/nasfs/snapshots``, or, when
some reader of ``.git`` could not read that content at its source, in its
owner's private store (:mod:`.private_stores`). The user's branch, index and
working tree are never touched.

:class:`GitTree` (:mod:`.git_tree`) is assembled from parts, each one
concern over :mod:`.served` (the repository held open, and reopened when made
anew): :mod:`.revisions`, :mod:`.commit_paths` (paths at a commit as views
read them), :mod:`.commit_trees` (trees at a commit as ``.at/`` shows them),
:mod:`.commit_files` (a folder's files at a commit as folder maps read them),
:mod:`.working` (working files with a commit holding their bytes),
:mod:`.hashes` (their blob ids, with git's racy-clean re-check),
:mod:`.work_status` (the work tree as git's index, ignore rules and status
see it),
:mod:`.snapshots` (with :mod:`.private_stores`), :mod:`.autocommit`,
:mod:`.writing` (what those two share) and :mod:`.changes`. Beside them: :mod:`.content` (what a view is made
of), :mod:`.one_version` (a file read as one version under writers) and
:mod:`.paths` (checked paths, and tree lookups without pygit2's leak) and
:mod:`.ref_state` (the refs a remembered view rests on, read from the mount's
request loop).
"""

from __future__ import annotations

from .changes import BlobDiff, FileChange, diff_bytes
from .commit_paths import FOLDER_READS
from .commit_trees import TreeItem
from .content import LARGE_BYTES, Content
from .git_tree import GitTree
from .paths import clean_path
from .served import work_tree_top
from .snapshots import KEEP_REF

__all__ = [
    "FOLDER_READS", "KEEP_REF", "LARGE_BYTES", "BlobDiff", "Content", "FileChange", "GitTree", "TreeItem",
    "clean_path", "diff_bytes", "work_tree_top",
]
