"""Which words of the cited text go together, and how closely: a sentence that pairs them otherwise
swapped them.

How close two words are (the best over their places):

- 3: one line of structured text, or within EIGHT words in one sentence of prose;
- 2: a line and a line under it (a key and its value, a section and its keys), two lines under one
  (the keys of one mapping, list item or stanza), one sentence of prose;
- 1: one block (lines with no blank line between them), one paragraph of prose;
- 0: otherwise.

A sentence groups its words by the pieces that commas, semicolons, parentheses, a colon before a
space and ``and``/``while``/``whereas``/``but`` separate (``Windows uses macos-latest | and Mac
windows-latest``; words inside one piece are left to rules.py's neighbour rules). Two words of two
groups were swapped when exchanging them brings each group closer in the cited text: "the
typing environment uses Python 3.13 and type_completeness uses Python 3.10" where 3.10 sits under
``[testenv:typing]``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from itertools import combinations

from .reading import Line, Reading
from .words import Token, content, is_name, numbers_of, stem, tokens

NEAR = 8
_GROUP_END = re.compile(r"[,;()]|:\s|\s(?:and|while|whereas|but)\s", re.IGNORECASE)


@dataclass(frozen=True)
class Place:
    line: int
    pos: int  # the word's index in its line (structured) or in its paragraph (prose)
    sentence: int  # which sentence of prose (-1 for a structured line)
    block: int


class Closeness:
    """Where each word of the cited text is, to tell how close two words are."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.places: dict[str, list[Place]] = {}
        self._of: dict[tuple[str, str], int] = {}
        self._breaks_before = [0]  # [k]: how many of lines[:k] end a block
        for ln in reading.lines:
            self._breaks_before.append(self._breaks_before[-1] + _breaks(ln.raw))
        block = 0
        sentence = 0
        pos_in_paragraph = 0
        for i, ln in enumerate(reading.lines):
            if _breaks(ln.raw):
                block += 1
                continue
            prose = reading.paragraph[i] is not None
            if prose and (i == 0 or reading.paragraph[i - 1] is None or _literal(reading, i)):
                pos_in_paragraph = 0  # a new paragraph, or a new line of a YAML literal block (a command)
                sentence += 1
            for k, t in enumerate(ln.tokens):
                if prose:
                    pos, sent = pos_in_paragraph, sentence
                    pos_in_paragraph += 1
                    if re.search(r"[.!?]$", t.text) or re.match(r"[.!?]", ln.raw[t.start + len(t.text):][:1]):
                        sentence += 1
                else:
                    pos, sent = k, -1
                place = Place(i, pos, sent, block)
                for form in _forms(t):
                    self.places.setdefault(form, []).append(place)

    def where(self, t: Token) -> list[Place]:
        """The places of a sentence's word: its number, its whole form, else its stem, else its rarest part
        (``high-level`` where the text says ``high level``)."""
        nums = numbers_of(t)
        if len(nums) > 1 and t.lower in self.places:  # 20:03:47, 2013-2026: the whole of it
            return self.places[t.lower]
        if nums:
            return [p for n in nums for p in self.places.get("#" + n, [])]
        found = self.places.get(t.lower.strip("."), []) or self.places.get("~" + stem(t.lower), [])
        if found or len(t.parts) < 2:
            return found
        return min((self.places.get(p, []) for p in t.parts), key=lambda x: len(x) or 10**9)

    def lines_of(self, t: Token) -> int:
        """On how many cited lines the word is said in its own form."""
        return len({p.line for p in self.places.get(t.lower.strip("."), [])})

    def _siblings(self, i: int, j: int) -> bool:
        """Two lines of one mapping or list item (at any depth under it), or of one stanza (``Files:``,
        ``License:``)."""
        lines, up = self.reading.lines, self.reading.ancestors
        if any(lines[k].kind == "item" for k in up[i] & up[j]):
            return True
        return (self.reading.parents[i] == self.reading.parents[j] and lines[i].kind != "prose" != lines[j].kind
                and self._breaks_before[max(i, j)] == self._breaks_before[min(i, j)])

    def of(self, a: Token, b: Token) -> int:
        """How close ``a`` and ``b`` are: the best over pairs of their places (the module's docstring).
        Worked out by sentence, line and block rather than pair by pair: a word said thousands of times
        on a long cited line made the pairs millions. Kept by the words' text (their places are all it
        reads): swapped() weighs each pair again for every pair of words it tries, and 100 words in 20
        groups, each said on every cited line, asked it 76,000 times (10 s)."""
        if a.text > b.text:
            a, b = b, a  # how close is symmetric: each pair once
        asked = (a.text, b.text)
        if asked not in self._of:
            self._of[asked] = self._of_places(self.where(a), self.where(b))
        return self._of[asked]

    def _of_places(self, pa: list[Place], pb: list[Place]) -> int:
        if not pa or not pb:
            return 0
        sentences_a: dict[int, list[int]] = {}
        for p in pa:
            if p.sentence >= 0:
                sentences_a.setdefault(p.sentence, []).append(p.pos)
        for positions in sentences_a.values():
            positions.sort()
        shared_sentence = False
        for q in pb:
            if q.sentence >= 0 and q.sentence in sentences_a:
                shared_sentence = True
                if any(abs(pos - q.pos) <= NEAR for pos in _nearest(sentences_a[q.sentence], q.pos)):
                    return 3  # within NEAR words in one sentence of prose
        on_a: dict[int, set[int]] = {}
        for p in pa:
            on_a.setdefault(p.line, set()).add(p.sentence)
        on_b: dict[int, set[int]] = {}
        for q in pb:
            on_b.setdefault(q.line, set()).add(q.sentence)
        for line in on_a.keys() & on_b.keys():
            sa, sb = on_a[line], on_b[line]
            if -1 in sa or -1 in sb or len(sa | sb) > 1:
                return 3  # one line, and not only one sentence of prose (that was scored above)
        if shared_sentence:
            return 2
        up = self.reading.ancestors
        for i in on_a:
            for j in on_b:
                if i != j and (i in up[j] or j in up[i] or self._siblings(i, j)):
                    return 2
        return 1 if {p.block for p in pa} & {q.block for q in pb} else 0


