"""What ``nasfs read`` prints, shared by the CLI and the mount daemon's read
socket (fuse/read_answers.py), so an answer is the same bytes either way."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .access import Caller
    from .service import Nas


def cwd_prefix(root: Path, cwd: str) -> str:
    """The current folder's path inside the tree (``sub/dir/``), so relative
    paths work from a subfolder; '' at the top or outside. By string
    arithmetic on the absolute path (``getcwd`` names no symlink): nothing is
    looked up, so the mount daemon never resolves a client's folder through
    its own mount (fuse/read_answers.py)."""
    here = PurePosixPath(os.path.normpath(cwd))
    return here.relative_to(root).as_posix() + "/" if here.is_absolute() and PurePosixPath(root) in here.parents else ""


def read_chunks(nas: Nas, spec: str, at: str | None, as_json: bool, prefix: str = "",
                raw_limit: int | None = None, caller: Caller | None = None) -> Iterator[bytes] | None:
    """The bytes of ``nasfs read [--at AT] [--json] SPEC``: a raw read streams
    the file (bounded memory); a view is one answer. None when a raw read is
    larger than ``raw_limit`` (the daemon leaves those to the CLI). ``caller``
    (None: this process's own account) is judged before the name is split,
    and at a revision on that commit too (Nas.commit_for: a private snapshot
    is read by the readers of its sources only), and what is read for them
    is the very file that decision allowed (Nas.content)."""
    spec = spec if spec.startswith("/") else prefix + spec
    nas.admit(spec, at, caller)
    path, view = nas.split(spec, at, caller)
    if view.kind == "raw" and not as_json:
        content = nas.content(path, at, caller)
        if raw_limit is not None and content.size > raw_limit:
            return None
        return content.stream()
    response = nas.read_view(path, view, at, caller=caller)
    return iter((response.envelope_bytes() if (as_json or view.json) else response.text,))
