"""Parse errors: outline what parses, one region at a time.

tree-sitter recovers from most errors locally, but one it cannot place (an
``#ifdef`` splitting a C ``switch``, a construct the grammar lacks) can turn
the rest of the file into a single ERROR node whose children are loose
tokens, or into one definition that never closes: the outline would end
there. So a top-level node holding an error is cut into regions at lines
that close a top-level block (``}`` or ``end`` in the first column), and each
region is parsed on its own, at its own byte offsets (``included_ranges``),
so only the region holding the fault is lost. (A namespace holding an error
is cut too: its members are then listed at the top level, which is still
better than losing them.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nasfs.lines import LineIndex

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

# The end of a line that closes a top-level block: a region ends after it.
_CLOSING = re.compile(rb"^(?:\}|end\b)[^\n]*\n", re.M)


def top_level(parser: Parser, tree: Tree, source: bytes, lines: LineIndex) -> tuple[list[Node], list[Tree]]:
    """The top-level nodes to walk, with each large ERROR replaced by its regions' parses.

    Also returns the region trees, which the caller keeps alive while it walks.
    """
    root = tree.root_node
    children = [root] if root.type == "ERROR" else root.named_children
    if not root.has_error:
        return children, []
    nodes: list[Node] = []
    trees: list[Tree] = []
    for node in children:
        cuts = _cuts(source, node) if node.has_error else []
        if not cuts:
            nodes.append(node)
            continue
        for start, end in zip([node.start_byte, *cuts], [*cuts, node.end_byte]):
            if not source[start:end].strip():
                continue
            region = _parse_range(parser, source, lines, start, end)
            trees.append(region)
            inner = region.root_node
            nodes.extend([inner] if inner.type == "ERROR" else inner.named_children)
    return nodes, trees


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
