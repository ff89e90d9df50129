"""Is a sentence supported by the lines it cites? The rules, in order (docs/summaries.md).

1. every number it says (``90s``, ``three``, ``v1.4.0``) is a number of the cited text;
2. every quoted or backticked text, identifier and name (capitalised inside the sentence,
   all capitals, or outside the common-English list) occurs there;
then clause by clause (sentences.py):
3. at least OVERLAP of its content words occur there, and at least one;
4. a number, an identifier, a name goes with the same word there: when the word next to it in
   the clause is, in the cited lines, next to another number or name the sentence also says,
   the two were swapped;
5. polarity agrees: the clause says no word whose opposite (ANTONYMS) the cited text says instead;
   it negates (not, no, never, without, false, off, excludes, leaves out, instead of, an
   ``un-``/``in-`` form of a cited word...) only when some cited statement sharing a word with it
   says no, and affirms only when the statements it matches best make no negation bearing on it
   and no cited ``!=`` sets apart what it names; a restriction (only, except) is refused unless
   some cited statement restricts too (only, except, or a condition: if, when, a marker);
Over the whole sentence too: before the clauses, a judgement (faster, recommended) must be in the
cited text; after them, two words it pairs must not be paired the other way round there
(binding.py: swapped), and a change, choice or range (``max -> maximum``, ``instead of``,
``2013-2026``) must run the same way there (binding.py: reversed_pair).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeVar

from .branches import version_side
from .binding import mapped, reversed_pair, swapped
from .reading import Reading, Statement, same_meaning, spelled
from .sentences import split_clauses
from .words import (ANTONYMS, COORDINATORS, INTERFACES, JUDGEMENTS, NEGATING_PREFIXES, NEGATIONS, NUMBER_WORDS, STOP,
                    TOOL_WORDS, TOOLS, Token, content, is_identifier, is_name, is_negation, is_restriction, key, normal_number,
                    numbers_of, tag_version,
                    stem, tokens)

OVERLAP = 0.4
MAX_WORDS = 100  # a sentence's words at most, its citations taken out (the labelled sets' longest has 27)
# and its characters: a word may be a blob of 20 KB, which the rules read again at each rule and clause
# (60 words of 20 KB took 23 s); the longest labelled sentence has 174, and 100 words of ten letters 1,000
MAX_CHARS = 1000
RESTRICTS = "restricts (only, except) what the cited text does not"
VALUE_NEGATIONS = ("false", "off", "disabled")  # a key's value that says no to the key
NEGATING_PHRASE = re.compile(r"\b(?:(?:leaves?|left|leaving) out|instead of|rather than)\b", re.IGNORECASE)
SHORT_NEGATED = frozenset({"unset"})  # a negating prefix before a word of three letters (most are not: "under")
_QUOTED = re.compile(r"`([^`]{1,80})`|\"([^\"]{2,80})\"|(?:(?<=\s)|^)'([^']{2,80})'(?=[\s.,;:!?]|$)")


def unsupported_by(text: str, source: str, path: str = "",
                   ranges: list[tuple[list[str], str]] | None = None) -> str | None:
    """Why ``text`` is not supported by ``source`` (the cited lines of the file at ``path``; given
    ``ranges``, each cited range under the lines above it: its section, key, class), or None."""
    first = next(reasons(text, source, path, ranges), None)
    return first[1] if first else None


def reasons(text: str, source: str, path: str = "",
            ranges: list[tuple[list[str], str]] | None = None) -> Iterator[tuple[str, str]]:
    """Each rule that refuses ``text``, as (rule, why), in the rules' order: unsupported_by stops at
    the first; scripts/bench/grounding_ledger.py reads them all, to weigh each rule."""
    if len(text) > MAX_CHARS:
        yield "length", f"it is {len(text)} characters long, over {MAX_CHARS}: too long to check"
        return
    toks = tokens(text)
    if len(toks) > MAX_WORDS:  # some rules weigh each clause against the sentence: 85 s at 200 clauses
        yield "length", f"it is {len(toks)} words long, over {MAX_WORDS}: too long to check"
        return
    reading = Reading(source, path, ranges or [])
    if not any(content(t) for t in toks):
        yield "overlap", "it says nothing that can be checked (no content words)"
        return
    for t in toks:
        for n in numbers_of(t):
            if n not in reading.numbers and not (_counting(t) and (n in reading.counts or _counts_own_list(text, t, n))):
                yield "number", f"the number {t.text} is not in the cited text"
    if reason := _range_ends(text, reading):
        yield "range", reason
    for m in _QUOTED.finditer(text):
        quoted = next(g for g in m.groups() if g is not None)
        if quoted.lower() not in source.lower() and not all(_named(t, reading) for t in tokens(quoted)):
            yield "name", f"the quoted name {quoted!r} is not in the cited text"
    first = _first_word(text)
    for t in toks:
        if (is_name(t, t.start == first) or _compound_of(t, reading)) and not _named(t, reading):
            kind = "identifier" if is_identifier(t) else "name"
            yield "name", f"the {kind} {t.text!r} is not in the cited text"
    for i, t in enumerate(toks):
        named = _present(t, reading) or t.lower in reading.path_words  # whole: not "hub" at the end of "github"
        if (t.lower in TOOL_WORDS and not named and not _english_use(toks, i)
                and any(w in reading.words for w in TOOLS - {t.lower})):
            yield "tool", f"the name {t.text!r} is not in the cited text, which names another tool"
    said = {INTERFACES[w] for w in reading.words if w in INTERFACES}
    for t in toks:
        if t.lower in INTERFACES and INTERFACES[t.lower] not in said and said:
            yield "tool", f"the name {t.text!r} is not in the cited text, which names another interface"
    for t in toks:
        if t.lower in JUDGEMENTS and not reading.has(t.lower):
            yield "judgement", f"it judges ({t.text!r}) where the cited text does not"
    for clause in split_clauses(text):
        yield from _clause(clause, reading, toks)
    for rule, check in (("pairs", swapped), ("pairs", reversed_pair), ("version", _version_side), ("table", mapped)):
        if reason := check(text, reading):
            yield rule, reason


def _version_side(text: str, reading: Reading) -> str | None:
    return version_side(_phrases(text), reading)


def _compound_of(t: Token, reading: Reading) -> bool:
    """A hyphenated compound sharing a word with one of the cited text (``windows-latest`` beside
    ``ubuntu-latest``): a variant of it, so it must be there whole."""
    if not re.fullmatch(r"[a-z]{3,}(?:-[a-z]{3,})+", t.lower):
        return False
    return any(set(t.parts) & set(c.split("-")) for c in reading.compounds)


def _counting(t: Token) -> bool:
    """A number that counts things ("three", "8"), not a version or a measure."""
    return t.lower in NUMBER_WORDS or t.lower.isdigit()


_LIST_AFTER = re.compile(r"[^:.;]{0,60}?:\s+([^:;]{1,400})")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+|or\s+|then\s+)?|\s+(?:and|or|then)\s+", re.IGNORECASE)


def _counts_own_list(text: str, t: Token, n: str) -> bool:
    """A count the sentence makes good itself: "three steps: A, then B, then C", each item then checked
    as any name or word of the sentence is."""
    m = _LIST_AFTER.match(text, t.start + len(t.text))
    if not m:
        return False
    items = [x for x in _LIST_SEPARATOR.split(m.group(1).rstrip(" .")) if x.strip()]
    return str(len(items)) == n


_RANGE_SAID = re.compile(r"(?<![\w.])(\d{1,3}\.\d{1,3})\s*(?:to|through|thru|-|\u2013)\s*(?:[A-Za-z]+\s+)?(\d{1,3}\.\d{1,3})(?!\w|\.\d)")


def _version(number: str) -> tuple[int, ...]:
    return tuple(int(p) for p in number.split("."))


_BRACED_TAGS = re.compile(r"(?<![a-z])([a-z]*)\{([^{}]{1,200})\}")
_SERIES_NUMBER = re.compile(r"(?<![\w.])([a-z]*)[-_]?(\d{1,3}(?:\.\d{1,3})?)(?![\w.])")
_CPYTHON_HEADS = frozenset({"", "py", "cp", "python", "cpython"})


def _series(raw: str) -> dict[str, set[str]]:
    """A line's versions by the series its words put them in: ``py{38,39}`` and ``'3.10'`` are CPython's,
    ``pypy{38,39}`` and ``pypy-3.9`` PyPy's; a range of one series is not an omission of the other's."""
    out: dict[str, set[str]] = {}
    low = raw.lower()
    for m in _BRACED_TAGS.finditer(low):
        for item in m.group(2).split(","):
            if version := tag_version(f"{m.group(1)}{item.strip()}"):
                out.setdefault("" if m.group(1) in _CPYTHON_HEADS else m.group(1), set()).add(version)
    for m in _SERIES_NUMBER.finditer(_BRACED_TAGS.sub(" ", low)):
        head, number = m.groups()
        version = normal_number(number) if "." in number else tag_version(f"{head}{number}")
        if version:
            out.setdefault("" if head in _CPYTHON_HEADS else head, set()).add(version)
    return out


def _range_ends(text: str, reading: Reading) -> str | None:
    """A range of versions ("3.7 to 3.11") whose ends are both in one cited list that runs further
    (``py{36,37,38,39,310,311}``): the range leaves out versions the list names."""
    named = {n for t in tokens(text) for n in numbers_of(t)}
    said_ranges = list(_RANGE_SAID.finditer(text))
    ranges = [tuple(_version(normal_number(x)) for x in m.groups()) for m in said_ranges]

    def apart(n: str, own: tuple[tuple[int, ...], ...]) -> bool:
        """A version the sentence names apart, or within another of its ranges (CPython 3.9 to 3.13 and
        PyPy 3.9 to 3.11, of one list): no omission of this range."""
        v = _version(n)
        return n in named or any(lo <= v <= hi for lo, hi in ranges if (lo, hi) != own)

    for m in said_ranges:
        a, b = (normal_number(x) for x in m.groups())
        low, high = _version(a), _version(b)
        if not low < high or low[0] != high[0]:
            continue
        for line, said in zip(reading.lines, reading.line_numbers):
            if a not in said or b not in said:
                continue
            series = {head: v for head, v in _series(line.raw).items() if a in v and b in v}
            if len(series) > 1:  # both series hold the ends: the one the sentence names, or none
                head = re.findall(r"([a-z]+)\s*$", text[:m.start()].lower())  # read only here: a scan of the text
                series = {h: v for h, v in series.items() if head and h == ("" if head[0] in _CPYTHON_HEADS else head[0])}
            if len(series) != 1:
                continue  # the ends are of two series (py{38,39}, pypy{38,39}) or none the line spells plainly
            said = set().union(*series.values())
            listed = sorted(_version(n) for n in said if re.fullmatch(r"\d{1,3}\.\d{1,3}", n)
                            and _version(n)[0] == low[0] and (n in (a, b) or not apart(n, (low, high))))
            if listed[0] < low or listed[-1] > high:
                ends = ".".join(map(str, listed[0])), ".".join(map(str, listed[-1]))
                return f"{a} to {b} leaves out what the cited list holds: it runs from {ends[0]} to {ends[1]}"
    return None


def _first_word(text: str) -> int:
    m = re.search(r"[A-Za-z0-9`\"']", text)
    return m.start() if m else 0


def _english_use(toks: list[Token], i: int) -> bool:
    """A tool's name used as the English word: after "a"/"an" ("a trio of jobs", "a hub"), before "of", or
    after another tool's name ("the docker hub")."""
    before = toks[i - 1].lower if i else ""
    after = toks[i + 1].lower if i + 1 < len(toks) else ""
    return before in ("a", "an") or after == "of" or (before in TOOLS and before not in TOOL_WORDS)


