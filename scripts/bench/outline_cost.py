"""Outline-first reads against whole-file reads, on a corpus of real files (issues 10 and 21).

    .venv/bin/python scripts/bench/outline_cost.py CORPUS [--tasks 150] [--seed 10] [--budget N]
    .venv/bin/python scripts/bench/outline_cost.py CORPUS --named [--tasks 210] [--min-tokens 1000]
    .venv/bin/python scripts/bench/outline_cost.py --make-corpus SRC CORPUS

``--named`` is issue 21's workload (see ``run_named``): look-ups by name in
Markdown, Python, JSON, YAML, YAML streams, TOML and JSON Lines, reading at
most the one follow-up (``@section=NAME@outline``) an outline line names; it
reports how many targets the outline names, how many are reachable with that
one follow-up, the follow-up reads, cost, median and worst task. What follows
is the default workload's (issue 10's) agent.

Lookup tasks are picked by parsers independent of nasfs's outliners: Python's
``ast`` (functions, classes, methods), markdown-it-py's full CommonMark parse
(headings), PyYAML's composer (keys of JSON and YAML files, with their lines).
A simulated agent reads ``P@outline`` (or ``P@N`` with ``--budget``, following
``next`` pages), finds the target by its qualified name in the outline text
or, when the outline does not show it, its deepest shown ancestor. When the
answer shows that ancestor collapsed (on the last level of an outline cut to
``depth=K/M``, or an array listing its first elements only), it drills down
with ``P@section=NAME@B`` (the section's outline when its text does not fit
B; see ``run_task``), then reads the lines found with ``P@La-Lb``. A task
succeeds when the lines read hold the target's lines. The cost is every token
read, headers included, against the whole file's tokens (``cat P``). It prints the cost by family, for keys files (JSON/YAML of
1-5k tokens), overall and for the median task, the success rate, and what
``@outline`` costs against each file for every family (CSV and text too).

It reads outlines in both the compact form (``11-20 ## Renewal``) and the
earlier one (``## Renewal (L11-L20)``), so the same command measures an
older nasfs on ``PYTHONPATH`` for a before/after comparison. CORPUS is copied
and committed to a temp folder (at a fixed date, so the commit every pointer
names, and with it every total, is the same in each run); nothing is written
into it.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import random
import re
import shutil
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _lookup_targets import targets  # noqa: E402

FAMILIES = {".md": "markdown", ".markdown": "markdown", ".py": "python", ".json": "json", ".yaml": "yaml",
            ".yml": "yaml", ".csv": "csv", ".txt": "text", ".toml": "toml", ".jsonl": "jsonl", ".ndjson": "jsonl"}
TASK_FAMILIES = ("markdown", "python", "json", "yaml")
# --named (issue 21): keys of every data family; a YAML file of several documents is a stream
NAMED_FAMILIES = ("markdown", "python", "json", "yaml", "yaml-stream", "toml", "jsonl")
KEY_FAMILIES = ("json", "yaml", "yaml-stream", "toml", "jsonl")
KEYS_BAND = (1000, 5000)  # full-file tokens of a "keys file"
MAX_BYTES = 256 << 10
# Every header's pointer names the corpus commit (12 hex digits, 4 to 12 tokens
# as the digits fall): a commit made at a fixed date has the same id in every
# run, so the totals are the same too (with the time, they moved by ~0.5%).
COMMIT_DATE = "2026-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class Task:
    family: str
    path: str
    target: tuple[str, ...]  # qualified name
    start: int
    end: int


@dataclass
class Outcome:
    task: Task
    cost: int
    full: int
    ok: bool
    reads: int
    how: str
    outline: int = 0  # of ``cost``: the outline reads (drill-downs included)
    floor: int = 0  # the target's own lines: what the task costs with an outline that costs nothing
    headers: int = 0  # of ``cost``: the header lines


# --- tasks: targets from parsers independent of nasfs (_lookup_targets.py) --------------------

def same_name(a: str, b: str) -> bool:
    """Names equal up to markup characters and spacing (an agent matches words, not asterisks)."""
    strip = lambda s: " ".join(re.sub(r"[`*_\\\\]|<[^>]*>", "", html.unescape(s)).split())  # noqa: E731
    return strip(a) == strip(b)


# --- reading an outline as an agent does -------------------------------------------------------

NEW = re.compile(r"(\d+)(?:-(\d+))? ( *)(.*)")
OLD = re.compile(r"( *)(.*) \(L(\d+)-L(\d+)\)")
CODE_NAME = re.compile(r"(?:[\w.]+ )*?(?:def|class|function|fn|func|struct|enum|interface|trait|impl|type|module) +([\w.$]+)")
CONTAINER_WITH_KEYS = re.compile(r"(.+?)(?:\{\d+\}|\[\d+\]): (.*)|(.+?)\{(?!\d+\})(.+)\}")
DATA_NAME = re.compile(r"(.+?)(?:\{\d+\}|\[\d+\]|: .*)?(?: \(.*\))?")


FOLLOW = re.compile(r" (@section=\S+?@outline)")  # the follow-up a data outline names where it hides a level
DOCUMENT = re.compile(r"--- document (\d+): (.*)")


def outline_entries(body: str, family: str) -> list[tuple[tuple[str, ...], int, int]]:
    """(qualified name, first, last) of each outline line, as its text shows them."""
    return [row[:3] for row in outline_rows(body, family)]


def outline_rows(body: str, family: str) -> list[tuple[tuple[str, ...], int, int, str | None]]:
    """(qualified name, first, last, follow-up named on the entry or None) of each outline entry."""
    rows = []
    for line in body.split("\n"):
        m = OLD.fullmatch(line)
        if m:
            pad, label, first, last = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        else:
            m = NEW.fullmatch(line)
            if not m:
                continue
            first, last, pad, label = int(m.group(1)), int(m.group(2) or m.group(1)), m.group(3), m.group(4)
        if family == "markdown":
            hashes = len(label) - len(label.lstrip("#"))
            if not hashes:
                continue
            depth, name = hashes, label[hashes:].strip()
        elif family == "python":
            found = CODE_NAME.match(label.strip())
            depth, name = len(pad) // 2, found.group(1) if found else label.strip()
        else:  # one-line keys share a line: "9-11 description, type", "8-12 level{3}: description, type"
            depth = len(pad) // 2
            label = label.strip()
            doc = DOCUMENT.fullmatch(FOLLOW.sub("", label))  # "--- document 3: {2}": document 3
            if doc:
                follow = FOLLOW.search(label)
                shape = doc.group(2)
                rows.append((depth, doc.group(1), first, last, follow.group(1) if follow else None))
                inner = CONTAINER_WITH_KEYS.fullmatch("x" + shape) if shape[:1] in "{[" else None
                for part in (inner.group(2) or inner.group(4)).split(", ") if inner else ():
                    found = DATA_NAME.fullmatch(part)
                    rows.append((depth + 1, found.group(1) if found else part, first, last, None))
                continue
            parent = CONTAINER_WITH_KEYS.fullmatch(label) if not FOLLOW.search(label) else None
            if parent:  # "model{2}: provider, context_tokens" (before) or "model{provider, context_tokens}"
                rows.append((depth, parent.group(1) or parent.group(3), first, last, None))
                depth, label = depth + 1, parent.group(2) or parent.group(4)
            follow = FOLLOW.search(label)  # an entry that names a follow-up is alone on its line
            for part in [label] if follow and follow.end() == len(label) else label.split(", "):
                follow = FOLLOW.search(part)
                part = FOLLOW.sub("", part)
                found = DATA_NAME.fullmatch(part)
                rows.append((depth, found.group(1) if found else part, first, last, follow.group(1) if follow else None))
            continue
        rows.append((depth, name, first, last, None))
    out, stack = [], []
    for depth, name, first, last, follow in rows:
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, name))
        out.append((tuple(n for _, n in stack), first, last, follow))
    return out


def header_keys(text: bytes) -> dict[str, str]:
    first = text.split(b"\n", 1)[0].decode()
    return {k: unquote(v) for k, v in (pair.split("=", 1) for pair in first.split(" ")[1:] if "=" in pair)}


DEPTH = re.compile(r"(\d+)/(\d+)")
LINES = re.compile(r"#L(\d+)-L(\d+)$")
DRILL = 300  # the least budget a drill-down asks
SHARE_ASKED = 8  # a drill-down asks for this fraction (1/8) of the section's estimated tokens


@dataclass
class Seen:
    """The deepest shown ancestor of a target in one answer: its qualified
    name, lines, the level it is shown on, and the answer it was seen in."""

    path: tuple[str, ...]
    first: int
    last: int
    level: int
    keys: dict[str, str]
    body: str


def look(text: bytes, family: str, target: tuple[str, ...], prefix: tuple[str, ...] = ()) -> tuple[tuple[int, int] | None, Seen | None]:
    """The target's lines in an outline answer, else its deepest shown ancestor.
    In a section's outline names are under ``prefix``, the section's parents
    (the names the agent asked for; a heading ``2.0.3`` holds dots itself)."""
    keys = header_keys(text)
    body = text.decode("utf-8", "replace").split("\n", 1)[1]
    seen = None
    for path, first, last in outline_entries(body, family):
        path = prefix + path
        if len(path) == len(target) and all(map(same_name, path, target)):
            return (first, last), None
        if len(path) < len(target) and all(map(same_name, path, target)) and (seen is None or len(path) > len(seen.path)):
            seen = Seen(path, first, last, len(path) - len(prefix) - 1, keys, body)
    return None, seen


def drill_name(seen: Seen, target: tuple[str, ...]) -> str | None:
    """The section to ask for when the answer shows the ancestor holds more than
    it lists: the ancestor itself when it sits on the deepest level of an
    outline cut short (``depth=K/M``, K < M); for an array that lists only its
    first elements (``items[120] (first 5 shown)``), the element the target is
    in, named by index as the grammar names array elements. None otherwise."""
    cut = DEPTH.fullmatch(seen.keys.get("depth", ""))
    if cut and int(cut.group(1)) < int(cut.group(2)) and seen.level == int(cut.group(1)) - 1:
        return ".".join(seen.path)
    span = f"{seen.first}-{seen.last}" if seen.first != seen.last else f"{seen.first}"
    if any(row.startswith(span + " ") and "shown)" in row for row in seen.body.split("\n")):
        return ".".join(target[: len(seen.path) + 1])
    return None


SIZE = re.compile(r"(?:\{(\d+)\}|\[(\d+)\])")


def drill_budget(seen: Seen, full: int, total_lines: int) -> int:
    """What a drill-down asks first: an eighth of the section's share of the
    file's tokens (its lines' share), or enough for the entries its label
    counts (``properties{38}``: 38 lines of about 12 tokens, and a header), at
    least ``DRILL``."""
    estimate = full * (seen.last - seen.first + 1) // max(total_lines, 1)
    line = next((row for row in seen.body.split("\n") if row.startswith(f"{seen.first}")), "")
    counted = SIZE.search(line)
    entries = int(counted.group(1) or counted.group(2)) if counted else 0
    return max(DRILL, estimate // SHARE_ASKED, 60 + 12 * entries)


class Reader:
    """The agent's reads of one task: every token counted, headers apart."""

    def __init__(self, nas, path: str) -> None:  # noqa: ANN001
        self.nas, self.path = nas, path
        self.cost = self.reads = self.headers = 0

    def __call__(self, view: str):  # noqa: ANN204
        r = self.nas.read(f"{self.path}{view}")
        self.cost += r.tokens
        self.reads += 1
        self.headers += r.tokens - r.content_tokens
        return r


