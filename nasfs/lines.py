"""Line arithmetic shared by every view: a line ends at ``\\n`` and keeps any ``\\r``.

Lines are numbered from 1; an empty file has no lines. A final line without a
newline is still a line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

_NEWLINE = re.compile(b"\n")


class LineIndex:
    """Byte offsets of line starts in one buffer, for O(log n) offset->line."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes) -> None:
        self.data = data
        starts = [0]
        starts += [m.end() for m in _NEWLINE.finditer(data)]  # half the time of a find() loop
        if starts[-1] == len(data):
            starts.pop()  # a trailing newline does not open another line
        self.starts = starts

    @property
    def count(self) -> int:
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """1-based line holding byte ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Byte span [a, b) of lines first..last (1-based, inclusive)."""
        a = self.starts[first - 1]
        b = self.starts[last] if last < len(self.starts) else len(self.data)
        return a, b

    def slice(self, first: int, last: int) -> bytes:
        a, b = self.span(first, last)
        return self.data[a:b]

    def line(self, n: int) -> bytes:
        """Line ``n`` without its ``\\n`` (a ``\\r`` stays)."""
        return self.slice(n, n).removesuffix(b"\n")


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def stream_lines(chunks: Iterable[bytes], first: int, last: int) -> Iterator[bytes]:
    """Pieces of lines first..last of a stream, in bounded memory; stops
    reading once ``last`` is complete. Whole chunks inside or before the
    range are passed or skipped by counting newlines, not line by line."""
    line = 1  # the line the next byte belongs to
    for chunk in chunks:
        newlines = chunk.count(b"\n")
        if line + newlines < first:  # the range starts after this chunk
            line += newlines
            continue
        pos = 0
        while line < first:
            pos = chunk.index(b"\n", pos) + 1
            line += 1
        if line + chunk.count(b"\n", pos) <= last:  # the range goes on past this chunk
            yield chunk[pos:]
            line += chunk.count(b"\n", pos)
            continue
        end = pos
        while line <= last:
            end = chunk.index(b"\n", end) + 1
            line += 1
        yield chunk[pos:end]
        return


def count_lines_stream(chunks: Iterable[bytes]) -> int:
    """Lines in a stream, by the same rule as :func:`count_lines`."""
    total = 0
    last = b""
    for chunk in chunks:
        if chunk:
            total += chunk.count(b"\n")
            last = chunk
    return total + (1 if last and not last.endswith(b"\n") else 0)
