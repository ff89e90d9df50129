"""The cited lines as the rules read them: words, numbers, statements, structure.

A *statement* is what polarity is judged on: a line of structured text (a
YAML/TOML/INI key, a list item, a section header), or a sentence of prose.
Each line knows its parent (the nearest less indented line or header above
it) and its ancestors, which binding.py weighs to tell which words go
together. The lines above a cited range (checker.enclosing) are read for
their words and structure only: they name a section, they state nothing.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from .idioms import glosser
from .words import (SHORT_FORMS, SYNONYMS, Token, american, content, is_common, is_identifier, is_name, is_negation,
                    key, normal_number, numbers_of, stem, tag_version, tokens)

_HEADER = re.compile(r"(?:\s*\[[^\]]+\]\s*(?:#.*)?|#{1,6}\s.*)$")
_ITEM = re.compile(r"\s*(?:[-*+](?:\s|$)|\d+[.)]\s|[\"'{\[])")
_KEY = re.compile(r"\s*[\w.$\"'/-]+\s*(?::(?:\s|$)|=)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(\[])")
_BRACE = re.compile(r"\{([^{}]{1,200})\}")  # tox's py{39,310}, a shell's {a,b}
_CRON = re.compile(r"\bcron:\s*['\"]?[\d*/,-]+\s+([\d*/,-]+)\s+([\d*/,?LW-]+)\s+[\w*/,-]+\s+([\w*/,?#-]+)")
_DAYS = "sunday monday tuesday wednesday thursday friday saturday sunday".split()
_VERSION_TUPLE = re.compile(r"version_info\s*(?:\[[^\]\n]{0,10}\]\s*)?[<>=!]=?\s*\(\s*(\d{1,3})\s*,\s*(\d{1,3})\b")
_WORD_CHAR = re.compile(r"[\w.-]")
_AT_LEAST = re.compile(r">=?|\u2265|(?<=\d)\+|\bor (?:newer|later|above|higher)\b")
_BELOW = re.compile(r"<=?(?!<)|\u2264")
MAX_GLOSSED = 2000  # the longest line idioms.py reads: a setting, command or statement is shorter; a longer
#   line (minified, data) read by all its patterns cost 2 s a megabyte, five times the rest of the reading
MAX_JOINED = 40  # the longest part read as two joined words (includedir); a longer one is a blob, not a word
AT_LEAST_WORDS = ("newer", "later", "above", "higher", "greater", "least", "minimum")
BELOW_WORDS = ("older", "earlier", "below", "lower", "less", "most", "maximum")


@dataclass
class Line:
    raw: str
    tokens: list[Token]
    indent: int
    kind: str  # blank, header, comment (indented #), item, key, prose
    gloss: str = ""  # what idioms.py says the line means ("fail-fast: false": the other jobs go on)


@dataclass(frozen=True)
class Statement:
    text: str
    tokens: list[Token]
    gloss: str = ""  # what idioms.py says of its line (in text too): a "no" of it bears on its own words only
    # what rules.py reads of it whatever the clause (its stems, negations, un- forms): read once, not once a clause
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def line(self) -> Statement:
        """The statement as its line says it, without the gloss (_glossed wrote it after the line)."""
        if not self.gloss:
            return self
        text = self.text.removesuffix(f" ; {self.gloss} ;")
        return Statement(text, tokens(text))

    @cached_property
    def gloss_says_no(self) -> bool:
        return any(is_negation(t) for t in tokens(self.gloss))


@dataclass
class Reading:
    text: str
    path: str = ""  # the file's path: its names count as said (``pip`` for ``pip/_vendor/vendor.txt``)
    # one cited range at a time, the lines above it (checker.enclosing) and its text: each range sits under
    # its own section (``[L2, L5]`` under ``[testenv:a]`` and ``[testenv:b]``), not all under the last one
    ranges: list[tuple[list[str], str]] = field(default_factory=list)
    named: set[int] = field(default_factory=set)  # the lines that are only above (they name; they state nothing)
    lines: list[Line] = field(default_factory=list)
    words: set[str] = field(default_factory=set)  # lowercase tokens, their parts, and their letters joined
    stems: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    statements: list[Statement] = field(default_factory=list)
    paragraph: list[int | None] = field(default_factory=list)  # of each line: which run of prose lines
    lowered: str = ""
    path_words: set[str] = field(default_factory=set)
    ancestors: list[set[int]] = field(default_factory=list)  # of each line: the lines it sits under
    parents: list[int | None] = field(default_factory=list)
    counts: set[str] = field(default_factory=set)  # how many entries its lists hold
    compounds: set[str] = field(default_factory=set)  # its hyphenated words (ubuntu-latest)
    line_numbers: list[set[str]] = field(default_factory=list)  # of each line: its numbers (py{39,310}'s too)

    def __post_init__(self) -> None:
        pieces = self.ranges or [([], self.text)]
        raws: list[str] = []
        for above, text in pieces:
            self.named.update(range(len(raws), len(raws) + len(above)))
            raws += [*above, *text.split("\n")]
        self.lowered = "\n".join(raws).lower()
        keyed = sum(1 for raw in raws if _KEY.match(raw) or _ITEM.match(raw) or raw.lstrip().startswith("["))
        prosy = sum(1 for raw in raws if raw.strip() and not (_KEY.match(raw) or _ITEM.match(raw) or raw.lstrip()[:1] in "#["))
        structured = keyed > prosy  # then "# ..." at the margin is a comment, not a Markdown heading
        glossed = glosser(self.path, self.lowered)
        version_checked = False
        for n, raw in enumerate(raws):
            toks = tokens(raw)
            self.line_numbers.append(set())
            if not raw.strip():
                kind = "blank"
            elif _HEADER.match(raw) and not (structured and raw.lstrip().startswith("#")):
                kind = "header"
            elif raw.lstrip().startswith("#"):
                kind = "comment"
            elif _ITEM.match(raw):
                kind = "item"
            elif _KEY.match(raw):
                kind = "key"
            else:
                kind = "prose"
            # a line above only names: it is not glossed, nor is a line too long to be one an idiom is about
            gloss = "" if n in self.named or len(raw) > MAX_GLOSSED else "; ".join(glossed(raw))
            self.lines.append(Line(raw, toks, len(raw) - len(raw.lstrip()), kind, gloss))
            for t in (*toks, *tokens(gloss)):
                self._learn(t)
            for hour, day, weekday in _CRON.findall(raw):
                self._add_words(cron_words(day, weekday, hour))
            for major, minor in _VERSION_TUPLE.findall(raw):  # sys.version_info >= (3, 11): Python 3.11
                self._number(f"{major}.{minor}")
                self._add_words(("python",))
                version_checked = True
            for head, inner, tail in _braced(raw):
                for item in inner.split(","):
                    for t in tokens(f"{head}{item.strip()}{tail}"):
                        self._learn(t)
        if version_checked and any(re.match(r"\s*else\s*:", raw) for raw in raws):  # its else: is for the others
            self._add_words((*AT_LEAST_WORDS, *BELOW_WORDS))
        if _AT_LEAST.search(self.lowered):  # ">=3.10" says "3.10 or newer" (a path's "+" says nothing)
            self._add_words(AT_LEAST_WORDS)
        if _BELOW.search(self.lowered):
            self._add_words(BELOW_WORDS)
        self.path_words = {p for t in tokens(re.sub(r"[/_.-]", " ", self.path)) for p in (t.lower, *t.parts)}
        self._statements()
        self._structure()

    def said(self) -> list[Line]:
        """The cited lines themselves, without the lines above them."""
        return [ln for i, ln in enumerate(self.lines) if i not in self.named]

    def _learn(self, t: Token) -> None:
        """Take in one token of the cited text: its forms, stems, numbers, and what its short or joined
        parts stand for (``pkgname`` says package and name)."""
        joined = re.sub(r"\W", "", t.lower)
        self.words.update((t.lower, t.lower.strip("."), joined, *t.parts))
        self.stems.update(stem(p) for p in (t.lower, joined, *t.parts))
        if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", t.lower):
            self.compounds.add(t.lower)
        self._number(*numbers_of(t))
        self._number(*(normal_number(p) for p in t.parts if "." in p and p[0].isdigit()))  # pypy-3.11: 3.11
        for p in t.parts:
            self._add_words(spelled(p))
        for piece in {t.lower, *re.split(r"[-_:]", t.lower)}:  # py313, cp311, pypy3, py39-pytestlatest: a Python
            if version := tag_version(piece):
                self._add_words(("python", "pypy") if piece.startswith("pypy") else ("python", "cpython"))
                self._number(version)

    def _number(self, *numbers: str) -> None:
        self.numbers.update(numbers)
        if self.line_numbers:
            self.line_numbers[-1].update(numbers)

    def _add_words(self, words: tuple[str, ...] | list[str]) -> None:
        self.words.update(words)
        self.stems.update(stem(w) for w in words)

    def has(self, word: str) -> bool:
        """A word (lowercase) of a sentence occurs here, as a word, a stem (``renews`` finds ``renewal``)
        or a word of one meaning with it (``dependencies`` finds ``requirements``)."""
        return any(self._has(w) for w in same_meaning(word)) or ((us := american(word)) != word and self._has(us))

    def says(self, word: str) -> bool:
        """The word itself, or its stem, is here (no other word of its meaning)."""
        return word in self.words or stem(word) in self.stems

    def _has(self, word: str) -> bool:
        s = stem(word)  # and the stem's stem: "warnings" stems to warning, and "warning" (a cited word) to warn
        return word in self.words or s in self.stems or stem(s) in self.stems or (len(s) >= 5 and self.stem_starting(s[:5]))

    # "Some cited word starts (or ends) with this": a scan of every cited word, for each word of the sentence
    # at each rule that asks, took seconds against 40 lines of distinct words; the sorted words answer it.

    @cached_property
    def _sorted_words(self) -> list[str]:
        return sorted(self.words)

    @cached_property
    def _sorted_backwards(self) -> list[str]:
        return sorted(w[::-1] for w in self.words)

    @cached_property
    def _sorted_stems(self) -> list[str]:
        return sorted(self.stems)

    def word_starting(self, prefix: str) -> bool:
        """Some cited word starts with ``prefix``."""
        return _starting(self._sorted_words, prefix)

    def word_ending(self, suffix: str) -> bool:
        """Some cited word ends with ``suffix``."""
        return _starting(self._sorted_backwards, suffix[::-1])

    def stem_starting(self, prefix: str) -> bool:
        return _starting(self._sorted_stems, prefix)

    def _statements(self) -> None:
        prose: list[Line] = []

        def flush() -> None:
            if prose:
                for piece in _SENTENCE.split(" ".join(_glossed(ln) for ln in prose)):
                    self.statements.append(Statement(piece, tokens(piece)))
                prose.clear()

        for ln in self.said():  # the lines above name a section; they state nothing here
            if ln.kind == "prose":
                prose.append(ln)
                continue
            flush()
            if ln.kind != "blank":
                text = _glossed(ln)
                self.statements.append(Statement(text, tokens(text), ln.gloss))
        flush()

    def _structure(self) -> None:
        """Each line's parent (the nearest less indented line or header above it), its ancestors, and
        which run of prose lines it is in."""
        lines = self.lines
        parent: list[int | None] = []
        for i, ln in enumerate(lines):
            p = None
            if ln.kind not in ("blank", "header"):
                for j in range(i - 1, -1, -1):
                    up = lines[j]
                    if up.kind in ("blank", "prose"):
                        continue
                    if up.kind == "header" or up.indent < ln.indent:
                        p = j
                        break
            parent.append(p)

        def chain(i: int) -> list[int]:
            out = []
            while parent[i] is not None:
                i = parent[i]  # type: ignore[assignment]
                out.append(i)
            return out

        chains = [chain(i) for i in range(len(lines))]
        self.ancestors = [set(c) for c in chains]
        self.parents = parent
        self._count(parent)
        run = 0
        for i, ln in enumerate(lines):
            prose_before = i > 0 and lines[i - 1].kind == "prose"
            run += ln.kind == "prose" and not prose_before
            self.paragraph.append(run if ln.kind == "prose" else None)

    def _count(self, parent: list[int | None]) -> None:
        """How many things the cited lines list, as a sentence may count them ("three players", "eight
        writers"): the entries under one line or in one run of list items, the values of one list."""
        runs: dict[tuple[int | None, int], int] = {}
        block = 0
        for i, ln in enumerate(self.lines):
            if i in self.named:
                continue
            if ln.kind == "blank":
                block += 1
            elif ln.kind in ("key", "item"):
                runs[(parent[i], block)] = runs.get((parent[i], block), 0) + 1
            # the list starts at its first non-space: "\s*" then "[^=:#]+" split a run of spaces every way
            for m in re.finditer(r"\[([^\[\]]+)\]|[=:]\s*([^=:#\s][^=:#]*,[^=:#]+)$", ln.raw):
                listed = m.group(1) or m.group(2)
                self.counts.add(str(len([x for x in listed.split(",") if x.strip()])))
        self.counts.update(str(n) for n in runs.values())

    # Each rule asks of the words of each clause: asked of the whole cited text every time, a sentence's
    # clauses, numbers and names each paid for a scan of every cited token (6 s for ten clauses against
    # 40 lines of 2 KB). Occurrences are found once, by stem and by key, and each answer is kept.

    @cached_property
    def _by_stem(self) -> dict[str, list[tuple[int, int]]]:
        """Where each stem occurs: (line, token) for every token that is, or has a part that is, it."""
        out: dict[str, list[tuple[int, int]]] = {}
        for i, ln in enumerate(self.lines):
            for k, t in enumerate(ln.tokens):
                for s in {stem(t.lower), *(stem(p) for p in t.parts)}:
                    out.setdefault(s, []).append((i, k))
        return out

    @cached_property
    def _by_key(self) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        for i, ln in enumerate(self.lines):
            for k, t in enumerate(ln.tokens):
                out.setdefault(key(t), []).append((i, k))
        return out

    @cached_property
    def _answers(self) -> dict[tuple[str, str, bool], object]:  # what a word was asked, answered
        return {}

    def lines_with(self, word: str) -> set[int]:
        # a token that is the word has the word's stem: the stem's occurrences are all of them
        return {i for i, _ in self._by_stem.get(stem(word), ())}

    def identifier_next_to(self, ident: str, after: bool) -> set[str]:
        """The identifiers within three tokens after (or before) ``ident`` on its lines."""
        asked = ("identifier", ident, after)
        if asked in self._answers:
            return self._answers[asked]  # type: ignore[return-value]
        found: set[str] = set()
        for i, k in self._by_key.get(ident, ()):
            toks = self.lines[i].tokens
            span = toks[k + 1:k + 4] if after else list(reversed(toks[max(0, k - 3):k]))
            found.update([key(x) for x in span if is_identifier(x)][:1])
        self._answers[asked] = found
        return found

    def names_next_to(self, word: str, after: bool) -> tuple[set[str], set[str]]:
        """The nearest name after (or before) each ``word`` on its line, and every name within four tokens."""
        asked = ("names", word, after)
        if asked in self._answers:
            return self._answers[asked]  # type: ignore[return-value]
        nearest: set[str] = set()
        near: set[str] = set()
        for i, k in self._by_stem.get(stem(word), ()):
            toks = self.lines[i].tokens
            span = toks[k + 1:k + 5] if after else list(reversed(toks[max(0, k - 4):k]))
            names = [x.lower for x in span if is_name(x, True)]
            nearest.update(names[:1])
            near.update(names)
        self._answers[asked] = (nearest, near)
        return nearest, near

    def numbers_next_to(self, word: str, after: bool) -> set[str]:
        """The numbers that follow (or precede) ``word`` on its line, the whole run of them starting within
        four tokens (``python: ['3.10', ... '3.14']``): what it qualifies."""
        asked = ("numbers", word, after)
        if asked in self._answers:
            return self._answers[asked]  # type: ignore[return-value]
        found: set[str] = set()
        for i, k in self._by_stem.get(stem(word), ()):
            ln = self.lines[i]
            toks = ln.tokens
            near: list[str] = []
            # walked in place: a copy of the rest of the line at each occurrence was quadratic in a long line
            for n, j in enumerate(range(k + 1, len(toks)) if after else range(k - 1, -1, -1)):
                other = toks[j]
                got = _tagged(ln, other) or numbers_of(other)
                if got:
                    near.extend(got)
                elif (near and content(other)) or (not near and n >= 4):
                    break  # the run of numbers next to the word (starting within four tokens) ends
            found.update(near)
        self._answers[asked] = found
        return found


def _starting(ordered: list[str], prefix: str) -> bool:
    """Some string of ``ordered`` (sorted) starts with ``prefix``: the first one not below it, if any does."""
    i = bisect_left(ordered, prefix)
    return i < len(ordered) and ordered[i].startswith(prefix)


def _tagged(ln: Line, t: Token) -> list[str]:
    """The versions of a brace of tags (``pypy{39,310,311}``: 3.9, 3.10, 3.11), not one number of
    thousands (39,310,311)."""
    head = re.search(r"([a-z]+)\{[\d,\s]*$", ln.raw[max(0, t.start - 200):t.start].lower())  # pypy{38,39}: 39 too
    versions = [tag_version(f"{head.group(1)}{p}") for p in t.parts] if head else []
    return [v for v in versions if v]


def cron_words(day: str, weekday: str, hour: str = "0") -> list[str]:
    """What a cron schedule's day-of-month and day-of-week fields say in words (``0 6 * * 1``: weekly,
    on Mondays; ``1-5``: weekdays; ``0 6 1 * *``: monthly); its minute and hour are numbers already.
    Only plain ASCII fields of one hour say a period: ``*/2`` days is no month, ``*/6`` hours no day,
    and several weekdays (``1-5``, ``1,4``) are no week's one run."""
    if not (weekday + day + hour).isascii() or not re.fullmatch(r"\d{1,2}", hour):
        return []
    if re.fullmatch(r"\d(?:[,-]\d)*", weekday):
        days: set[str] = set()
        for part in weekday.split(","):
            a, _, b = part.partition("-")
            days.update(_DAYS[int(a):int(b or a) + 1] if int(b or a) <= 7 else [])
        return [*(["weekly", "week"] if weekday.isdigit() else []), *days,
                *(["weekdays", "weekday"] if weekday == "1-5" else [])]
    if re.fullmatch(r"\d{1,2}", day) and weekday in ("*", "?"):
        return ["monthly", "month"]
    return ["daily", "day", "nightly"] if day in ("*", "?") and weekday in ("*", "?") else []


# A comment that speaks to a linter, type checker or coverage tool (``# noqa``, ``# pragma: no cover``,
# ``# ruff:ignore[print]``): it says nothing of what the line does, and its "no" or "ignore" negates nothing
# A pragma's "#" (or a JS/Go pragma's "//") starts the line or follows a space: not a URL's fragment
# (``/#noqa``), nor a floor division (``b // noqa_count``); its keyword is whole (not ``noqa_count``), and a
# noqa's or type: ignore's codes end it: "# noqa: E501 -- this disables the cache" still says what it says
_PRAGMA = re.compile(r"(?<!\S)(?:#\s*(?:(?:noqa|nosec)\b(?::?\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)?|type:\s*ignore\b(?:\[[\w\s,-]*\])?"
                     r"|(?:pragma|pylint|ruff|mypy|pyright|fmt|isort|flake8|coverage|codespell|zizmor)\s*:[^#\n]*)"
                     r"|//\s*(?:nolint|eslint-disable|@?ts-ignore)\b[^#\n]*)", re.IGNORECASE)


def _glossed(ln: Line) -> str:
    """A line as a statement: its text (without a tool's pragma), then what idioms.py says of it between
    semicolons, where the scope of a negation ends: a prose line's gloss stands amid its paragraph, and
    "no assertion rewriting" bore on the next line's "keeps the tracebacks short"."""
    text = _PRAGMA.sub("", ln.raw).strip() if "#" in ln.raw or "//" in ln.raw else ln.raw.strip()
    return f"{text} ; {ln.gloss} ;" if ln.gloss else text


def _braced(raw: str) -> list[tuple[str, str, str]]:
    """Each ``{a,b}`` of a line with the word characters glued before and after it (``py{39,310}``).
    Found brace first, then walked out from it: a pattern led by ``[\\w.-]*`` retried at every
    position of a long run of word characters (a minified line) took time quadratic in its length."""
    out = []
    end = 0
    for m in _BRACE.finditer(raw):
        a, b = m.start(), m.end()
        while a > end and _WORD_CHAR.match(raw[a - 1]):
            a -= 1
        while b < len(raw) and _WORD_CHAR.match(raw[b]):
            b += 1
        out.append((raw[a:m.start()], m.group(1), raw[m.end():b]))
        end = b
    return out


def _stems(t: Token, s: str) -> bool:
    """Token ``t`` is, or has a part that is, the stem ``s``."""
    return s == stem(t.lower) or any(s == stem(p) for p in t.parts)


def same_meaning(word: str) -> list[str]:
    s = stem(word)
    return [word, *(w for group in SYNONYMS if word in group or s in {stem(x) for x in group} for w in group)]


def spelled(part: str) -> tuple[str, ...]:
    """What a short or joined part says: ``pkg`` package, ``pkgname`` pkg+name, ``includedir`` include+dir."""
    if not part.isalpha() or len(part) > MAX_JOINED:
        return tuple([SHORT_FORMS[part]] if part in SHORT_FORMS else [])
    return _spelled(part)


@lru_cache(maxsize=1 << 16)  # the reading and each cited statement's stems (rules._stems_of) ask of each part
def _spelled(part: str) -> tuple[str, ...]:
    out = [SHORT_FORMS[part]] if part in SHORT_FORMS else []
    if 5 <= len(part) <= MAX_JOINED and not is_common(part):  # each cut copies the word: a long one is quadratic
        for cut in range(2, len(part) - 1):
            head, tail = part[:cut], part[cut:]
            if all(x in SHORT_FORMS or (len(x) >= 3 and is_common(x)) for x in (head, tail)):
                out += [head, tail, *(SHORT_FORMS[x] for x in (head, tail) if x in SHORT_FORMS)]
                break
    return tuple(out)
