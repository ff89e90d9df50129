"""Optional generated summaries (contract §7): a command of the user's, cached by blob.

The summarizer is any command that reads a file on stdin and writes a summary
on stdout (``NASFS_SUMMARIZER='llm -m local "summarize"'`` or ``--summarizer``).
Summaries are cached by blob id, so a file is summarized once per content.
When the command fails for a changed file, the last summary of that path is
served with ``stale=true`` and the commit it describes, never silently.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from .cache import DiskCache
from .errors import NotServable

TIMEOUT_SECONDS = 120
VALID = "@outline, @N, @section=NAME, @L12-L18"


@dataclass(frozen=True, slots=True)
class Summary:
    text: bytes
    commit: str  # the commit whose content it describes
    stale: bool


class Summarizer:
    def __init__(self, command: str, disk: DiskCache | None) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise NotServable("the summarizer command is empty", VALID)
        self.disk = disk
        self._memory: dict[str, bytes] = {}

    def _get(self, key: str) -> bytes | None:
        if key in self._memory:
            return self._memory[key]
        return self.disk.get(key) if self.disk else None

    def _put(self, key: str, value: bytes) -> None:
        self._memory[key] = value
        if self.disk:
            self.disk.put(key, value)

    def summarize(self, path: str, blob_id: str, commit: str, data: bytes, held: Callable[[str], bool]) -> Summary:
        """A summary of ``data``; ``held`` says whether the commit a last summary
        describes is still in the repository (and keeps it there), since a
        stale summary is served with that commit's evidence."""
        by_blob = f"summary:{blob_id}"
        by_path = f"summary-last:{path}"
        cached = self._get(by_blob)
        if cached is not None:
            return Summary(cached, commit, False)
        try:
            done = subprocess.run(self.argv, input=data, capture_output=True, timeout=TIMEOUT_SECONDS)
            failure = None if done.returncode == 0 and done.stdout.strip() else (
                f"exit {done.returncode}: {done.stderr.decode(errors='replace').strip()[:200] or 'no output'}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            failure = str(exc)
        if failure is None:
            text = done.stdout if done.stdout.endswith(b"\n") else done.stdout + b"\n"
            self._put(by_blob, text)
            self._put(by_path, json.dumps({"commit": commit, "text": text.decode("utf-8", "replace")}).encode())
            return Summary(text, commit, False)
        last = self._get(by_path)
        old = json.loads(last) if last is not None else None
        if old is not None and held(old["commit"]):
            return Summary(old["text"].encode(), old["commit"], True)
        raise NotServable(f"the summarizer failed for {path}: {failure}", VALID)