def _named(t: Token, reading: Reading) -> bool:
    """A name occurs in the cited text, or is a word of the file's path, whole or at either end of one
    (the model is shown the path): "pip" for pip/_vendor/vendor.txt, "Read the Docs" for
    .readthedocs.yaml; not "end" inside "vendor". The path names; it says nothing, so its words count
    for names only, never for a clause's content words (_clause)."""
    low = t.lower.strip(".")
    joined = re.sub(r"\W", "", low)
    path = reading.path.lower()
    if len(low) >= 5 and path.endswith(low) and (len(path) == len(low) or path[-len(low) - 1] in "/."):
        return True  # the file itself: ".pre-commit-config.yaml" for .../.pre-commit-config.yaml, "tox.ini" at the root
    if len(low) >= 3 and any(w.startswith(x) or w.endswith(x) for w in reading.path_words for x in (low, joined) if x):
        return True
    if t.text.isupper() and 2 <= len(low) <= 5 and low.isalpha() and (low in reading.path_words or
                                                                        _initials(low).search(_EXTENSION.sub("", path))):
        return True  # "CI" for ci.yml or continuous-integration.yml; not for config.ini (an extension is no word)
    return _present(t, reading)


_EXTENSION = re.compile(r"\.[a-z0-9]+$")


def _initials(acronym: str) -> re.Pattern[str]:
    """Words of a path, one after another, whose first letters spell ``acronym``."""
    return re.compile(r"(?<![a-z0-9])" + r"[a-z0-9]*[_.-]".join(acronym) + r"[a-z0-9]*(?![a-z0-9])")


