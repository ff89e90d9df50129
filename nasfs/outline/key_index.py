"""The keys a data outline does not list, each with the lines it lives on.

A fitted data outline (JSON, YAML streams, TOML, JSON Lines) stops at a level
or folds array elements, so a key below that level has no line in it; an
agent looking a key up by name would have to open every follow-up. The
index names each such key once with its places, ``keys: accomplishment
141-142, name 32,141, tier ×32``: the key's own line ranges, so the read
after the outline is ``P@L141-L142``; a key in many places is counted, and
the follow-up named on its ancestor's line lists it there. ``P@keys`` lists
every key of the file the same way, every place given.
"""

from __future__ import annotations

from nasfs.outline.model import Entry, Outline, line_span
from nasfs.outline.text import display

PLACES = 3  # places an outline's index gives a key; more are only counted (×N): its ancestors' follow-ups list them
SHARE = 0.02  # the largest share of the file's bytes an outline's index may take (past it, P@keys)
LEAST = 200  # bytes an index may always take (less than a follow-up's header)


def hidden_keys(outline: Outline, depth: int | None) -> list[Entry]:
    """The keys of ``outline`` that ``outline.marked(depth)`` does not list, in document order.

    A key is an entry of a key tree that is not an array element, a
    document or a record (those are numbered, and found by number); a key
    whose name is a number (``"404"``, ``8080:``) is a key."""
    if not outline.runs:
        return []
    listed = {id(e) for e in outline.to_depth(depth).entries}
    return [e for e in outline.addressable if id(e) not in listed and e.path and not e.element]


def render_index(keys: list[Entry], places: int | None = PLACES) -> list[str]:
    """``accomplishment 141-142``, ``name 32,141``, ``image ×32``: each distinct
    key once, sorted by name, with the line ranges it lives on, or, past
    ``places`` of them (None: never), how many (the follow-ups of the
    entries above them list them)."""
    spots: dict[str, list[Entry]] = {}
    for e in keys:
        spots.setdefault(display(e.name), []).append(e)
    parts = []
    for name in sorted(spots, key=lambda n: (n.lower(), n)):
        found = spots[name]
        where = f"×{len(found)}" if places is not None and len(found) > places else ",".join(line_span(e.start, e.end) for e in found)
        parts.append(f"{name} {where}")
    return parts


def outline_index(outline: Outline, depth: int | None, size: int) -> str | None:
    """The note naming the keys the outline at ``depth`` does not list
    (``keys: ...``), "" when it lists them all, or None when the note would
    take more than ``SHARE`` of the file's ``size`` bytes, or ``size`` is 0
    (``P@keys`` lists them)."""
    keys = hidden_keys(outline, depth)
    if not keys:
        return ""
    if not size:
        return None
    parts = render_index(keys)
    counted = " (every place: @keys)" if any("×" in p.rpartition(" ")[2] for p in parts) else ""
    note = f"keys: {', '.join(parts)}{counted}"
    return note if len(note.encode()) <= max(LEAST, SHARE * size) else None


def key_listing(outline: Outline) -> str:
    """``P@keys``: every key of the file with every place it lives, one key a line."""
    keys = [e for e in outline.addressable if e.path and not e.element] if outline.runs else []
    return "".join(part + "\n" for part in render_index(keys, None))
