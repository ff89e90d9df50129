"""The agent of ``outline_cost.py --named`` (issues 21 and 27): look-ups by
name reading ``P@outline``, its key index (``keys:`` line or ``P@keys``) and
at most one named follow-up (:func:`run_named`), and the report of that
workload (:func:`named_report`)."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import _common as C
from _outline_agent import LINES, Reader, header_keys, outline_rows, same_name
from _outline_tasks import KEY_FAMILIES, NAMED_FAMILIES, Outcome, Task, _documents, grouped, pct, pick_tasks

FOLLOW_MIN = 300  # tokens: an ancestor's lines worth less than a follow-up's header and outline are read instead


def find_named(text: bytes, parse: str, target: tuple[str, ...], prefix: tuple[str, ...] = ()) -> tuple[tuple[int, int] | None, tuple | None]:
    """The target's lines in an outline answer, else (path, first, last, follow-up) of its deepest listed ancestor."""
    body = text.decode("utf-8", "replace").split("\n", 1)[1]
    best = None
    for path, first, last, follow in outline_rows(body, parse):
        path = prefix + path
        if len(path) == len(target) and all(map(same_name, path, target)):
            return (first, last), None
        if len(path) < len(target) and all(map(same_name, path, target)) and (best is None or len(path) > len(best[0])):
            best = (path, first, last, follow)
    return None, best


PLACE = re.compile(r"(\d+)(?:-(\d+))?")


def index_places(text: str, name: str, keys_line: bool) -> list[tuple[int, int]] | None:
    """The line ranges an outline's key index (a ``keys: a 3-5, b 9,12`` line)
    or ``P@keys`` (``keys_line`` False: one key a line) gives key ``name``;
    [] for a key it only counts (``tier ×32``), None for one it does not name."""
    if keys_line:
        line = next((row for row in text.split("\n") if row.startswith("keys: ")), "")
        parts = line[len("keys: "):].removesuffix(" (every place: @keys)").split(", ") if line else []
    else:
        parts = text.split("\n")[1:]
    for part in parts:
        key, _, places = part.rpartition(" ")
        if key and same_name(key, name):
            return [(int(m.group(1)), int(m.group(2) or m.group(1))) for m in map(PLACE.fullmatch, places.split(",")) if m]
    return None


def from_index(read, text: bytes, target: tuple[str, ...], seen: tuple | None) -> tuple[int, int] | None:  # noqa: ANN001
    """The target's lines through the key index: the outline's own ``keys:``
    line, else ``P@keys`` when the header names it (one named follow-up) and
    no ancestor of the target is listed (a listed one names a follow-up that
    lists less, or is a few lines, read instead); the place inside that ancestor."""
    body = text.decode("utf-8", "replace")
    places = index_places(body, target[-1], True)
    if not places and header_keys(text).get("keys") == "@keys" and seen is None:
        places = index_places(read("@keys").text.decode("utf-8", "replace"), target[-1], False)
    inside = [p for p in places or () if seen is None or (seen[1] <= p[0] and p[1] <= seen[2])]
    if len(inside) > 1 and seen is not None and seen[3]:
        return None  # several places in that ancestor (elements 1 and 2): its follow-up tells them apart
    # several, no follow-up (a few lines): the lines from the first to the last
    return (min(p[0] for p in inside), max(p[1] for p in inside)) if inside else None


def reachable(nas, task: Task) -> bool:  # noqa: ANN001
    """Whether the target is reached by name whatever it costs: the outline
    names it; or its deepest listed ancestor names a follow-up whose answer
    names it (or is the section's text); or that ancestor names none and spans
    at most ``FOLLOW_LINES`` lines, which are then the read (the rule nasfs names
    follow-ups by)."""
    try:
        from nasfs.outline.model import FOLLOW_LINES
    except ImportError:  # an older nasfs names no follow-ups
        FOLLOW_LINES = 0

    parse = task.family if task.family in ("markdown", "python") else "data"
    r = nas.read(f"{task.path}@outline")
    if r.view == "full":
        return True
    exact, seen = find_named(r.text, parse, task.target)
    if exact is not None:
        return True
    if parse == "data":
        found = from_index(lambda view: nas.read(f"{task.path}{view}"), r.text, task.target, seen)
        if found is not None and found[0] <= task.start and task.end <= found[1]:
            return True
    if seen is None:
        return False
    if not seen[3]:
        return seen[2] - seen[1] < FOLLOW_LINES and seen[1] <= task.start and task.end <= seen[2]
    r = nas.read(f"{task.path}{seen[3]}")
    if r.view == "section":
        first, last = map(int, LINES.search(header_keys(r.text)["pointer"]).groups())
        return first <= task.start and task.end <= last
    return find_named(r.text, parse, task.target, seen[0][:-1])[0] is not None


def by_name_alone(nas, task: Task) -> bool:  # noqa: ANN001
    """Issue 27: whether the target is found knowing only its own name (not
    the path to it: which document, which record), with at most one named
    read after ``P@outline``: an outline entry of that name whose lines hold
    the target, or a place the key index gives it (the outline's ``keys:``
    line, or ``P@keys`` its header names) that holds the target."""
    parse = task.family if task.family in ("markdown", "python") else "data"
    r = nas.read(f"{task.path}@outline")
    if r.view == "full":
        return True
    body = r.text.decode("utf-8", "replace").split("\n", 1)[1]
    spans = [(first, last) for path, first, last, _ in outline_rows(body, parse) if same_name(path[-1], task.target[-1])]
    spans += index_places(body, task.target[-1], True) or []
    if not any(first <= task.start and task.end <= last for first, last in spans) and (
            header_keys(r.text).get("keys") == "@keys" or body.rstrip().endswith("(every place: @keys)")):
        spans = index_places(nas.read(f"{task.path}@keys").text.decode("utf-8", "replace"), task.target[-1], False) or []
    return any(first <= task.start and task.end <= last for first, last in spans)