def _path_only(t: Token, reading: Reading) -> bool:
    """A word only the path says: a name (checked as one), neither for nor against what a clause says."""
    return _named(t, reading) and not _present(t, reading) and not reading.has(t.lower)


def _present(t: Token, reading: Reading) -> bool:
    """A name occurs in the cited text. An identifier must occur whole (``GitHub`` in ``github.com``);
    another name whole, its letters joined, or part by part (``INI-file``)."""
    low = t.lower.strip(".")
    if is_identifier(t):
        plain = low.removesuffix("()").lstrip("$")
        pieces = [p for p in plain.split("-") if ("." in p or "_" in p) and re.search(r"[a-z]", p)]
        dotted = [p for p in re.split(r"[.:]", plain) if p]  # flags.from_mask under class flags: def from_mask
        head = ".".join(dotted[:-1])
        return (any(piece in reading.lowered or piece in reading.words for piece in (plain, *pieces))
                or (len(dotted) > 1 and all(p in reading.words for p in dotted)
                    and bool(re.search(rf"(?<![\w.]){re.escape(head)}(?![\w])", reading.lowered))))
    if re.fullmatch(r"[0-9a-f]{7,40}", low):  # an abbreviated commit or hash
        return reading.word_starting(low)
    if len(low) >= 5 and low.isalpha() and (reading.word_starting(low) or reading.word_ending(low)):
        return True  # pytest in pytestmain
    if re.search(r"\d", low) and re.search(r"[a-z]", low):  # C11 is not C99: the whole of it must be there
        return low in reading.words or re.sub(r"\W", "", low) in reading.words
    if any(w in reading.words or re.sub(r"\W", "", w) in reading.words for w in same_meaning(low)):
        return True
    if stem(re.sub(r"\W", "", low)) in reading.stems:  # pre-release: prereleases
        return True
    letters = [p for p in t.parts if p.isalpha()]
    return bool(letters) and all(p in reading.words or stem(p) in reading.stems for p in letters)


