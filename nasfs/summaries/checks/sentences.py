"""Where a model's text splits into sentences, and a sentence into clauses.

A full stop ends a sentence only when it is not an abbreviation's (``e.g.``,
``i.e.``, ``etc.``), not an initial's (``Eric S. Raymond``), and the next
word does not start in lower case or with a digit. A clause starts at ``;``,
at a comma before a conjunction, at ``but``/``while``/``whereas``/``although``,
and at ``and`` before what reads as a new verb or subject (``and runs``,
``and is``, ``and the``; not ``and pull requests``); a piece with fewer than MIN_CLAUSE_WORDS content
words stays with its neighbour (``ruff, tox and tox-uv`` is one list). Each
clause must be supported on its own, so a true clause cannot carry an
invented one.
"""

from __future__ import annotations

import re

from .words import ABBREVIATIONS, content, tokens

_END = re.compile(r"[.!?]+[\"')\]]*\s+")
_CLAUSE = re.compile(
    r"\s*;\s*"
    r"|,\s+(?=(?:and|but|while|whereas|which|so|although|though|yet|because|falling|with)\b)"
    r"|\s+(?=(?:but|while|whereas|although|though)\s)"
    r"|\s+(?=and\s+(?:(?:is|are|was|were|has|have|had|can|must|may|will|should|then|also|the|it|its|they|their"
    r"|this|that|these|those|on|under|in)\b|\w*[^s\W]s\b(?!\s+(?:can|cannot|could|may|might|must|will|would|should"
    r"|are|were|have|do|did|need)\b)))",
    re.IGNORECASE)
MIN_CLAUSE_WORDS = 2


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (one line of a model's answer)."""
    out, start = [], 0
    for m in _END.finditer(text):
        word = re.search(r"(\S+)$", text[:m.start()])
        last = word.group(1).lower().lstrip("(\"'") if word else ""
        after = text[m.end():m.end() + 1]
        if text[m.start()] == "." and (last in ABBREVIATIONS or re.fullmatch(r"[A-Za-z]", last)
                                       or (after and (after.islower() or after.isdigit()))):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def split_clauses(sentence: str) -> list[str]:
    """The clauses of a sentence; a piece with fewer than MIN_CLAUSE_WORDS content words stays with its neighbour."""
    pieces = [p for p in _CLAUSE.split(sentence) if p and p.strip()]
    out: list[str] = []
    for piece in pieces:
        if out and sum(content(t) for t in tokens(piece)) < MIN_CLAUSE_WORDS:
            out[-1] = f"{out[-1]} {piece.strip()}"
        else:
            out.append(piece.strip())
    if len(out) > 1 and sum(content(t) for t in tokens(out[0])) < MIN_CLAUSE_WORDS:
        out[:2] = [f"{out[0]} {out[1]}"]
    return out
