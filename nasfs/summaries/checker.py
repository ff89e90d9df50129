"""Parse a model's cited sentences and check each one against what it cites.

A sentence is kept only when it cites something, every cited range exists
(``1 <= a <= b <= lines`` of the blob the model was given) and spans at most
MAX_CITED_LINES, and the rules of checks/rules.py hold against the cited
text: its numbers, names and identifiers occur there, and clause by clause
its words do, its numbers go with the same words, and its polarity agrees;
the words it pairs are not paired the other way round there (docs/summaries.md).

The rules are mechanical on purpose: a sentence that paraphrases too freely
is dropped with the facts the model invented.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .checks.rules import reasons, unsupported_by
from .checks.sentences import split_sentences
from .checks.words import content, tokens

VERSION = 38  # raised with any change to what the rules keep, so records they made are made again

MAX_CITED_LINES = 40
MAX_CITED_TOTAL = 3 * MAX_CITED_LINES  # all of a sentence's ranges together: the rules' reading grows with it

_RANGE = r"L?(\d+)(?:\s*(?:-|–|to)\s*L?(\d+))?"
_RANGES = rf"{_RANGE}((?:\s*[,;]\s*{_RANGE})*)\s*\]"
# [L3-L5], [3-5], [lines 3-5], (L3-L5), (lines 3-5), and a run of them ([L3][L5]); not a bare "(30000)", a
# call's argument or a count, nor a bare "[0]" glued to a word, an index (``argv[1]``): glued to a word, a
# citation needs its L or a range (``yearly[L3]``, ``yearly[3-5]``; a slice is ``[3:5]``), and a range that
# is no regex's class: not from 0, not after a "]" or "\\", not before a quantifier or a backtick (``v[0-9]+``)
_GLUED_RANGE = r"(?<![\]\\])\[\s*(?=[1-9]\d*\s*(?:-|–|to)\s*L?\d+\s*\](?![+*?{`]))"
CITATION = re.compile(rf"(?:(?<![\w\])])\[\s*(?:lines?\s*)?|\[\s*(?:lines?\s*(?=L?\d)|(?=L\d))|{_GLUED_RANGE}){_RANGES}"
                      rf"(?:\s*\[\s*(?:lines?\s*)?{_RANGES})*"
                      rf"|\(\s*(?:lines?\s*(?=L?\d)|(?=L\d)){_RANGE}((?:\s*[,;]\s*{_RANGE})*)\s*\)", re.IGNORECASE)
# a folder's [2], [#2], [2, 5] and [2][5]; not glued to a word (``argv[1]``)
_CHILDREN = r"\[\s*#?\d+(?:\s*[,;]\s*#?\d+)*\s*\]"
CHILD = re.compile(rf"(?<![\w\])]){_CHILDREN}(?:\s*{_CHILDREN})*")
_ONE = re.compile(_RANGE, re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


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
        for n, piece in enumerate(split_sentences(_BULLET.sub("", line).strip())):
            piece = piece.strip()
            if not piece:
                continue
            cited = tuple(r for m in pattern.finditer(piece) for r in read(m))
            text = re.sub(r"\s+([.,;:!?])(?=\s|$)", r"\1", re.sub(r"\s+", " ", pattern.sub(" ", piece))).strip(" \t*:")
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


def content_words(text: str) -> list[str]:
    """The words of ``text`` worth matching (not stop words), lowercase."""
    return [t.lower for t in tokens(text) if content(t)]


def check_lines(sentence: Sentence, line_count: int, lines: Callable[[int, int], str], path: str = "") -> Verdict:
    """Rule 1 against a blob of ``line_count`` lines, then rules 2-4 against
    the cited lines (``lines(a, b)`` gives lines a..b as text) and the file's
    ``path`` (the model is shown it: ``Read the Docs`` for ``.readthedocs.yaml``)."""
    first = next(refusals(sentence, line_count, lines, path), None)
    return Verdict(sentence, first[1] if first else None)


def refusals(sentence: Sentence, line_count: int, lines: Callable[[int, int], str],
             path: str = "") -> Iterator[tuple[str, str]]:
    """Each rule that refuses the sentence, as (rule, why), in order: check_lines keeps the first.
    Lazy: check_lines runs no rule after the first refusal, as before. Reading them all runs rules no
    verdict needs (100 s for a long sentence check_lines refuses in 0.01 s): for the labelled sets only,
    never for a model's text."""
    if not sentence.cited:
        yield "citation", "it cites no lines"
        return
    for a, b in sentence.cited:
        if a < 1 or b < a or b > line_count:
            yield "citation", f"it cites L{a}-L{b}, which is not a range of this file's {line_count} lines"
            return
        if b - a + 1 > MAX_CITED_LINES:
            yield "citation", f"it cites L{a}-L{b}, over {MAX_CITED_LINES} lines: too broad to check"
            return
    total = sum(b - a + 1 for a, b in set(sentence.cited))
    if total > MAX_CITED_TOTAL:
        yield "citation", f"it cites {total} lines in all, over {MAX_CITED_TOTAL}: too broad to check"
        return
    ranges = list(dict.fromkeys(sentence.cited))  # "[L2, L2, L2, ...]": each range read once, not once a mention
    cited = [(enclosing(a, lines, path), lines(a, b)) for a, b in ranges]
    yield from reasons(sentence.text, "\n".join(text for _, text in cited), path, ranges=cited)