def _literal(reading: Reading, i: int) -> bool:
    """Line ``i`` is in a YAML literal block (``run: |``): each of its lines stands alone, a command,
    never one sentence with the next."""
    parent = reading.parents[i]
    return parent is not None and bool(re.search(r":\s*\|[-+]?\s*$", reading.lines[parent].raw))


def _nearest(sorted_positions: list[int], pos: int) -> list[int]:
    """The positions either side of ``pos`` in an ascending list."""
    k = bisect_left(sorted_positions, pos)
    return sorted_positions[max(0, k - 1):k + 1]


def _breaks(raw: str) -> bool:
    """A blank line, or a YAML document's start or end (``---``, ``...``), ends a block."""
    return not raw.strip() or raw.strip() in ("---", "...")


def _forms(t: Token) -> list[str]:
    forms = [t.lower.strip("."), *t.parts, *("~" + stem(p) for p in (t.lower, *t.parts))]
    return forms + ["#" + n for n in numbers_of(t)]


def groups(sentence: str) -> list[list[Token]]:
    """The sentence's words that can be swapped, grouped as the sentence pairs them."""
    out = []
    for piece in _GROUP_END.split(sentence):
        words = [t for t in tokens(piece) if numbers_of(t) or content(t)]
        if words:
            out.append(words)
    return out


