"""Outline of CSV/TSV: dialect, header and record count, streamed in bounded memory.

Records are counted with the csv module (so a quoted field holding newlines is
one record) while lines are counted on the raw bytes with the same rule as
``nasfs.lines``; the two differ exactly when quoted newlines exist.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nasfs.outline.model import Entry, Outline

SNIFF_BYTES = 64 * 1024
MAX_HEADER_COLUMNS = 40
MAX_LINE_CHARS = 1 << 20
_DELIMITERS = ",\t;|"


class _ChunkReader(io.RawIOBase):
    """A readable raw stream over byte chunks that counts lines as bytes pass through."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._chunk = memoryview(b"")
        self.newlines = 0
        self.size = 0
        self.last = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._chunk:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._take(chunk)
        n = min(len(buffer), len(self._chunk))
        buffer[:n] = self._chunk[:n]
        self._chunk = self._chunk[n:]
        return n

    def _take(self, chunk: bytes) -> None:
        self._chunk = memoryview(chunk)
        if chunk:
            self.newlines += chunk.count(b"\n")
            self.size += len(chunk)
            self.last = chunk[-1:]

    @property
    def lines(self) -> int:
        """Line count by the ``nasfs.lines`` rule: a final line without newline still counts."""
        return self.newlines + (1 if self.size and self.last != b"\n" else 0)


def outline_table(chunks: Iterable[bytes], delimiter_hint: str | None) -> Outline:
    """Header, record count, dialect and line count of a delimited file streamed as chunks."""
    stream = iter(chunks)
    head: list[bytes] = []
    size = 0
    for chunk in stream:
        head.append(chunk)
        size += len(chunk)
        if size >= SNIFF_BYTES:
            break
    first = b"".join(head)
    sample = _sample(first[:SNIFF_BYTES], complete=size < SNIFF_BYTES)
    params, sniffed = _dialect(sample, delimiter_hint)
    header = _has_header(sample, params)

    raw = _ChunkReader(_chain(first, stream))
    text = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8-sig", errors="replace", newline="")
    # Bounded pieces instead of whole lines: a file without newlines must not be held at once.
    pieces = iter(lambda: text.readline(MAX_LINE_CHARS), "")
    found = _scan(csv.reader(pieces, **params))
    lines = raw.lines  # the scan read to the end

    names = found.first if header else None
    records = found.records - (1 if names is not None else 0)
    dialect = (
        f"dialect: delimiter={params['delimiter']!r} quotechar={params['quotechar']!r}"
        f" lineterminator={_line_terminator(sample)!r} header={'yes' if names is not None else 'no'}"
    )
    if not sniffed:
        dialect += " (not sniffed; delimiter assumed)"
    notes = [_header_note(names, found.width), f"records: {records}", dialect, f"lines: {lines}"]
    notes += found.problems
    entries: list[Entry] = []
    body_start = 1
    if names is not None:
        header_end = min(found.first_end, lines)
        entries.append(Entry("header", 1, header_end, 0, ("header",)))
        body_start = header_end + 1
    if records:
        body_end = max(body_start, min(found.last_end, lines))
        entries.append(Entry(f"records 1-{records}", body_start, body_end, 0, ("records",)))
    kind = "tsv" if params["delimiter"] == "\t" else "csv"
    return Outline(kind, tuple(entries), tuple(notes))


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


@dataclass(slots=True)
class _Records:
    """What one pass over the records found (line numbers as the csv module counts them)."""

    records: int = 0
    first: list[str] | None = None
    first_end: int = 0
    last_end: int = 0
    width: int = 0
    problems: list[str] = field(default_factory=list)


def _scan(reader: Any) -> _Records:
    """Count records, spotting ragged and malformed ones.

    The reader is strict so that broken quoting is reported rather than
    silently absorbed; after an error the csv module resumes at the next line,
    and the broken record still counts as one record.
    """
    found = _Records()
    ragged = errors = 0
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            found.records += 1
            found.last_end = reader.line_num
            errors += 1
            if str(err) == "unexpected end of data":
                found.problems.append(f"unterminated quote: the record at line {start} runs to the end of the file")
            elif errors == 1:
                found.problems.append(f"malformed record at line {start}: {err}")
            continue
        if not row:  # the csv module yields [] for a blank line; it is no record
            continue
        found.records += 1
        found.last_end = reader.line_num
        if found.first is None:
            found.first, found.first_end, found.width = row, reader.line_num, len(row)
        elif len(row) != found.width:
            ragged += 1
    if errors > 1:
        found.problems.append(f"malformed records: {errors}")
    if ragged:
        found.problems.append(f"ragged: {ragged} records do not have {found.width} fields")
    return found


def _sample(data: bytes, complete: bool) -> str:
    """The sniffing sample as text, cut at the last newline so no record or character is split."""
    if not complete:
        cut = data.rfind(b"\n")
        if cut > 0:
            data = data[: cut + 1]
    return data.removeprefix(codecs.BOM_UTF8).decode("utf-8", "replace")


def _dialect(sample: str, hint: str | None) -> tuple[dict[str, Any], bool]:
    """csv.reader parameters sniffed from the sample (or its first line), else the hint's; and whether
    sniffing worked.

    Quotes are always taken as doubled (RFC 4180): the sniffer only notices
    doubling if the sample happens to contain it.
    """
    params: dict[str, Any] = {"delimiter": hint or ",", "quotechar": '"', "doublequote": True, "strict": True}
    # Quoted newlines often defeat the sniffer; the first line rarely holds one.
    for text in (sample, sample.partition("\n")[0]):
        try:
            sniffed = csv.Sniffer().sniff(text, delimiters=_DELIMITERS)
        except csv.Error:
            continue
        params.update(
            delimiter=sniffed.delimiter, quotechar=sniffed.quotechar, skipinitialspace=sniffed.skipinitialspace
        )
        return params, True
    return params, False


def _has_header(sample: str, params: dict[str, Any]) -> bool:
    """Whether the first row names the columns.

    ``csv.Sniffer.has_header`` only says yes when a column's type or length
    betrays it, so all-text tables would come out headerless; a first row of
    distinct, non-empty, non-numeric fields is taken as a header too.
    """
    try:
        if csv.Sniffer().has_header(sample):
            return True
    except csv.Error:
        pass
    try:
        first = next(csv.reader(io.StringIO(sample, newline=""), **params), [])
    except csv.Error:
        return False
    names = [f.strip() for f in first]
    return bool(names) and all(names) and len(set(names)) == len(names) and not any(map(_is_number, names))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _header_note(names: list[str] | None, width: int) -> str:
    if names is None:
        return f"header: none ({width} columns)"
    shown = ", ".join(names[:MAX_HEADER_COLUMNS])
    if len(names) > MAX_HEADER_COLUMNS:
        shown += f", … (+{len(names) - MAX_HEADER_COLUMNS} more, {len(names)} columns)"
    return f"header: {shown}"


def _line_terminator(sample: str) -> str:
    """The sample's line ending; the sniffer does not detect it."""
    if "\r\n" in sample:
        return "\r\n"
    if "\n" not in sample and "\r" in sample:
        return "\r"
    return "\n"
