"""TOML keys through tree-sitter-toml, tables merged from headers and dotted keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from nasfs.outline.data.emit import Member, TreeSitterFormat, end_of, unquote


@dataclass(eq=False, slots=True)
class _Table:
    """A TOML table merged from headers, dotted keys and inline-table pairs.

    TOML spreads one table over many places (``[a.b]`` creates ``a``; ``x.y = 1``
    creates ``x``), so the key tree is assembled before emitting; a table spans
    from its first mention to the end of its last member.
    """

    start: int
    end: int
    members: dict[str, _TomlMember] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class _TableArray:
    """An array of tables (``[[products]]``): each header opens a new element."""

    start: int
    end: int
    items: list[_Table] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Pair:
    """A ``key = value`` member: its span and the value's node."""

    start: int
    end: int
    value: Node


_TomlMember = _Table | _TableArray | _Pair

_TOML_TYPES = {
    "string": "string", "integer": "integer", "float": "float", "boolean": "boolean",
    "offset_date_time": "datetime", "local_date_time": "datetime", "local_date": "date", "local_time": "time",
}


class Toml(TreeSitterFormat):
    def describe(self, value: _Table | _TableArray | Node) -> tuple[str | None, str]:
        if isinstance(value, _Table):
            return "object", ""
        if isinstance(value, _TableArray):
            return "array", ""
        if value.type == "inline_table":
            return "object", ""
        if value.type == "array":
            return "array", ""
        return None, _TOML_TYPES.get(value.type, value.type)

    def keys(self, value: _Table | Node) -> list[Member]:
        if not isinstance(value, _Table):  # an inline table: merged like a section, for its dotted keys
            table = _Table(value.start_byte, value.start_byte)
            _merge_pairs([table], value, self.src)
            value = table
        return [
            (name, m.start, m.end, m.value if isinstance(m, _Pair) else m) for name, m in value.members.items()
        ]

    def items(self, value: _TableArray | Node) -> list[Any]:
        if isinstance(value, _TableArray):
            return value.items
        return [c for c in value.named_children if c.type != "comment"]

    def span(self, item: _Table | Node) -> tuple[int, int]:
        if isinstance(item, _Table):
            return item.start, item.end
        return super().span(item)


def toml_table(document: Node, src: bytes) -> _Table:
    """The root table of a TOML document, with every header and dotted key merged in."""
    root = _Table(0, 0)
    _merge_pairs([root], document, src)
    for section in document.named_children:
        if section.type in ("table", "table_array_element"):
            header = section.named_children[0]
            chain = _open_table(root, _key_parts(header), section.start_byte, header.end_byte,
                                section.type == "table_array_element")
            _merge_pairs(chain, section, src)
    return root


def _open_table(root: _Table, parts: list[str], start: int, end: int, array: bool) -> list[_Table | _TableArray]:
    """The chain of containers from ``root`` down to the table a header opens, creating what is missing."""
    chain: list[_Table | _TableArray] = [root]
    table = root
    for index, part in enumerate(parts):
        member = table.members.get(part)
        if array and index == len(parts) - 1:
            if not isinstance(member, _TableArray):
                member = table.members[part] = _TableArray(start, start)
            chain.append(member)
            member.items.append(_Table(start, start))
            member = member.items[-1]
        elif isinstance(member, _TableArray):  # [a.b] after [[a]] extends a's last element
            chain.append(member)
            member = member.items[-1]
        elif not isinstance(member, _Table):  # missing, or a redefinition (invalid TOML): last one wins
            member = table.members[part] = _Table(start, start)
        chain.append(member)
        table = member
    _stretch(chain, end)
    return chain


def _merge_pairs(chain: list[_Table | _TableArray], section: Node, src: bytes) -> None:
    """Put the ``key = value`` pairs directly under ``section`` into the last table of ``chain``.

    Every container on the chain (the table's ancestors, arrays of tables
    included) is stretched to the end of each pair.
    """
    for pair in section.named_children:
        if pair.type != "pair":
            continue
        parts = _key_parts(pair.named_children[0])
        value = [c for c in pair.named_children if c.type != "comment"][-1]
        table, created = chain[-1], []  # a chain always ends at a table
        for part in parts[:-1]:  # a dotted key creates its tables
            member = table.members.get(part)
            if not isinstance(member, _Table):
                member = table.members[part] = _Table(pair.start_byte, pair.start_byte)
            created.append(member)
            table = member
        end = end_of(pair, src)
        table.members[parts[-1]] = _Pair(pair.start_byte, end, value)
        _stretch(chain + created, end)


def _stretch(chain: list[_Table | _TableArray], end: int) -> None:
    for container in chain:
        container.end = max(container.end, end)


def _key_parts(key: Node) -> list[str]:
    """The names of a bare, quoted or dotted TOML key (``a."b.c".d`` -> a, b.c, d)."""
    parts: list[str] = []
    stack = [key]
    while stack:
        node = stack.pop()
        if node.type == "dotted_key":
            stack.extend(reversed(node.named_children))
        else:
            parts.append(unquote(node.text))
    return parts
