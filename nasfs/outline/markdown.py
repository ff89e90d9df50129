"""Markdown outline: the heading tree (ATX and setext), fenced code ignored.

A section runs from its heading line (the text line of a setext heading) to the
line before the next heading of the same or higher level, or to the last line.
Leading YAML front matter is not a heading.
"""

from __future__ import annotations

import re

from .model import Entry, Outline

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*\r?$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading ``---`` front matter block."""
    if not lines or lines[0].rstrip("\r") != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") in ("---", "..."):
            return i + 1
    return 0


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(level, 1-based line, text) of every heading outside fenced code.

    A setext underline turns the paragraph above it into a heading whose line
    is the paragraph's first line.
    """
    found: list[tuple[int, int, str]] = []
    fence = ""
    para: int | None = None  # index of the open paragraph's first line
    for i in range(_front_matter_end(lines), len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                fence = ""
        elif m:
            fence, para = m.group(1), None
        elif (a := _ATX.match(line)) is not None:
            found.append((len(a.group(1)), i + 1, (a.group(2) or "").strip()))
            para = None
        elif para is not None and _SETEXT.match(line):
            title = " ".join(part.strip() for part in lines[para:i])
            found.append((1 if line.strip()[0] == "=" else 2, para + 1, title))
            para = None
        elif not line.strip():
            para = None
        elif para is None and not line.startswith(("    ", "\t")):
            para = i
    return found


def outline_markdown(data: bytes) -> Outline:
    """The heading tree; each entry's path is its chain of heading texts."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    heads = _headings(lines)
    entries: list[Entry] = []
    stack: list[tuple[int, str]] = []  # (level, text) of open ancestors
    for n, (level, line_no, title) in enumerate(heads):
        end = total
        for later_level, later_line, _ in heads[n + 1:]:
            if later_level <= level:
                end = later_line - 1
                break
        while stack and stack[-1][0] >= level:
            stack.pop()
        path = tuple(t for _, t in stack) + (title,)
        entries.append(Entry("#" * level + (" " + title if title else ""), line_no, end, len(stack), path))
        stack.append((level, title))
    notes = () if entries else (f"markdown: {total} lines, no headings",)
    return Outline("markdown", tuple(entries), notes, indent=False)