def _clause(clause: str, reading: Reading, sentence: list[Token]) -> Iterator[tuple[str, str]]:
    toks = tokens(clause)
    words = [t for t in toks if (content(t) or numbers_of(t)) and not _path_only(t, reading)]
    if not words:
        return
    hits = sum(1 for t in words if numbers_of(t) or reading.has(t.lower) or _present(t, reading))
    if hits == 0 or hits / len(words) < OVERLAP:
        yield "overlap", f"only {hits} of its {len(words)} content words occur in the cited text (needs {OVERLAP:.0%}): {clause!r}"
    for phrase in _phrases(clause)[1:]:
        said = [t for t in tokens(phrase)[1:] if (content(t) or numbers_of(t)) and not _path_only(t, reading)]
        found = sum(1 for t in said if any(n in reading.numbers for n in numbers_of(t)) or reading.has(t.lower)
                    or _present(t, reading))
        if said and not found:  # an added phrase needs one of its words there
            yield "overlap", f"only {found} of the {len(said)} words of {phrase!r} occur in the cited text"
    for bound in (lambda: _numbers_bound(clause, toks, reading, sentence), lambda: _names_bound(toks, reading, sentence),
                  lambda: _names_next(clause, toks, reading, sentence)):
        if reason := bound():
            yield "binding", reason
    if reason := _polarity(clause, toks, reading):
        yield ("restriction" if reason.endswith(RESTRICTS) else "polarity"), reason