def swapped(sentence: str, reading: Reading) -> str | None:
    """Two words of two groups that the cited text pairs the other way round, or None."""
    near = Closeness(reading)
    found = [[t for t in g if near.where(t)] for g in groups(sentence)]
    found = [g for g in found if g]
    for g1, g2 in combinations(found, 2):
        in1, in2 = {t.lower for t in g1}, {t.lower for t in g2}
        for x in g1:
            for y in g2:
                if (x.lower in in2 or y.lower in in1 or bool(numbers_of(x)) != bool(numbers_of(y))
                        or not _specific(x, near) or not _specific(y, near)):
                    continue
                rest1 = [g for g in g1 if g is not x and g.lower not in in2]  # a word of both tells nothing
                rest2 = [g for g in g2 if g is not y and g.lower not in in1]
                now1, now2 = [near.of(x, g) for g in rest1], [near.of(y, g) for g in rest2]
                then1, then2 = [near.of(y, g) for g in rest1], [near.of(x, g) for g in rest2]
                if (sum(then1) > sum(now1) and sum(then2) > sum(now2)
                        and max(then1, default=0) >= 2 and max(then2, default=0) >= 2):
                    return (f"{x.text!r} and {y.text!r} are swapped: the cited text puts {y.text!r} with "
                            f"{_best(near, y, rest1).text!r} and {x.text!r} with {_best(near, x, rest2).text!r}")
    return None


def _best(near: Closeness, t: Token, others: list[Token]) -> Token:
    return max(others, key=lambda o: near.of(t, o))


def _specific(t: Token, near: Closeness) -> bool:
    """A number, a name, or a word said on at most two of the cited lines: one that can be misplaced."""
    return bool(numbers_of(t)) or is_name(t, False) or near.lines_of(t) <= 2


# What joins two words in a given direction: a change (``max -> maximum``), a choice (``wheels instead
# of sdist``), a range (``2013-2026``). The same family must run the same way in the cited text.
_JOINS = {
    "change": r"->|→|=>|\bbecomes?\b|\brenamed(?: to)?\b|\bconverted to\b|\bturns? into\b|\binto\b",
    "choice": r"\binstead of\b|\brather than\b|,?\s*\bnot\b|\bover\b",
    "range": r"\s*[-–]\s*|\bto\b|\bthrough\b|\buntil\b|\.\.",
}
JOIN_GAP = 60  # characters between a word and its join: unbounded, a long line's every word was read to its end
_FILLER = r"(?:\s|`|'|\"|\ban?\b|\bthe\b|\bis\b|\bare\b)*"
_NOUN = r"(?:archives?|files?|ones?|formats?|packages?|versions?|values?|names?)"  # "A archives into B": A into B


def reversed_pair(sentence: str, reading: Reading) -> str | None:
    """Two words the sentence joins one way (``maximum becomes max``, ``sdist rather than a wheel``,
    ``from 2026 to 2013``) that the cited text joins the other way only."""
    words = [t for t in tokens(sentence) if numbers_of(t) or content(t)]
    cited = [ln.raw for ln in reading.said()] + [s.text for s in reading.statements]
    for a, b in ((a, b) for k, a in enumerate(words) for b in words[k + 1:k + 4]):
        between = sentence[a.start + len(a.text):b.start]
        for family, join in _JOINS.items():
            if not re.fullmatch(f"{_FILLER}(?:{_NOUN}\\s+)?(?:{join}){_FILLER}", between, re.IGNORECASE):
                continue
            if family == "range" and not (numbers_of(a) and numbers_of(b)):
                continue
            same = _joined(cited, a, b, join)
            if _joined(cited, b, a, join) and not same:
                return f"{a.text!r} and {b.text!r} are the other way round in the cited text"
        if (re.fullmatch(f"{_FILLER}to{_FILLER}", between, re.IGNORECASE)
                and re.search(r"\bfrom\s+(?:\S+\s+){0,2}$", sentence[:a.start], re.IGNORECASE)
                and _joined(cited, a, b, _JOINS["choice"]) and not _joined(cited, b, a, _JOINS["choice"])):
            # "moves from A to B" where the lines choose A over B ("A instead of B"): the move was from B to A
            return f"from {a.text!r} to {b.text!r} is the other way round in the cited text"
    return _reversed_key(sentence, tokens(sentence), words, reading) or _out_of_order(tokens(sentence), reading)


_ORDER = {"before": True, "after": False}  # "A before B": A comes first in the cited lines
_WAITING = re.compile(r"^\s*(?:needs|depends(?:_on)?|depends-on)\s*[:=]", re.MULTILINE)


