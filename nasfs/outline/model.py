"""The outline data model every outliner produces and every view consumes.

An outline is a flat list of entries in document order; nesting is carried by
``depth`` so the budget ladder can drop the deepest level without walking a tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Entry:
    """One outline line: a heading, a code symbol, a data key, a paragraph.

    ``label`` is what is shown (``## Renewal``, ``def f(x) -> int``,
    ``items[120]``); ``path`` is the qualified name used to address the
    entry as a section (``("Acme", "Renewal")``, ``("Cls", "method")``,
    ``("spec", "containers", "0")``); empty for entries that cannot be a section.
    ``start``/``end`` are 1-based inclusive line numbers.
    """

    label: str
    start: int
    end: int
    depth: int = 0
    path: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def span(self) -> str:
        """The entry's lines as its outline line starts: ``27-31``, or ``4`` for one line."""
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"

    def render(self, indent: bool) -> str:
        """``27-31 ### Escalation``: the lines first (the header's pointer with
        ``#L27-L31``), then the depth as indentation, then the label."""
        pad = "  " * self.depth if indent else ""
        return f"{self.span} {pad}{self.label}"


@dataclass(frozen=True, slots=True)
class Outline:
    """A file's deterministic outline.

    ``kind`` names the family (``markdown``, ``code:python``, ``json``, ``csv``,
    ``text``, ``binary`` ...). ``notes`` are facts shown before the entries
    (row count, dialect, "JSON did not parse: ..."). ``indent`` says whether
    depth is shown by indentation (Markdown shows it by heading level instead).
    """

    kind: str
    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()
    indent: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def max_depth(self) -> int:
        return max((e.depth for e in self.entries), default=-1)

    def to_depth(self, depth: int) -> Outline:
        """The same outline with every entry deeper than ``depth`` dropped."""
        kept = tuple(e for e in self.entries if e.depth <= depth)
        return Outline(self.kind, kept, self.notes, self.indent, self.extra)

    @property
    def page_depth(self) -> int:
        """The level pages count in: the first with more than one entry (the
        ``##`` headings of a file under one ``#`` title), else the top."""
        seen: dict[int, int] = {}
        for e in self.entries:
            seen[e.depth] = seen.get(e.depth, 0) + 1
        return min((d for d, n in seen.items() if n > 1), default=0)

    @property
    def top_count(self) -> int:
        """How many entries the page level holds (what ``@outline=K`` counts)."""
        level = self.page_depth
        return sum(1 for e in self.entries if e.depth == level)

    def tops(self, first: int, count: int | None = None) -> Outline:
        """Entries ``first`` (1-based) on of the page level, ``count`` of them
        (all if None), each with the entries below it; the few entries above
        that level (one a level) always, the notes only on the first page."""
        level = self.page_depth
        kept: list[Entry] = []
        seen = 0
        for e in self.entries:
            if e.depth == level:
                seen += 1
            if e.depth < level or (max(seen, 1) >= first and (count is None or seen < first + count)):
                kept.append(e)
        notes = self.notes if first == 1 else ()
        return Outline(self.kind, tuple(kept), notes, self.indent, self.extra)

    def render(self) -> str:
        lines = list(self.notes) + [e.render(self.indent) for e in self.entries]
        return "".join(line + "\n" for line in lines)
