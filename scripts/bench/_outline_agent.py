"""The agent of ``outline_cost.py``'s default workload (issue 10): it reads an
outline as an agent does (both the compact ``11-20 ## Renewal`` form and the
earlier ``## Renewal (L11-L20)``), drills down where a level is collapsed, and
reads the lines found (:func:`run_task`)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from _outline_tasks import Outcome, Task


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
