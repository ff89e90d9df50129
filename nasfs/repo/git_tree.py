"""GitTree, the one object the rest of nasfs reaches git through, assembled
from its parts; each adds one concern over :class:`.served.ServedTree`."""

from __future__ import annotations

from .autocommit import Autocommit
from .changes import Changes
from .commit_files import CommitFiles
from .commit_trees import CommitTrees
from .work_status import WorkStatus
from .working import WorkingFiles


class GitTree(WorkingFiles, CommitTrees, CommitFiles, WorkStatus, Autocommit, Changes):
    """One served tree: a git work tree, its node and tree names for pointers."""