CONTEXT_REACH = 400
CONTEXT_ROWS = 16  # the most lines above one range: a staircase of indents gave hundreds, for every range
_RST_RULE = re.compile(r"([=\-~^*#+])\1{2,}\s*")
_MARKDOWN = re.compile(r"(?i)(\.(md|markdown|rst|txt)|/?(readme|metadata|pkg-info)[^/]*)$")
_HEADING = re.compile(r"\s*(?:\[[^\]]+\]|#{1,6}\s\S)")


def enclosing(first: int, lines: Callable[[int, int], str], path: str = "") -> list[str]:
    """The lines above line ``first`` that it sits under, outermost first: each less indented line up
    to the margin (a YAML key, a ``class``/``def``, a stanza's ``License:``), and the section or heading
    it is in (``[testenv:docs]``, ``## Usage`` in Markdown, an underlined title); never a comment. A
    model reads a line in its section, so a sentence may name it ("the ascii style", "INotify's read")."""
    markdown = bool(_MARKDOWN.search(path))
    start = max(1, first - CONTEXT_REACH)
    rows = lines(start, first).removesuffix("\n").split("\n")
    head, rest = rows[-1], rows[:-1]
    if _HEADING.match(head) and _indent(head) == 0:
        return []  # a section's own heading: nothing above it says more about it
    indent = _indent(head) if head.strip() else 10**6
    out: list[str] = []
    for k in range(len(rest) - 1, -1, -1):
        row = rest[k]
        if not row.strip() or _RST_RULE.fullmatch(row) or (row.lstrip().startswith("#") and not markdown):
            continue
        heading = _HEADING.match(row) or (k + 1 < len(rest) and _RST_RULE.fullmatch(rest[k + 1]))
        if _indent(row) < indent:
            out.append(row)
            indent = _indent(row)
        elif indent == 0 and heading:
            out.append(row)
        if (heading and _indent(row) == 0) or len(out) >= CONTEXT_ROWS:
            break
    return out[::-1]


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def check_children(sentence: Sentence, children: list[str]) -> Verdict:
    """A folder's sentence against the texts of the children it cites (``[2]``: the second)."""
    if not sentence.cited:
        return Verdict(sentence, "it cites no child")
    for n, _ in sentence.cited:
        if not 1 <= n <= len(children):
            return Verdict(sentence, f"it cites [{n}], but the folder's summary was made from {len(children)} children")
    # each child read once, however often cited ("[1, 1, 1, ...]": the cited text grew with each mention, as
    # check_lines reads each range once): citations are taken out before MAX_WORDS counts the words
    source = "\n".join(children[n - 1] for n in dict.fromkeys(n for n, _ in sentence.cited))
    return Verdict(sentence, unsupported_by(sentence.text, source))
