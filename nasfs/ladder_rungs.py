"""The rungs of a view's ladder that the core builds from an outline: the
outline at each depth, a page of its top entries, and the choices between an
outline and the text it outlines (never a richer answer that costs more)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .budget import Rung
from .declare import Response
from .grammar import View, parse_view
from .outline import Entry, Outline
from .views import Analysis, Served


def outline_rungs(a: Analysis, outline: Outline, scope: Entry | None, entries: str | None = None,
                   top: int | None = None) -> list[Rung]:
    """The outline at depth ``top`` (all of it when None), then with its deepest level dropped, repeatedly."""
    deepest = outline.max_depth
    if deepest < 0:  # no entries: the outline is its notes alone
        return [lambda: a.outline_view(outline, None, scope, entries)]
    return [lambda d=depth: a.outline_view(outline, None if d == deepest else d, scope, entries)
            for depth in range(deepest if top is None else top, -1, -1)]


def outline_or_file(a: Analysis, outline: Rung, declared: Callable[[Served], Response], full_tokens: int | None) -> Rung:
    """The outline, or the whole file when the outline's answer costs as many
    tokens as the file (``full_tokens``, its content's count) or more (a
    reader then needs no second read), declared ``asked=outline``. A table's
    outline states what its file does not (its record count): it stays the
    answer while it costs less than the file's whole answer, header included."""
    def make() -> Served | None:
        served = outline()
        full = a.full()
        if full is None or full_tokens is None or served is None:
            return served
        full = replace(full, keys=(("asked", "outline"),))
        limit = declared(full).tokens if a.outline.kind in TABLES else full_tokens
        return full if declared(served).tokens >= limit else served
    return make


TABLES = ("csv", "tsv")


def outline_or_section(outline: Rung, section: Served, declared: Callable[[Served], Response]) -> Rung:
    """A section's whole outline, or the section's text when that costs no
    more: a follow-up read never costs more than the lines it outlines."""
    def make() -> Served | None:
        served = outline()
        if served is not None and declared(served).tokens >= declared(section).tokens:
            return section
        return served
    return make


def paged(a: Analysis, view: View, declared: Callable[[Served], Response], rungs: list[Rung]) -> list[Rung]:
    """Outline rungs (deepest first) with a page inserted after the page level's
    rung: a page of that level is richer than the levels above it, which hold
    one entry each."""
    cut = max(len(rungs) - a.outline.page_depth, 1)
    return [*rungs[:cut], page(a, view, declared), *rungs[cut:]]


def page(a: Analysis, view: View, declared: Callable[[Served], Response]) -> Rung:
    """When not even the page level fits the budget: as many of its entries
    from ``view.start`` as fit, declared as ``entries=K-L/T`` with the view
    that serves the next page in ``next`` (never a silent cut)."""
    def make() -> Served | None:
        if view.budget is None:
            return None
        budget, first, outline = view.budget, max(view.start, 1), a.outline
        total, level = outline.top_count, outline.page_depth

        def page(count: int) -> Served:
            last = first + count - 1
            following = f"@outline={last + 1}@{budget}" if last < total else None
            shown = outline.tops(first, count).to_depth(level)
            return a.outline_view(shown, level, None, f"{first}-{last}/{total}", following)

        fits, over = 0, total - first + 1  # fits: a count known to fit; over + 1: known not to
        while fits < over:
            mid = (fits + over + 1) // 2
            if declared(page(mid)).tokens <= budget:
                fits = mid
            else:
                over = mid - 1
        return page(fits) if fits else None
    return make


def with_budget(view: View, budget: int) -> View:
    """``view`` within ``budget`` tokens (a plain path becomes the budget view of its file)."""
    if view.kind == "raw":
        return parse_view(f"{budget}{'.json' if view.json else ''}")
    return View(view.kind, view.start, view.end, view.arg, budget, view.json)
