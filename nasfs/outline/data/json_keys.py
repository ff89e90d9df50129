"""JSON keys through tree-sitter-json, which gives a byte span for every key."""

from __future__ import annotations

from tree_sitter import Node

from nasfs.outline.data.emit import Member, TreeSitterFormat, end_of, unquote

_JSON_TYPES = {"string": "string", "number": "number", "true": "boolean", "false": "boolean", "null": "null"}


class Json(TreeSitterFormat):
    def describe(self, value: Node) -> tuple[str | None, str]:
        if value.type in ("object", "array"):
            return value.type, ""
        return None, _JSON_TYPES.get(value.type, value.type)

    def keys(self, value: Node) -> list[Member]:
        return [
            (unquote(pair.child_by_field_name("key").text), pair.start_byte, end_of(pair, self.src),
             pair.child_by_field_name("value"))
            for pair in value.named_children
            if pair.type == "pair"
        ]

    def items(self, value: Node) -> list[Node]:
        return [c for c in value.named_children if c.type != "comment"]


