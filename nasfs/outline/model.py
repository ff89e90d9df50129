"""The outline data model every outliner produces and every view consumes.

An outline is a flat list of entries in document order; nesting is carried by
``depth`` so the budget ladder can drop the deepest level without walking a tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from urllib.parse import quote


@dataclass(frozen=True, slots=True)
class Entry:
    """One outline line: a heading, a code symbol, a data key, a paragraph.

    ``label`` is what is shown (``## Renewal``, ``def f(x) -> int``,
    ``items[120]``); ``path`` is the qualified name used to address the
    entry as a section (``("Acme", "Renewal")``, ``("Cls", "method")``,
    ``("spec", "containers", "0")``); empty for entries that cannot be a section.
    ``start``/``end`` are 1-based inclusive line numbers. ``fold`` is the
    depth of the array element past the first few shown that the entry lies
    in (the element itself or an ancestor): such an entry is a section but no
    outline line, except in the outline of a section at or under that element;
    -1 for an entry that is listed. ``follow``: set by :meth:`Outline.marked`.
    """

    label: str
    start: int
    end: int
    depth: int = 0
    path: tuple[str, ...] = ()
    fold: int = -1
    follow: str = ""  # the read that lists what is not listed under it (``@section=NAME@outline``), at the line's end
    hides: bool = False  # something under it is not listed (its own lines show it, or ``follow`` lists it)
    element: bool = False  # an array element, a document or a record: named by its number, not a key (a key "404" is a key)

    @property
    def name(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def span(self) -> str:
        """The entry's lines as its outline line starts: ``27-31``, or ``4`` for one line."""
        return line_span(self.start, self.end)

    def render(self, indent: bool) -> str:
        """``27-31 ### Escalation``: the lines first (the header's pointer with
        ``#L27-L31``), then the depth as indentation, then the label."""
        pad = "  " * self.depth if indent else ""
        return f"{self.span} {pad}{self.label}{' ' + self.follow if self.follow else ''}"


