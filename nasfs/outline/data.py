"""Key-tree outlines of JSON, YAML and TOML.

JSON and TOML are parsed with tree-sitter, which gives a byte span for every
key. YAML is read as libyaml parser events (tree-sitter-yaml breaks past 32768
lines): events carry positions and tags but nothing is composed or constructed,
so application tags (``!Ref``, ``!!python/name:os.system``) are only shown.
A small adapter per format answers the emitter's questions about a value
lazily, so a huge array costs one pass over its direct children rather than a
walk of its whole subtree. Input that does not parse falls back to the
plain-text outline, with the parser's message as the reason.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import yaml
from tree_sitter import Node
from tree_sitter_language_pack import get_parser

from nasfs.lines import LineIndex
from nasfs.outline.model import Entry, Outline
from nasfs.outline.text import cut_label, outline_text

FORMATS = ("json", "yaml", "toml")
ARRAY_ELEMENTS = 5  # container elements of an array listed as children (the others are folded sections)
MAX_DEPTH = 32  # levels of entries; deeper keys are counted on the last

# name, first byte, end byte (exclusive), value handle (interpreted by a _Format)
_Member = tuple[str, int, int, Any]

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def outline_data(data: bytes, fmt: str, max_depth: int = MAX_DEPTH) -> Outline:
    """The key tree of a JSON, YAML or TOML file; the text outline if it does not parse."""
    if fmt not in FORMATS:
        raise ValueError(f"unsupported data format: {fmt!r}")
    body = data.removeprefix(codecs.BOM_UTF8)  # same line numbers: the BOM holds no newline
    lines = LineIndex(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        return _fallback(data, fmt, f"invalid UTF-8 at line {lines.line_of(err.start)}")
    if fmt == "yaml":
        try:
            documents = _yaml_documents(body, text)
        except yaml.YAMLError as err:
            return _fallback(data, fmt, _yaml_error(err, text, lines))
        emitter = _Emitter(_Yaml(), lines, max_depth)
        if len(documents) > 1:
            return emitter.outline_documents(fmt, documents)
        return emitter.outline(fmt, documents[0] if documents else None)
    root = get_parser(fmt).parse(body).root_node
    if fmt == "toml":
        if root.has_error:
            return _fallback(data, fmt, _strict_error(fmt, text) or _tree_error(root, lines))
        return _Emitter(_Toml(body), lines, max_depth).outline(fmt, _toml_table(root, body))
    values = [c for c in root.named_children if c.type != "comment"]
    if root.has_error or len(values) != 1:  # tree-sitter-json also takes several top-level values, or none
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            return _fallback(data, fmt, _strict_error(fmt, text) or _tree_error(root, lines))
        # Python's json took it: only numbers it takes and tree-sitter-json does not
        # (1E+2, NaN, -Infinity) can differ; same-length digits keep every span.
        body = _NUMBER.sub(lambda m: m.group(0) if m.group(0)[:1] == b'"' else b"1" * len(m.group(0)), body)
        root = get_parser(fmt).parse(body).root_node
        values = [c for c in root.named_children if c.type != "comment"]
        if root.has_error or len(values) != 1:
            return _fallback(data, fmt, _tree_error(root, lines))
    return _Emitter(_Json(body), lines, max_depth).outline(fmt, values[0])


# A JSON string (kept) or number, as Python's json reads them.
_NUMBER = re.compile(rb'"(?:[^"\\]|\\.)*"|-?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|Infinity)|NaN', re.S)


# --- errors ------------------------------------------------------------------


def _fallback(data: bytes, fmt: str, reason: str) -> Outline:
    plain = outline_text(data)
    notes = (f"{fmt.upper()} did not parse: {reason}",) + plain.notes
    return Outline("text", plain.entries, notes)


def _strict_error(fmt: str, text: str) -> str | None:
    """The stdlib parser's complaint about JSON or TOML that tree-sitter rejected."""
    try:
        if fmt == "json":
            json.loads(text)
        else:
            tomllib.loads(text)
    except json.JSONDecodeError as err:
        return f"{err.msg} at line {err.lineno} column {err.colno}"
    except tomllib.TOMLDecodeError as err:
        return str(err)
    except RecursionError:
        return None  # too deep for the stdlib; tree-sitter still knows where it broke
    return None


def _tree_error(root: Node, lines: LineIndex) -> str:
    """The first ERROR or MISSING node tree-sitter produced, as a short reason."""
    node = root
    while True:
        for child in node.children:
            if child.is_missing:
                return f"missing {child.type!r} at line {lines.line_of(child.start_byte)}"
            if child.is_error:
                return f"syntax error at line {lines.line_of(child.start_byte)}"
            if child.has_error:
                node = child
                break
        else:
            return f"syntax error at line {lines.line_of(node.start_byte)}"