def run_task(nas, task: Task, full: int, budget: int | None) -> Outcome:  # noqa: ANN001
    """Read the outline (its pages) and find the target, or its deepest shown
    ancestor. When the answer shows that ancestor collapsed and its lines are
    more than ``DRILL`` tokens' worth, ask for its section within a budget
    (:func:`drill_budget`; the ladder gives the section's outline when its text
    does not fit), twice that when the answer shows nothing below it, and look
    again. Then read the lines found. Every token read is counted."""
    from nasfs.errors import NasError

    read = Reader(nas, task.path)

    def outcome(ok: bool, how: str, outline: int) -> Outcome:
        return Outcome(task, read.cost, full, ok, read.reads, how, outline, headers=read.headers)

    spec = "@outline" if budget is None else f"@{budget}"
    exact, seen, view = None, None, ""
    while spec and exact is None:
        r = read(spec)
        keys = header_keys(r.text)
        view = keys["view"]
        if view == "full":
            return outcome(True, "full", read.cost)
        if view == "outline":
            exact, shown = look(r.text, task.family, task.target)
            if shown is not None and (seen is None or len(shown.path) > len(seen.path)):
                seen = shown
        nxt = keys.get("next", "")
        spec = nxt if nxt.startswith("@outline=") else ""
    how = "exact"
    lines = LINES.search(keys["pointer"])
    total_lines = int(lines.group(2)) if lines else 0
    while exact is None and seen is not None:
        name = drill_name(seen, task.target)
        if name is None or (total_lines and full * (seen.last - seen.first + 1) / total_lines <= DRILL):
            break  # nothing hidden, or a small part of the file: its lines cost less than a drill-down
        element = name != ".".join(seen.path)  # a folded array element: its size is not shown
        prefix = seen.path if element else seen.path[:-1]
        how, ask = "drill", DRILL if element else drill_budget(seen, full, total_lines)
        while True:
            try:
                r = read(f"@section={quote(name, safe='')}@{ask}")
            except NasError:  # an older nasfs: folded elements and deep keys are no sections
                r = None
                break
            keys = header_keys(r.text)
            exact, shown = look(r.text, task.family, task.target, prefix) if keys["view"] == "outline" else (None, None)
            below = exact is not None or (shown is not None and len(shown.path) > len(seen.path))
            if keys["view"] == "section" or below or ask >= full:
                break
            ask *= 2
        if r is None:
            break
        if keys["view"] == "section":  # the section's text: the target is in it
            first, last = map(int, LINES.search(keys["pointer"]).groups())
            return outcome(first <= task.start and task.end <= last, how, read.cost - r.tokens)
        if not below:
            break
        seen = shown or seen
    found = exact or ((seen.first, seen.last) if seen else None)
    outline = read.cost
    if found is None:  # nothing to go on: the agent reads the whole file
        read("")
        return outcome(False, "skeleton" if view in ("skeleton", "none") else "missing", outline)
    first, last = found
    read(f"@L{first}-L{last}")
    return outcome(first <= task.start and task.end <= last, how if exact else "ancestor", outline)


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


