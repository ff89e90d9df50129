"""The emitter shared by the data formats: a value tree to depth-limited entries.

A small adapter per format (:class:`Format`) answers the emitter's questions
about a value lazily, so a huge array costs one pass over its direct children
rather than a walk of its whole subtree.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

from tree_sitter import Node

from nasfs.lines import LineIndex
from nasfs.outline.model import Entry, Outline
from nasfs.outline.text import display

ARRAY_ELEMENTS = 5  # container elements of an array listed as children (the others are folded sections)
MAX_DEPTH = 32  # levels of entries; deeper keys are counted on the last
RECORD_KEYS = 12  # keys a note of records names (the others are counted)
LISTED_RECORDS = 1000  # records of an array listed; more are folded like other elements (a line each would be most of the file)
RECORD_NOTES = 3  # top-level arrays of records noted (more: the file is keyed data, not a few collections)

# name, first byte, end byte (exclusive), value handle (interpreted by a Format)
Member = tuple[str, int, int, Any]


class Format(ABC):
    """One format's answers about a value handle (a tree-sitter node, a merged TOML table, a YAML value)."""

    @abstractmethod
    def describe(self, value: Any) -> tuple[str | None, str]:
        """("object" | "array" | None, text): a scalar's type name, or a container's prefix (a YAML tag)."""

    @abstractmethod
    def keys(self, value: Any) -> list[Member]:
        """An object's members in document order."""

    @abstractmethod
    def items(self, value: Any) -> list[Any]:
        """An array's elements."""

    @abstractmethod
    def span(self, item: Any) -> tuple[int, int]:
        """Byte span of an array element (or a YAML document)."""


class TreeSitterFormat(Format):
    """A format whose handles are tree-sitter nodes over ``src``."""

    def __init__(self, src: bytes) -> None:
        self.src = src

    def span(self, item: Any) -> tuple[int, int]:
        return item.start_byte, end_of(item, self.src)


