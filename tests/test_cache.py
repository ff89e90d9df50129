"""The in-process LRU: bounded by count and, when asked, by the bytes it holds."""

from nasfs.cache import LRU


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
