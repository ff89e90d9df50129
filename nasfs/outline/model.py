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
    ``items: array[120]``); ``path`` is the qualified name used to address the
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

    def render(self, indent: bool) -> str:
        pad = "  " * self.depth if indent else ""
        return f"{pad}{self.label} (L{self.start}-L{self.end})"


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

    def render(self) -> str:
        lines = list(self.notes) + [e.render(self.indent) for e in self.entries]
        return "".join(line + "\n" for line in lines)