@dataclass(frozen=True, slots=True)
class Outline:
    """A file's deterministic outline.

    ``kind`` names the family (``markdown``, ``code:python``, ``json``, ``csv``,
    ``text``, ``binary`` ...). ``notes`` are facts shown before the entries
    (row count, dialect, "JSON did not parse: ..."). ``indent`` says whether
    depth is shown by indentation (Markdown shows it by heading level instead).
    ``runs``: sibling one-line leaves in a row share an outline line (data
    keys: ``9-11 description, type, enum[3]``), at most ``RUN`` to a line,
    and an entry whose entries are all such leaves (at most ``RUN``) lists them
    in its braces (``8-12 level{description, type, enum[3]}``).
    ``partial`` says part of the file did not parse: the entries are what did.
    ``shown``: the deepest level ``@outline`` shows (None: all of them), set by
    :func:`fitted` so that an outline stays a small share of its file; the
    levels below are read as sections (``@section=NAME@N``).
    ``sections``: every addressable entry in document order when ``entries``
    (what is listed) leaves some out (folded array elements), else None.
    ``scoped``: the outline of one section or one page (its follow-ups name
    entries by their qualified names, since other entries' names are not in it).
    """

    kind: str
    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()
    indent: bool = True
    extra: dict[str, str] = field(default_factory=dict)
    runs: bool = False
    partial: bool = False
    shown: int | None = None
    sections: tuple[Entry, ...] | None = None
    scoped: bool = False

    @property
    def addressable(self) -> tuple[Entry, ...]:
        """Every entry a section name can address, listed or not."""
        return self.entries if self.sections is None else self.sections

    @property
    def max_depth(self) -> int:
        return max((e.depth for e in self.entries), default=-1)

    def served(self) -> Outline:
        """The outline as ``@outline`` lists it: down to ``shown``."""
        return self.to_depth(self.shown)

    def to_depth(self, depth: int | None) -> Outline:
        """The same outline with every entry deeper than ``depth`` dropped (None: none)."""
        return self if depth is None else replace(self, entries=tuple(e for e in self.entries if e.depth <= depth))

    def marked(self, depth: int | None) -> Outline:
        """The outline as it is read: to ``depth``, and, in a key tree, each
        entry under which something is not listed (a level cut, folded array
        elements) naming on its line the follow-up read that lists it all:
        ``5-40 spec{9} @section=spec@outline``."""
        shown = self.to_depth(depth)
        if self.runs and (len(shown.entries) < len(self.entries) or self.sections is not None):
            return replace(shown, entries=self._marked(shown.entries))
        return shown

    def _marked(self, kept: tuple[Entry, ...]) -> tuple[Entry, ...]:
        """``kept`` with the follow-up named on each entry that is the innermost
        listed ancestor of an entry not listed."""
        listed = {id(e) for e in kept}
        hides: set[int] = set()
        open_: list[Entry] = []  # listed ancestors of the current entry, innermost last
        for e in self.addressable:
            while open_ and open_[-1].depth >= e.depth:
                open_.pop()
            if id(e) in listed:
                open_.append(e)
            elif open_:
                hides.add(id(open_[-1]))
        if not hides:
            return kept
        seen: dict[str, int] = {}
        names: dict[int, str] = {}
        qualified = {".".join(e.path) for e in self.addressable}
        first: dict[str, int] = {}
        for e in self.addressable:  # the name section lookup resolves to e, shortest first
            first.setdefault(e.name, id(e))
            name = ".".join(e.path)
            seen[name] = seen.get(name, 0) + 1
            if id(e) not in hides or e.end - e.start + 1 <= FOLLOW_LINES:  # a few lines: reading them is the follow-up
                continue
            if not self.scoped and first[e.name] == id(e) and (e.name == name or e.name not in qualified):
                names[id(e)] = e.name  # its own name (sections' rule 2) when that is unambiguous
            else:
                names[id(e)] = name if seen[name] == 1 else f"{name}~{seen[name]}"
        return tuple(replace(e, follow=follow_up(names[id(e)]) if id(e) in names else "", hides=True) if id(e) in hides else e
                     for e in kept)

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
        # a page's follow-ups name entries by qualified names: its own names may come first on another page
        return replace(self, entries=tuple(kept), notes=self.notes if first == 1 else (),
                       scoped=self.scoped or len(kept) < len(self.entries))

    def render(self) -> str:
        lines = list(self.notes)
        if not self.runs:
            lines += [e.render(self.indent) for e in self.entries]
            return "".join(line + "\n" for line in lines)
        entries = self.entries
        one_line = [e.start == e.end and not e.hides and (i + 1 == len(entries) or entries[i + 1].depth <= e.depth)
                    for i, e in enumerate(entries)]
        run: list[Entry] = []  # one-line leaves of one parent in a row
        i = 0
        while i < len(entries):
            e = entries[i]
            if run and (not one_line[i] or e.depth != run[0].depth or len(run) == RUN):
                lines.append(_run_line(run, self.indent))
                run = []
            if one_line[i]:
                run.append(e)
                i += 1
                continue
            inner = i + 1  # the entries below e: shown on its line when all are one-line leaves, few
            while inner < len(entries) and entries[inner].depth > e.depth:
                inner += 1
            if inner - i - 1 <= RUN and all(one_line[i + 1 : inner]) and not e.hides:
                lines.append(_with_keys(e, entries[i + 1 : inner], self.indent))
                i = inner
                continue
            lines.append(e.render(self.indent))
            i += 1
        if run:
            lines.append(_run_line(run, self.indent))
        return "".join(line + "\n" for line in lines)


def follow_up(name: str) -> str:
    """The view that lists all of section ``name``, escaped as the grammar reads it."""
    return f"@section={quote(name, safe=_NAME_SAFE)}@outline"


