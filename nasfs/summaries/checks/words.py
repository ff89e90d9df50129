"""Words as the checker reads them: tokens, stems, numbers, names, polarity.

A token keeps an identifier whole (``pull_request``, ``github.com``,
``tox-uv``, ``.netrc``) and knows its parts (``pull``, ``request``), so a key
of a YAML/TOML/INI line reads as its words and ``GitHub`` finds
``github.com``. A number is read with its glued unit dropped (``90s``,
``3GB``, ``v1.4.0``, ``3.10+``) or from a word (``three``). A name is a word
outside the common-English list (SCOWL's, nasfs/data/common-english.SOURCE.md)
or written with a capital inside a sentence; it must occur in the cited lines.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

_TOKEN = re.compile(r"\.?[\w$](?:[\w.+/@'-]|,(?=\d{3}\b)|(?<=\d):(?=\d))*[\w+%](?:\(\))?|[\w%]")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+(?:\.\d+)*")
_NUMBER = re.compile(r"v?(\d+(?:\.\d+)*)([a-zA-Z%]{0,3})\+?", re.IGNORECASE)
_HEX = re.compile(r"[0-9a-f]{7,40}")
_DIGITS_JOINED = re.compile(r"\d+(?:\.\d+)*(?:[-/:]\d+(?:\.\d+)*)+")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[a-z]\d*)?")  # a letter before any trailing digits: [a-z]?\d* retried
#   the last part's digits at every split, quadratic in a long token
NUMBER_WORDS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
                "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "thirty": "30",
                "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000"}
STOP = frozenset("""
a about above after again all also an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers him his
how i if in into is it its itself just me more most my nor now of on once or other our out over
own same she should so some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours
file files document section sections line lines text content contents summary summarize summarizes describes
describe described contains contain provides provide lists list shows show explains explain mentions mention
includes include including covers cover presents present gives give discusses discuss defines define
uses use used using way ways part parts overall main various several many one first second
readme page pages
""".split())
# Generic words of technical writing that name no product: not names, though the common list lacks them.
TECH_WORDS = frozenset("""
api apis app apps arg args async backend boolean cli clis gui guis ui uis config configs configuration dev dir dirs doc docs env envs
http https json lib libs metadata os plugin plugins repo repos runtime stdin stdout stderr toml url urls utf workflow
workflows
yaml yml
regex regexes regexp bytestring bytestrings filename filenames hostname hostnames timestamp timestamps namespace
namespaces whitespace changelog changelogs codebase username usernames stdlib
""".split())
# Acronyms of TECH_WORDS that name no product either: "the CLI", "an API" need not be in the cited text (a
# format's acronym, JSON or TOML, does: another format's name is a wrong name).
GENERIC_ACRONYMS = frozenset("api apis cli os ui uis gui url urls".split())
# ...yet one interface is not another: "an API" where the cited lines say CLI is a wrong name
INTERFACES = {"api": "api", "apis": "api", "cli": "cli", "clis": "cli", "gui": "ui", "guis": "ui", "ui": "ui",
              "uis": "ui"}
# Tools of Python and CI whose names are English words: the common list takes them for English, so a wrong
# one ("ruff" where the lines install black) passes as a word. Each is checked as a name where the cited text
# names another tool of TOOLS; alone, "black" or "poetry" may be the word.
TOOL_WORDS = frozenset("black ruff curio trio hub nose poetry hatch twine flit sphinx celery tornado bandit".split())
TOOLS = TOOL_WORDS | frozenset("""
isort flake8 pylint mypy pyright pytype yapf autopep8 pyflakes pycodestyle pydocstyle codespell prettier pytest
unittest doctest tox nox pip pipx uv conda mamba setuptools hatchling pdm asyncio anyio gevent twisted uvloop gh
git django jinja werkzeug mkdocs coveralls codecov docker podman npm yarn cargo cmake meson ninja scons bazel
pre-commit virtualenv venv pyenv asynctest
""".split())
NEGATIONS = frozenset("""
not no never without cannot none nor neither nothing nobody false off disabled disable disables ignore ignores
ignored exclude excludes excluded excluding omit omits omitted skip skips skipped lack lacks lacking
""".split())
RESTRICTIONS = frozenset("only except solely exclusively".split())
ABBREVIATIONS = frozenset("""
e.g i.e etc vs cf al approx incl esp ca fig no nos vol mr mrs ms dr prof st jr sr inc ltd co corp dept est
jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k a.k.a w.r.t
""".split())  # a full stop after one of these does not end a sentence
IRREGULAR = {"built": "build", "ran": "run", "made": "make", "written": "write", "wrote": "write", "kept": "keep",
             "held": "hold", "gave": "give", "given": "give", "took": "take", "taken": "take", "found": "find",
             "sent": "send", "left": "leave", "chosen": "choose", "done": "do", "got": "get", "shown": "show"}
NEGATING_PREFIXES = ("un", "in", "im", "non", "dis")
# Prefixes that make an English word of a common one (untranslated, reinstall, multiline). Not
# auto-, over-, super-, inter-, co-, de-: tools are named so (autoflake, overcommit, superlinter), and a name
# taken for English is a name nobody checks.
PREFIXES = ("un", "in", "non", "dis", "re", "pre", "multi")  # not sub-: "a subclass of X" names a relation to check
# Short forms that code and config use for a word (``pkgname``, ``libdir``, ``envlist``): the cited text says both.
SHORT_FORMS = {"pkg": "package", "lib": "library", "libs": "libraries", "dir": "directory", "dirs": "directories",
               "env": "environment", "envs": "environments", "cfg": "configuration", "conf": "configuration",
               "config": "configuration", "repo": "repository", "deps": "dependencies", "dep": "dependency",
               "req": "requirement", "reqs": "requirements", "src": "source", "dev": "development",
               "doc": "documentation", "docs": "documentation", "py": "python", "ver": "version",
               "num": "number", "max": "maximum", "min": "minimum", "len": "length", "str": "string",
               "int": "integer", "arg": "argument", "args": "arguments", "opt": "option", "opts": "options",
               "cmd": "command", "msg": "message", "db": "database", "tmp": "temporary", "auth": "authentication",
               "info": "information", "impl": "implementation", "spec": "specification", "addr": "address",
               "ctx": "context", "fd": "descriptor", "buf": "buffer", "err": "error", "exe": "executable",
               "dist": "distribution", "proc": "process", "sys": "system", "util": "utility", "utils": "utilities"}
# Words of one meaning in technical writing (each group: one sense), so a paraphrase finds its source.
SYNONYMS = tuple(frozenset(g.split()) for g in """
dependency requirement depend require
folder directory dir
documentation docs doc
colour color
behaviour behavior
licence license
start begin launch
stop end halt
make create generate
delete remove
error failure
option setting flag
program application app
fetch download
check verify validate
newer later above greater higher least
keep preserve retain
older earlier below lower less most
""".strip().split("\n"))
# Judgements a summary may not add: a comparison, a recommendation. Each must be in the cited text.
JUDGEMENTS = frozenset("""
faster slower quicker better worse easier harder simpler safer cheaper smaller larger lighter heavier
fastest slowest quickest best worst easiest simplest safest cheapest smallest largest
recommend recommends recommended preferred prefer prefers efficient efficiently
""".split())
# Pairs of opposites: a sentence saying one where the cited text says the other reverses it.
ANTONYMS = tuple(tuple(p.split("/")) for p in """
enable/disable enabled/disabled required/optional mandatory/optional public/private parallel/sequential
parallel/serial concurrently/sequentially first/last minimum/maximum min/max add/remove
added/removed adds/removes allow/deny allow/forbid allowed/forbidden accept/reject start/stop open/close
opened/closed static/dynamic synchronous/asynchronous blocking/nonblocking upper/lower uppercase/lowercase
older/newer earlier/later oldest/newest above/below increase/decrease increase/reduce success/failure succeed/fail pass/fail
local/remote internal/external always/never faster/slower more/fewer more/less larger/smaller higher/lower
greater/less ascending/descending import/export input/output explicit/implicit strict/lenient keep/strip
keep/drop keep/discard keeps/strips preserve/strip preserves/strips created/deleted create/delete
client/server request/response send/receive sent/received sends/receives outgoing/incoming inbound/outbound
lazily/eagerly lazy/eager linear/quadratic linear/exponential stable/experimental include/exclude
hourly/daily daily/weekly nightly/weekly daily/monthly weekly/monthly only/except manual/automatic manually/automatically hand/automatically succeeded/failed succeeds/fails
""".split())
COORDINATORS = frozenset("and or nor as well plus".split())


@dataclass(frozen=True, slots=True)
class Token:
    text: str  # as written, trailing possessive dropped
    start: int  # offset in the text it was read from
    parts: tuple[str, ...]  # lowercase words and numbers inside it

    @property
    def lower(self) -> str:
        return self.text.lower()


@cache
def common_words() -> frozenset[str]:
    raw = resources.files("nasfs").joinpath("data", "common-english.txt.gz").read_bytes()
    return frozenset(gzip.decompress(raw).decode().split()) | TECH_WORDS


CURLY = str.maketrans("\u2019\u2018\u02bc", "'''")  # one character each: offsets stay the text's
_CONTRACTION = re.compile(r"[a-z]+(?:n't|'re|'ll|'ve|'d|'m)")


def tokens(text: str) -> list[Token]:
    out = []
    for m in _TOKEN.finditer(text.translate(CURLY)):
        word = re.sub(r"'s$|'$", "", m.group(0))
        if not word:
            continue
        parts = tuple(p.lower() for p in _PART.findall(word))
        out.append(Token(word, m.start(), parts))
    return out


MAX_STEM_CACHED = 64  # the longest word whose stem is kept: a longer one (a blob, a hash) is stemmed afresh


def stem(word: str) -> str:
    """A light suffix strip, enough that ``pushes``/``push`` and ``cached``/``cache`` meet."""
    # memoized (it is called for every word of every statement and clause, again and again), but only for
    # words of a word's length: a cited line of untrusted text may hold long blobs, and a cache of 65,536
    # of them would keep gigabytes alive in the daemon
    return _stem(word) if len(word) <= MAX_STEM_CACHED else _stem.__wrapped__(word)


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    w = word.lower()
    w = IRREGULAR.get(w, w)
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith(("ss", "ias", "us", "is")):
            w = w[: -len(suffix)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def is_common(word: str) -> bool:
    """``word`` (lowercase) is common English: a common word, an inflection or agent noun of one
    (``formatters``, ``formatting``), or one after a prefix (``untranslated``, ``multiline``)."""
    return _inflected(word) or any(word.startswith(p) and len(word) - len(p) >= 4 and _inflected(word[len(p):])
                                   for p in PREFIXES)


def _inflected(word: str) -> bool:
    common = common_words()
    if word in common:
        return True
    if (us := american(word)) != word and _inflected(us):  # initialised, colour: initialized, color
        return True
    if not word.endswith(("s", "es", "ed", "ing", "ies", "er", "ers", "ly")):
        return False
    forms = [word[:-1], word[:-2], word[:-3], word[:-3] + "e", word[:-2] + "e", word[:-3] + "y", word[:-2]]
    for cut in ("ers", "er", "ing", "ed"):  # formatters, formatting: format
        base = word.removesuffix(cut)
        if base != word and len(base) >= 3:
            forms += [base, base + "e", *([base[:-1]] if base[-1] == base[-2] else [])]
    return any(len(f) >= 2 and f in common for f in forms)


_AMERICAN = {"is": "iz", "ys": "yz", "isation": "ization", "our": "or"}
_BRITISH = re.compile(r"(?<=[a-z]{3})(?:isation|[iy]s(?=e|ed|es|ing|er|ers)|our(?=(?:s|ed|ing|ful|ised?|ising)?$))")


def american(word: str) -> str:
    """A British spelling's American form (``colour``: color), which the cited text may use."""
    return _BRITISH.sub(lambda m: _AMERICAN[m.group(0)], word)