def grouped(nas, outcomes: list[Outcome], families: tuple[str, ...],  # noqa: ANN001
            extra: dict[str, Callable[[Outcome], bool]]) -> dict[str, list[Outcome]]:
    """Each outcome's floor (its target's lines read alone), then the outcomes
    by family, by each of ``extra``'s tests, and all of them; empty groups left out."""
    for o in outcomes:
        o.floor = nas.read(f"{o.task.path}@L{o.task.start}-L{o.task.end}").tokens
    groups = {f: [o for o in outcomes if o.task.family == f] for f in families}
    groups.update({name: [o for o in outcomes if test(o)] for name, test in extra.items()})
    groups["overall"] = outcomes
    return {name: group for name, group in groups.items() if group}


def _documents(path: Path) -> int:
    try:
        return sum(1 for _ in yaml.compose_all(path.read_text("utf-8", "replace"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return 0


# --- the run ------------------------------------------------------------------------------------

def family_of(path: str) -> str:
    return FAMILIES.get(Path(path).suffix.lower(), "")


def pick_tasks(tree: Path, files: dict[str, list[str]], fulls: dict[str, int], count: int, seed: int,
               families: tuple[str, ...] = TASK_FAMILIES) -> list[Task]:
    """``count`` tasks spread over the task families; for JSON and YAML half
    of them in keys files when there are any. One random target of a random file a task."""
    rng = random.Random(seed)
    per_family = {f: count // len(families) + (i < count % len(families)) for i, f in enumerate(families)}
    tasks: list[Task] = []
    for family, wanted in per_family.items():
        parse = "yaml" if family == "yaml-stream" else family
        pool = {p: targets(parse, (tree / p).read_text("utf-8", "replace")) for p in files.get(family, [])}
        pool = {p: t for p, t in pool.items() if t}
        groups = [sorted(pool)]
        if family in ("json", "yaml"):
            keys = [p for p in sorted(pool) if KEYS_BAND[0] <= fulls[p] <= KEYS_BAND[1]]
            others = [p for p in sorted(pool) if p not in keys]
            groups = [g for g in (keys, others) if g]
        for n in range(wanted):
            group = groups[n % len(groups)] if groups and groups[0] else []
            if not group:
                break
            path = rng.choice(group)
            name, start, end = rng.choice(pool[path])
            tasks.append(Task(family, path, name, start, end))
    return tasks


def make_corpus(src: Path, out: Path, per_family: int = 60) -> None:
    """Copy files of each family from checkouts under SRC (tests and fixtures left out),
    chosen by a hash of their path; JSON and YAML half from the keys band by size."""
    out.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, list[Path]] = {}
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src).as_posix()
        if not p.is_file() or p.is_symlink() or re.search(r"(^|/)(tests?|fixtures?|__tests__|node_modules|\.git)/", rel):
            continue
        fam = family_of(rel)
        if fam and 60 <= p.stat().st_size <= MAX_BYTES:
            chosen.setdefault(fam, []).append(p)
    for fam, paths in chosen.items():
        paths.sort(key=lambda p: hashlib.sha1(p.relative_to(src).as_posix().encode()).hexdigest())
        if fam in ("json", "yaml", "toml", "jsonl"):
            band = [p for p in paths if 4000 <= p.stat().st_size <= 20000][: per_family // 2]
            paths = band + [p for p in paths if p not in band][: per_family - len(band)]
        for p in paths[:per_family]:
            dest = out / p.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest)
    print(f"corpus in {out}: " + ", ".join(f"{f} {min(len(v), per_family)}" for f, v in sorted(chosen.items())))


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", help="a folder of real files (Markdown, Python, JSON, YAML, CSV, text)")
    ap.add_argument("--tasks", type=int, default=150)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--budget", type=int, default=None, help="read P@N instead of P@outline (pages followed)")
    ap.add_argument("--named", action="store_true",
                    help="issue 21's workload: find by name in P@outline, at most one named follow-up, every data family")
    ap.add_argument("--min-tokens", type=int, default=0,
                    help="with --named: tasks only in files of at least this many tokens (files worth an outline)")
    ap.add_argument("--make-corpus", nargs=2, metavar=("SRC", "CORPUS"), help="assemble a corpus from checkouts")
    args = ap.parse_args()
    if args.make_corpus:
        make_corpus(Path(args.make_corpus[0]), Path(args.make_corpus[1]))
        return
    if not args.corpus:
        ap.error("CORPUS is required")
    import nasfs
    from nasfs import tokens
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    C.banner("outline-first reads against whole-file reads")
    print(f"nasfs from {Path(nasfs.__file__).parent}")
    work = C.workdir("outline-cost")
    tree = work / "corpus"
    shutil.copytree(args.corpus, tree, ignore=shutil.ignore_patterns(".git"))
    C.make_repo(tree, "outline-cost corpus", date=COMMIT_DATE)
    nas = Nas(GitTree(tree, node="bench", tree="corpus"))
    files: dict[str, list[str]] = {}
    fulls: dict[str, int] = {}
    for p in sorted(tree.rglob("*")):
        rel = p.relative_to(tree).as_posix()
        if p.is_file() and not rel.startswith(".git/") and family_of(rel):
            fulls[rel] = tokens.count(p.read_bytes())
            if fulls[rel]:
                files.setdefault(family_of(rel), []).append(rel)
    print("corpus: " + ", ".join(f"{f} {len(v)} files" for f, v in sorted(files.items())) + "\n")

    rows = []
    for fam, paths in sorted(files.items()):
        answers = [nas.read(f"{p}@outline") for p in paths]
        outline = [r.tokens for r in answers]
        full = [fulls[p] for p in paths]
        whole = sum(r.view == "full" for r in answers)
        over = sum(r.view != "full" and o > f for r, o, f in zip(answers, outline, full))
        small = [(o, f) for o, f in zip(outline, full) if f <= 150]
        rows.append([fam, len(paths), sum(full), sum(outline), pct(sum(outline), sum(full)),
                     f"{statistics.median(o / f for o, f in zip(outline, full)):.0%}", whole, over,
                     f"{sum(o for o, _ in small)}/{sum(f for _, f in small)}" if small else "-"])
    C.table(["family", "files", "file tokens", "@outline tokens", "@outline/file", "median file", "served whole",
             "outline > file", "files <= 150 tokens: @outline/file"], rows,
            "@outline of every file against the file (cat P); 'served whole': @outline gave the file itself:")

    if args.named:
        big = {f: [p for p in v if fulls[p] >= args.min_tokens] for f, v in files.items()}
        named_report(nas, tree, big, fulls, args.tasks, args.seed, args.min_tokens)
        C.finish()
        return
    tasks = pick_tasks(tree, files, fulls, args.tasks, args.seed)
    outcomes = [run_task(nas, t, fulls[t.path], args.budget) for t in tasks]
    rows = []
    for name, group in grouped(nas, outcomes, TASK_FAMILIES, {
        "keys files (JSON/YAML, 1-5k tokens)": lambda o: o.task.family in ("json", "yaml") and KEYS_BAND[0] <= o.full <= KEYS_BAND[1],
        "tasks in files over 5k tokens": lambda o: o.full > 5000,
    }).items():
        cost, full = sum(o.cost for o in group), sum(o.full for o in group)
        hows = {h: sum(o.how == h for o in group) for h in ("full", "exact", "drill", "ancestor", "missing", "skeleton")}
        rows.append([name, len(group), pct(sum(o.ok for o in group), len(group)), cost, full, pct(cost, full),
                     pct(sum(o.outline for o in group), full), pct(sum(o.headers for o in group), full),
                     pct(sum(o.floor for o in group), full),
                     f"{100 * statistics.median(o.cost / o.full for o in group):.1f}%",
                     " ".join(f"{h}={n}" for h, n in hows.items() if n)])
    mode = f"P@{args.budget}, next pages followed" if args.budget else "P@outline"
    C.table(["tasks", "n", "success", "outline-first tokens", "whole-file tokens", "cost/whole", "of it outline",
             "of it headers", "target lines alone", "median task", "how"],
            rows, f"{len(tasks)} lookup tasks ({mode}, then P@La-Lb), seed {args.seed}:")
    failed = [o for o in outcomes if not o.ok][:10]
    for o in failed:
        print(f"  not reached: {o.task.path} {'.'.join(o.task.target)} L{o.task.start}-L{o.task.end} ({o.how})")
    C.finish()


if __name__ == "__main__":
    main()