def _out_of_order(toks: list[Token], reading: Reading) -> str | None:
    """``A ... before B`` (or ``after``) where A and B are names each on one cited line of a list, a
    file's lines in the order they run or are searched, and B's line comes first (``make typecheck``
    before ``make format-check`` where the commands run the other way)."""
    if _WAITING.search(reading.lowered):
        return None  # jobs that run in the order they wait for, not as they are written
    said = [(i, ln) for i, ln in enumerate(reading.lines) if i not in reading.named and ln.kind != "prose"]
    for k, t in enumerate(toks):
        if t.lower not in _ORDER or not 0 < k < len(toks) - 1:
            continue
        a = next((x for x in reversed(toks[max(0, k - 3):k]) if is_name(x, False)), None)
        b = next((x for x in toks[k + 1:k + 4] if is_name(x, False)), None)
        if a is None or b is None:
            continue
        where_a, where_b = (_places(x, said) for x in (a, b))
        if len(where_a) != 1 or len(where_b) != 1 or where_a == where_b:
            continue
        if reading.parents[where_a[0]] != reading.parents[where_b[0]]:
            continue  # not one list
        here_a, here_b = (a, where_a[0]), (b, where_b[0])
        (first, at_first), (then, at_then) = (here_a, here_b) if _ORDER[t.lower] else (here_b, here_a)
        if at_then < at_first:
            return f"{first.text!r} {t.text} {then.text!r} is the other way round in the cited lines' order"
    return None


def _places(t: Token, said: list[tuple[int, Line]]) -> list[int]:
    """The cited lines (structured ones) that hold the word whole."""
    low = t.lower.strip(".")
    return [i for i, ln in said if any(x.lower.strip(".") == low for x in ln.tokens)]


# A key that makes the section it sits under wait for its values (a CI job's needs:, a tox env's depends =),
# and the words a sentence says that with: "A waits for B", "A only starts once B", "B runs before A".
_WAIT_KEYS = frozenset({"needs", "depends"})
_WAITS = frozenset(stem(w) for w in "needs requires waits depends after once".split())
_FIRST = frozenset({"before"})
# "once", "after" or "before" that opens a clause (after a comma, "and"...) has its subject after it: "B runs
# first, and once it passes, A runs" says what "A needs B" says, so the words before it are another clause's
_OPENS = frozenset({"once", "after", "before"})
_CLAUSE_JOINS = frozenset({"and", "but", "so", "then", "while", "whereas"})
_DETERMINERS = frozenset("a an the its their this that these those his her our your".split())
_POSSESSIVE = re.compile(r"['\u2019]s?\s")


def _reversed_key(sentence: str, toks: list[Token], words: list[Token], reading: Reading) -> str | None:
    """``A needs B`` where the cited text has ``needs: [A]`` under B: a key read as a verb, its subject
    the line the key sits under and its object the key's value; the same for a verb of waiting said
    of a key that waits (``A waits for B``, ``A only starts once B``), and, the other way, ``before``."""
    lines = reading.lines
    starts = [w.start for w in words]
    for t, verb in enumerate(toks):  # any word ("once" is no content word); what it joins, the content words around it
        k = bisect_left(starts, verb.start)
        if not 0 < k < len(words):
            continue
        if verb.lower in _OPENS and t and (toks[t - 1].lower in _CLAUSE_JOINS or any(
                c in ",;:(" for c in sentence[toks[t - 1].start + len(toks[t - 1].text):verb.start])):
            continue  # it opens a clause: the words before it are not what waits
        if t + 1 < len(toks) and toks[t + 1].lower == "to" and stem(verb.lower) in _WAITS:
            continue  # "B needs to finish before A": a modal, not "B needs A"
        if t and (toks[t - 1].lower in _DETERMINERS or _POSSESSIVE.match(sentence, toks[t - 1].start + len(toks[t - 1].text))):
            continue  # "pip's cache", "the needs": a noun, no verb joining the words around it
        for i, ln in enumerate(lines):
            if ln.kind not in ("key", "item") or not ln.tokens:
                continue
            key = stem(ln.tokens[0].lower)
            waits = ln.tokens[0].lower in _WAIT_KEYS and stem(verb.lower) in _WAITS
            first = ln.tokens[0].lower in _WAIT_KEYS and verb.lower in _FIRST
            if key != stem(verb.lower) and not waits and not first:
                continue
            values = {x.lower for x in ln.tokens[1:]}
            above = {x.lower for j in reading.ancestors[i] for x in lines[j].tokens}
            before = {x.lower for x in words[max(0, k - 3):k]}
            after = {x.lower for x in words[k + (words[k] == verb):][:3]}
            if first:  # "B runs before A" says what "A needs B" says
                before, after = after, before
            if before & values and after & above and not (before & above and after & values):
                return (f"{sorted(before & values)[0]!r} {verb.text} {sorted(after & above)[0]!r} is the other way "
                        "round in the cited text")
    return None