PYTHON_TAG = re.compile(r"(?:py|cp|pypy)([23])(\d{0,2})")  # py311, cp311, pypy3
_WILDCARD = re.compile(r"(\d+(?:\.\d+)*)(?:\.[x*])+")
_COUNTED = re.compile(r"(\d+(?:\.\d+)*)-[a-z]+")


def tag_version(word: str) -> str | None:
    """The Python version a tag says (``py311``: 3.11, ``cp39``: 3.9, ``pypy3``: 3), or None."""
    m = PYTHON_TAG.fullmatch(word)
    return (f"{m.group(1)}.{m.group(2)}" if m.group(2) else m.group(1)) if m else None


def numbers_of(token: Token) -> list[str]:
    """The numbers a token says: ``3.10+`` -> 3.10, ``90s`` -> 90, ``2013-2026`` -> both, ``three`` -> 3,
    ``2-Clause`` -> 2, and a Python tag (``py39``, ``cp311``) its version."""
    low = re.sub(r"(?<=\d),(?=\d{3}\b)", "", token.lower)  # 5,000,000
    if low in NUMBER_WORDS:
        return [NUMBER_WORDS[low]]
    if version := tag_version(low):  # py311: 3.11, pypy3: 3
        return [version]
    if m := _WILDCARD.fullmatch(low):  # 2.x, 3.*
        return [normal_number(m.group(1))]
    if m := _COUNTED.fullmatch(low):
        return [normal_number(m.group(1))]
    if _HEX.fullmatch(low) and re.search(r"[a-f]", low) and re.search(r"\d", low):
        return []
    if _DIGITS_JOINED.fullmatch(low):  # 2013-2026, 2027-03-01, 10:30
        return [normal_number(n) for n in re.findall(r"\d+(?:\.\d+)*", low)]
    m = _NUMBER.fullmatch(low)
    return [normal_number(m.group(1))] if m else []


