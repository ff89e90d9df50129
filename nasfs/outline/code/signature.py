"""An entry's label: its signature, on one line."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nasfs.lines import LineIndex

if TYPE_CHECKING:
    from tree_sitter import Node

# A signature is shown whole, joined onto one line, up to this many characters
# (a bound for pathological input; real signatures stay well below it).
MAX_LABEL = 320
# How far past its first line a signature is looked for.
_REACH = 4 * MAX_LABEL
_SPACE = re.compile(r"\s+")
_INNER = re.compile(r"(?<=[(\[]) | (?=[)\]])")
_BRACKETS = {ord("("): 1, ord("["): 1, ord(")"): -1, ord("]"): -1}


def label(lines: LineIndex, source: bytes, node: Node, anchor: Node, start: int, body: Node | None, name: str) -> str:
    """The definition's signature on one line: from its anchor's line to its body.

    The text starts at the definition's start when that is on the anchor's
    line (``class A { void f() {} }`` labels ``f`` as ``void f()``) and runs to
    where the body starts, across lines (``def f(a,`` / ``b):`` is
    ``def f(a, b)``, a Kotlin class header with ``private constructor(`` on the
    next line is whole); without a body, to the end of the line where the
    brackets opened on it close. Runs of white space become one space; a
    trailing ``{``/``:``/``=`` (before an expression body) goes; a name not in
    it (``typedef struct {`` ... ``} pair_t;``) is appended. The text is
    ``source``, what was parsed: the file's bytes less what :mod:`.fixups`
    blanked (a C# ``#if`` line inside a class header is no part of it).
    """
    data = source
    at = anchor.start_byte
    number = lines.line_of(at)
    first, end = lines.span(number, number)
    first = max(first, min(at, start))
    limit = min(node.end_byte, first + _REACH)
    if body is not None and at < body.start_byte:
        end = max(min(body.start_byte, limit), min(end, body.start_byte))
    else:
        end = _balanced_end(lines, source, first, min(end, node.end_byte), limit)
    text = _SPACE.sub(" ", data[first:end].decode("utf-8", "replace")).strip()
    text = _INNER.sub("", text)
    if text.endswith(("{", ":", "=")):
        text = text[:-1].rstrip()
    if name.lower() not in text.lower():  # (Kotlin's ``companion object`` is named ``Companion``)
        text = f"{text} … {name}" if text else name
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1] + "…"
    return text


def _balanced_end(lines: LineIndex, data: bytes, first: int, end: int, limit: int) -> int:
    """``end`` (the first line's end), or the end of the later line where the brackets opened close."""
    depth = sum(_BRACKETS.get(c, 0) for c in data[first:end])
    while depth > 0 and end < limit:
        number = lines.line_of(end)
        nxt = min(lines.span(number, number)[1], limit)
        depth += sum(_BRACKETS.get(c, 0) for c in data[end:nxt])
        end = nxt
    return end
