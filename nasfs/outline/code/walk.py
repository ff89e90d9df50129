"""The tree walk: entries in document order from the children of containers only.

Speed matters (whole trees are outlined and compared against ``ctags -R``), so
the walk never visits every node: it only looks at the children of *container*
nodes (module bodies, class bodies, blocks, namespaces, export statements ...)
and of definitions that can hold further definitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasfs.lines import LineIndex
from nasfs.outline.model import Entry

from .regions import Regions
from .signature import label
from .spec import COMMENT, COMMENTS, FUNC, LEAD, SCOPE, TOP, WRAP, Spec

if TYPE_CHECKING:
    from tree_sitter import Node

    from .spec import Found

# Containers nested deeper than this are not walked (keeps recursion bounded on
# pathological input; real code never gets near it).
MAX_NESTING = 100


def _content_end(node: Node, source: bytes) -> int:
    """Where ``node``'s code ends: before the white space and comments it ends with.

    tree-sitter-scala ends a definition whose body is an indented block at the
    next line's indentation, and so after the next definition's doc comment. So
    a node that ends in white space ends instead where its last child that is no
    comment (and not empty) ends, looked for down the tree.
    """
    end = node.end_byte
    if end == node.start_byte or source[end - 1] not in b" \t\r\n":
        return end  # the common case: ``}``, ``end`` or the last token
    while node.child_count:
        at = node.child_count - 1
        child = node.child(at)
        while child is not None and (child.type in COMMENTS or child.start_byte == child.end_byte):
            at -= 1
            child = node.child(at) if at >= 0 else None
        if child is None:
            break
        node = child
    end = node.end_byte
    while end > node.start_byte + 1 and source[end - 1] in b" \t\r\n":
        end -= 1
    return end


class Walker:
    """Collects entries in document order from the children of containers only."""

    __slots__ = ("actions", "nested", "lines", "source", "regions", "entries")

    def __init__(self, spec: Spec, lines: LineIndex, source: bytes, regions: Regions) -> None:
        self.actions = spec.actions
        self.nested = spec.nested
        self.lines = lines
        self.source = source  # what was parsed: the file's bytes less what fixups blanked
        self.regions = regions
        self.entries: list[Entry] = []

    def walk(
        self,
        children: list[Node],
        scope: tuple[str, ...],
        depth: int,
        lead: int | None,
        in_func: bool,
        nesting: int,
    ) -> None:
        """Walk one container's children.

        ``lead`` is the start byte of a wrapper around them (decorators,
        ``export``); ``in_func`` says we are inside a function body.
        """
        if nesting > MAX_NESTING:
            return
        actions = self.actions
        pending: int | None = None  # start byte of leading siblings (``#[attr]``) seen so far
        for node in children:
            action = actions.get(node.type)
            if node.type == "ERROR" and node.has_error and self._split(node, scope, depth, lead, in_func, nesting):
                pending = None
                continue
            if action is None:
                pending = None
            elif isinstance(action, int):
                if action & LEAD:
                    if pending is None:
                        pending = node.start_byte
                elif action & COMMENT:
                    pass
                else:
                    inner_lead = None
                    if action & WRAP:
                        inner_lead = node.start_byte if lead is None else lead
                        if pending is not None:
                            inner_lead = min(inner_lead, pending)
                    pending = None
                    if not (action & TOP and in_func):
                        self.walk(node.named_children, scope, depth, inner_lead, in_func, nesting + 1)
            else:
                found = action(node)
                # A function or leaf that holds an error may have swallowed what follows it
                # (a Bash function one ``esac`` off); a class or namespace is walked, its errors
                # cut where they are, so what is inside keeps its scope.
                if (found is None or found[3] != SCOPE) and node.has_error:
                    if self._split(node, scope, depth, lead, in_func, nesting):
                        pending = None
                        continue
                if found is not None:
                    start = node.start_byte
                    if lead is not None:
                        start = min(start, lead)
                    if pending is not None:
                        start = min(start, pending)
                    self.define(node, found, start, scope, depth, in_func, nesting)
                pending = None

    def _split(
        self, node: Node, scope: tuple[str, ...], depth: int, lead: int | None, in_func: bool, nesting: int
    ) -> bool:
        """Walk ``node``'s regions instead of it, if a top-level block closes inside it."""
        regions = self.regions.split(node)
        if regions is None:
            return False
        self.walk(regions, scope, depth, lead, in_func, nesting + 1)
        return True

    def define(
        self,
        node: Node,
        found: Found,
        start: int,
        scope: tuple[str, ...],
        depth: int,
        in_func: bool,
        nesting: int,
    ) -> None:
        """Record one definition starting at byte ``start`` and walk its body."""
        parts, anchor, body, nest = found
        if parts and all(parts):  # an empty part is a MISSING node in broken code
            scope += tuple(" ".join(part.split()) for part in parts)  # ``A<\n T>``: names hold no newline
            line_of = self.lines.line_of
            first = line_of(start)
            last = max(first, line_of(_content_end(node, self.source) - 1))
            shown = label(self.lines, self.source, node, anchor, start, body, scope[-1])
            self.entries.append(Entry(shown, first, last, depth, scope))
            depth += 1
        if not nest or body is None:
            return
        if nest == FUNC:
            if not self._may_nest(body):
                return
            in_func = True
        self.walk(body.named_children, scope, depth, None, in_func, nesting + 1)

    def _may_nest(self, body: Node) -> bool:
        """Whether a function body's text could hold a definition (see ``Spec``)."""
        data, start, end = self.lines.data, body.start_byte, body.end_byte
        for pattern in self.nested:
            if pattern.search(data, start, end) is not None:
                return True
        return False
