"""Evidence pointers: ``nas://<node>/<tree>/<path>@<commit>#L<a>-L<b>``.

Node, tree and path are percent-encoded (UTF-8) where they hold characters
that would break a header line or the pointer's own syntax (space, ``%``,
``#``, non-ASCII; ``/`` too in node and tree names), so the spelling
``str(pointer)`` gives is the one every door prints, unchanged, and parsing
it gives the names back. The fragment is optional (no fragment: the whole
blob, as for binary files). Commits are emitted with 12 hex digits; any
unique prefix of 7+ is accepted on input. A path ending in ``/`` names a
folder, an empty one the tree's top (``nas://node/tree/@COMMIT``): its listing
at the commit, as ``git ls-tree`` prints it (docs/pointers.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from .errors import BadPointer, check_text

EMIT_HEX = 12
_SAFE = "/@+~!$&'()*,;=:-._"
_NAME_SAFE = _SAFE.replace("/", "")
_FULL = re.compile(r"nas://([^/\s]+)/([^/\s]+)/(\S+)")
_REST = re.compile(r"(.*)@([0-9a-fA-F]{7,40})(?:#L(\d+)(?:-L(\d+))?)?")
FORM = ("nas://NODE/TREE/PATH@COMMIT#La-Lb (or PATH@COMMIT#La-Lb), commit of 7 to 40 hex digits; "
        "a folder: nas://NODE/TREE/DIR/@COMMIT, the top: nas://NODE/TREE/@COMMIT")


@dataclass(frozen=True, slots=True)
class Pointer:
    node: str
    tree: str
    path: str
    commit: str
    start: int = 0  # 0: the whole blob, no line fragment
    end: int = 0

    @property
    def folder(self) -> str | None:
        """The folder a folder pointer names ('' for the tree's top), else None."""
        if self.path and not self.path.endswith("/"):
            return None
        return self.path[:-1]

    def short(self) -> str:
        """The form without ``nas://node/tree/`` (what ``.nas/deref/`` takes)."""
        frag = f"#L{self.start}-L{self.end}" if self.start else ""
        return f"{quote(self.path, safe=_SAFE)}@{self.commit[:EMIT_HEX]}{frag}"

    def __str__(self) -> str:
        return f"nas://{_name(self.node)}/{_name(self.tree)}/{self.short()}"


def _name(text: str) -> str:
    """A node or tree name as a pointer spells it."""
    return quote(text, safe=_NAME_SAFE)


def parse_pointer(text: str, node: str, tree: str) -> Pointer:
    """Parse a full or short pointer; a full one must name this node and tree."""
    text = check_text("the pointer", text, BadPointer).strip()
    m = _FULL.fullmatch(text)
    if m:
        named = unquote(m.group(1)), unquote(m.group(2))
        if named != (node, tree):
            raise BadPointer(
                f"pointer is for node {named[0]!r} tree {named[1]!r}; this is node {node!r} tree {tree!r}",
                f"nas://{_name(node)}/{_name(tree)}/PATH@COMMIT#La-Lb",
            )
        rest = m.group(3)
    elif text.startswith("nas://"):
        raise BadPointer(f"malformed pointer {text!r}", FORM)
    else:
        rest = text
    r = _REST.fullmatch(rest)
    if not r:
        raise BadPointer(f"malformed pointer {text!r}", FORM)
    start = int(r.group(3) or 0)
    end = int(r.group(4) or r.group(3) or 0)
    if r.group(3) and (start < 1 or end < start):
        raise BadPointer(f"pointer line range L{start}-L{end} is empty or starts before L1", FORM)
    path = unquote(r.group(1))
    if not path or path.endswith("/"):
        _check_folder(path, text, bool(r.group(3)))
    return Pointer(node, tree, path, r.group(2).lower(), start, end)


def named(text: str) -> tuple[str, str] | None:
    """The node and tree a full pointer names; None for a short one."""
    m = _FULL.fullmatch(text.strip())
    return (unquote(m.group(1)), unquote(m.group(2))) if m else None


def folder_pointer(node: str, tree: str, folder: str, commit: str) -> Pointer:
    """The pointer naming ``folder`` ('' for the top) at ``commit``."""
    return Pointer(node, tree, f"{folder}/" if folder else "", commit)


def _check_folder(path: str, text: str, has_lines: bool) -> None:
    if has_lines:
        raise BadPointer(f"{text!r} names a folder, which has no lines", "DIR/@COMMIT without #La-Lb, or a file's PATH@COMMIT#La-Lb")
    if path and (path.startswith("/") or any(p in ("", ".", "..") for p in path[:-1].split("/"))):
        raise BadPointer(f"malformed folder in pointer {text!r}", "DIR/@COMMIT with DIR relative to the tree's top, or @COMMIT for the top")
