"""Outlines that cost less than what they replace: the compact form, the file
when it is cheaper, and declared pages when not even the top level fits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nasfs import tokens
from nasfs.errors import BadView, NotFound
from nasfs.service import Nas

from .conftest import header

ENTRY = re.compile(r"(\d+)(?:-(\d+))? (.*)")


def entries(text: bytes) -> list[tuple[int, int, str]]:
    """(first, last, label) of each outline line of an answer: lines first."""
    found = []
    for line in text.decode().split("\n")[1:]:
        m = ENTRY.fullmatch(line)
        if m:
            found.append((int(m.group(1)), int(m.group(2) or m.group(1)), m.group(3)))
    return found


def test_outline_of_a_small_file_is_the_file_declared(nas: Nas, home: Path) -> None:
    (home / "five.txt").write_text("one line\ntwo lines\n\nthree\nfour\n")
    (home / "two.csv").write_text("a,b\n1,2\n")
    for path in ("two.csv", "five.txt"):
        r = nas.read(f"{path}@outline")
        keys = header(r.text)
        assert (keys["view"], keys["asked"]) == ("full", "outline"), r.text[:200]
        assert r.served.body == (home / path).read_bytes()
        assert int(keys["tokens"]) == tokens.count(r.text)
    big = nas.read("notes/customer-acme.md@outline")  # an outline cheaper than its file stays the outline
    assert header(big.text)["view"] == "outline" and big.tokens < big.full_tokens


def test_every_outline_costs_less_than_its_file_or_is_the_file(nas: Nas) -> None:
    for path in ("notes/customer-acme.md", "notes/meeting-2026-11-12.md", "code/billing.py", "code/client.ts",
                 "config/agent.json", "config/deploy.yaml", "README.txt"):
        r = nas.read(f"{path}@outline")
        assert r.view == "full" or r.tokens < r.full_tokens, (path, r.tokens, r.full_tokens)


def test_a_small_tables_outline_keeps_its_header_and_record_count(nas: Nas, home: Path) -> None:
    """A table's outline says what its file does not (how many records): it is
    served while it costs less than the file's whole answer, header included,
    even where ``@N`` serves the file (the richest view that fits)."""
    r = nas.read("data/shipments.csv@outline")
    assert r.view == "outline", r.text[:200]
    assert b"\nheader: id, customer, weight_kg, destination, note\nrecords: 4\n" in r.text
    whole = nas.read("data/shipments.csv@1000")
    assert whole.view == "full" and r.tokens < whole.tokens


def test_entry_ranges_are_pointers_relative_to_the_header(nas: Nas, home: Path) -> None:
    r = nas.read("code/billing.py@outline")
    pointer = header(r.text)["pointer"]
    base = pointer.split("#", 1)[0]
    lines = (home / "code/billing.py").read_bytes().splitlines(keepends=True)
    found = entries(r.text)
    assert [label.strip().split("(")[0] for _, _, label in found] == [
        "class Rate", "class Invoice", "def __init__", "def add", "def total", "def monthly_invoice"]
    for first, last, label in found:
        assert nas.verify(f"{base}#L{first}-L{last}").startswith("verified")
        name = label.strip().split("(")[0].split()[-1]
        assert any(name in line.decode() for line in lines[first - 1 : last]), (first, last, label)


@pytest.fixture
def releases(home: Path) -> Path:
    """A changelog with 300 top-level headings, each with a subsection."""
    text = "".join(f"# Version 1.{i}.0\n\nReleased on day {i}.\n\n## Changes\n\n- fixed thing {i}\n\n" for i in range(300))
    (home / "RELEASES.md").write_text(text)
    return home / "RELEASES.md"


def test_pages_of_entries_when_the_top_level_does_not_fit(nas: Nas, releases: Path) -> None:
    budget = 400
    spec, seen, pages = f"RELEASES.md@outline@{budget}", [], 0
    while spec:
        r = nas.read(spec)
        keys = header(r.text)
        assert r.tokens <= budget and keys["view"] == "outline", r.text[:300]
        first, last, total = map(int, re.fullmatch(r"(\d+)-(\d+)/(\d+)", keys["entries"]).groups())
        assert total == 300 and first == len(seen) + 1
        shown = [e for e in entries(r.text) if e[2].startswith("# ")]  # the last page may fit its '##' too
        assert len(shown) == last - first + 1
        seen += shown
        pages += 1
        nxt = keys.get("next")
        assert (nxt is None) == (last == total)
        spec = f"RELEASES.md{nxt}" if nxt else ""
    assert [label for _, _, label in seen] == [f"# Version 1.{i}.0" for i in range(300)]
    assert pages > 3
    base = header(nas.read("RELEASES.md@outline@400").text)["pointer"].split("#", 1)[0]
    first, last, _ = seen[123]
    assert nas.deref(f"{base}#L{first}-L{last}")[1].startswith(b"# Version 1.123.0\n")


def test_best_view_pages_too(nas: Nas, releases: Path) -> None:
    keys = header(nas.read("RELEASES.md@2000").text)
    assert keys["entries"].startswith("1-") and keys["next"].startswith("@outline=") and keys["next"].endswith("@2000")


def test_outline_from_an_entry_without_a_budget(nas: Nas, releases: Path) -> None:
    r = nas.read("RELEASES.md@outline=299")
    assert header(r.text)["entries"] == "299-300/300"
    assert [label for _, _, label in entries(r.text)] == ["# Version 1.298.0", "## Changes", "# Version 1.299.0", "## Changes"]
    with pytest.raises(NotFound, match="past the 300 top-level entries") as err:
        nas.read("RELEASES.md@outline=301")
    assert "outline=1 to outline=300" in str(err.value)
    with pytest.raises(BadView, match="count from 1"):
        nas.read("RELEASES.md@outline=0")


def test_pages_count_the_first_level_with_several_entries(nas: Nas, home: Path) -> None:
    # one '#' title over 200 '##' headings: a page lists the '##' headings under the title
    (home / "guide.md").write_text("# Guide\n\n" + "".join(f"## Topic {i}\n\ntext {i}\n\n### Detail\n\nmore\n\n" for i in range(200)))
    r = nas.read("guide.md@outline@300")
    keys = header(r.text)
    assert keys["entries"].startswith("1-") and keys["entries"].endswith("/200") and keys["depth"] == "2/3"
    labels = [label for _, _, label in entries(r.text)]
    assert labels[0] == "# Guide" and labels[1:4] == ["## Topic 0", "## Topic 1", "## Topic 2"]
    later = nas.read(f"guide.md{keys['next']}")
    assert [label for _, _, label in entries(later.text)][0] == "# Guide"  # the title above each page
