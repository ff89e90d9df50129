"""``nasfs index``: warm a tree's caches so that first views are fast.

Every regular file of the work tree that git does not ignore (tracked files
from the index, untracked ones from status; ``.git`` never) gets its
``@outline`` view computed, which also counts and caches its full tokens,
and the facts a folder map shows of it. The files' mentions of one another,
found on the way, then rank every folder's map (:mod:`nasfs.folders`), so a
first map reads no file to rank it and outlines none. All of it lands in the
shared disk cache (SQLite in WAL mode: several processes may read and write
it at once; a write that loses a lock race is dropped, which only leaves that
file cold). N worker processes each run their own ``Nas`` over the same
cache, taking ``CHUNK`` neighbouring files per task and writing their entries
in one transaction; errors on single files are counted, never fatal.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from .folders import SETTLED_NS, Known, Ranker, known_of, names_in, sub_listing, subfolders, walk_worktree
from .repo import GitTree

if TYPE_CHECKING:
    from .service import Nas
    from .summaries import SummarySettings

_nas = None  # the worker's own Nas
_names: frozenset[str] = frozenset()  # the names the tree's files may be mentioned by
CHUNK = 16  # files per task: small enough for an even spread over workers and a lively bar


class Indexed(NamedTuple):
    """One file's outcome; ``known``: its mentions of the tree's files, None when unread."""

    path: str
    kind: str  # ok, skipped or error
    tokens: int
    detail: str
    known: Known | None = None


@dataclass
class Tally:
    files: int = 0
    tokens: int = 0
    skipped: int = 0
    maps: int = 0  # folders whose map was ranked
    errors: list[str] = field(default_factory=list)

    def add(self, result: Indexed) -> None:
        path, kind, tokens, detail, _ = result
        if kind == "ok":
            self.files += 1
            self.tokens += tokens
        elif kind == "skipped":
            self.skipped += 1
        else:
            self.errors.append(f"{path}: {detail}")

    def summary(self, seconds: float) -> str:
        line = (f"indexed {self.files} files ({self.tokens} tokens outlined, {self.skipped} skipped: binary/large/refused), "
                f"{self.maps} folder maps ranked in {seconds:.1f} s")
        if self.errors:
            line += f"; {len(self.errors)} errors"
        return line


def tree_files(tree: GitTree) -> list[str]:
    """Regular files of the work tree that git does not ignore, sorted."""
    files = []
    for name in tree.work_paths():
        if name.split("/")[0] == ".git":
            continue
        try:
            st = os.lstat(tree.root / name)
        except OSError:
            continue  # deleted in the work tree
        if stat.S_ISREG(st.st_mode):
            files.append(name)
    return sorted(files)


def _open(root: str, node: str | None, tree: str | None, tokenizer: str, summarizer: SummarySettings | None = None):
    from .cache import DiskCache
    from .service import Nas

    disk = DiskCache()
    return Nas(GitTree(root, node=node, tree=tree, hashes=disk), tokenizer=tokenizer, disk=disk, summarizer=summarizer)


def _init_worker(root: str, node: str | None, tree: str | None, tokenizer: str,
                 names: frozenset[str] = frozenset(), summarizer: SummarySettings | None = None) -> None:
    """A worker's Nas; ``names``: those its files' mentions are looked for (none
    in the mount's view workers, nasfs/fuse/pool.py, which outline only);
    ``summarizer``: the mount's summary settings, so a view made here (``@N``
    of a large file) has the summary rung the core thread's has."""
    global _nas, _names
    _nas, _names = _open(root, node, tree, tokenizer, summarizer), names


