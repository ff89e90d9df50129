"""``nasfs index --summaries``: fill the summary cache now, with a progress bar.

Files first (smallest first), then folders from the deepest up, so each
folder's summary is made from its children's. A folder named with
``--summaries-only`` (what ``nasfs read DIR@summary`` starts) makes that
folder's summary alone, and so only the children it is made from (at most
8 files and 4 subfolders a level), not every file below. A summarizer that is down
fails the files it could not do (counted, named at the end) and the fill
goes on; what was made stays cached.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tqdm import tqdm

from ..errors import NasError
from . import folders as fold
from .backends import BackendDown

if TYPE_CHECKING:
    from ..service import Nas


def fill(nas: Nas, only: list[str] | None, quiet: bool) -> int:
    """Make every missing summary under the tree (or of the paths in ``only``); 1 if any failed."""
    summaries = nas.summaries
    if summaries is None:
        raise NasError("nasfs index --summaries needs a summarizer", "--summarizer CMD or URL (or NASFS_SUMMARIZER)")
    files, folders = [], []
    for path in only or [""]:
        real = nas.tree.real_path(path)[0] if path not in ("", ".") else ""
        if real and nas.tree.is_file(real):
            files.append(real)
            continue
        listing = fold.listing_of(nas, real, None)
        if only:  # a folder named: its summary, which makes the children it uses first
            folders.append(listing.folder)
        else:
            files += [i.path for i in sorted(listing.items, key=lambda i: (i.size, i.path))]
            folders += fold.bottom_up(listing)
    failed: list[str] = []
    bar = tqdm(total=len(files) + len(folders), unit="summary", disable=quiet, file=sys.stderr)
    for path in files:
        try:
            summaries.generator.make_file(nas.analysis(nas.content(path)))
        except (BackendDown, NasError) as exc:
            failed.append(f"{path}: {exc}")
        bar.update(1)
    for path in folders:
        try:
            summaries.generator.make_folder(nas, path, None)
        except (BackendDown, NasError) as exc:
            failed.append(f"{path or '.'}/: {exc}")
        bar.update(1)
    bar.close()
    if not quiet:
        print(f"summaries: {len(files) + len(folders) - len(failed)} made or cached, {len(failed)} failed "
              f"({len(files)} files, {len(folders)} folders) by {summaries.model}")
    for line in failed[:20]:
        print(f"nasfs index: summary failed: {line}", file=sys.stderr)
    return 1 if failed else 0
