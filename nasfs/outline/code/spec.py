"""What a language's outline looks for: the Spec table and the common handler shapes.

Per language, a small table maps definition node types to a *handler* that
pulls out the qualified name, the node whose line is the signature, and the
body; other node types are containers walked for definitions (see
:mod:`nasfs.outline.code.walk`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tree-sitter loads on first parse: ``language_for`` alone must stay cheap
    from tree_sitter import Node

    # (qualified name parts, node whose line is the label, body, LEAF|SCOPE|FUNC).
    # Empty parts: no entry of its own, but the body is still walked
    # (anonymous namespace, ``class << self``).
    Found = tuple[tuple[str, ...], Node, Node | None, int]
    Handler = Callable[[Node], Found | None]

# How a definition's body is walked.
LEAF, SCOPE, FUNC = 0, 1, 2  # not at all / for members / for nested functions

COMMENTS = frozenset({"comment", "line_comment", "block_comment"})


# Flags for non-definition node types in a Spec's action table.
CONTAIN, WRAP, TOP, LEAD, COMMENT = 1, 2, 4, 8, 16


class Spec:
    """What to look for in one grammar, folded into one node-type -> action table.

    ``containers`` are walked for definitions; ``wrappers`` are containers whose
    start is the start of the definition they wrap (decorators, ``export``,
    ``template <...>``); ``leading`` are sibling nodes directly above a
    definition that belong to it (``#[attr]``, member decorators);
    ``toplevel`` are containers only walked outside function bodies (so
    ``const f = () => ...`` is an entry at top level, not inside functions).
    A single dict lookup per visited node keeps the walk cheap.

    ``nested`` are patterns one of which matches the text of any function body
    that holds a definition (``def\\s``, ``class\\s``); bodies none matches are
    skipped unread, which saves walking most function bodies statement by
    statement. One literal-prefixed pattern per keyword: ``re`` scans those far
    faster than an alternation.
    """

    __slots__ = ("actions", "nested")

    def __init__(
        self,
        defs: dict[str, Handler],
        containers: frozenset[str],
        wrappers: frozenset[str] = frozenset(),
        leading: frozenset[str] = frozenset(),
        toplevel: frozenset[str] = frozenset(),
        nested: tuple[bytes, ...] = (),
    ) -> None:
        self.nested = tuple(re.compile(p) for p in nested)
        flags: dict[str, int] = dict.fromkeys(COMMENTS, COMMENT)
        for kind in containers:
            flags[kind] = CONTAIN
        for kind in toplevel:
            flags[kind] = CONTAIN | TOP
        for kind in wrappers:
            flags[kind] = flags.get(kind, CONTAIN) | WRAP
        for kind in leading:
            flags[kind] = LEAD
        self.actions: dict[str, Handler | int] = {**flags, **defs}


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def named(nest: int, name: str = "name", body: str | None = "body") -> Handler:
    """Handler for the common shape: a ``name`` field and maybe a ``body`` field."""

    def handle(node: Node) -> Found | None:
        n = node.child_by_field_name(name)
        if n is None:
            return None
        return (text(n),), n, node.child_by_field_name(body) if body else None, nest

    return handle


def unquoted(handler: Handler) -> Handler:
    """Names without the backticks that let a keyword be one (Scala/Swift ``def `import```)."""

    def handle(node: Node) -> Found | None:
        found = handler(node)
        if found is None or not any(part.startswith("`") for part in found[0]):
            return found
        parts = tuple(p[1:-1] if len(p) > 2 and p[0] == p[-1] == "`" else p for p in found[0])
        return (parts, *found[1:])  # type: ignore[return-value]

    return handle


def scoped_named(nest: int) -> Handler:
    """Named definition whose name may be qualified (``class Foo::Bar``, ``namespace a::b``)."""

    def handle(node: Node) -> Found | None:
        n = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if n is None:
            return (), node, body, nest
        parts = tuple(p.strip() for p in text(n).split("::") if p.strip())
        return parts, n, body, nest

    return handle



def unnamed_fields(names: frozenset[str], bodies: frozenset[str], nest: int, anonymous: str = "") -> Handler:
    """For grammars without field names (Kotlin): the first child of a name type, of a body type.

    Without a name the definition is named ``anonymous`` (Kotlin calls an
    unnamed ``companion object`` ``Companion``), or has no entry if that is empty.
    """

    def handle(node: Node) -> Found | None:
        name = body = None
        for child in node.named_children:
            kind = child.type
            if name is None and kind in names:
                name = child
            elif kind in bodies:
                body = child
                break
        if name is None:
            return ((anonymous,) if anonymous else ()), node, body, nest
        return (text(name),), name, body, nest

    return handle


def fixed(name: str, nest: int) -> Handler:
    """A definition named by its keyword (Swift ``init``/``deinit``), labelled from the keyword's line
    (not from an ``@available(...)`` above it)."""

    def handle(node: Node) -> Found | None:
        keyword = next((c for c in node.children if c.type == name), node)
        return (name,), keyword, node.child_by_field_name("body"), nest

    return handle



def split_named(separators: str, nest: int) -> Handler:
    """Names qualified by ``separators``: ``App\\Models``, ``App.Core``, Lua ``M.new``/``M:m``."""
    table = str.maketrans({c: " " for c in separators})

    def handle(node: Node) -> Found | None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None:
            return (), node, body, nest
        return tuple(text(name).translate(table).split()), name, body, nest

    return handle

