"""Outlines of plain text (paragraphs) and of binary files (a guessed kind).

The text outline is computed over a stream of chunks so that a 200 MB log can
be outlined without holding it: only the current chunk, a bounded head of the
line being assembled across chunks, and at most ``MAX_PARAGRAPHS`` entries are
kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nasfs.outline.model import Entry, Outline

MAX_PARAGRAPHS = 200
LABEL_CHARS = 100
# Bytes of a paragraph's first line kept for its label, from its first non-blank
# byte: 100 characters are at most 400 UTF-8 bytes.
_HEAD_BYTES = 1024

# A run of non-blank lines, each ending with "\n". Blank means ASCII whitespace
# only, the same set ``bytes.strip`` removes.
_PARAGRAPH = re.compile(
    rb"(?m)^[ \t\r\f\v]*+([^ \t\r\f\v\n])[^\n]*+\n(?:[ \t\r\f\v]*+[^ \t\r\f\v\n][^\n]*+\n)*+"
)
_NON_BLANK = re.compile(rb"[^ \t\r\f\v\n]")


def cut_label(text: str) -> str:
    """``text`` stripped and cut at ``LABEL_CHARS`` characters with an ellipsis."""
    text = text.strip()
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS] + "…"


def display(name: str) -> str:
    """A key as its label shows it: one line of bounded length (the path keeps the exact name)."""
    return cut_label(name if name.isprintable() else name.encode("unicode_escape").decode("ascii"))


class _Paragraphs:
    """Accumulates paragraph runs in line order, merging runs that touch."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.dropped = 0
        self._open: tuple[int, int, bytes, bool] | None = None  # start, end, head, head cut

    def add(self, start: int, end: int, head: bytes, cut: bool) -> None:
        """A run of non-blank lines ``start..end`` whose first line begins with ``head``."""
        if self._open is not None and self._open[1] + 1 == start:
            self._open = (self._open[0], end, self._open[2], self._open[3])
            return
        self.flush()
        self._open = (start, end, head, cut)

    def flush(self) -> None:
        if self._open is None:
            return
        start, end, head, cut = self._open
        self._open = None
        if len(self.entries) >= MAX_PARAGRAPHS:
            self.dropped += 1
            return
        label = cut_label(head.decode("utf-8", "replace"))
        if cut and not label.endswith("…"):
            label += "…"
        self.entries.append(Entry(label, start, end))


def outline_text_stream(chunks: Iterable[bytes]) -> Outline:
    """Paragraph outline of a byte stream in memory bounded by the chunk size."""
    paragraphs = _Paragraphs()
    lines = 0  # complete lines seen
    tail = b""  # head of the unfinished line the next chunk continues, from its first non-blank byte
    tail_open = False  # whether an unfinished line exists (it may be empty so far)
    tail_cut = False  # non-blank bytes of the unfinished line beyond ``tail``
    for chunk in chunks:
        if not chunk:
            continue
        first_nl = chunk.find(b"\n")
        if first_nl == -1:
            tail, tail_cut = _extend(tail, tail_cut, chunk, 0, len(chunk))
            tail_open = True
            continue
        tail, tail_cut = _extend(tail, tail_cut, chunk, 0, first_nl)
        lines += 1
        if tail:
            paragraphs.add(lines, lines, tail, tail_cut)
        last_nl = chunk.rfind(b"\n")
        lines = _scan(chunk, first_nl + 1, last_nl + 1, lines, paragraphs)
        tail, tail_cut = _extend(b"", False, chunk, last_nl + 1, len(chunk))
        tail_open = last_nl + 1 < len(chunk)
    if tail_open:
        lines += 1
        if tail:
            paragraphs.add(lines, lines, tail, tail_cut)
    paragraphs.flush()
    notes = [f"text: {lines} lines"]
    if paragraphs.dropped:
        notes.append(f"(+{paragraphs.dropped} more paragraphs)")
    return Outline("text", tuple(paragraphs.entries), tuple(notes))


def outline_text(data: bytes) -> Outline:
    """Paragraph outline of an in-memory buffer (the stream outline over one chunk)."""
    return outline_text_stream([data])


def _extend(tail: bytes, cut: bool, chunk: bytes, a: int, b: int) -> tuple[bytes, bool]:
    """Append ``chunk[a:b]`` to the unfinished line's head: leading blanks skipped, at most ``_HEAD_BYTES`` kept."""
    if not tail:
        first = _NON_BLANK.search(chunk, a, b)
        if first is None:
            return tail, cut
        a = first.start()
    room = _HEAD_BYTES - len(tail)
    if room > 0:
        tail += chunk[a : min(b, a + room)]
    if b - a > room and _NON_BLANK.search(chunk, a + max(room, 0), b):
        cut = True
    return tail, cut


def _scan(chunk: bytes, a: int, b: int, lines: int, paragraphs: _Paragraphs) -> int:
    """Report the paragraph runs among the complete lines ``chunk[a:b]``; return the new line count."""
    pos = a
    for m in _PARAGRAPH.finditer(chunk, a, b):
        lines += chunk.count(b"\n", pos, m.start())
        first_end = chunk.find(b"\n", m.start(), m.end())
        head_end = min(first_end, m.start(1) + _HEAD_BYTES)
        cut = head_end < first_end and _NON_BLANK.search(chunk, head_end, first_end) is not None
        count = chunk.count(b"\n", m.start(), m.end())
        paragraphs.add(lines + 1, lines + count, chunk[m.start(1) : head_end], cut)
        lines += count
        pos = m.end()
    return lines + chunk.count(b"\n", pos, b)


_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive"),
    (0, b"PK\x05\x06", "ZIP archive"),
    (0, b"\x1f\x8b", "gzip"),
    (0, b"BZh", "bzip2"),
    (0, b"\xfd7zXZ\x00", "xz"),
    (0, b"\x28\xb5\x2f\xfd", "zstd"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (0, b"\x7fELF", "ELF executable"),
    (0, b"MZ", "PE executable"),
    (0, b"\xca\xfe\xba\xbe", "Mach-O or Java class"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (0, b"\x00asm", "WebAssembly"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (257, b"ustar", "tar archive"),
    (0, b"OggS", "Ogg media"),
    (0, b"fLaC", "FLAC audio"),
    (0, b"ID3", "MP3 audio"),
    (4, b"ftyp", "MP4/QuickTime media"),
    (0, b"\x1aE\xdf\xa3", "Matroska/WebM media"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (0, b"PAR1", "Parquet"),
)
_RIFF = {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}


def binary_kind(head: bytes) -> str:
    """The file kind named by the magic bytes at the start of ``head``, else "data"."""
    for offset, magic, kind in _MAGIC:
        if head.startswith(magic, offset):
            return kind
    if head.startswith(b"RIFF"):
        return _RIFF.get(head[8:12], "RIFF data")
    return "data"


def outline_binary(size: int, head: bytes) -> Outline:
    """A binary file's outline: only its guessed kind and size."""
    return Outline("binary", notes=(f"binary: {binary_kind(head)}, {size} bytes",))
