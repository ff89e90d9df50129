"""Views of one file: what each is, built from its analysis, before declaration.

A :class:`Served` is a view's body and evidence; :mod:`nasfs.declare` adds the
header and token count. Nothing here knows about budgets except the ladder's
rungs, which :mod:`nasfs.budget` walks.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace

from .errors import NotFound, NotServable
from .evidence.swhid import swhid_of
from .lines import LineIndex, count_lines_stream, stream_lines
from .outline import Entry, Outline, family_for, is_binary, outline_bytes, outline_large
from .outline.key_index import key_listing, outline_index
from .pointers import Pointer
from .repo import Content

VIEW_FORMAT = 8  # raised whenever a view's text changes for the same content, so no cached answer of an older format is served
# 8: each commit read through its own objects (repo/own_objects.py): a diff (@since=A..B) cached by 7 may hold an
# object A named that only a private store held, and a hit is served without making the diff again


@dataclass(frozen=True, slots=True)
class Evidence:
    pointer: Pointer
    sha256: str
    blob: str = ""  # the file's git blob id, when known: the pointer's SWHID names it

    def as_dict(self) -> dict[str, str]:
        """The envelope's item; ``swhid`` beside ``pointer`` when the blob is known."""
        item = {"pointer": str(self.pointer), "sha256": self.sha256}
        swhid = swhid_of(self.pointer, self.blob) if self.blob else None
        if swhid is not None:
            item["swhid"] = swhid
        return item


@dataclass(frozen=True, slots=True)
class Served:
    """A view's body and what it rests on; ``keys`` become extra header keys."""

    view: str
    body: bytes
    evidence: tuple[Evidence, ...] = ()
    generated: bool = False
    truncated: bool = False
    keys: tuple[tuple[str, object], ...] = ()  # str, int or bool: JSON types in the envelope


