"""Diffs between two commits, as budgeted views (contract §6, issue 4).

One ladder for a tree and for one file: the full unified diff → the changed
outline entries (which sections, symbols or keys were added, removed or
changed, with +/- line counts and pointers to both sides) → a diffstat →
``view=none``. Both ends are always commits: "now" is the snapshot commit
of the working tree (or of one file), so every pointer verifies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .access import Caller, Seen, check_history, decider, sees_all
from .errors import BadView, NotFound
from .grammar import check_budget
from .outline import Entry
from .repo import FileChange, diff_bytes
from .views import Analysis, Evidence, Served

if TYPE_CHECKING:
    from .budget import Rung
    from .reader import Reader

RANGE_FORMS = "REV (to now), A..B, A.. (to now); revisions are commits, branches or tags"


def split_range(text: str) -> tuple[str, str | None]:
    """``A..B`` → (A, B); ``A..`` and ``A`` → (A, None), None meaning now."""
    a, sep, b = text.partition("..")
    if not a or (sep and b.startswith(".")):
        raise BadView(f"bad revision range {text!r}", RANGE_FORMS)
    return a, (b or None)


def check_order(nas: Reader, a: str, b: str) -> None:
    """Refuse A..B when B is strictly older than A (a reversed range)."""
    if a != b and nas.tree.is_ancestor(b, a):
        raise BadView(f"{b[:12]} is older than {a[:12]}: the range runs backwards", f"the older revision first, e.g. {b[:12]}..{a[:12]}")


def _key(e: Entry) -> str:
    return ".".join(e.path) if e.path else e.label


def changed_entries(old: Analysis | None, new: Analysis | None) -> list[tuple[str, Entry | None, Entry | None, int, int]]:
    """(mark, old entry, new entry, +lines, -lines) for entries that differ,
    matched by qualified name; a matched pair changed when its bytes differ."""
    before = {_key(e): e for e in old.outline.entries} if old else {}
    after = {_key(e): e for e in new.outline.entries} if new else {}
    out: list[tuple[str, Entry | None, Entry | None, int, int]] = []
    for key, e in after.items():
        o = before.get(key)
        if o is None:
            out.append(("+", None, e, e.end - e.start + 1, 0))
        elif old is not None and new is not None:
            a_bytes, b_bytes = old.lines_bytes(o.start, o.end), new.lines_bytes(e.start, e.end)
            if a_bytes != b_bytes:
                d = diff_bytes(a_bytes, b_bytes, "a", "b", context=0)
                out.append(("~", o, e, d.added, d.deleted))
    out += [("-", o, None, 0, o.end - o.start + 1) for key, o in before.items() if key not in after]
    return out


class TreeDiff:
    """The changes between two commits, optionally limited to one path;
    ``seen_by``: B is the working tree, and only the files this caller could
    find there are shown (access.py)."""

    def __init__(self, nas: Reader, a: str, b: str, path: str | None = None, seen_by: Caller | None = None) -> None:
        self.nas, self.a, self.b = nas, a, b
        changes = nas.tree.changes(a, b)
        if seen_by is not None:
            judge = decider(nas.tree.root, seen_by)
            shown = lambda p: judge.may_find(p) or judge.decide(p) is Seen.MISSING  # noqa: E731 (gone: history alone)
            changes = [c for c in changes if all(shown(p) for p in (c.old_path, c.new_path) if p)]
        if path is not None:
            changes = [c for c in changes if path in (c.old_path, c.new_path)]
            if not changes and not (nas.tree.exists(path, a) or nas.tree.exists(path, b)):
                raise NotFound(f"{path!r} exists neither at {a[:12]} nor at {b[:12]}")
        self.changes = changes
        self.keys = (("from", a[:12]), ("to", b[:12]), ("files", len(changes)),
                     ("added", sum(c.added for c in changes)), ("deleted", sum(c.deleted for c in changes)))

    def side(self, commit: str, path: str | None) -> Analysis | None:
        return self.nas.analysis(self.nas.tree.at(commit, path)) if path else None

    def evidence(self) -> tuple[Evidence, ...]:
        """For each file, its new side (or its old side when deleted)."""
        out: list[Evidence] = []
        for c in self.changes:
            side = self.side(self.b, c.new_path) if c.status != "D" else self.side(self.a, c.old_path)
            if side is not None:
                out += side.whole_evidence()
        return tuple(out)

    def rungs(self) -> list[Rung]:
        evidence = self.evidence()

        def full() -> Served:
            body = b"".join(c.patch for c in self.changes) or f"no changes from {self.a[:12]} to {self.b[:12]}\n".encode()
            return Served("diff", body, evidence, keys=self.keys)

        def entries() -> Served:
            rows: list[str] = []
            for c in self.changes:
                rows.append(c.title() + "\n")
                if c.binary or c.status not in ("M", "R"):
                    continue
                old, new = self.side(self.a, c.old_path), self.side(self.b, c.new_path)
                for mark, o, e, plus, minus in changed_entries(old, new):
                    sides = []
                    if o is not None and old is not None:
                        sides.append(f"old={old.pointer(o.start, o.end).short()}")
                    if e is not None and new is not None:
                        sides.append(f"new={new.pointer(e.start, e.end).short()}")
                    label = (e or o).label  # type: ignore[union-attr]
                    rows.append(f"  {mark} {label} (+{plus} -{minus}) {' '.join(sides)}\n")
            return Served("diff-entries", "".join(rows).encode(), evidence, keys=self.keys)

        def stat() -> Served:
            return Served("diffstat", "".join(c.title() + "\n" for c in self.changes).encode(), evidence, keys=self.keys)

        return [full, entries, stat]


def diff_response(nas: Reader, spec: str, path: str | None, budget: int | None, caller: Caller | None = None):
    """``nasfs diff A[..B] [PATH]`` and ``.nas/diff/A..B``: B defaults to now.
    ``caller`` (None: this process's own account) must be allowed to read
    the repository and each end (a private snapshot: its sources); a diff to
    now is of as much of the working tree as they may see, and shows them
    only the files they could find."""
    from .budget import fit
    from .declare import declare

    budget = check_budget(budget)
    check_history(nas.tree.git_dir, caller)
    if path is not None:
        decider(nas.tree.root, caller).check(path)
    a_rev, b_rev = split_range(spec)
    a = nas.commit_for(a_rev, caller)
    seen_by = None if b_rev or sees_all(caller) else caller
    keep = None
    if seen_by is not None:  # made for a reader: snapshot only what they could find (the commit is readable in .at/)
        judge = decider(nas.tree.root, seen_by)
        # a file gone: snapshot_worktree(caller) records it if they may list the nearest folder still there
        keep = lambda p: judge.may_find(p) or judge.decide(p) is Seen.MISSING  # noqa: E731
    b = nas.commit_for(b_rev, caller) if b_rev else nas.tree.snapshot_worktree(caller, keep)
    check_order(nas, a, b)
    d = TreeDiff(nas, a, b, path, seen_by)

    def declared(s: Served):
        return declare(s, None, nas.tokenizer, budget)

    rungs = d.rungs()
    if budget is None:
        return declared(rungs[0]())
    return fit(rungs, declared, budget, Served("none", b"", (), truncated=True, keys=d.keys))


__all__ = ["FileChange", "TreeDiff", "diff_response", "split_range"]
