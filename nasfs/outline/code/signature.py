"""An entry's label: its signature, on one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasfs.lines import LineIndex

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_LABEL = 160


def label(lines: LineIndex, node: Node, anchor: Node, start: int, body: Node | None, name: str) -> str:
    """The anchor's line, cut to the definition's own text and before its body.

    The line is taken from the definition's start when that is on the same
    line (``class A { void f() {} }`` labels ``f`` as ``void f()``); a trailing
    ``{``/``:``/``=`` (before an expression body) goes; a name not on that line
    (``typedef struct {`` ... ``} pair_t;``) is appended.
    """
    at = anchor.start_byte
    first, end = lines.span(lines.line_of(at), lines.line_of(at))
    first = max(first, min(at, start))
    end = min(end, node.end_byte)
    if body is not None and at < body.start_byte < end:
        end = body.start_byte
    text = lines.data[first:end].decode("utf-8", "replace").strip()
    if text.endswith(("{", ":", "=")):
        text = text[:-1].rstrip()
    if name not in text:
        text = f"{text} … {name}" if text else name
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1] + "…"
    return text

