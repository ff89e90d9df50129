"""Where a model's text splits into sentences, and a sentence into clauses.

A full stop ends a sentence only when it is not an abbreviation's (``e.g.``,
``i.e.``, ``etc.``), not an initial's (``Eric S. Raymond``), and the next
word does not start with a digit; no full stop, and no ``?`` or ``!`` inside
quotes or brackets (``'[?]' and 'txt'``), ends one before a word in lower case. A clause starts at ``;``,
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
_LAST_WORD = re.compile(r"(\S+)$")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (one line of a model's answer)."""
    out, start, since = [], 0, 0
    for m in _END.finditer(text):
        word = _LAST_WORD.search(text, since, m.start())  # since the last end's space: linear in the text
        since = m.end()
        last = word.group(1).lower().lstrip("(\"'") if word else ""
        after = text[m.end():m.end() + 1]
        if after and after.islower() and (text[m.start()] == "." or m.group(0).rstrip()[-1] in "\"')]"):
            continue  # no sentence starts in lower case after a full stop, or after "'[?]'" quoted or bracketed
        if text[m.start()] == "." and (last in ABBREVIATIONS or re.fullmatch(r"[A-Za-z]", last) or after.isdigit()):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return [s for s in out if s]


def split_clauses(sentence: str) -> list[str]:
    """The clauses of a sentence; a piece with fewer than MIN_CLAUSE_WORDS content words stays with its
    neighbour, with the text between them (``in total, with 251.42 of tax`` keeps its comma)."""
    spans, start = [], 0
    for m in _CLAUSE.finditer(sentence):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(sentence)))
    spans = [(a, b) for a, b in spans if sentence[a:b].strip()]

    def words(a: int, b: int) -> int:
        return sum(content(t) for t in tokens(sentence[a:b]))

    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and words(a, b) < MIN_CLAUSE_WORDS:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    if len(out) > 1 and words(*out[0]) < MIN_CLAUSE_WORDS:
        out[:2] = [(out[0][0], out[1][1])]
    return [sentence[a:b].strip() for a, b in out]