def normal_number(n: str) -> str:
    n = re.sub(r"^0+(?=\d)", "", n)  # 2020-03-03 says 3 (March 3)
    while n.endswith(".0") and n.count(".") >= 1 and len(n) > 2:
        n = n[:-2]
    return n


def is_name(token: Token, first: bool) -> bool:
    """A word that names something: a capital inside a sentence, letters mixed with digits or joined by
    ``_ . / -`` around an uncommon part, an all-caps acronym, or a word outside the common list."""
    text = token.text
    if numbers_of(token) or token.lower in ABBREVIATIONS or token.lower in STOP or _CONTRACTION.fullmatch(token.lower):
        return False  # doesn't, won't, they're, README: English, not a name
    letters = [p for p in token.parts if p.isalpha()]
    if not letters:
        return False
    if re.search(r"[_./]", text.strip(".")) or (re.search(r"\d", text) and re.search(r"[A-Za-z]", text)):
        return True
    if is_identifier(token):
        return True
    if len(text) >= 2 and text.isupper() and text.isalpha() and token.lower not in GENERIC_ACRONYMS:
        return True
    if text[:1].isupper() and not first and not text.isupper():
        return True

    return any(not is_common(p) for p in letters)


def is_identifier(token: Token) -> bool:
    """Code-like: ``snake_case``, ``dotted.name``, ``camelCase``/``GitHub``, ``call()``."""
    text = token.text.strip(".")
    if _VERSION.fullmatch(token.lower):
        return False  # 3.0.0, v1.4.0, 3.14t: a version, not a name
    return token.lower not in ABBREVIATIONS and bool(
        re.search(r"\w[_.]\w", text) or re.search(r"[a-z][A-Z]", text) or text.endswith("()"))


def key(token: Token) -> str:
    """How an identifier is compared: lowercase, without ``$``, ``()`` or an end dot."""
    return token.lower.lstrip("$").removesuffix("()").strip(".")


def is_negation(token: Token) -> bool:
    low = token.lower
    return low in NEGATIONS or low.endswith("n't") or any(p in NEGATIONS for p in token.parts if len(token.parts) > 1)


def is_restriction(token: Token) -> bool:
    return token.lower in RESTRICTIONS


def content(token: Token) -> bool:
    """A word worth matching: 3+ characters (or a number, or a name's part), not a stop word."""
    low = token.lower
    if numbers_of(token) or low in NEGATIONS or low in RESTRICTIONS or low.endswith("n't"):
        return False
    return len(low) >= 2 and low not in STOP and any(c.isalpha() for c in low)
