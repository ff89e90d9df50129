"""One file's summary: prompt, generation, citation check, record.

Runs in a worker (thread or ``nasfs index --summaries``), never in a read.
The lines the checker reads and hashes are the blob's own (LineIndex, as
views use), so each kept sentence's pointers verify against the commit:
one pointer per cited range, hashed over exactly the lines it cites.
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


def cited_label(cited: list[list[int]] | tuple[tuple[int, int], ...]) -> str:
    """``L3-L4, L13``: the ranges a sentence cites, as the view prints them."""
    return ", ".join(f"L{a}" if a == b else f"L{a}-L{b}" for a, b in cited)


def summarize_file(backend: Backend, settings: SummarySettings, path: str, blob_id: str, commit: str,
                   data: bytes, outline: Outline, tree: str = "") -> dict[str, Any]:
    """The record of ``data``'s summary (store.py) as the rules leave it:
    every sentence written, those kept with one span (lines and their sha256)
    per cited range, those refused with why. The checker reads the tree's
    name with the path, as every pointer of the view shows them ("AnyIO" in
    a tree named anyio)."""
    index = LineIndex(data)

    def lines(a: int, b: int) -> str:
        return index.slice(a, b).decode("utf-8", errors="replace")

    text = data.decode("utf-8", errors="replace")
    prompt = file_prompt(path, text, outline, settings.context_tokens, settings.max_tokens)
    started = time.monotonic()
    answer = backend.generate(prompt.system, prompt.user)
    seconds = time.monotonic() - started
    kept, refused = [], []
    named = f"{tree}/{path}" if tree else path
    for verdict in (check_lines(s, index.count, lines, named) for s in split_answer(answer)):
        s = verdict.sentence
        if verdict.supported:
            spans = [{"start": a, "end": b, "sha256": hashlib.sha256(index.slice(a, b)).hexdigest()} for a, b in s.cited]
            kept.append({"text": s.text, "cited": s.cited, "spans": spans})
        else:
            refused.append({"text": s.text, "cited": s.cited, "reason": verdict.reason})
    return {"model": backend.name, "path": path, "blob": blob_id, "commit": commit, "lines": index.count,
            "whole": prompt.whole, "written": len(kept) + len(refused), "kept": kept, "refused": refused,
            "seconds": round(seconds, 3), "answer": answer, "checked": "rules"}


def cited_text(data: bytes, kept: dict[str, Any]) -> str:
    """The lines a kept sentence cites, each range in turn (what the rules read)."""
    index = LineIndex(data)
    return "\n".join(index.slice(a, b).decode("utf-8", errors="replace") for a, b in kept["cited"])
