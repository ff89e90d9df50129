"""Line arithmetic: the in-memory index and the streaming reader agree."""

from __future__ import annotations

import random

from nasfs.lines import LineIndex, count_lines, count_lines_stream, stream_lines


def test_streamed_ranges_equal_indexed_ranges_for_any_chunking() -> None:
    rng = random.Random(7)
    pieces = [b"a\n", b"bb", b"\n", b"c\r\n", b"dd\n", b"\xff\xfe"]
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        index = LineIndex(data)
        assert index.count == count_lines(data)
        size = rng.randint(1, 7)
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert count_lines_stream(chunks) == index.count
        first = rng.randint(1, index.count)
        last = rng.randint(first, index.count)
        assert b"".join(stream_lines(chunks, first, last)) == index.slice(first, last)


def test_line_rules() -> None:
    assert LineIndex(b"").count == 0
    assert LineIndex(b"x").count == 1 and LineIndex(b"x\n").count == 1 and LineIndex(b"x\n\n").count == 2
    idx = LineIndex(b"one\r\ntwo\r\nthree")
    assert idx.line(1) == b"one\r" and idx.slice(3, 3) == b"three" and idx.line_of(5) == 2
