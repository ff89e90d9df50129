"""The in-process LRU: bounded by count and, when asked, by the bytes it holds;
and the disk cache's batches of writes."""

import sqlite3
from pathlib import Path

from nasfs.cache import LRU, DiskCache


def test_lru_drops_the_oldest_past_its_weight() -> None:
    cache: LRU[int, bytes] = LRU(10, len, 10)
    cache.put(1, b"abcd")
    cache.put(2, b"efgh")
    cache.put(3, b"ij")
    cache.put(4, b"klmn")  # 14 bytes: the oldest goes
    assert cache.get(1) is None and cache.get(2) == b"efgh"
    cache.put(2, b"e")  # replacing counts the new size only
    cache.put(5, b"opq")
    assert [cache.get(k) for k in (2, 3, 4, 5)] == [b"e", b"ij", b"klmn", b"opq"]


def test_lru_keeps_one_item_larger_than_its_weight() -> None:
    cache: LRU[int, bytes] = LRU(10, len, 4)
    cache.put(1, b"x" * 100)
    assert cache.get(1) == b"x" * 100


def stored(folder: Path) -> dict[str, bytes]:
    """What another process reading the cache file sees."""
    with sqlite3.connect(folder / "cache.sqlite3") as db:
        return dict(db.execute("SELECT k, v FROM kv").fetchall())


def test_a_batch_holds_its_writes_until_it_ends(tmp_path: Path) -> None:
    disk = DiskCache(tmp_path)
    disk.put("before", b"0")
    with disk.batch():
        disk.put("a", b"1")
        with disk.batch():  # nested: the outer batch writes
            disk.put("b", b"2")
        assert disk.get("a") == b"1" and disk.get("b") == b"2"  # this process sees what it holds
        assert stored(tmp_path) == {"before": b"0"}
    assert stored(tmp_path) == {"before": b"0", "a": b"1", "b": b"2"}
    assert DiskCache(tmp_path).get("b") == b"2"


def test_a_long_batch_writes_every_batch_size_writes(tmp_path: Path) -> None:
    disk = DiskCache(tmp_path)
    with disk.batch():
        for i in range(DiskCache.BATCH + 1):
            disk.put(f"k{i}", b"v")
        assert len(stored(tmp_path)) == DiskCache.BATCH  # the last one is still held
        assert disk.get(f"k{DiskCache.BATCH}") == b"v"
    assert len(stored(tmp_path)) == DiskCache.BATCH + 1


def test_a_batch_that_cannot_be_written_is_dropped_not_raised(tmp_path: Path) -> None:
    disk = DiskCache(tmp_path)
    other = sqlite3.connect(tmp_path / "cache.sqlite3", timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock past the 2 s timeout
    try:
        with disk.batch():
            disk.put("lost", b"1")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert "lost" not in stored(tmp_path)
    disk.put("later", b"2")  # the connection is usable after the failure
    assert stored(tmp_path) == {"later": b"2"}