@dataclass(slots=True)
class Analysis:
    """What every view of one file needs, computed once per blob."""

    content: Content
    node: str
    tree: str
    binary: bool
    line_count: int
    outline: Outline
    data: bytes | None  # None for large files, which are streamed
    _lines: LineIndex | None = field(default=None, repr=False)
    _whole: tuple[Evidence, ...] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, content: Content, node: str, tree: str) -> Analysis:
        if content.large:
            head = content.head()
            binary = is_binary(head)
            outline = outline_large(content.path, content.size, head, content.stream)
            lines = 0 if binary else count_lines_stream(content.stream())
            return cls(content, node, tree, binary, lines, outline, None)
        data = content.read()
        binary = is_binary(data)
        index = LineIndex(data)
        outline = outline_bytes(content.path, data, index)
        return cls(content, node, tree, binary, 0 if binary else index.count, outline, data, index)

    # -- evidence ----------------------------------------------------------
    def pointer(self, start: int = 0, end: int = 0) -> Pointer:
        return Pointer(self.node, self.tree, self.content.path, self.content.commit, start, end)

    def lines_bytes(self, first: int, last: int) -> bytes:
        if self._lines is not None:
            return self._lines.slice(first, last)
        return b"".join(stream_lines(self.content.stream(), first, last))

    def evidence(self, first: int, last: int, body: bytes | None = None) -> tuple[Evidence, ...]:
        """Evidence for lines first..last (the whole blob for binary files);
        hashed from ``body`` when given, else streamed (large files)."""
        if self.content.size == 0:
            return ()
        digest = hashlib.sha256()
        if body is not None:
            digest.update(body)
        elif self.data is not None:
            digest.update(self.data if self.binary else self.lines_bytes(first, last))
        else:
            whole = self.binary or (first == 1 and last == self.line_count)
            pieces = self.content.stream() if whole else stream_lines(self.content.stream(), first, last)
            for piece in pieces:
                digest.update(piece)
        pointer = self.pointer() if self.binary else self.pointer(first, last)
        return (Evidence(pointer, digest.hexdigest(), self.content.blob_id),)

    def whole_evidence(self) -> tuple[Evidence, ...]:
        """Evidence for the whole file, hashed once per analysis."""
        if self._whole is None:
            self._whole = self.evidence(1, self.line_count, self.data)
        return self._whole

    # -- the rungs -----------------------------------------------------------
    def full(self) -> Served | None:
        """The whole file, when it is text small enough to hold."""
        if self.binary or self.data is None:
            return None
        return Served("full", self.data, self.whole_evidence())

    def outline_view(self, outline: Outline, depth: int | None, scope: Entry | None,
                     entries: str | None = None, following: str | None = None) -> Served:
        """``entries`` (``41-80/312``) and ``following`` (the view of the next
        page) declare an outline that holds only some top-level entries."""
        keys: list[tuple[str, object]] = [("kind", outline.kind)]
        if self.outline.partial:  # part of the file did not parse: these entries are what did
            keys.append(("partial", True))
        if depth is not None:
            keys.append(("depth", f"{depth + 1}/{self.outline.max_depth + 1 if entries else outline.max_depth + 1}"))
        if entries is not None:
            keys.append(("entries", entries))
        if following is not None:
            keys.append(("next", following))
        if scope is not None:
            keys.append(("section", ".".join(scope.path)))
            evidence = self.evidence(scope.start, scope.end)
        else:
            evidence = self.whole_evidence()
        body = outline.marked(depth).render()
        # the index rides on the fitted @outline alone: a coarser rung of a budget must not grow
        own = scope is None and entries is None and depth == self.outline.shown
        index = outline_index(outline, depth, self.content.size if own else 0)
        if index is None:  # too long to hold here: the header names the view that lists it
            keys.append(("keys", "@keys"))
        elif index:
            body += index + "\n"
        return Served("outline", body.encode(), evidence, keys=tuple(keys))

    def key_view(self) -> Served:
        """``P@keys``: every key of a data file and the lines it lives on."""
        if not self.outline.runs:
            raise NotServable(f"{self.content.path} is not keyed data ({self.outline.kind}): @keys lists the keys of "
                              "JSON, JSON Lines, YAML and TOML files", "@outline")
        return Served("keys", key_listing(self.outline).encode(), self.whole_evidence(), keys=(("kind", self.outline.kind),))

    def skeleton(self, scope: Entry | None) -> Served:
        """One line: kind, lines, bytes and top-level entries."""
        if scope is not None:
            inner = [e for e in self.section_outline(scope).entries if e.depth == 1]
            body = self.lines_bytes(scope.start, scope.end)
            first, last, size = scope.start, scope.end, len(body)
            what = f"section {'.'.join(scope.path)}"
        else:
            inner = [e for e in self.outline.entries if e.depth == 0]
            first, last, size = 1, self.line_count, self.content.size
            what = self.outline.kind
            body = None
        names = [e.name or e.label for e in inner[:12]]
        more = f" (+{len(inner) - 12} more)" if len(inner) > 12 else ""
        top = f"; top: {', '.join(names)}{more}" if names else ""
        line = f"{what}: lines {first}-{last}, {size} bytes{top}\n" if last else f"{what}: empty, {size} bytes\n"
        evidence = self.evidence(first, last, body) if last else self.evidence(0, 0) if self.binary else ()
        return Served("skeleton", line.encode(), evidence)

    def lines(self, first: int, last: int) -> Served:
        if self.binary:
            raise NotServable(f"{self.content.path} is binary; line ranges are for text", "@outline for its kind and size")
        if last > self.line_count:
            raise NotFound(
                f"line range L{first}-L{last} is past the end of {self.content.path}",
                f"L1-L{self.line_count}" if self.line_count else "nothing: the file is empty",
            )
        body = self.lines_bytes(first, last)
        return Served("lines", body, self.evidence(first, last, body))

    def section(self, name: str) -> tuple[Entry, Served]:
        entry = find_section(self.outline, name, self.content.path)
        body = self.lines_bytes(entry.start, entry.end)
        return entry, Served("section", body, self.evidence(entry.start, entry.end, body), keys=(("section", ".".join(entry.path)),))

    def section_outline(self, entry: Entry, whole: bool = False) -> Outline:
        """The part of the outline inside a section, re-based to depth 0: the
        entry and those after it that are deeper (document order carries the
        nesting), all of its levels, the elements folded at or above it listed
        (``whole``: every element, so nothing under the section is hidden)."""
        entries = self.outline.addressable
        first = next(i for i, e in enumerate(entries) if e is entry)
        last = first + 1
        while last < len(entries) and entries[last].depth > entry.depth:
            last += 1
        inner = tuple(
            Entry(e.label, e.start, e.end, e.depth - entry.depth, e.path,
                  e.fold - entry.depth if e.fold > entry.depth and not whole else -1)
            for e in entries[first:last]
        )
        return replace(self.outline, entries=tuple(e for e in inner if e.fold < 0), notes=(), shown=None, sections=None, scoped=True)


_DUP = re.compile(r"(.*)~([1-9]\d*)")  # ~0 is no index: a name, refused if absent


def _slug(text: str) -> str:
    """GitHub-style anchor: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def find_section(outline: Outline, name: str, path: str) -> Entry:
    """The entry a section name addresses.

    Tried in order: the qualified path (``Acme.Renewal``, ``Cls.method``,
    ``spec.containers.0``), the entry's own name (``Renewal``), its slug
    (``renewal-terms``). ``NAME~2`` picks the second of several matches.
    """
    wanted, nth = name, 1
    m = _DUP.fullmatch(name)
    if m and not any(".".join(e.path) == name or e.name == name for e in outline.entries):
        wanted, nth = m.group(1), int(m.group(2))
    addressable = [e for e in outline.addressable if e.path]
    for match in (
        lambda e: ".".join(e.path) == wanted,
        lambda e: e.name == wanted,
        lambda e: _slug(e.name) == _slug(wanted),
    ):
        hits = [e for e in addressable if match(e)]
        if len(hits) >= nth:
            return hits[nth - 1]
    names = sorted({".".join(e.path) for e in addressable})
    parts = wanted.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the entries under the deepest part of the name that exists
        parent = ".".join(parts[:cut]) + "."
        under = [n for n in names if n.startswith(parent) and "." not in n[len(parent):]]
        if under:
            names = under
            break
    listed = ", ".join(names[:30]) + (f" (+{len(names) - 30} more)" if len(names) > 30 else "")
    raise NotFound(f"no section {name!r} in {path}", listed or f"none: a {outline.kind} outline has no sections")


__all__ = ["Analysis", "Evidence", "Served", "family_for", "find_section"]