def run_named(nas, task: Task, full: int) -> Outcome:  # noqa: ANN001
    """The issue-21 agent: read ``P@outline`` and find the target by its
    qualified name. Not there: take its deepest listed ancestor; when that
    entry names a follow-up (``@section=NAME@outline``) and its lines are
    worth more than ``FOLLOW_MIN`` tokens (their share of ``full_tokens``), read
    the follow-up once and look again (a section's text, served when cheaper
    than its outline, holds the target: done). Then read the lines found, the
    ancestor's if the name was not found; the whole file when nothing was.
    ``how`` is where the name was found: outline, follow-up, ancestor, file
    (or full: ``@outline`` served the file). A key the outline does not list
    is looked up in its key index first (the ``keys:`` line, or ``P@keys``
    when the header names it), which gives the key's own lines: ``index``."""
    read = Reader(nas, task.path)
    parse = task.family if task.family in ("markdown", "python") else "data"

    def outcome(ok: bool, how: str) -> Outcome:
        return Outcome(task, read.cost, full, ok, read.reads, how, read.cost, headers=read.headers)

    def search(text: bytes, prefix: tuple[str, ...]) -> tuple[tuple[int, int] | None, tuple | None]:
        return find_named(text, parse, task.target, prefix)

    r = read("@outline")
    keys = header_keys(r.text)
    if keys["view"] == "full":
        return outcome(True, "full")
    total_lines = int(LINES.search(keys["pointer"]).group(2))
    exact, seen = search(r.text, ())
    how = "outline"
    if exact is None and parse == "data":
        exact = from_index(read, r.text, task.target, seen)
        how = "index" if exact is not None else how
    if exact is None and seen is not None and seen[3] and full * (seen[2] - seen[1] + 1) / total_lines > FOLLOW_MIN:
        r = read(seen[3])
        keys = header_keys(r.text)
        if keys["view"] == "section":  # cheaper than its outline: the section's text holds the target
            first, last = map(int, LINES.search(keys["pointer"]).groups())
            return outcome(first <= task.start and task.end <= last, "follow-up")
        exact, deeper = search(r.text, seen[0][:-1])
        how = "follow-up"
        seen = deeper if deeper is not None and len(deeper[0]) > len(seen[0]) else seen
    if exact is None and seen is None:
        read("")
        return outcome(False, "file")
    first, last = exact or seen[1:3]
    read(f"@L{first}-L{last}")
    return outcome(first <= task.start and task.end <= last, how if exact else "ancestor")


def named_report(nas, tree: Path, files: dict[str, list[str]], fulls: dict[str, int], count: int, seed: int,  # noqa: ANN001
                 min_tokens: int) -> None:
    """The issue-21 workload: tasks over every family, the agent of :func:`run_named`."""
    streams = [p for p in files.get("yaml", []) if _documents(tree / p) > 1]
    files = dict(files, yaml=[p for p in files.get("yaml", []) if p not in streams], **{"yaml-stream": streams})
    tasks = pick_tasks(tree, files, fulls, count, seed, NAMED_FAMILIES)
    outcomes = [run_named(nas, t, fulls[t.path]) for t in tasks]
    reach = {id(o): reachable(nas, o.task) for o in outcomes}
    alone = {id(o): by_name_alone(nas, o.task) for o in outcomes}
    rows = []
    for name, group in grouped(nas, outcomes, NAMED_FAMILIES,
                               {"keys (every data family)": lambda o: o.task.family in KEY_FAMILIES}).items():
        cost, full = sum(o.cost for o in group), sum(o.full for o in group)
        rows.append([name, len(group), pct(sum(o.how in ("outline", "full", "index") for o in group), len(group)),
                     pct(sum(reach[id(o)] for o in group), len(group)), pct(sum(alone[id(o)] for o in group), len(group)),
                     pct(sum(o.ok for o in group), len(group)),
                     sum(o.how == "follow-up" or (o.reads > 2 and o.how in ("ancestor", "index")) for o in group),
                     cost, full, pct(cost, full), pct(sum(o.floor for o in group), full),
                     f"{statistics.median(o.cost / o.full for o in group):.3f}",
                     f"{max(o.cost / o.full for o in group):.3f}", sum(o.cost > o.full for o in group),
                     pct(sum(o.headers for o in group), cost)])
    C.table(["tasks", "n", "named in outline or its key index", "reachable (outline + 1 named read)",
             "by its name alone (outline + 1 named read)", "lines reached", "follow-up reads",
             "tokens", "whole-file tokens", "cost/whole", "target lines alone", "median task", "worst task",
             "tasks > whole file", "headers / tokens read"], rows,
            f"{len(tasks)} look-up tasks by name (P@outline, at most one named follow-up, then P@La-Lb), seed {seed}"
            f"{f', files of {min_tokens}+ tokens' if min_tokens else ''}:")
    for o in [o for o in outcomes if not o.ok or not reach[id(o)]][:12]:
        print(f"  not reachable or not reached: {o.task.path} {'.'.join(o.task.target)} L{o.task.start}-L{o.task.end} "
              f"({o.how}, {o.cost}/{o.full} tokens)")
