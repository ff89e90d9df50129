"""Markdown outline: the heading tree, as a CommonMark parser (markdown-it-py) reads it.

A heading shows its text with links reduced to their text. Only top-level
ATX and setext headings count (not those inside lists or block
quotes); ``#`` in fenced or indented code, HTML blocks and a thematic break are
not headings. A section runs from its heading line (the first text line of a
setext heading) to the line before the next heading of the same or higher
level, or to the last line. Leading YAML front matter is not a heading.

Files over 32 MiB are parsed in windows of about 1 MiB: each window is cut
before its last top-level block, which is parsed again with the next window,
so every block is parsed whole and memory stays bounded by the window (or by
one block larger than it, up to ``MAX_WINDOW``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Iterator

from markdown_it import MarkdownIt

from .model import Entry, Outline

WINDOW = 1 << 20  # characters parsed at once when streaming
MAX_WINDOW = 16 << 20  # a single block longer than this is cut where the window ends


@functools.cache
def _parser() -> MarkdownIt:
    """Block rules only: inline parsing is not needed to find headings."""
    _drop_debug_records("markdown_it")
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def _drop_debug_records(package: str) -> None:
    """markdown-it's block rules log every rule they try at debug level
    ("entering paragraph: ..."), about 250,000 records per MB of Markdown: a
    flood in a debug log, and CPU even when the level drops them, since each
    costs two calls (``debug``, then ``isEnabledFor``) before it is dropped.
    A level or ``Logger.disabled`` keeps both calls (``disabled`` only
    answers the second sooner), so the ``debug`` of the package's loggers,
    as ``logging`` hands them out, is made a no-op: the library's code and
    its other levels are untouched (docs/performance.md §4 has the gain)."""
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and (name == package or name.startswith(package + ".")):
            logger.debug = _no_record  # type: ignore[method-assign]


def _no_record(*args: object, **kwargs: object) -> None:
    """What a debug record of markdown-it costs here: nothing."""


@functools.cache
def _inline() -> MarkdownIt:
    return MarkdownIt("commonmark")


def _title(source: str) -> str:
    """A heading's text as a reader sees it: a link or image is its text
    (``[#19621](https://...)`` is ``#19621``); code, emphasis and HTML stay
    as written. Changelog headings full of links cost a fraction."""
    if "[" not in source:
        return source
    parts = []
    for t in _inline().parseInline(source)[0].children or []:
        if t.type in ("text", "html_inline"):
            parts.append(t.content)
        elif t.type == "code_inline":
            parts.append(t.markup + t.content + t.markup)
        elif t.type == "image":
            parts.append(t.content)
        elif t.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif t.type.endswith(("_open", "_close")) and not t.type.startswith("link"):
            parts.append(t.markup)
    return "".join(parts)


def _text_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Decoded lines, each ending in ``\\n`` (the last maybe not), by the nasfs line rule.

    CommonMark also ends a line at a lone ``\\r``; nasfs does not, so a lone
    ``\\r`` becomes a space and the parser's line numbers stay the file's.
    """
    rest = b""
    for chunk in chunks:
        if not chunk:
            continue
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            yield _clean(part) + "\n"
    if rest:
        yield _clean(rest)


def _clean(line: bytes) -> str:
    return line.removesuffix(b"\r").replace(b"\r", b" ").decode("utf-8", errors="replace")


def _front_matter(lines: list[str]) -> int:
    """Lines of a leading ``---`` front matter block (0 if there is none)."""
    if not lines or lines[0].removesuffix("\n") != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].removesuffix("\n") in ("---", "..."):
            return i + 1
    return 0


def _parse(lines: list[str], base: int, final: bool) -> tuple[list[tuple[int, int, str]], int]:
    """Headings ``(level, 1-based line, text)`` of ``lines`` (line ``base`` + 1 first), and how
    many of the lines are done: all when ``final``, else those before the last top-level block."""
    tokens = _parser().parse("".join(lines))
    done = len(lines)
    if not final:
        starts = [t.map[0] for t in tokens if t.level == 0 and t.map and t.nesting >= 0]
        done = starts[-1] if len(starts) > 1 else 0
    found = []
    for i, t in enumerate(tokens):
        if t.type == "heading_open" and t.level == 0 and t.map and t.map[0] < done:
            text = " ".join(part.strip() for part in tokens[i + 1].content.split("\n"))
            found.append((int(t.tag[1]), base + t.map[0] + 1, _title(text.strip()).strip()))
    return found, done


def _headings(lines: Iterable[str]) -> tuple[list[tuple[int, int, str]], int]:
    """Every heading of a stream of lines, and the line count."""
    found: list[tuple[int, int, str]] = []
    buffer: list[str] = []
    size, base, limit, first = 0, 0, WINDOW, True
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size < limit:
            continue
        if first:
            base = skip = _front_matter(buffer)
            del buffer[:skip]
            first = False
        heads, done = _parse(buffer, base, final=size >= MAX_WINDOW)
        if done == 0:  # one block fills the window: read on before parsing it again
            limit *= 2
            continue
        found += heads
        base += done
        del buffer[:done]
        size, limit = sum(map(len, buffer)), WINDOW
    if first:
        base = skip = _front_matter(buffer)
        del buffer[:skip]
    heads, done = _parse(buffer, base, final=True)
    return found + heads, base + done


def _outline(heads: list[tuple[int, int, str]], total: int) -> Outline:
    """The heading tree; each entry's path is its chain of heading texts."""
    entries: list[Entry] = []
    stack: list[tuple[int, str]] = []  # (level, text) of open ancestors
    ends: list[int] = [total] * len(heads)
    open_at: list[int] = []  # indexes of headings whose section has not ended
    for n, (level, line_no, _) in enumerate(heads):
        while open_at and heads[open_at[-1]][0] >= level:
            ends[open_at.pop()] = line_no - 1
        open_at.append(n)
    for (level, line_no, title), end in zip(heads, ends):
        while stack and stack[-1][0] >= level:
            stack.pop()
        path = tuple(t for _, t in stack) + (title,)
        entries.append(Entry("#" * level + (" " + title if title else ""), line_no, end, len(stack), path))
        stack.append((level, title))
    notes = () if entries else (f"markdown: {total} lines, no headings",)
    return Outline("markdown", tuple(entries), notes, indent=False)


def outline_markdown(data: bytes) -> Outline:
    """The heading tree of a file held in memory."""
    return outline_markdown_stream([data])


def outline_markdown_stream(chunks: Iterable[bytes]) -> Outline:
    """The heading tree of a stream, in memory bounded by the window."""
    heads, total = _headings(_text_lines(chunks))
    return _outline(heads, total)