_PHRASE = re.compile(r"\s+(?=(?:because|since|so that|in order to|before|after|unless|until|"
                     r"and(?!\s+(?:later|newer|above|higher|up|greater|more|earlier|older|below|lower|less)\b)"
                     r"|which|who|whose|where|while|thereby)\s)"
                     r"|(?<=,)\s+(?=(?:being|\w+ed|\w+ing)\s)", re.IGNORECASE)  # "3.8 and later": one bound


def _phrases(clause: str) -> list[str]:
    """The clause cut before a conjunction or subordinator (``and commits them``, ``before each
    release``): each phrase after the first adds a claim, so one of its words must be in the lines."""
    return [p for p in _PHRASE.split(clause) if p.strip()]


def _numbers_bound(clause: str, toks: list[Token], reading: Reading, sentence: list[Token]) -> str | None:
    said = {n for t in sentence for n in numbers_of(t)}
    for k, t in enumerate(toks):
        for n in numbers_of(t):
            for anchor, after in ((_neighbour(clause, toks, k, -1), True), (_neighbour(clause, toks, k, 1), False)):
                if anchor is None:
                    continue
                there = reading.numbers_next_to(anchor, after)
                if there and n not in there:
                    other = ", ".join(sorted(there & said or there))
                    return f"the number {t.text} goes with {anchor!r} here, but with {other} in the cited text"
    return None


def _names_next(clause: str, toks: list[Token], reading: Reading, sentence: list[Token]) -> str | None:
    """A name next to a word (``TLS's collection``) where the cited text puts another name of the
    sentence next to that word and never this one (``Mozilla's carefully curated collection``)."""
    said = {t.lower for t in sentence if is_name(t, False)}
    first = toks[0].start if toks else -1
    for k, t in enumerate(toks):
        if not is_name(t, t.start == first) or is_identifier(t):
            continue
        phrase = {x.lower for x in toks[max(0, k - 3):k + 4]}  # "Frazer McLean": one name
        for anchor, after in ((_neighbour(clause, toks, k, -1, 1), True), (_neighbour(clause, toks, k, 1, 1), False)):
            if anchor is None or anchor in said or len(reading.lines_with(anchor)) > 2:
                continue  # no word to bind, or one said all over the cited text ("run")
            nearest, near = reading.names_next_to(anchor, after)
            rivals = (nearest & said) - phrase
            if rivals and t.lower not in near:
                return f"{t.text!r} goes with {anchor!r} here, but {sorted(rivals)[0]!r} does in the cited text"
    return None


def _neighbour(clause: str, toks: list[Token], k: int, step: int, reach: int = 3) -> str | None:
    """The nearest content word (not a number) within ``reach`` tokens of toks[k] in direction ``step``,
    not across a comma or a coordinator (``average of 0.278 and 147 runs``: 0.278 is not of runs)."""
    for j in range(k + step, k + step * (reach + 1), step):
        if not 0 <= j < len(toks):
            return None
        a, b = sorted((toks[j], toks[j - step]), key=lambda t: t.start)
        if re.search(r"[,;:()]", clause[a.start + len(a.text):b.start]) or toks[j].lower in COORDINATORS:
            return None
        if numbers_of(toks[j]):
            continue
        if content(toks[j]):
            return toks[j].lower
    return None


def _names_bound(toks: list[Token], reading: Reading, sentence: list[Token]) -> str | None:
    """Two identifiers the clause pairs (``A is set from B``) that the cited text pairs otherwise (``A=$C``)."""
    said = {key(t) for t in sentence if is_identifier(t)}
    idents = [t for t in toks if is_identifier(t)]
    for a, b in zip(idents, idents[1:]):
        for x, y, after in ((a, b, True), (b, a, False)):
            there = reading.identifier_next_to(key(x), after)
            if there and key(y) not in there and there & said:
                return f"{x.text!r} goes with {y.text!r} here, but with {', '.join(sorted(there & said))} in the cited text"
    return None


