"""Parse errors: outline what parses, one region at a time.

tree-sitter recovers from most errors locally, but one it cannot place (an
``#ifdef`` splitting a C ``switch``, a construct the grammar lacks) can turn
the rest of the file into a single ERROR node whose children are loose
tokens, or into one definition that never closes: the outline would end
there. So such a node is cut into regions at lines that close a top-level
block (``}`` or ``end`` in the first column), and each region is parsed on
its own, at its own byte offsets (``included_ranges``), so only the region
holding the fault is lost.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nasfs.lines import LineIndex

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

# The end of a line that closes a top-level block: a region ends after it.
_CLOSING = re.compile(rb"^(?:\}|end\b)[^\n]*\n", re.M)


class Regions:
    """Re-parses, region by region, a node whose error swallowed what follows it.

    Only ERROR nodes and functions are cut (a function that never closes, as one
    ``esac`` too many leaves a Bash function): a container holding an error (a
    namespace, a class, an include guard's ``#ifndef``) is walked as it is, and
    what is broken inside it is cut where it is, so its regions keep the
    container's scope (see :class:`~nasfs.outline.code.walk.Walker`).
    """

    __slots__ = ("parser", "source", "lines", "trees")

    def __init__(self, parser: Parser, source: bytes, lines: LineIndex) -> None:
        self.parser, self.source, self.lines = parser, source, lines
        self.trees: list[Tree] = []  # kept alive while their nodes are walked

    def split(self, node: Node) -> list[Node] | None:
        """The top-level nodes of ``node``'s regions, or None when nothing closes inside it."""
        cuts = _cuts(self.source, node)
        if not cuts:
            return None
        nodes: list[Node] = []
        for start, end in zip([node.start_byte, *cuts], [*cuts, node.end_byte]):
            if not self.source[start:end].strip():
                continue
            region = _parse_range(self.parser, self.source, self.lines, start, end)
            self.trees.append(region)
            inner = region.root_node
            nodes.extend([inner] if inner.type == "ERROR" else inner.named_children)
        return nodes


def _cuts(source: bytes, node: Node) -> list[int]:
    start, end = node.start_byte, node.end_byte
    return [m.end() for m in _CLOSING.finditer(source, start, end) if start < m.end() < end]


def _parse_range(parser: Parser, source: bytes, lines: LineIndex, start: int, end: int) -> Tree:
    from tree_sitter import Range

    def point(at: int) -> tuple[int, int]:
        if at == len(source) and source.endswith(b"\n"):
            return lines.count, 0
        row = lines.line_of(at) - 1
        return row, at - lines.starts[row]

    parser.included_ranges = [Range(point(start), point(end), start, end)]
    try:
        return parser.parse(source)
    finally:
        parser.included_ranges = []
