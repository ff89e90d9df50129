"""Source-code outlines from tree-sitter: classes, functions, methods, types.

:mod:`.languages` says per grammar what a definition is, :mod:`.fixups`
rewrites what a grammar cannot read (macros, C# ``#if``) before parsing,
:mod:`.walk` finds the definitions, :mod:`.regions` re-parses what a parse
error swallowed, and :mod:`.signature` renders each one's line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from nasfs.lines import LineIndex
from nasfs.outline.model import Outline

from .fixups import FIXUPS
from .languages import SPECS
from .regions import Regions
from .walk import Walker

if TYPE_CHECKING:
    from tree_sitter import Parser

__all__ = ["SPECS", "language_for", "outline_code"]

# File extension (lower case, no dot) or whole file name -> language.
_EXTENSIONS = {
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "cpp",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "inl": "cpp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "cs": "csharp",
    "php": "php",
    "scala": "scala",
    "sc": "scala",
    "lua": "lua",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "ksh": "bash",
}
_FILENAMES = {
    "rakefile": "ruby",
    "gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".profile": "bash",
    ".zshrc": "bash",
}


def language_for(path: str) -> str | None:
    """tree-sitter-language-pack name for a file, from its name alone."""
    base = os.path.basename(path).lower()
    if base in _FILENAMES:
        return _FILENAMES[base]
    _, dot, ext = base.rpartition(".")
    return _EXTENSIONS.get(ext) if dot else None


_PARSERS: dict[str, Parser | None] = {}


def _parser(language: str) -> Parser | None:
    """One cached parser per language; None when the pack cannot provide it."""
    if language not in _PARSERS:
        try:
            from tree_sitter_language_pack import get_parser

            _PARSERS[language] = get_parser(language)  # type: ignore[arg-type]
        except Exception:  # unknown name, missing binary, ABI mismatch
            _PARSERS[language] = None
    return _PARSERS[language]


def outline_code(data: bytes, language: str, lines: LineIndex | None = None) -> Outline | None:
    """Outline ``data`` as ``language``; None if that language is not supported.
    ``lines`` is the line index of ``data`` when the caller has built it already."""
    spec = SPECS.get(language)
    parser = _parser(language) if spec is not None else None
    if spec is None or parser is None:
        return None
    kind = f"code:{language}"
    if b"\0" in data:
        # Source text never holds NUL; tree-sitter's error recovery on binary
        # data costs seconds per megabyte and finds nothing.
        return Outline(kind=kind, notes=("binary data (NUL bytes), not parsed",), indent=True)
    fixup = FIXUPS.get(language)
    source = fixup(data) if fixup is not None else data
    lines = lines or LineIndex(data)
    tree = parser.parse(source)
    root = tree.root_node
    walker = Walker(spec, lines, source, Regions(parser, source, lines))
    walker.walk([root] if root.type == "ERROR" else root.named_children, (), 0, None, False, 0)
    return Outline(kind=kind, entries=tuple(walker.entries), indent=True, partial=root.has_error)