def _opposite(toks: list[Token], reading: Reading) -> str | None:
    """A word of the clause whose opposite the cited text says, and not the word itself (``stable`` for
    ``experimental``, ``quadratic`` for ``linear-time``, ``earlier`` for ``>=``)."""
    if any(is_negation(t) for t in toks):
        return None  # "not optional": the opposite, negated
    seen: set[str] = set()
    for t in toks:
        for p in (t.lower, *t.parts):
            if p in seen:
                continue  # a word said again is read once (a long sentence says "after" thousands of times)
            seen.add(p)
            for theirs in _OPPOSITES.get(stem(p), ()):
                if not reading.has(p) and reading.says(theirs):
                    return f"it says {t.text!r} where the cited text says {theirs!r}"
    return None


def _opposites() -> dict[str, tuple[str, ...]]:
    """Each word's stem, and the words ANTONYMS pairs it with, in their order there."""
    out: dict[str, list[str]] = {}
    for a, b in ANTONYMS:
        for mine, theirs in ((a, b), (b, a)):
            out.setdefault(stem(mine), []).append(theirs)
    return {k: tuple(v) for k, v in out.items()}


_OPPOSITES = _opposites()


def _polarity(clause: str, toks: list[Token], reading: Reading) -> str | None:
    if opposite := _opposite(toks, reading):
        return opposite
    stems = _stems_of([t for t in toks if content(t)])
    theirs = [(s, _remembered(s, "stems", lambda s: _stems_of(s.tokens))) for s in reading.statements]
    plain = [t for t in toks if stem(t.lower) not in reading.stems]  # a word the lines say plain somewhere (safe_load)
    best = max((len(stems & their) for _, their in theirs), default=0)
    if best == 0:
        return None
    top = [s for s, their in theirs if len(stems & their) >= min(best, max(2, best - 1))]
    negated = (any(_negating(t, reading) for t in toks) or bool(NEGATING_PHRASE.search(clause))
               or _flipped(toks, [_flip_forms_of(s)[0] for s in top]))
    if negated and not any(_negative(s, toks) and stems & _unprefixed(_said_no(s, toks, their)) for s, their in theirs):
        return f"{clause!r} negates what the cited text affirms"
    said = stems | {n for t in toks for n in numbers_of(t)}
    if not negated and (any(_negates(s, stems) or _statement_flipped(s, toks) for s in top)
                        or any(_negates(s, stems, 2) or _unequal(s, said) or (stems & their and _statement_flipped(s, plain) and _statement_flipped(s, toks))
                               for s, their in theirs)):
        return f"{clause!r} affirms what the cited text negates"
    if any(is_restriction(t) for t in toks) and not any(_remembered(s, "restricts", _restricts) for s in reading.statements) and not (
            _INCLUDED.search(reading.lowered)
            and any(_remembered(s, "include", lambda s: bool(_INCLUDE.search(s.text))) for s in reading.statements)):
        return f"{clause!r} {RESTRICTS}"
    return None


_SCOPE_END = re.compile(r"[,;.(){}#]")
# where the subject of an "is not" begins: a stop, or a subordinator ("enables color if colorize is not
# provided": what is not provided is colorize, not color); not a relative "that"/"which", whose subject is
# the noun before it ("a cache that is not used": the cache)
_SCOPE_BEGIN = re.compile(r"[,;.(){}#]|\b(?:if|when|unless|because|since|while|whereas|where)\s", re.IGNORECASE)
_NOT_IN_LIST = re.compile(r"\s+in\s*[(\[{]([^()\[\]{}]{0,200})[)\]}]")
_NEGATIVE_FORM = re.compile(r"!=|\bnot in\b|<(?!=)\s*['\"]?\d|:\s*(?:\{\}|\[\]|null|~|none|\"\")\s*(?:#.*)?$", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|unless|except|only|paths|exclude|platform)\b|!=|(?<![\w.=<>!~*-])==(?!=)|;\s*\w+\s*[<>=!]"
                        r"|^\s*[\d.]+\s*:\s+\S", re.IGNORECASE)


# an include: that adds those combinations alone (a CI matrix's) or takes those packages alone (setuptools'
# find); not any include: (a GitLab pipeline's, a Makefile's, an mkdocs nav's take in another file)
_INCLUDE = re.compile(r"\binclude\s*[:=]", re.IGNORECASE)
_INCLUDED = re.compile(r"\bmatrix\b|packages\.find\b|\bfind_(?:namespace_)?packages\b")