def _yaml_error(err: yaml.YAMLError, text: str, lines: LineIndex) -> str:
    """libyaml's complaint, placed by the nasfs line rule (libyaml also breaks lines at a lone CR)."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return str(err).splitlines()[0]
    problem = getattr(err, "problem", None) or getattr(err, "context", None) or "invalid YAML"
    return f"{problem} at line {lines.line_of(_ByteOffsets(text)(mark.index))}"


# --- emitting ----------------------------------------------------------------


class _Format(ABC):
    """One format's answers about a value handle (a tree-sitter node, a merged TOML table, a YAML value)."""

    @abstractmethod
    def describe(self, value: Any) -> tuple[str | None, str]:
        """("object" | "array" | None, text): a scalar's type name, or a container's prefix (a YAML tag)."""

    @abstractmethod
    def keys(self, value: Any) -> list[_Member]:
        """An object's members in document order."""

    @abstractmethod
    def items(self, value: Any) -> list[Any]:
        """An array's elements."""

    @abstractmethod
    def span(self, item: Any) -> tuple[int, int]:
        """Byte span of an array element (or a YAML document)."""


class _TreeSitterFormat(_Format):
    """A format whose handles are tree-sitter nodes over ``src``."""

    def __init__(self, src: bytes) -> None:
        self.src = src

    def span(self, item: Any) -> tuple[int, int]:
        return item.start_byte, _end(item, self.src)


class _Emitter:
    """Turns a value tree into depth-limited entries through a ``_Format``.

    Every key is an entry down to ``max_depth`` (deeper ones are counted); of
    an array's container elements the first ``ARRAY_ELEMENTS`` are listed and
    the rest are entries too, folded (sections, not outline lines).
    """

    def __init__(self, fmt: _Format, lines: LineIndex, max_depth: int) -> None:
        self.fmt = fmt
        self.lines = lines
        self.max_depth = max_depth
        self.entries: list[Entry] = []

    def outline(self, kind: str, root: Any) -> Outline:
        text, members, listed = self.shape(root, -1)
        self.emit(members, listed, (), 0, -1)
        return self.done(kind, f"root: {text}")

    def outline_documents(self, kind: str, documents: list[Any]) -> Outline:
        """A YAML stream of several documents: one top-level entry per document."""
        for number, document in enumerate(documents, 1):
            text, members, listed = self.shape(document, 0)
            path = (str(number),)
            self.add(f"--- document {number}: {text}", *self.fmt.span(document), 0, path, -1)
            self.emit(members, listed, path, 1, -1)
        return self.done(kind, f"documents: {len(documents)}")

    def done(self, kind: str, note: str) -> Outline:
        everything = tuple(self.entries)
        listed = tuple(e for e in everything if e.fold < 0)
        return Outline(kind, listed, (note,), runs=True, sections=None if len(listed) == len(everything) else everything)

    def emit(self, members: list[_Member], listed: int, path: tuple[str, ...], depth: int, fold: int) -> None:
        """Entries for ``members`` at ``depth``, the first ``listed`` of them listed, and their subtrees.

        Iterative: nesting can be deeper than Python's recursion limit."""
        stack = [(members, listed, path, depth, fold, 0)]
        while stack:
            members, listed, path, depth, fold, index = stack.pop()
            if index == len(members):
                continue
            stack.append((members, listed, path, depth, fold, index + 1))
            name, start, end, value = members[index]
            folded = fold if index < listed else depth
            text, children, shown = self.shape(value, depth)
            self.add(_label(_display(name), text), start, end, depth, path + (name,), folded)
            stack.append((children, shown, path + (name,), depth + 1, folded, 0))

    def add(self, label: str, start: int, end: int, depth: int, path: tuple[str, ...], fold: int) -> None:
        first = self.lines.line_of(start)
        last = max(first, self.lines.line_of(end - 1))
        self.entries.append(Entry(label, first, last, depth, path, fold))

    def shape(self, value: Any, depth: int) -> tuple[str, list[_Member], int]:
        """The type text of ``value`` as an entry at ``depth``, the members below it, and how many of them are listed."""
        container, text = self.fmt.describe(value)
        if container is None:
            return text, [], 0
        if container == "object":
            members = self.fmt.keys(value)
            size = len(members)
        else:
            items = self.fmt.items(value)
            members, size = self.elements(items), len(items)
        text += f"{{{size}}}" if container == "object" else f"[{size}]"
        if members and depth >= self.max_depth:
            return f"{text} (+{self.hidden(members)} deeper)", [], 0
        listed = len(members) if container == "object" else min(len(members), ARRAY_ELEMENTS)
        if listed < len(members):
            text += f" (first {ARRAY_ELEMENTS} shown)"
        return text, members, listed

    def children(self, value: Any, container: str) -> list[_Member]:
        """The members of a container: an object's keys; an array's elements
        that are themselves containers, named by index (scalars add nothing to an outline)."""
        return self.fmt.keys(value) if container == "object" else self.elements(self.fmt.items(value))

    def elements(self, items: list[Any]) -> list[_Member]:
        return [(str(index), *self.fmt.span(item), item) for index, item in enumerate(items) if self.fmt.describe(item)[0] is not None]

    def hidden(self, members: list[_Member]) -> int:
        """How many entries ``members`` and their subtrees would add without the depth limit."""
        count = 0
        stack = list(members)  # iterative: nesting can be deeper than Python's recursion limit
        while stack:
            value = stack.pop()[3]
            count += 1
            container = self.fmt.describe(value)[0]
            if container is not None:
                stack.extend(self.children(value, container))
        return count


