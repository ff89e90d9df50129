"""A file pointer as a SoftWare Hash IDentifier (ISO/IEC 18670):
``swh:1:cnt:<blob>;anchor=swh:1:rev:<commit>;path=/<path>;lines=<a>-<b>``.

The content id is git's blob id, so any clone checks it; the node and tree
names of the pointer have no place in a SWHID and are lost (docs/pointers.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from ..errors import BadPointer
from ..pointers import Pointer

FORM = "swh:1:cnt:<40 hex>;anchor=swh:1:rev:<40 hex>;path=/<path>[;lines=<a>[-<b>]]"
_CORE = re.compile(r"swh:1:cnt:([0-9a-f]{40})")
_SAFE = "/:@!$&'()*+,=-._~"  # ';' and '%' are escaped: they delimit qualifiers and escapes


@dataclass(frozen=True, slots=True)
class Swhid:
    blob: str
    commit: str
    path: str
    start: int = 0  # 0: the whole blob
    end: int = 0

    def pointer(self, node: str, tree: str) -> Pointer:
        """The pointer this SWHID names, given the node and tree it lacks."""
        return Pointer(node, tree, self.path, self.commit, self.start, self.end)

    def __str__(self) -> str:
        lines = f";lines={self.start}-{self.end}" if self.start else ""
        return f"swh:1:cnt:{self.blob};anchor=swh:1:rev:{self.commit};path=/{quote(self.path, safe=_SAFE)}{lines}"


def is_swhid(text: str) -> bool:
    return text.strip().startswith("swh:")


def swhid_of(pointer: Pointer, blob: str, commit: str | None = None) -> str | None:
    """The SWHID of a file pointer whose blob is ``blob``; None for a folder
    pointer or an abbreviated commit (a SWHID needs the full id)."""
    full = commit or pointer.commit
    if pointer.folder is not None or len(full) != 40 or len(blob) != 40:
        return None
    return str(Swhid(blob, full, pointer.path, pointer.start, pointer.end))


def parse_swhid(text: str) -> Swhid:
    """A SWHID naming lines of a blob in a commit; anything else is refused
    saying what is needed (nasfs resolves a blob through its anchor and path)."""
    core, *qualifiers = text.strip().split(";")
    m = _CORE.fullmatch(core)
    if not m:
        kind = core.split(":")[2] if core.count(":") >= 3 else core
        raise BadPointer(f"{core!r} is not a content SWHID (swh:1:cnt: and 40 lowercase hex digits; got {kind!r})", FORM)
    named: dict[str, str] = {}
    for q in qualifiers:
        key, sep, value = q.partition("=")
        if not sep or key in named:
            raise BadPointer(f"malformed SWHID qualifier {q!r}", FORM)
        named[key] = value
    anchor, path = named.get("anchor", ""), named.get("path", "")
    if not re.fullmatch(r"swh:1:rev:[0-9a-f]{40}", anchor) or not path.startswith("/") or len(path) < 2:
        raise BadPointer(f"SWHID {text.strip()!r} needs anchor=swh:1:rev:<commit> and path=/<path> "
                         "(nasfs finds the blob at a path of a commit)", FORM)
    start = end = 0
    if "lines" in named:
        lm = re.fullmatch(r"(\d+)(?:-(\d+))?", named["lines"])
        if not lm:
            raise BadPointer(f"malformed SWHID lines {named['lines']!r}", "lines=<a> or lines=<a>-<b>, 1-based")
        start, end = int(lm.group(1)), int(lm.group(2) or lm.group(1))
        if start < 1 or end < start:
            raise BadPointer(f"SWHID lines {start}-{end} are empty or start before line 1", "lines=<a>-<b> with 1 <= a <= b")
    return Swhid(m.group(1), anchor[len("swh:1:rev:"):], unquote(path[1:]), start, end)