_NAME_SAFE = "._-~+:,;!$()*=[]{}'"  # kept as written in a follow-up; '%', '@', '/', spaces and the rest are %XX


def fitted(outline: Outline, size: int) -> Outline:
    """``outline`` with ``shown`` set to the level that makes a look-up cheapest:
    the outline down to that level (its follow-ups named), plus, for a target
    in a part it leaves out, the follow-up that lists that part (a header and
    the part's whole outline, or its text when that is smaller), weighed by
    the share of the entries the part holds. A whole outline within ``FLOOR``
    bytes is never cut (in a small file a follow-up costs more than it spares).

    Never above the page level: the levels above it hold one entry each.
    """
    every = outline.addressable
    if not every or len(outline.render().encode()) <= FLOOR:
        return outline
    ends, weights = _subtrees(every)
    lines = max(e.end for e in every)
    total = len(every)
    best_level, best = outline.page_depth, -1.0
    for depth in range(outline.page_depth, outline.max_depth + 1):
        if best >= 0 and sum(len(e.label) + 1 for e in outline.entries if e.depth <= depth) >= best:
            break  # a lower bound of the outline's text: no render needed
        shown = len(outline.marked(depth).render().encode())
        if best >= 0 and shown >= best:
            break  # deeper levels only add to the outline
        hidden = 0.0
        for i, e in enumerate(every):
            if e.depth == depth and ends[i] > i + 1:  # its entries are left to a follow-up
                text = size * (e.end - e.start + 1) / lines
                hidden += (ends[i] - i - 1) / total * min(FOLLOW_HEADER + weights[i], text)
        if best < 0 or shown + hidden < best:
            best_level, best = depth, shown + hidden
    return outline if best_level >= outline.max_depth else replace(outline, shown=best_level)


def _subtrees(entries: tuple[Entry, ...]) -> tuple[list[int], list[int]]:
    """For each entry, the index past its last descendant (document order
    carries the nesting) and the bytes its subtree's outline lines take."""
    ends = [len(entries)] * len(entries)
    sizes = [len(e.label) + len(e.span) + 2 * e.depth + 2 for e in entries]
    open_: list[int] = []
    for i, e in enumerate(entries):
        while open_ and entries[open_[-1]].depth >= e.depth:
            j = open_.pop()
            ends[j] = i
        open_.append(i)
    prefix = [0]
    for s in sizes:
        prefix.append(prefix[-1] + s)
    weights = [prefix[ends[i]] - prefix[i] for i in range(len(entries))]
    return ends, weights


FLOOR = 600  # bytes of a whole outline that is never cut
FOLLOW_HEADER = 200  # bytes a follow-up's header costs (about 50 tokens)
FOLLOW_LINES = 4  # an entry of this many lines or fewer names no follow-up: its lines cost less than a follow-up's header
RUN = 8  # leaves on one line: reading the line's range for one of them stays cheap


def _with_keys(entry: Entry, keys: tuple[Entry, ...], indent: bool) -> str:
    """An object with its one-line keys in its braces (``3-6 model{provider, context_tokens}``,
    its size being their count); another container with them after a colon (``tools[2]: 0{1}, 1{1}``)."""
    if not keys:
        return entry.render(indent)
    names = ", ".join(k.label for k in keys)
    size = f"{{{len(keys)}}}"
    if entry.label.endswith(size) and not names.isdigit():  # x{5} is a size: a lone key "5" goes after a colon
        return replace(entry, label=f"{entry.label[: -len(size)]}{{{names}}}").render(indent)
    return f"{entry.render(indent)}: {names}"


def _run_line(run: list[Entry], indent: bool) -> str:
    if len(run) == 1:
        return run[0].render(indent)
    pad = "  " * run[0].depth if indent else ""
    return f"{line_span(run[0].start, run[-1].end)} {pad}{', '.join(e.label for e in run)}"


def line_span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"
