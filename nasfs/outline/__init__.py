"""Pick the outliner for a file: by name first, then by a look at its bytes.

Data outlines are then fitted (:func:`~.model.fitted`): ``@outline`` shows
their levels while they stay a small share of the file, since a key tree can
be nearly as large as the file. Code and Markdown outlines stay whole: their
symbols and headings are what an agent picks its read from.

Outliners are imported when first used: a one-shot ``nasfs read`` served from
the cache should not pay for loading tree-sitter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..lines import LineIndex
from .model import Entry, Outline, fitted

__all__ = ["Entry", "Outline", "family_for", "is_binary", "outline_bytes", "outline_large"]

_MARKDOWN = (".md", ".markdown", ".mdx", ".mkd")
_DATA = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
_TABLE = {".csv": ",", ".tsv": "\t"}


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def is_binary(head: bytes) -> bool:
    """Git's rule: a NUL byte in the first 8000 bytes makes a file binary."""
    return b"\0" in head[:8000]


def family_for(path: str) -> str:
    """The outliner family a path's name asks for (before looking at bytes)."""
    suffix = _suffix(path)
    if suffix in _MARKDOWN:
        return "markdown"
    if suffix in _DATA:
        return _DATA[suffix]
    if suffix in _TABLE:
        return "table"
    from .code import language_for

    if language_for(path):
        return "code"
    return "text"


def outline_bytes(path: str, data: bytes, lines: LineIndex | None = None) -> Outline:
    """The outline of a file held in memory (``lines``: its line index, if built)."""
    from .text import outline_binary, outline_text

    if is_binary(data):
        return outline_binary(len(data), data[:512])
    family = family_for(path)
    if family == "markdown":
        from .markdown import outline_markdown

        return outline_markdown(data)
    if family in ("json", "jsonl", "yaml", "toml"):
        from .data import outline_data

        return fitted(outline_data(data, family), len(data))
    if family == "table":
        from .tabular import outline_table

        return outline_table([data], _TABLE[_suffix(path)])
    if family == "code":
        from .code import language_for, outline_code

        language = language_for(path)
        found = outline_code(data, language, lines) if language else None
        if found is not None:
            return found
    return outline_text(data)


def outline_large(path: str, size: int, head: bytes, stream: Callable[[], Iterable[bytes]]) -> Outline:
    """The outline of a file too large to hold: streamed, in bounded memory."""
    from .tabular import outline_table
    from .text import outline_binary, outline_text_stream

    if is_binary(head):
        return outline_binary(size, head[:512])
    family = family_for(path)
    if family == "table":
        return outline_table(stream(), _TABLE[_suffix(path)])
    if family == "markdown":
        from .markdown import outline_markdown_stream

        return outline_markdown_stream(stream())
    return outline_text_stream(stream())
