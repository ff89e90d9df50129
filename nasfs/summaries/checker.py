"""Parse a model's cited sentences and check each one against what it cites.

A sentence is kept only when every rule holds (docs/summaries.md):

1. it cites something, and every cited range exists (``1 <= a <= b <= lines``
   of the blob the model was given) and spans at most MAX_CITED_LINES;
2. every number in it occurs as a number in the cited text;
3. every identifier (``snake_case``, ``camelCase``, ``dotted.name``, ``call()``)
   and every quoted or backticked name occurs in the cited text;
4. at least OVERLAP of its content words (3+ letters, not a stop word) occur
   in the cited text, a word matching on its first PREFIX letters (so
   ``renews`` matches ``renewal``), and at least one does.

The rules are mechanical on purpose: a sentence that paraphrases too freely
is dropped with the facts the model invented.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

VERSION = 1  # raised with any change to what the rules keep, so records they made are made again
MAX_CITED_LINES = 40
OVERLAP = 0.5
PREFIX = 5

_RANGE = r"L?(\d+)(?:\s*(?:-|–|to)\s*L?(\d+))?"
CITATION = re.compile(rf"[\[(]\s*(?:lines?\s*)?{_RANGE}((?:\s*[,;]\s*{_RANGE})*)\s*[\])]", re.IGNORECASE)
CHILD = re.compile(r"\[\s*#?(\d+)((?:\s*[,;]\s*#?\d+)*)\s*\]")
_ONE = re.compile(_RANGE, re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_IDENT = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b|\b\w*[a-z][A-Z]\w*\b|\b\w*_\w+\b|\b\w+(?=\(\))")
_QUOTED = re.compile(r"`([^`]{1,80})`|\"([^\"]{2,80})\"|(?:(?<=\s)|^)'([^']{2,80})'(?=[\s.,;:!?]|$)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
STOP = frozenset("""
a about above after again all also an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers him his
how i if in into is it its itself just me more most my no nor not now of off on once only or other our out over
own same she should so some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours
file files document section sections line lines text content contents summary summarize summarizes describes
describe described contains contain provides provide lists list shows show explains explain mentions mention
includes include including covers cover presents present gives give discusses discuss defines define
uses use used using way ways part parts overall main various several many one two three first second
""".split())


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence as the model wrote it, its citations taken out."""

    text: str
    cited: tuple[tuple[int, int], ...]  # line ranges, or (child, child) for a folder's children


@dataclass(frozen=True, slots=True)
class Verdict:
    sentence: Sentence
    reason: str | None  # None: supported

    @property
    def supported(self) -> bool:
        return self.reason is None


def _ranges(m: re.Match[str]) -> tuple[tuple[int, int], ...]:
    found = []
    for r in _ONE.finditer(m.group(0)):
        a = int(r.group(1))
        found.append((a, int(r.group(2)) if r.group(2) else a))
    return tuple(found)


def _children(m: re.Match[str]) -> tuple[tuple[int, int], ...]:
    return tuple((int(n), int(n)) for n in re.findall(r"\d+", m.group(0)))


def split_answer(answer: str, folder: bool = False) -> list[Sentence]:
    """The sentences of an answer, each with what it cites. A citation on a
    line of its own belongs to the sentence after it (the prompt asks for the
    label first), or, at the very end, to an uncited sentence before it."""
    pattern, read = (CHILD, _children) if folder else (CITATION, _ranges)
    out: list[Sentence] = []
    waiting: tuple[tuple[int, int], ...] = ()  # a citation on a line of its own: the next sentence's
    for line in answer.strip().splitlines():
        for n, piece in enumerate(_SENTENCE_END.split(_BULLET.sub("", line).strip())):
            piece = piece.strip()
            if not piece:
                continue
            cited = tuple(r for m in pattern.finditer(piece) for r in read(m))
            text = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s+", " ", pattern.sub(" ", piece))).strip(" \t*:")
            if re.search(r"[A-Za-z]{2}", text):
                out.append(Sentence(text, cited or waiting))
                waiting = ()
            elif n and out and not out[-1].cited:  # "The contract renews yearly. [L11-L14]"
                out[-1] = Sentence(out[-1].text, cited)
            else:  # "[L11-L14]" alone on its line, before its sentence (as the prompt asks)
                waiting += cited
    if waiting and out and not out[-1].cited:  # "... renews yearly.\n[L11-L14]" at the very end
        out[-1] = Sentence(out[-1].text, waiting)
    return out


def _stem(word: str) -> str:
    return word.lower()[:PREFIX]


def content_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) >= 3 and w.lower().strip("'-") not in STOP]


def unsupported_by(text: str, source: str) -> str | None:
    """Why ``text`` is not supported by ``source`` (rules 2-4), or None."""
    numbers = {n.replace(",", "") for n in _NUMBER.findall(source)}
    for n in _NUMBER.findall(text):
        if n.replace(",", "") not in numbers:
            return f"the number {n} is not in the cited text"
    for m in _QUOTED.finditer(text):
        quoted = next(g for g in m.groups() if g is not None)
        if quoted.lower() not in source.lower():
            return f"the quoted name {quoted!r} is not in the cited text"
    for ident in _IDENT.findall(text):
        if ident not in source:
            return f"the identifier {ident!r} is not in the cited text"
    words = content_words(text)
    if not words:
        return "it says nothing that can be checked (no content words)"
    present = {_stem(w) for w in content_words(source)}
    hits = sum(1 for w in words if _stem(w) in present)
    if hits == 0 or hits / len(words) < OVERLAP:
        return f"only {hits} of its {len(words)} content words occur in the cited text (needs {OVERLAP:.0%})"
    return None


def check_lines(sentence: Sentence, line_count: int, lines: Callable[[int, int], str]) -> Verdict:
    """Rule 1 against a blob of ``line_count`` lines, then rules 2-4 against
    the cited lines (``lines(a, b)`` gives lines a..b as text)."""
    if not sentence.cited:
        return Verdict(sentence, "it cites no lines")
    for a, b in sentence.cited:
        if a < 1 or b < a or b > line_count:
            return Verdict(sentence, f"it cites L{a}-L{b}, which is not a range of this file's {line_count} lines")
        if b - a + 1 > MAX_CITED_LINES:
            return Verdict(sentence, f"it cites L{a}-L{b}, over {MAX_CITED_LINES} lines: too broad to check")
    source = "\n".join(lines(a, b) for a, b in sentence.cited)
    return Verdict(sentence, unsupported_by(sentence.text, source))


def check_children(sentence: Sentence, children: list[str]) -> Verdict:
    """A folder's sentence against the texts of the children it cites (``[2]``: the second)."""
    if not sentence.cited:
        return Verdict(sentence, "it cites no child")
    for n, _ in sentence.cited:
        if not 1 <= n <= len(children):
            return Verdict(sentence, f"it cites [{n}], but the folder's summary was made from {len(children)} children")
    source = "\n".join(children[n - 1] for n, _ in sentence.cited)
    return Verdict(sentence, unsupported_by(sentence.text, source))