def _restricts(statement: Statement) -> bool:
    """A cited statement that restricts: only/except, or a condition (``if:``, ``when``, ``!=``, a
    requirement's marker ``; python_version < "3.11"``, a tox factor ``3.13: twisted``, a path filter; a
    matrix's ``include:`` restricts too, where _INCLUDED says it is one)."""
    return any(is_restriction(x) for x in statement.tokens) or bool(_CONDITION.search(statement.text))


def _unequal(statement: Statement, said: set[str]) -> bool:
    """A ``!=`` whose two sides the clause names (``matrix.python-version != '3.14'`` against "only on
    Python 3.14"): the cited text excludes what the clause affirms."""
    m = "!=" in statement.text and re.search(r"([\w.'\"-]{1,80})\s*!=\s*([\w.'\"-]{1,80})", statement.text)
    if not m:
        return False
    sides = [{stem(p) for t in tokens(side) for p in (t.lower, *t.parts)} | {n for t in tokens(side) for n in numbers_of(t)}
             for side in m.groups()]
    return all(side & said for side in sides)


def _unprefixed(stems: set[str]) -> set[str]:
    """The stems with the words their negating prefix makes (``unreleas`` also says ``releas``)."""
    return stems | {s[len(p):] for s in stems for p in NEGATING_PREFIXES
                    if s.startswith(p) and (len(s) - len(p) >= 4 or s in SHORT_NEGATED)}


def _stems_of(toks: list[Token]) -> set[str]:
    """The stems of the words, and of what their joined parts spell (filterwarnings: filter, warnings)."""
    return {stem(x) for t in toks for p in (t.lower, *t.parts) for x in (p, *spelled(p))}


def _negating(t: Token, reading: Reading) -> bool:
    """A negating word; not a name that merely holds one (``no_test_requirements``, said as it is there)."""
    return is_negation(t) and not (_joined_name(t) and t.lower in reading.words)


def _joined_name(t: Token) -> bool:
    """A word joined of parts (``no-default-groups``, ``no_test_requirements``), not a contraction
    (``don't`` is one negating word, though its letters make two parts)."""
    return len(t.parts) > 1 and not t.lower.endswith("n't")


def _negative(statement: Statement, toks: list[Token]) -> bool:
    """A cited statement that says no: a negating word, ``!=``, a strict upper bound (``<5`` excludes 5),
    an empty value (``permissions: {}``), or an un-/in- form of a word of the clause."""
    return (_remembered(statement, "negative", lambda s: any(is_negation(t) or is_restriction(t) for t in s.tokens)
                        or bool(_NEGATIVE_FORM.search(s.text) or NEGATING_PHRASE.search(s.text)))
            or _statement_flipped(statement, toks))


def _said_no(statement: Statement, toks: list[Token], stems: set[str]) -> set[str]:
    """The words of a statement a negated clause may share with it to be supported: all of them, but only
    its gloss's when only the gloss says no (``continue-on-error: true``, "a failure does not fail the
    job": not "errors are not reported")."""
    if not statement.gloss or _negative(statement.line, toks):
        return stems
    return _stems_of(tokens(statement.gloss))


def _negates(statement: Statement, stems: set[str], shared: int = 1) -> bool:
    """A negation in a cited statement that bears on the clause: its scope shares ``shared`` words with
    the clause (all of its other parts, for a word such as ``no-default-groups``). Two shared words
    bear whatever else the statement says ("without installing the package" against "installs the
    package" under a header that shares more). A value (``strip_inline_comments=False``) negates its
    key, and a clause that says the key's opposite ("keeps inline comments") says what the value does."""
    for t, scope in _remembered(statement, "negations", _negations):
        if t.lower in VALUE_NEGATIONS and statement.gloss_says_no:
            continue  # a gloss that says no itself says what the value means ("fail-fast: false": does not stop)
        if _joined_name(t):  # no-default-groups, paths-ignore
            rest = {stem(p) for p in t.parts if p not in NEGATIONS}
            if len(rest) >= shared and rest <= stems:
                return True
            continue
        if len(scope & stems) >= shared and not (t.lower in VALUE_NEGATIONS and _opposed(scope, stems)):
            return True
    return False


def _opposed(these: set[str], those: set[str]) -> bool:
    """A stem of ``these`` is the opposite (ANTONYMS) of a stem of ``those``: strip and keep."""
    return any((stem(a) in these and stem(b) in those) or (stem(b) in these and stem(a) in those) for a, b in ANTONYMS)


