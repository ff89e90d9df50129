"""YAML keys from libyaml parser events.

tree-sitter-yaml breaks past 32768 lines, so YAML is read as events: they
carry positions and tags but nothing is composed or constructed, so
application tags (``!Ref``, ``!!python/name:os.system``) are only shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from nasfs.outline.data.emit import Format, Member, trim
from nasfs.outline.text import cut_label

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(eq=False, slots=True)
class _YamlValue:
    """One YAML node as the outline needs it, built from parser events.

    Scalar array elements, which the outline never shows, are kept only as
    None placeholders, so indexes and lengths stay right while a long
    sequence of scalars costs one pointer per element.
    """

    container: str | None
    text: str  # a scalar's type, tag or alias; a container's tag prefix
    start: int
    end: int
    members: list[Member] | None = None  # for a mapping
    items: list[_YamlValue | None] | None = None  # for a sequence


@dataclass(eq=False, slots=True)
class _Open:
    """A collection whose end event has not arrived yet."""

    value: _YamlValue
    flow: bool
    key: tuple[str, int, int] | None = None  # a mapping key awaiting its value: name, start, end
    last_end: int = 0

    @property
    def wants_key(self) -> bool:
        return self.value.members is not None and self.key is None

    def add_key(self, name: str, start: int, end: int) -> None:
        self.key = (name, start, end)
        self.last_end = max(self.last_end, end)

    def add(self, node: _YamlValue | None, end: int) -> None:
        """Add a finished child ending at ``end``: an element (None if it is never shown) or a key's value."""
        self.last_end = max(self.last_end, end)
        value = self.value
        if value.items is not None:
            value.items.append(node if node is not None and node.container is not None else None)
        elif self.key is not None and value.members is not None:
            name, start, key_end = self.key
            self.key = None
            value.members.append((name, start, max(key_end, end), node))


class Yaml(Format):
    def describe(self, value: _YamlValue | None) -> tuple[str | None, str]:
        if value is None:  # an empty stream, or a placeholder element (never shown)
            return None, "null"
        return value.container, value.text

    def keys(self, value: _YamlValue) -> list[Member]:
        return value.members or []

    def items(self, value: _YamlValue) -> list[_YamlValue | None]:
        return value.items or []

    def span(self, item: _YamlValue) -> tuple[int, int]:
        return item.start, item.end


class ByteOffsets:
    """Byte offsets of the character indexes libyaml marks carry, for ``LineIndex``.

    Marks arrive almost in order, so each conversion encodes only the text
    between the previous index and this one.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self.char = 0
        self.byte = 0

    def __call__(self, index: int) -> int:
        if self.ascii:
            return index
        if index >= self.char:
            self.byte += len(self.text[self.char : index].encode())
        else:
            self.byte -= len(self.text[index : self.char].encode())
        self.char = index
        return self.byte


def yaml_documents(body: bytes, text: str) -> list[_YamlValue]:
    """The root value of each document in a YAML stream; raises ``yaml.YAMLError``.

    Only parser events are read: no node is composed and no tag is resolved to
    a constructor, so ``!!python/object/apply:os.system`` is just a label.
    Scalars are typed only where a label shows them (mapping values).
    """
    offset = ByteOffsets(text)
    documents: list[_YamlValue] = []
    stack: list[_Open] = []
    document_start = 0
    for event in yaml.parse(text, Loader=YAML_LOADER):
        kind = type(event)
        parent = stack[-1] if stack else None
        if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
            start, end = offset(event.start_mark.index), offset(event.end_mark.index)
            scalar = kind is yaml.ScalarEvent
            if scalar and event.style in ("|", ">"):  # a block scalar ends where the next token starts
                end = trim(body, start, end)
            if parent is not None and parent.wants_key:
                parent.add_key(event.value if scalar else f"*{event.anchor}", start, end)
                continue
            if parent is not None and parent.value.items is not None:
                parent.add(None, end)
                continue
            node = _YamlValue(None, _scalar_type(event) if scalar else f"*{event.anchor}", start, end)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            start = offset(event.start_mark.index)
            mapping = kind is yaml.MappingStartEvent
            node = _YamlValue("object" if mapping else "array", _tag_prefix(event.tag), start, start,
                              members=[] if mapping else None, items=None if mapping else [])
            stack.append(_Open(node, bool(event.flow_style)))
            continue
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            done = stack.pop()
            node = done.value
            node.end = offset(event.end_mark.index) if done.flow else max(done.last_end, node.start)
            parent = stack[-1] if stack else None
            if parent is not None and parent.wants_key:  # a complex key (? [a, b]): named by its source
                source = body[node.start : node.end].decode("utf-8", "replace")
                parent.add_key(cut_label(" ".join(source.split())), node.start, node.end)
                continue
        elif kind is yaml.DocumentStartEvent:
            document_start = offset(event.start_mark.index)
            continue
        else:  # stream start and end, document end
            continue
        if parent is None:
            node.start = min(node.start, document_start)  # a document spans from its "---"
            documents.append(node)
        else:
            parent.add(node, node.end)
    return documents


_CORE_TAG = "tag:yaml.org,2002:"
_YAML_TYPES = {
    _CORE_TAG + "str": "string", _CORE_TAG + "int": "integer", _CORE_TAG + "float": "float",
    _CORE_TAG + "bool": "boolean", _CORE_TAG + "null": "null",
}
_RESOLVER = yaml.resolver.Resolver()


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE_TAG) :] if tag.startswith(_CORE_TAG) else tag


def _tag_prefix(tag: str | None) -> str:
    return f"{_short_tag(tag)} " if tag else ""


def _scalar_type(event: yaml.ScalarEvent) -> str:
    """An explicit tag as written, else the type a plain scalar resolves to (quoted ones are strings)."""
    if event.tag:
        return _short_tag(event.tag)
    if event.style:  # quoted or block; plain is None (pure Python parser) or "" (libyaml)
        return "string"
    tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, (True, False))
    if tag == _CORE_TAG + "timestamp":
        return "date" if len(event.value) == 10 else "datetime"
    return _YAML_TYPES.get(tag, "string")