def _joined(texts: list[str], first: Token, then: Token, join: str) -> bool:
    """Some text says ``first`` and then ``then`` with a join of the family between them."""
    one, two = _form(first), _form(then)
    pattern = re.compile(f"{one}[`'\"\\]]*(?:\\s|\\w){{0,{JOIN_GAP}}}?(?:{join})[^\\n]{{0,30}}?{two}", re.IGNORECASE)
    return any(pattern.search(t) for t in texts)


def _form(t: Token) -> str:
    """A word as a pattern: itself with a plural ending, a number with its digits alone."""
    nums = numbers_of(t)
    if nums:
        return rf"(?<![\d.]){re.escape(nums[0])}(?![\d])"
    word = re.escape(stem(t.lower)) if len(t.lower) > 4 else re.escape(t.lower)
    return rf"(?<!\w){word}\w{{0,3}}(?!\w)"  # not \b: a word may start with a dot (.egg)


_MAPPED = re.compile(r"^\s*['\"]?(\d{1,6})['\"]?\s*(?::|=>?|->)\s*['\"]?([\w.-]{1,80})")


def mapped(sentence: str, reading: Reading) -> str | None:
    """A number the sentence pairs with a name (``verbosity 2 is INFO``) where the cited lines map
    that number to another name and the name to another number (``2: logging.WARNING``,
    ``3: logging.INFO``): a table's rows swapped."""
    table: dict[str, set[str]] = {}
    for i, ln in enumerate(reading.lines):
        m = _MAPPED.match(ln.raw)
        if m and i not in reading.named:
            name = m.group(2).lower()
            table.setdefault(m.group(1), set()).update({name, name.rsplit(".", 1)[-1]})
    if len(table) < 2:
        return None
    toks = tokens(sentence)
    names = set().union(*table.values())
    for k, t in enumerate(toks):
        for n in numbers_of(t):
            other = _mapped_name(sentence, toks, k, names)
            if n not in table or other is None:
                continue
            low = other.lower
            rows = [m for m, held in table.items() if low in held or low.rsplit(".", 1)[-1] in held]
            if rows and n not in rows:
                return (f"{t.text} goes with {other.text!r} here, but the cited lines map {n} to "
                        f"{sorted(table[n])[0]!r} and {other.text!r} to {rows[0]}")
    return None


# the words that pair a number with a name ("2 means INFO", "INFO is level 2", "2 corresponds to logging.INFO")
_LINKS = frozenset("""is are was means mean meaning maps map mapped to corresponds correspond gives give selects select
sets set becomes become equals equal stands for as level verbosity value the a""".split())


def _mapped_name(sentence: str, toks: list[Token], k: int, names: set[str]) -> Token | None:
    """The name of a table nearest after toks[k] (or else before it), within three words, across no
    comma, coordinator or other number."""
    for step in (1, -1):
        for j in range(k + step, k + 4 * step, step):
            if not 0 <= j < len(toks):
                break
            a, b = sorted((toks[j], toks[j - step]), key=lambda x: x.start)
            if re.search(r"[,;:()]", sentence[a.start + len(a.text):b.start]) or numbers_of(toks[j]) or \
                    toks[j].lower in ("and", "or", "but", "while", "whereas"):
                break
            if toks[j].lower in names or toks[j].lower.rsplit(".", 1)[-1] in names:
                return toks[j]
            if toks[j].lower not in _LINKS:
                break  # "levels 0 to 3 go from ERROR", "3 levels above ERROR": no pair of a row
    return None