def _scope(text: str, t: Token) -> set[str]:
    """What a negating word bears on: the words after it up to the next comma or stop (six at most),
    and for a value (``fail-fast: false``) its key."""
    after = t.start + len(t.text)
    listed = _NOT_IN_LIST.match(text, after) if t.lower == "not" else None
    if listed:  # ``k not in ("warn", "exception")``: what the list holds, and what is tested
        scope = [x for x in tokens(listed.group(1)) if content(x)]
        scope += [x for x in tokens(text[:t.start]) if content(x)][-2:]
    else:
        end = _SCOPE_END.search(text, after)
        scope = [x for x in tokens(text[after:end.start() if end else len(text)]) if content(x)][:6]
    if t.lower == "not" and re.search(r"\b(?:is|are|was|were|be|been)\s+(?:\w+\s+)?$", text[:t.start]):
        begin = max((m.end() for m in _SCOPE_BEGIN.finditer(text[:t.start])), default=0)  # "/etc/hosts is thus not used"
        scope += [x for x in tokens(text[begin:t.start]) if content(x)][-4:]
    if t.lower in VALUE_NEGATIONS:
        begin = max((m.end() for m in re.finditer(r"[,{\[]", text[:t.start])), default=0)
        scope += [x for x in tokens(text[begin:t.start]) if content(x)]
    return {stem(p) for x in scope for p in (x.lower, *x.parts)} | {stem(p) for p in t.parts if p not in NEGATIONS}


def _flipped(toks: list[Token], others: list[set[str]]) -> bool:
    """An ``un-``/``in-`` form of a word the others have plain (``unencrypted`` for ``encrypted``), and
    that ``toks`` do not say plain too: "signing, ... unsigning" names two operations, negates neither.
    ``others``: the stems of each other's words and their parts (_flip_forms)."""
    forms = _flip_forms(toks)
    return bool(forms[1]) and _flipped_forms(forms, set().union(*others))


def _statement_flipped(statement: Statement, toks: list[Token]) -> bool:
    """_flipped of a cited statement against a clause's words: the statement's forms read once."""
    forms = _flip_forms_of(statement)
    return bool(forms[1]) and _flipped_forms(forms, _flip_forms(toks)[0])


def _flipped_forms(forms: tuple[set[str], list[tuple[str, str]]], plain: set[str]) -> bool:
    own, negated = forms
    return any(rest in plain and low not in plain and rest not in own for rest, low in negated)


def _flip_forms_of(statement: Statement) -> tuple[set[str], list[tuple[str, str]]]:
    return _remembered(statement, "flip", lambda s: _flip_forms(s.tokens))


def _flip_forms(toks: list[Token]) -> tuple[set[str], list[tuple[str, str]]]:
    """The stems of the words and their parts, and each (stem of the rest, stem of the word) of a word with a
    negating prefix (--unsafe-fixes: unsafe)."""
    own = {stem(p) for x in toks for p in (x.lower, *x.parts)}
    negated = []
    for low in {p for t in toks for p in (t.lower, *t.parts)}:
        for prefix in NEGATING_PREFIXES:
            rest = low[len(prefix):]
            if low.startswith(prefix) and (len(rest) >= 4 or low in SHORT_NEGATED):
                negated.append((stem(rest), stem(low)))
    return own, negated


def _negations(statement: Statement) -> list[tuple[Token, set[str]]]:
    """The negating words of a cited statement, each with what it bears on (_scope; a joined name's own
    parts are weighed by _negates)."""
    out = []
    for t in statement.tokens:
        if not is_negation(t) or (_joined_name(t) and statement.text[t.start - 1:t.start] in ("'", '"', "`")):
            continue  # a quoted compound is a name ("ignore-without-code", ``NO_COLOR``); a quoted 'false' still says no
        out.append((t, set() if _joined_name(t) else _scope(statement.text, t)))
    return out


_T = TypeVar("_T")


def _remembered(statement: Statement, name: str, read: Callable[[Statement], _T]) -> _T:
    """What ``read`` says of a cited statement, read once: every clause asks it again."""
    if name not in statement.memo:
        statement.memo[name] = read(statement)
    return statement.memo[name]  # type: ignore[return-value]