_PLAIN = ("string", "number", "integer", "float")  # types a label leaves out: a plain value


def _label(name: str, text: str) -> str:
    """``name{3}``, ``name[120]``, ``name`` (a plain value), ``name: null``, ``name: !Ref {2}``."""
    if text[:1] in ("{", "["):
        return name + text
    return name if text in _PLAIN else f"{name}: {text}"


def _end(node: Node, src: bytes) -> int:
    """End byte of ``node`` without the trailing comments and blank lines tree-sitter may attach."""
    while True:
        count = node.child_count
        kept = count
        while kept and node.child(kept - 1).type == "comment":
            kept -= 1
        last = node.child(kept - 1) if kept else None
        if last is not None and (kept < count or last.end_byte == node.end_byte):
            node = last
            continue
        return _trim(src, node.start_byte, node.end_byte)


def _trim(src: bytes, start: int, end: int) -> int:
    """``end`` moved back over trailing whitespace (blank lines a node swallowed), never before ``start``."""
    while end > start and src[end - 1] in b" \t\r\n":
        end -= 1
    return end


def _unquote(raw: bytes) -> str:
    """A JSON or TOML key's name from its source text: quotes and escapes removed."""
    text = raw.decode("utf-8", "replace")
    if text.startswith('"'):
        try:
            name = json.loads(text)
        except ValueError:  # a TOML escape JSON lacks (\U0001F600)
            return text[1:-1]
        return name if isinstance(name, str) else text
    if text.startswith("'"):  # a TOML literal key: no escapes at all
        return text[1:-1]
    return text


def _display(name: str) -> str:
    """A key as its label shows it: one line of bounded length (the path keeps the exact name)."""
    return cut_label(name if name.isprintable() else name.encode("unicode_escape").decode("ascii"))


# --- JSON --------------------------------------------------------------------

_JSON_TYPES = {"string": "string", "number": "number", "true": "boolean", "false": "boolean", "null": "null"}


class _Json(_TreeSitterFormat):
    def describe(self, value: Node) -> tuple[str | None, str]:
        if value.type in ("object", "array"):
            return value.type, ""
        return None, _JSON_TYPES.get(value.type, value.type)

    def keys(self, value: Node) -> list[_Member]:
        return [
            (_unquote(pair.child_by_field_name("key").text), pair.start_byte, _end(pair, self.src),
             pair.child_by_field_name("value"))
            for pair in value.named_children
            if pair.type == "pair"
        ]

    def items(self, value: Node) -> list[Node]:
        return [c for c in value.named_children if c.type != "comment"]


# --- YAML --------------------------------------------------------------------


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
    members: list[_Member] | None = None  # for a mapping
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


class _Yaml(_Format):
    def describe(self, value: _YamlValue | None) -> tuple[str | None, str]:
        if value is None:  # an empty stream, or a placeholder element (never shown)
            return None, "null"
        return value.container, value.text

    def keys(self, value: _YamlValue) -> list[_Member]:
        return value.members or []

    def items(self, value: _YamlValue) -> list[_YamlValue | None]:
        return value.items or []

    def span(self, item: _YamlValue) -> tuple[int, int]:
        return item.start, item.end


class _ByteOffsets:
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


def _yaml_documents(body: bytes, text: str) -> list[_YamlValue]:
    """The root value of each document in a YAML stream; raises ``yaml.YAMLError``.

    Only parser events are read: no node is composed and no tag is resolved to
    a constructor, so ``!!python/object/apply:os.system`` is just a label.
    Scalars are typed only where a label shows them (mapping values).
    """
    offset = _ByteOffsets(text)
    documents: list[_YamlValue] = []
    stack: list[_Open] = []
    document_start = 0
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        kind = type(event)
        parent = stack[-1] if stack else None
        if kind is yaml.ScalarEvent or kind is yaml.AliasEvent:
            start, end = offset(event.start_mark.index), offset(event.end_mark.index)
            scalar = kind is yaml.ScalarEvent
            if scalar and event.style in ("|", ">"):  # a block scalar ends where the next token starts
                end = _trim(body, start, end)
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


# --- TOML --------------------------------------------------------------------


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


class _Toml(_TreeSitterFormat):
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

    def keys(self, value: _Table | Node) -> list[_Member]:
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


def _toml_table(document: Node, src: bytes) -> _Table:
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
        end = _end(pair, src)
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
            parts.append(_unquote(node.text))
    return parts