def _outline(path: str) -> Indexed:
    """One file's outline, token count and map facts, and its mentions."""
    from .errors import NasError
    from .folder_map import file_facts
    from .grammar import View

    try:
        content = _nas.content(path)
        r = _nas.read_content(content, View("outline"), record=False)
        file_facts(_nas, content)
    except NasError as exc:
        return Indexed(path, "skipped", 0, str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad file never ends the run
        return Indexed(path, "error", 0, f"{type(exc).__name__}: {exc}")
    known = known_of(_nas.tree.root, path, _names, content.held)  # the bytes just hashed, not read again
    if r.full_tokens is None:  # binary, or too large to hold
        return Indexed(path, "skipped", 0, "", known)
    return Indexed(path, "ok", r.tokens, "", known)


def _outline_chunk(paths: list[str]) -> list[Indexed]:
    """Several files' outlines, their cache writes made in one transaction."""
    with _nas.disk.batch():
        return [_outline(p) for p in paths]


def _results(root: str, files: list[str], jobs: int, opened: tuple) -> Iterator[list[Indexed]]:
    """Results in chunks of neighbouring files (a folder's files share its
    tree lookups), one chunk per task."""
    chunks = [files[i : i + CHUNK] for i in range(0, len(files), CHUNK)]
    if jobs <= 1:
        _init_worker(root, *opened)
        for chunk in chunks:
            yield _outline_chunk(chunk)
        return
    import multiprocessing

    # spawn: each worker starts clean (no inherited libgit2 or SQLite handles)
    with multiprocessing.get_context("spawn").Pool(jobs, _init_worker, (root, *opened)) as pool:
        yield from pool.imap_unordered(_outline_chunk, chunks)


def rank_maps(nas: Nas, known: dict[str, Known], names: frozenset[str]) -> int:
    """Rank the map of every folder of the tree with the mentions the files'
    reads found, and store each ranking (by its listing's signature, as a map
    looks it up); the number of folders ranked. Nothing is stored while files
    keep changing (a ranking is keyed by stats, which a rewrite within one
    timestamp tick leaves as they were), nor when files appeared whose names
    the reads did not look for."""
    listing = walk_worktree(nas, "")
    if not listing.settled:  # written in the last two seconds: wait once for them to settle
        time.sleep(SETTLED_NS / 1e9)
        listing = walk_worktree(nas, "")
    if not listing.settled or not set(names_in(item.path for item in listing.items)) <= names:
        return 0
    ranker = Ranker()
    folders = ["", *subfolders(listing)]
    with nas.disk.batch():
        for folder in folders:
            ranker.order(nas, sub_listing(listing, folder) if folder else listing, None, known)
    return len(folders)


def run_index(root: str, *, node: str | None, tree: str | None, tokenizer: str, jobs: int | None,
              quiet: bool = False, progress_log: bool = False, every: float = 10.0) -> Tally:
    from .cache import DiskCache

    t0 = time.monotonic()
    git_tree = GitTree(root)
    DiskCache()  # made (and switched to WAL) once, before the workers race to open it
    files = tree_files(git_tree)
    names = frozenset(names_in(files))
    known: dict[str, Known] = {}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(files) or 1))
    tally = Tally()
    bar = None
    if not quiet and not progress_log and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(files), unit="file", file=sys.stderr, dynamic_ncols=True)
    said = time.monotonic()

    def say(end: str = "") -> None:
        try:
            print(f"warm-up: {tally.files + tally.skipped + len(tally.errors)}/{len(files)} files, "
                  f"{time.monotonic() - t0:.0f} s{end}", file=sys.stderr, flush=True)
        except OSError:
            pass  # a log that went away ends nothing

    if progress_log:
        say()
    try:
        for results in _results(str(git_tree.root), files, jobs, (node, tree, tokenizer, names)):
            for result in results:
                tally.add(result)
                if result.known is not None:
                    known[result.path] = result.known
            if bar is not None:
                bar.update(len(results))
            if progress_log and time.monotonic() - said >= every:
                said = time.monotonic()
                say()
    finally:
        if bar is not None:
            bar.close()
    tally.maps = rank_maps(_open(str(git_tree.root), node, tree, tokenizer), known, names)
    if progress_log:
        say(" (done)")
    for line in tally.errors[:20]:
        print(f"nasfs index: {line}", file=sys.stderr)
    if len(tally.errors) > 20:
        print(f"nasfs index: ... and {len(tally.errors) - 20} more errors", file=sys.stderr)
    if not quiet:
        print(tally.summary(time.monotonic() - t0), flush=True)
    return tally


__all__ = ["Indexed", "Tally", "rank_maps", "run_index", "tree_files"]
