"""Which side of a Python version check a name is on.

``if sys.version_info >= (3, 11): from typing import Unpack`` / ``else: from typing_extensions import
Unpack`` is how most Python modules say "typing on 3.11 and later, typing_extensions before". A
sentence that puts a name on the other side ("typing_extensions on Python 3.11 and later") swaps the
two branches, though every word and number of it is in the lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .reading import Reading
from .words import Token, content, is_identifier, numbers_of, tokens

# the check alone: no "not", "and" or "or" around it (``if not ...``, ``... and sys.platform == "win32"``
# make its branches another set of versions), and a block under each side (no body on the if's own line)
_CHECK = re.compile(r"^(\s*)(?:el)?if\s+\(?\s*(?:[\w.]+\.)?version_info\s*(?:\[[^\]\n]{0,10}\]\s*)?(>=|>|<=|<)\s*"
                    r"\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*\d{1,3}\s*)?\)\s*\)?\s*:\s*(?:#.*)?$")
_ELSE = re.compile(r"\s*else\s*:")
_BELOW = frozenset("before older earlier below prior lower under pre".split())
_AT_LEAST = frozenset("later newer above onwards onward higher since".split())
_SIDE_WORDS = _BELOW | _AT_LEAST | {"otherwise"}
MAX_CHECKS = 8


@dataclass(frozen=True)
class _Check:
    text: str
    version: str
    at_least: set[str]  # the words of the branch for that version and later
    below: set[str]  # those of the branch for earlier versions


def _block(reading: Reading, start: int, indent: int) -> tuple[set[str], int]:
    """The words of the lines indented under line ``start - 1``, and where the block ends."""
    lines = reading.lines
    found: set[str] = set()
    j = start
    while j < len(lines) and (lines[j].kind == "blank" or lines[j].indent > indent):
        found.update(t.lower for t in lines[j].tokens)
        j += 1
    return found, j


def _checks(reading: Reading, said: set[str]) -> list[_Check]:
    """The cited version checks of a version the sentence says, with an else: (MAX_CHECKS at most: a
    block's words are read once per check)."""
    lines = reading.lines
    out: list[_Check] = []
    for i, ln in enumerate(lines):
        m = _CHECK.match(ln.raw)
        if not m or f"{m.group(3)}.{m.group(4)}" not in said:
            continue
        if len(out) == MAX_CHECKS:
            break
        indent = len(m.group(1))
        then, end = _block(reading, i + 1, indent)
        otherwise: set[str] = set()
        if end < len(lines) and _ELSE.match(lines[end].raw) and lines[end].indent == indent:
            otherwise, _ = _block(reading, end + 1, indent)
        if not otherwise or not then:
            continue  # one side only (or a side on one line): nothing says what the other versions do
        later = m.group(2).startswith(">")
        out.append(_Check(ln.raw.strip()[:80], f"{m.group(3)}.{m.group(4)}", then if later else otherwise,
                          otherwise if later else then))
    return out


def _sides(phrases: list[str], version: str) -> list[list[Token]]:
    """The pieces of the phrases (cut at commas) that name ``version`` or a side of it, each with the
    pieces after it that name neither ("before 3.11, Unpack comes from typing_extensions")."""
    out: list[list[Token]] = []
    for phrase in phrases:
        for piece in re.split(r"[,;]|\b(?:but|whereas)\b", phrase):
            toks = tokens(piece)
            if version in {n for t in toks for n in numbers_of(t)} or {t.lower for t in toks} & _SIDE_WORDS:
                out.append(toks)
            elif out:
                out[-1] = out[-1] + toks
    return out


def version_side(phrases: list[str], reading: Reading) -> str | None:
    """A name a phrase puts on one side of a cited version check (``3.11 and later``; ``older``,
    ``before 3.11``, ``otherwise``) that only the other side holds."""
    said = {n for p in phrases for t in tokens(p) for n in numbers_of(t)}
    for check in _checks(reading, said):
        for toks in _sides(phrases, check.version):
            below = bool({t.lower for t in toks} & (_BELOW | {"otherwise"}))
            side, other = (check.below, check.at_least) if below else (check.at_least, check.below)
            for t in toks:
                name = t.lower
                if (is_identifier(t) or content(t)) and name in other and name not in side:
                    where = "before" if not below else "from"
                    return f"{t.text!r} is what the cited lines use {where} {check.version} ({check.text})"
    return None
