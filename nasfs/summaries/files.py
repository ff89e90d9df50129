"""One file's summary: prompt, generation, citation check, record.

Runs in a worker (thread or ``nasfs index --summaries``), never in a read.
The lines the checker reads and hashes are the blob's own (LineIndex, as
views use), so each kept sentence's pointer verifies against the commit.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ..lines import LineIndex
from ..outline import Outline
from .backends import Backend
from .checker import check_lines, split_answer
from .prompt import file_prompt
from .settings import SummarySettings


def summarize_file(backend: Backend, settings: SummarySettings, path: str, blob_id: str, commit: str,
                   data: bytes, outline: Outline) -> dict[str, Any]:
    """The record of ``data``'s summary (store.py): every sentence written,
    those kept with their span and its sha256, those refused with why."""
    index = LineIndex(data)

    def lines(a: int, b: int) -> str:
        return index.slice(a, b).decode("utf-8", errors="replace")

    text = data.decode("utf-8", errors="replace")
    prompt = file_prompt(path, text, outline, settings.context_tokens, settings.max_tokens)
    started = time.monotonic()
    answer = backend.generate(prompt.system, prompt.user)
    seconds = time.monotonic() - started
    kept, refused = [], []
    for verdict in (check_lines(s, index.count, lines) for s in split_answer(answer)):
        s = verdict.sentence
        if verdict.supported:
            start, end = min(a for a, _ in s.cited), max(b for _, b in s.cited)
            digest = hashlib.sha256(index.slice(start, end)).hexdigest()
            kept.append({"text": s.text, "cited": s.cited, "start": start, "end": end, "sha256": digest})
        else:
            refused.append({"text": s.text, "cited": s.cited, "reason": verdict.reason})
    return {"model": backend.name, "path": path, "blob": blob_id, "commit": commit, "lines": index.count,
            "whole": prompt.whole, "written": len(kept) + len(refused), "kept": kept, "refused": refused,
            "seconds": round(seconds, 3), "answer": answer}
