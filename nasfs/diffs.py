"""Diffs as views: ``P@since=REV``, degrading from the full unified diff to the
changed outline entries to a diffstat (design §6, issue 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import NotFound, NotServable
from .outline import Entry
from .repo import diff_bytes
from .views import Analysis, Evidence, Served

if TYPE_CHECKING:
    from .budget import Rung
    from .service import Nas


def _key(e: Entry) -> str:
    return ".".join(e.path) if e.path else e.label


def changed_entries(old: Analysis | None, new: Analysis) -> list[tuple[str, Entry | None, Entry | None, int, int]]:
    """(mark, old entry, new entry, +lines, -lines) for entries that differ.

    Entries are matched by qualified name; a matched pair counts as changed
    when the bytes of its lines differ.
    """
    before = {_key(e): e for e in old.outline.entries} if old else {}
    after = {_key(e): e for e in new.outline.entries}
    out: list[tuple[str, Entry | None, Entry | None, int, int]] = []
    for key, e in after.items():
        o = before.get(key)
        if o is None:
            out.append(("+", None, e, e.end - e.start + 1, 0))
            continue
        a_bytes = old.lines_bytes(o.start, o.end) if old else b""
        b_bytes = new.lines_bytes(e.start, e.end)
        if a_bytes != b_bytes:
            d = diff_bytes(a_bytes, b_bytes, "a", "b", context=0)
            out.append(("~", o, e, d.added, d.deleted))
    for key, o in before.items():
        if key not in after:
            out.append(("-", o, None, 0, o.end - o.start + 1))
    out.sort(key=lambda t: (t[2] or t[1]).start if t[2] else 10**9 + t[1].start)  # type: ignore[union-attr]
    return out


def file_diff_rungs(nas: "Nas", new: Analysis, rev: str) -> list["Rung"]:
    """The ladder for ``P@since=REV``: full diff, changed entries, diffstat."""
    if new.data is None:
        raise NotServable(f"{new.content.path} is {new.content.size} bytes, too large to diff here", "@outline, @La-Lb")
    commit = nas.tree.resolve(rev)
    path = new.content.path
    try:
        old = nas.analysis(nas.tree.at(str(commit.id), path))
    except NotFound:
        old = None  # the file is new since REV
    old_data = old.data if old and old.data is not None else b""
    diff = diff_bytes(old_data, new.data, path, path)
    evidence: tuple[Evidence, ...] = new.whole_evidence() + (old.whole_evidence() if old else ())
    keys = (("since", str(commit.id)[:12]), ("added", str(diff.added)), ("deleted", str(diff.deleted)))
    if old is None:
        keys += (("status", "added"),)

    def full() -> Served:
        body = diff.text if diff.text else f"no changes to {path} since {rev}\n".encode()
        return Served("diff", body, evidence, keys=keys)

    def entries() -> Served | None:
        if new.binary or (old is not None and old.binary):
            return None
        rows = []
        for mark, o, e, plus, minus in changed_entries(old, new):
            shown = e or o
            sides = []
            if o is not None and old is not None:
                sides.append(f"old={old.pointer(o.start, o.end).short()}")
            if e is not None:
                sides.append(f"new={new.pointer(e.start, e.end).short()}")
            rows.append(f"{mark} {shown.label} (+{plus} -{minus}) {' '.join(sides)}\n")  # type: ignore[union-attr]
        return Served("diff-entries", "".join(rows).encode(), evidence, keys=keys)

    def stat() -> Served:
        what = "binary, differs" if diff.binary else f"+{diff.added} -{diff.deleted}"
        return Served("diffstat", f"{path} | {what}\n".encode(), evidence, keys=keys)

    return [full, entries, stat]
