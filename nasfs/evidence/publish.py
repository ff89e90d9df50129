"""Publishing: the commits served pointers name go to a git remote, in the
background (a thread; a read only adds ids to a set), batched, retried with
backoff. What is not yet on the remote is kept in a pending file (mode 0600
under the repository's ``.git/nasfs/``), so a restart loses none of it."""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import Unavailable
from ..repo.remotes import Publishing, redacted

log = logging.getLogger(__name__)
BATCH_WAIT = 0.5  # seconds to gather more ids before a push
MAX_BACKOFF = 30.0  # a remote back up gets what is pending within this


@dataclass(slots=True)
class Entry:
    since: float  # when it was first served
    reason: str = "queued"
    attempts: int = 0
    due: float = 0.0  # not tried again before this


class Publisher:
    """One remote; ``note`` is all a read does."""

    def __init__(self, git_dir: Path, url: str, node: str, private: bool = False) -> None:
        self.git_dir, self.url, self.node, self.private = Path(git_dir), url, node, private
        self.state = self.git_dir / "nasfs" / f"publish-{hashlib.sha1(url.encode()).hexdigest()[:12]}.json"
        self.pending: dict[str, Entry] = {}
        self.failed: dict[str, Entry] = {}
        self.pushed = 0
        self._pushed_unsaved = 0  # pushes not yet added to the file's count
        self._settled: set[str] = set()  # settled here since the last save: another process's pending copy is dropped
        self._known: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        self._dirty = False
        self._load()
        self._thread = threading.Thread(target=self._run, name="nasfs-publish", daemon=True)
        self._thread.start()

    # -- the read side: cheap, never waits on the remote --------------------------
    def note(self, commits: Iterable[str]) -> None:
        added = False
        with self._lock:
            for c in commits:
                if c not in self._known:
                    self._known.add(c)
                    if c not in self.pending and c not in self.failed:
                        self.pending[c] = Entry(time.time())
                        added = self._dirty = True
        if added:
            self._wake.set()

    def render(self) -> str:
        """``.nas/stats`` lines: pushed, pending, failed and the oldest pending with its reason."""
        with self._lock:
            lines = [f"publish_remote={redacted(self.url)}", f"publish_pushed={self.pushed}",
                     f"publish_pending={len(self.pending)}", f"publish_failed={len(self.failed)}"]
            if self.pending:
                c, e = min(self.pending.items(), key=lambda kv: kv[1].since)
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.since))
                lines.append(f"publish_oldest_pending={c[:12]} since {stamp}: {e.reason}")
            for c, e in sorted(self.failed.items(), key=lambda kv: kv[1].since)[:3]:
                lines.append(f"publish_failed.{c[:12]}={e.reason}")
        return "\n".join(lines) + "\n"

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread; what is still pending is saved even if a push hangs."""
        self._stop = True
        self._wake.set()
        self._thread.join(timeout)
        self._save()

    # -- the publisher's thread ----------------------------------------------------
    def _run(self) -> None:
        try:  # this thread only (Linux nices threads one by one): packing a push yields the CPU to reads
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except OSError:
            pass
        try:
            publishing = Publishing(self.git_dir, self.url, self.node, self.private)
        except Exception as exc:  # noqa: BLE001 - a thread's failure is logged, never raised into a read
            log.error("publishing to %s not started: %s", redacted(self.url), exc)
            return
        while not self._stop:
            self._wake.wait(self._next_wait())
            self._wake.clear()
            if self._stop:
                break
            time.sleep(BATCH_WAIT)  # let a burst of reads gather into one push
            self._save()
            try:
                self._push_due(publishing)
            except Exception as exc:  # noqa: BLE001
                log.exception("publishing to %s: %s", redacted(self.url), exc)
            self._save()

    def _next_wait(self) -> float | None:
        with self._lock:
            dues = [e.due for e in self.pending.values()]
        return max(0.0, min(dues) - time.time()) if dues else None

    def _push_due(self, publishing: Publishing) -> None:
        now = time.time()
        with self._lock:
            due = [c for c, e in self.pending.items() if e.due <= now]
        full: dict[str, str] = {}
        for c in due:
            try:  # every commit pushed is asked about here, one by one; one that cannot be judged is not pushed
                commit = publishing.full_id(c)
                public = commit is not None and (self.private or publishing.is_public_snapshot(commit))
            except Exception as exc:  # noqa: BLE001 - never raised into the batch: the others are still pushed
                self._settle(c, f"not judged publishable: {exc}")
                continue
            if commit is None:
                self._settle(c, f"commit {c} is not in the repository's shared objects (a private snapshot's "
                                "store is read only with --publish-private)")
            elif not public:
                self._settle(c, "a snapshot not in the shared snapshot store (its file's readers are fewer than "
                                "the repository's); --publish-private pushes such snapshots too")
            else:
                full[c] = commit
        if not full:
            return
        try:
            outcome = publishing.push(sorted(set(full.values())))
        except Unavailable as exc:
            with self._lock:
                for c in full:
                    e = self.pending[c]
                    e.attempts += 1
                    e.reason = f"attempt {e.attempts}: {exc}"
                    e.due = time.time() + min(MAX_BACKOFF, 2.0 ** e.attempts)
                self._dirty = True
            log.warning("publishing to %s: %s; %d pending", redacted(self.url), exc, len(self.pending))
            return
        for c, commit in full.items():
            self._settle(c, outcome[commit])

    def _settle(self, c: str, refused: str | None) -> None:
        with self._lock:
            e = self.pending.pop(c)
            self._settled.add(c)
            if refused is None:
                self.pushed += 1
                self._pushed_unsaved += 1
            else:
                e.reason = refused
                self.failed[c] = e
            self._dirty = True

    # -- the pending file ----------------------------------------------------------
    def _load(self) -> None:
        try:
            data = json.loads(self.state.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.error("pending list %s unreadable (%s); starting empty", self.state, exc)
            return
        self.pushed = int(data.get("pushed", 0))
        self.pending = {c: Entry(**{**e, "due": 0.0}) for c, e in data.get("pending", {}).items()}
        self.failed = {c: Entry(**e) for c, e in data.get("failed", {}).items()}
        self._known = set(self.pending) | set(self.failed)
        if self.pending:
            self._wake.set()

    def _save(self) -> None:
        """Write the pending list, merged under a lock (fcntl) with what other
        processes publishing this repository to this remote (a mount and a
        serve) wrote: theirs is kept unless this process settled it. A file
        that cannot be written is logged and tried again at the next save."""
        with self._lock:
            if not self._dirty:
                return
            pending = {c: asdict(e) for c, e in self.pending.items()}
            failed = {c: asdict(e) for c, e in self.failed.items()}
            settled, pushed = set(self._settled), self._pushed_unsaved
            self._dirty = False
        try:
            self.state.parent.mkdir(mode=0o700, exist_ok=True)
            lock = os.open(self.state.with_name(self.state.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                disk = self._read()
                for c, e in disk.get("pending", {}).items():
                    if c not in settled and c not in pending and c not in failed:
                        pending[c] = e
                failed = {**disk.get("failed", {}), **failed}
                data = {"remote": self.url, "node": self.node, "pushed": int(disk.get("pushed", 0)) + pushed,
                        "pending": pending, "failed": failed}
                tmp = self.state.with_name(f"{self.state.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as fh:
                    json.dump(data, fh, indent=1)
                os.replace(tmp, self.state)
            finally:
                os.close(lock)  # releases the flock
        except OSError as exc:
            log.error("pending list %s not saved: %s", self.state, exc)
            with self._lock:
                self._dirty = True
            return
        with self._lock:
            self._settled -= settled
            self._pushed_unsaved -= pushed

    def _read(self) -> dict:
        try:
            data = json.loads(self.state.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.error("pending list %s unreadable (%s); written anew", self.state, exc)
            return {}
        return data if isinstance(data, dict) else {}
