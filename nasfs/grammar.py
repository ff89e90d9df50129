"""The one parser of the view grammar (contract §2), used by every door.

``P@outline``, ``P@outline=41`` (from the 41st top-level entry: the next page),
``P@keys`` (every key of a data file with its lines), ``P@L12-L18``, ``P@L12``,
``P@section=NAME``, ``P@section=NAME@outline`` (the section's whole outline:
the follow-up a fitted outline names where it hides a level), ``P@since=REV``,
``P@summary``, ``P@400``; any of them followed by ``@N`` (a budget) and then
``.json`` (the envelope). ``NAME`` and ``REV`` may use ``%XX`` escapes
(``%2F`` for ``/``, ``%40`` for ``@``) since file names cannot hold ``/``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from .errors import BadPath, BadView, NotFound, check_text

MAX_BUDGET = 10**15
# The budget of an HTTP or MCP read that names none: well under the 25,000-token
# tool-result cap of agent hosts (Claude Code). Here, not in http.py, so that
# the CLI's parser takes it without importing the HTTP door.
DEFAULT_READ_BUDGET = 8000
VALID_FORMS = (
    "@outline, @outline=K (from top-level entry K; of a folder, from its K-th file), @keys, @L12-L18, @L12, @section=NAME, "
    "@section=NAME@outline (the section's whole outline), @since=REV, "
    "@summary, @N (a token budget), any of these followed by @N, then optionally .json"
)

_INSIDE = "@outline"  # section=NAME@outline: the section's whole outline


def parse_default_budget(text: str) -> int:
    """``--default-budget N``: a whole number of tokens; 0 or ``none`` turns it off."""
    if text.strip().lower() in ("none", "off", "0"):
        return 0
    if not text.strip().isdigit() or int(text) > MAX_BUDGET:
        raise ValueError(text)
    return int(text)


_LINES = re.compile(r"L(\d+)(?:-L(\d+))?")
_PAGE = re.compile(r"outline=(\d+)")
_BUDGET = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class View:
    """A parsed view. ``kind`` is one of raw, outline, keys, lines, section,
    inside, since, summary, best; ``keys`` lists every key of a data file with
    its lines; ``best`` is ``P@N`` (the richest view within N tokens);
    ``inside`` is ``P@section=NAME@outline``, the whole outline of a section.
    ``start`` is a line range's first line, or the top-level entry an outline
    starts at (``outline=41``; 0 for the whole outline)."""

    kind: str
    start: int = 0
    end: int = 0
    arg: str = ""
    budget: int | None = None
    json: bool = False

    def spelled(self) -> str:
        """The canonical spelling after ``@`` (for cache keys and headers)."""
        base = {
            "outline": f"outline={self.start}" if self.start else "outline",
            "summary": "summary",
            "keys": "keys",
            "lines": f"L{self.start}-L{self.end}",
            "section": f"section={self.arg}",
            "inside": f"section={self.arg}@outline",
            "since": f"since={self.arg}",
            "best": "",
            "raw": "",
        }[self.kind]
        parts = [p for p in (base, "" if self.budget is None else str(self.budget)) if p]
        return "@".join(parts) + (".json" if self.json else "")

    def name_with_json(self) -> View | None:
        """The other reading of ``section=NAME.json``: the section named
        ``NAME.json`` as text (``Message.json``, method ``json`` of class
        ``Message``). The service takes it when the file has that section
        (contract §2); None for a view that has no other reading."""
        if self.kind == "section" and self.json and self.budget is None:
            return View("section", arg=self.arg + ".json")
        return None


RAW = View("raw")


def _budget(text: str) -> int:
    if not _BUDGET.fullmatch(text) or len(text) > 16:
        raise BadView(f"budget {text!r} is not a whole number of tokens", VALID_FORMS)
    value = int(text)
    if value > MAX_BUDGET:
        raise BadView(f"budget {value} is larger than {MAX_BUDGET}", VALID_FORMS)
    return value


def check_budget(value: int | None) -> int | None:
    """A budget given as a number (HTTP, MCP, ``--budget``) checked as ``@N`` is."""
    return None if value is None else _budget(str(value))


def parse_view(text: str) -> View:
    """Parse the text after the first ``@``; raise :class:`BadView` otherwise."""
    check_text("the view", text, BadView)
    as_json = text.endswith(".json")
    if as_json:
        text = text[: -len(".json")]
    if not text:
        raise BadView("empty view after '@'", VALID_FORMS)
    budget: int | None = None
    head, at, tail = text.rpartition("@")
    if at and _BUDGET.fullmatch(tail):
        text, budget = head, _budget(tail)
    if _BUDGET.fullmatch(text) and budget is None:
        return View("best", budget=_budget(text), json=as_json)
    if text in _WORDS:
        return View(text, budget=budget, json=as_json)
    m = _PAGE.fullmatch(text)
    if m:
        first = int(m.group(1)) if len(m.group(1)) <= 16 else 0
        if first < 1:
            raise BadView(f"outline entries count from 1, got outline={m.group(1)[:20]}", "@outline=1, @outline=41")
        return View("outline", first, budget=budget, json=as_json)
    m = _LINES.fullmatch(text)
    if m:
        start = int(m.group(1))
        end = int(m.group(2) or m.group(1))
        if start < 1:
            raise BadView(f"line numbers start at 1, got L{start}", "@L1, @L12-L18")
        if end < start:
            raise BadView(f"line range L{start}-L{end} ends before it starts; did you mean "
                          f"@L{end}-L{start}{_suffix(budget, as_json)}?", "@L12-L18 with 12 <= 18")
        return View("lines", start, end, budget=budget, json=as_json)
    if text.startswith("section=") and text.endswith(_INSIDE):
        arg = unquote(text[len("section="): -len(_INSIDE)])
        if not arg:
            raise BadView("@section=NAME@outline needs a NAME", VALID_FORMS)
        return View("inside", arg=arg, budget=budget, json=as_json)
    if text.startswith("section=") and _INSIDE + "@" in text:
        raise BadView(f"after @{text[: text.index(_INSIDE + '@')]}{_INSIDE} only a budget @N and .json may follow, "
                      f"not {text[text.index(_INSIDE + '@') + len(_INSIDE):]!r} (an '@' in a name is written %40)", VALID_FORMS)
    for kind in ("section", "since"):
        prefix = kind + "="
        if text.startswith(prefix):
            arg = unquote(text[len(prefix):])
            if not arg:
                raise BadView(f"@{prefix} needs a value", VALID_FORMS)
            return View(kind, arg=arg, budget=budget, json=as_json)
    guess = _guess(text)
    hint = f"; did you mean @{guess}{_suffix(budget, as_json)}?" if guess else ""
    raise BadView(f"unknown view {text!r}{hint}", VALID_FORMS)


_WORDS = ("outline", "summary", "keys")
_KEYED = ("section", "since")
_LOOSE_LINES = re.compile(r"[lL]?(\d+)(?:\s*[-:,.]+\s*[lL]?(\d+))?")


def _suffix(budget: int | None, as_json: bool) -> str:
    return ("" if budget is None else f"@{budget}") + (".json" if as_json else "")


def _guess(text: str) -> str | None:
    """The view a misspelled one most likely meant (``outlien``, ``Outline``,
    ``l5-l2``, ``sectoin=X``), or None: the hint in the one grammar error."""
    lower = text.lower()
    m = _LOOSE_LINES.fullmatch(text.strip())
    if m:
        a = int(m.group(1))
        b = int(m.group(2) or a)
        a, b = min(a, b), max(a, b)
        return f"L{max(a, 1)}" if a == b else f"L{max(a, 1)}-L{b}"
    close = difflib.get_close_matches(lower, _WORDS, n=1, cutoff=0.6)
    if close:
        return close[0]
    key, sep, value = text.partition("=")
    if not sep:
        key, sep, value = text.partition(":")
    if sep and value:
        close = difflib.get_close_matches(key.lower(), _KEYED, n=1, cutoff=0.6)
        if close:
            return f"{close[0]}={value}"
    return None


def split_suffixes(name: str) -> tuple[str, int | None, bool]:
    """``query@300.json`` → (``query``, 300, True): the budget and envelope
    suffixes of side files (``.nas/search/``, ``.nas/diff/``), parsed as views' are;
    ``%XX`` escapes in the rest are decoded (``%2F`` for ``/``)."""
    as_json = name.endswith(".json")
    if as_json:
        name = name[: -len(".json")]
    head, at, tail = name.rpartition("@")
    budget = None
    if at and _BUDGET.fullmatch(tail):
        name, budget = head, _budget(tail)
    return unquote(name), budget, as_json


def split_name(name: str, exists: Callable[[str], bool], is_file: Callable[[str], bool]) -> tuple[str, View]:
    """Split one directory entry name into (real name, view).

    A name that exists is always the real entry, ``@`` or not. Otherwise the
    name splits at the ``@`` whose left part is an existing file, the longest
    such left part first (``user@host.txt@outline``), or else an existing
    folder (``src@2000``, ``.@2000``: its map; the service refuses views of
    files there). Raises :class:`NotFound` when no left part exists,
    :class:`BadPath` for ``..@...``, :class:`BadView` when the view does not parse.
    """
    if exists(name):
        return name, RAW
    pos = len(name)
    while True:
        pos = name.rfind("@", 0, pos)
        if pos <= 0:
            if "@" not in name:
                raise NotFound(f"no file {name!r}: it does not exist", "a path of a file in the tree")
            raise NotFound(f"no file {name!r}: it does not exist, and no '@' in it follows an existing file or folder", VALID_FORMS)
        if name[:pos] == "..":
            raise BadPath(f"{name!r} leaves the folder through '..'", "a view of a file or folder inside the tree, e.g. .@2000")
        if is_file(name[:pos]):
            return name[:pos], parse_view(name[pos + 1:])
        if exists(name[:pos]):  # a folder: its map; longer left parts were no file
            return name[:pos], parse_view(name[pos + 1:])


def split_path(path: str, exists: Callable[[str], bool], is_file: Callable[[str], bool]) -> tuple[str, View]:
    """Split a tree-relative path whose last component may carry a view."""
    folder, _, leaf = path.rpartition("/")
    prefix = folder + "/" if folder else ""
    try:
        real, view = split_name(leaf, lambda n: exists(prefix + n), lambda n: is_file(prefix + n))
    except NotFound as exc:  # name the whole path, not just its last part
        raise NotFound(exc.message.replace(repr(leaf), repr(path), 1), exc.valid) from None
    return prefix + real, view