class Emitter:
    """Turns a value tree into depth-limited entries through a ``Format``.

    Every key is an entry down to ``max_depth`` (deeper ones are counted); of
    an array's container elements the first ``ARRAY_ELEMENTS`` are listed and
    the rest are entries too, folded (sections, not outline lines), except in
    an array of records (objects alone, at most ``LISTED_RECORDS``), which lists them all. A file's
    records (a top-level array of objects, JSON Lines, a YAML stream, a TOML
    array of tables) are counted in a note with the keys they hold.
    """

    def __init__(self, fmt: Format, lines: LineIndex, max_depth: int) -> None:
        self.fmt = fmt
        self.lines = lines
        self.max_depth = max_depth
        self.entries: list[Entry] = []

    def outline(self, kind: str, root: Any) -> Outline:
        text, members, listed = self.shape(root, -1)
        container = self.fmt.describe(root)[0]
        self.emit(members, listed, (), 0, -1, container == "array")
        notes = [f"root: {text}"]
        if container == "array":
            folded = f" (the first {ARRAY_ELEMENTS} listed, each read as @section=N)" if listed < len(members) else ""
            notes += self.records("records", folded, self.fmt.items(root))
        elif container == "object":  # a top-level array of records: a TOML [[table]], "items": [{...}, ...]
            found = [f"{display(name)}: {n}" for name, _, _, value in members if self.fmt.describe(value)[0] == "array"
                     for n in self.records("records", "", self.fmt.items(value))]
            notes += found if len(found) <= RECORD_NOTES else []
        return self.done(kind, notes)

    def outline_documents(self, kind: str, documents: list[Any]) -> Outline:
        """A YAML stream of several documents: one top-level entry per document."""
        for number, document in enumerate(documents, 1):
            text, members, listed = self.shape(document, 0)
            path = (str(number),)
            self.add(f"--- document {number}: {text}", *self.fmt.span(document), 0, path, -1, True)
            self.emit(members, listed, path, 1, -1, self.fmt.describe(document)[0] == "array")
        return self.done(kind, self.records("documents", " (numbered from 1)", documents, every=True))

    def outline_records(self, kind: str, records: list[Any]) -> Outline:
        """JSON Lines: one top-level entry per record, named by its index from 0."""
        for index, record in enumerate(records):
            text, members, listed = self.shape(record, 0)
            path = (str(index),)
            self.add(label(str(index), text), *self.fmt.span(record), 0, path, -1, True)
            self.emit(members, listed, path, 1, -1, self.fmt.describe(record)[0] == "array")
        return self.done(kind, self.records("records", " (numbered from 0)", records, every=True))

    def records(self, what: str, numbered: str, values: list[Any], every: bool = False) -> list[str]:
        """``37 records; keys: id, name, tags (12)``: how many ``values`` there
        are and the keys their objects use, each with the count of records
        holding it when not all do; nothing unless they are records, objects
        alone (``every``: always)."""
        objects = [v for v in values if self.fmt.describe(v)[0] == "object"]
        if not every and (len(objects) < 2 or len(objects) != len(values)):
            return []
        counted = f"{len(values)} {what}{numbered}"
        if not objects:
            return [counted]
        counts: dict[str, int] = {}
        for value in objects:
            for name in dict.fromkeys(m[0] for m in self.fmt.keys(value)):
                counts[name] = counts.get(name, 0) + 1
        some = "" if len(objects) == len(values) else f", {len(objects)} of them mappings"
        distinct = len(counts)
        if distinct > RECORD_KEYS:  # records of many shapes: only the keys most of them share
            counts = {n: c for n, c in counts.items() if 2 * c >= len(objects)}
            if not counts:
                return [f"{counted}{some}; {distinct} distinct keys, none in half of them"]
        names = [display(n) if c == len(objects) else f"{display(n)} ({c})" for n, c in counts.items()]
        more = f", +{distinct - len(names[:RECORD_KEYS])} more" if distinct > len(names[:RECORD_KEYS]) else ""
        return [f"{counted}{some}; keys: {', '.join(names[:RECORD_KEYS])}{more}"]

    def done(self, kind: str, notes: list[str]) -> Outline:
        everything = tuple(self.entries)
        listed = tuple(e for e in everything if e.fold < 0)
        return Outline(kind, listed, tuple(notes), runs=True, sections=None if len(listed) == len(everything) else everything)

    def emit(self, members: list[Member], listed: int, path: tuple[str, ...], depth: int, fold: int,
             elements: bool = False) -> None:
        """Entries for ``members`` at ``depth``, the first ``listed`` of them listed, and their subtrees;
        ``elements``: the members are an array's elements (named by index), not an object's keys.

        Iterative: nesting can be deeper than Python's recursion limit."""
        stack = [(members, listed, path, depth, fold, 0, elements)]
        while stack:
            members, listed, path, depth, fold, index, elements = stack.pop()
            if index == len(members):
                continue
            stack.append((members, listed, path, depth, fold, index + 1, elements))
            name, start, end, value = members[index]
            folded = fold if index < listed else depth
            text, children, shown = self.shape(value, depth)
            self.add(label(display(name), text), start, end, depth, path + (name,), folded, elements)
            stack.append((children, shown, path + (name,), depth + 1, folded, 0, self.fmt.describe(value)[0] == "array"))

    def add(self, label: str, start: int, end: int, depth: int, path: tuple[str, ...], fold: int,
            element: bool = False) -> None:
        first = self.lines.line_of(start)
        last = max(first, self.lines.line_of(end - 1))
        self.entries.append(Entry(label, first, last, depth, path, fold, element=element))

    def shape(self, value: Any, depth: int) -> tuple[str, list[Member], int]:
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
        records = (container == "array" and len(members) <= LISTED_RECORDS
                   and all(self.fmt.describe(m[3])[0] == "object" for m in members))
        listed = len(members) if container == "object" or records else min(len(members), ARRAY_ELEMENTS)
        if listed < len(members):
            text += f" (first {ARRAY_ELEMENTS} shown)"
        return text, members, listed

    def children(self, value: Any, container: str) -> list[Member]:
        """The members of a container: an object's keys; an array's elements
        that are themselves containers, named by index (scalars add nothing to an outline)."""
        return self.fmt.keys(value) if container == "object" else self.elements(self.fmt.items(value))

    def elements(self, items: list[Any]) -> list[Member]:
        return [(str(index), *self.fmt.span(item), item) for index, item in enumerate(items) if self.fmt.describe(item)[0] is not None]

    def hidden(self, members: list[Member]) -> int:
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


def label(name: str, text: str) -> str:
    """``name{3}``, ``name[120]``, ``name`` (a plain value), ``name: null``, ``name: !Ref {2}``."""
    if text[:1] in ("{", "["):
        return name + text
    return name if text in _PLAIN else f"{name}: {text}"


def end_of(node: Node, src: bytes) -> int:
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
        return trim(src, node.start_byte, node.end_byte)


def trim(src: bytes, start: int, end: int) -> int:
    """``end`` moved back over trailing whitespace (blank lines a node swallowed), never before ``start``."""
    while end > start and src[end - 1] in b" \t\r\n":
        end -= 1
    return end


def unquote(raw: bytes) -> str:
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


