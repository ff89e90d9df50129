"""Evidence through git remotes, with pygit2: commits that pointers name are
pushed to ``refs/nasfs/<node>/commits/<id>`` of a remote, and fetched from
there, by id when the server allows it, else by that ref (docs/pointers.md).

Each call opens a repository handle of its own: the publisher's thread and a
verify's fetch never share one with the request loop."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from urllib.parse import quote

import pygit2
from pygit2.enums import Option

from ..errors import NotFound, Unavailable
from .own_objects import PRIVATE_DIR, shared_odb

# A remote that accepts a connection and never answers fails a push or fetch
# after this long, instead of holding the publisher's thread (or a verify) forever.
pygit2.option(Option.SET_SERVER_CONNECT_TIMEOUT, 10_000)
pygit2.option(Option.SET_SERVER_TIMEOUT, 15_000)

_SCP = re.compile(r"[^\s/:@]+@[^\s/:]+:\S+")  # user@host:path
REFUSED_BY_ID = "cannot fetch a specific object"  # libgit2's words when the server does not allow want-by-id


def redacted(url: str) -> str:
    """``url`` as said to readers (``.nas/stats``, errors, logs): a password or
    token in it (``https://user:TOKEN@host/...``) is left out."""
    return re.sub(r"(?<=://)[^/@\s]*@", "***@", url)


def published_prefix(node: str) -> str:
    """Where a node's commits live on a remote (the node name escaped for a ref)."""
    return f"refs/nasfs/{quote(node, safe='-._')}/commits/"


class Publishing:
    """A handle on the served repository for the publisher's thread."""

    def __init__(self, git_dir: Path, url: str, node: str, private: bool = False) -> None:
        """``private``: the private stores this process can read are added to
        its handle, so their snapshots can be pushed too (--publish-private)."""
        self.repo = pygit2.Repository(str(git_dir))
        self.repo.set_odb(shared_odb(Path(git_dir)))  # not an alternate some reader of .git/objects may not read
        self._shared = shared_odb(Path(git_dir))
        self.url, self.prefix = url, published_prefix(node)
        if private:
            for objects in sorted((Path(git_dir) / PRIVATE_DIR).glob("*.git/objects")):
                if os.access(objects, os.R_OK | os.X_OK):
                    self.repo.odb.add_disk_alternate(str(objects))

    def full_id(self, commit: str) -> str | None:
        """The full id of a commit named by 7+ hex digits, or None if absent."""
        try:
            found = self.repo.revparse_single(commit) if len(commit) < 40 else self.repo.get(commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return str(found.id) if isinstance(found, pygit2.Commit) else None

    def is_public_snapshot(self, commit: str) -> bool:
        """Whether the remote's readers may have this commit: it is in the
        shared ``.git/objects``, which every reader of the repository reads.
        A snapshot of files only some accounts may read is kept in its
        owner's private store instead (private_stores.py), so it is not."""
        return self._shared.exists(pygit2.Oid(hex=commit))

    def push(self, commits: list[str]) -> dict[str, str | None]:
        """Push each commit to its ref on the remote, in one push; per commit,
        None when the remote has it, else why not. A remote that cannot be
        reached raises :class:`Unavailable`."""
        try:  # one remote object to list, another to push: a connection serves one direction
            listed = self.repo.remotes.create_anonymous(self.url).list_heads()
            there = {h.name for h in listed if h.name.startswith(self.prefix)}
            wanted = [c for c in commits if self.prefix + c not in there]
            outcome = _Outcome()
            if wanted:
                self.repo.remotes.create_anonymous(self.url).push([f"{c}:{self.prefix}{c}" for c in wanted], callbacks=outcome)
        except pygit2.GitError as exc:
            raise Unavailable(f"remote {redacted(self.url)}: {exc}") from None
        return {c: outcome.refused.get(self.prefix + c) for c in commits}


class _Outcome(pygit2.RemoteCallbacks):
    def __init__(self) -> None:
        super().__init__()
        self.refused: dict[str, str] = {}

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.refused[refname] = message


# A foreign node's remote is not trusted to be small or quick: a fetch stops
# past this many bytes or seconds (a verify needs one commit, not a history).
FETCH_MAX_BYTES = 1 << 30
FETCH_MAX_SECONDS = 120.0


class _Bounded(pygit2.RemoteCallbacks):
    """Aborts a fetch that grows past :data:`FETCH_MAX_BYTES` or :data:`FETCH_MAX_SECONDS`."""

    def __init__(self) -> None:
        super().__init__()
        self.deadline = time.monotonic() + FETCH_MAX_SECONDS
        self.over: str | None = None

    def transfer_progress(self, stats: pygit2.remotes.TransferProgress) -> None:
        if stats.received_bytes > FETCH_MAX_BYTES:
            self.over = f"the fetch passed {FETCH_MAX_BYTES} bytes"
        elif time.monotonic() > self.deadline:
            self.over = f"the fetch took over {FETCH_MAX_SECONDS:.0f} s"
        if self.over:
            raise Unavailable(self.over)


def _fetch(remote: pygit2.Remote, url: str, src: str, dst: str) -> None:
    """Fetch ``src`` (an id or a ref of the remote) into the local ref ``dst``:
    that commit only (depth 1) where the transport can (libgit2's local one
    cannot), within the bounds."""
    shallow = url.startswith(("git://", "http://", "https://", "ssh://")) or bool(_SCP.fullmatch(url))
    try:
        remote.fetch([f"+{src}:{dst}"], callbacks=_Bounded(), depth=1 if shallow else 0)
    except Unavailable as exc:
        raise Unavailable(f"cannot fetch from the remote {redacted(url)}: {exc.message}", "a smaller commit, or another remote") from None


def fetch_commit(cache: Path, url: str, node: str, commit: str) -> str:
    """Fetch exactly the commit a pointer names (7+ hex digits) from a node's
    remote into the cache repository ``cache`` (made if missing), unless it
    is there already; returns its full id. A full id is asked for by id
    first; a server that refuses that (no uploadpack.allowReachableSHA1InWant)
    or an abbreviated id is served by the ref the node published it under.
    Only that commit is fetched (depth 1, except from a local path), and no
    more than :data:`FETCH_MAX_BYTES` within :data:`FETCH_MAX_SECONDS`; the
    remote's ref names never become refspecs here."""
    try:
        repo = _cache_repo(cache)
    except (OSError, pygit2.GitError) as exc:
        raise Unavailable(f"cannot make the cache repository {cache}: {exc}", "a writable $NASFS_CACHE_DIR") from None
    have = _local(repo, commit)
    if have is not None:
        return have
    remote = repo.remotes.create_anonymous(url)
    said = redacted(url)
    prefix = published_prefix(node)
    refused = ""
    try:
        if len(commit) == 40:
            try:
                _fetch(remote, url, commit, f"refs/nasfs/fetched/{commit}")
                return commit
            except pygit2.GitError as exc:  # refused, or not there ("not our ref"): the published refs say which
                if REFUSED_BY_ID in str(exc):
                    refused = (" (the server refuses fetching by id: set uploadpack.allowReachableSHA1InWant there, "
                               f"or fetch the ref {prefix}<commit> instead)")
        # the published ref named after the commit itself, as Publishing.push names it; a name a
        # remote makes up (a glob, another commit's id) is never asked for
        heads = [h for h in remote.list_heads()
                 if h.name.startswith(prefix) and h.name[len(prefix):] == str(h.oid) and str(h.oid).startswith(commit)]
        if len({h.oid for h in heads}) > 1:
            raise NotFound(f"commit {commit} is ambiguous on the remote {said} of node {node!r}", "more hex digits of the commit")
        if not heads:
            raise NotFound(f"commit {commit} is not on the remote {said} of node {node!r} under {prefix}{refused}: "
                           f"node {node!r} never published it, or not yet ('nasfs status' there lists what is pending)",
                           f"a pointer node {node!r} served while publishing to {said}")
        full = str(heads[0].oid)
        _fetch(remote, url, heads[0].name, f"refs/nasfs/fetched/{full}")
    except pygit2.GitError as exc:
        raise Unavailable(f"cannot fetch from the remote {said} of node {node!r}: {exc}",
                          "a reachable remote ('nasfs nodes list'), or --offline to use only what is fetched already") from None
    if _local(repo, full) != full:  # what the remote sent is not the commit it advertised
        raise Unavailable(f"the remote {said} of node {node!r} advertised {full} but did not send it", "another remote for the node")
    return full


def _cache_repo(cache: Path) -> pygit2.Repository:
    """The cache repository (a work tree with nothing checked out, so a
    GitTree serves its commits like any other). Its folder (``nodes/``) is the
    running account's alone, 0700: what was fetched with this account's access
    to a remote is not handed to every account of the machine."""
    _private_folder(cache.parent)
    if (cache / ".git").is_dir():
        return pygit2.Repository(str(cache))
    cache.mkdir(mode=0o700, exist_ok=True)
    return pygit2.init_repository(str(cache))


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, 0o700)  # made by an earlier version, or under a lax umask


def cache_repository(cache: Path) -> Path:
    """``cache`` made a repository if it is not one yet (see :func:`_cache_repo`)."""
    _cache_repo(cache)
    return cache


def _local(repo: pygit2.Repository, commit: str) -> str | None:
    try:
        found = repo.revparse_single(commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return str(found.id) if isinstance(found, pygit2.Commit) else None
