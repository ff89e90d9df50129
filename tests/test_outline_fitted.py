"""Outlines fitted to their file: ``@outline`` shows the levels that stay a
small share of the file, and the levels below are read as sections within a
budget (``P@section=NAME@N`` gives the section's own outline)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from nasfs.outline.data import outline_data
from nasfs.outline.markdown import outline_markdown
from nasfs.service import Nas

from .conftest import header
from .mounts import Mount

ENTRY = re.compile(r"(\d+)(?:-(\d+))? ( *)(.*)")


def entries(text: bytes) -> list[tuple[int, int, int, str]]:
    """(first, last, depth, label) of each outline line of an answer."""
    found = []
    for line in text.decode().split("\n")[1:]:
        m = ENTRY.fullmatch(line)
        if m:
            found.append((int(m.group(1)), int(m.group(2) or m.group(1)), len(m.group(3)) // 2, m.group(4)))
    return found


def schema() -> dict[str, object]:
    """A JSON Schema with a key a line, as SchemaStore's are: 120 definitions,
    each with 10 properties, one of them an array whose items nest three levels
    more (keys at depth 7, past the old depth limit of 4)."""
    def prop(j: int) -> dict[str, object]:
        if j == 3:
            return {"type": "array", "items": {"type": "object", "properties": {"leaf": {"type": "string"}}}}
        return {"type": "string", "description": f"field {j}"}
    return {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {
        f"Def{i}": {"type": "object", "properties": {f"p{j}": prop(j) for j in range(10)}} for i in range(120)}}


@pytest.fixture
def big(home: Path) -> Path:
    path = home / "schema.json"
    path.write_text(json.dumps(schema(), indent=2) + "\n")
    return path


def test_outline_of_a_large_schema_is_a_small_share_and_declares_its_cut(nas: Nas, big: Path) -> None:
    r = nas.read("schema.json@outline")
    keys = header(r.text)
    shown, levels = map(int, keys["depth"].split("/"))
    assert keys["view"] == "outline" and shown < levels == 8  # the key tree goes 8 levels deep; fewer are shown
    assert r.tokens < 0.1 * int(keys["full_tokens"]), r.tokens  # depth 4 of it was most of the file
    lines = big.read_bytes().split(b"\n")
    listed = entries(r.text)
    assert any(label.startswith("Def7{") for _, _, _, label in listed)
    for first, last, _, label in listed:  # every range exact: its first line holds the key
        name = re.split(r"[{\[:, ]", label, maxsplit=1)[0]
        assert f'"{name}"'.encode() in lines[first - 1], (first, label)


def test_a_collapsed_entry_drills_down_to_its_sections_key_outline(nas: Nas, big: Path) -> None:
    section = nas.read("schema.json@section=Def7@150")
    keys = header(section.text)
    assert (keys["view"], keys["section"]) == ("outline", "definitions.Def7")  # its text is over 150 tokens
    assert section.tokens <= 150
    listed = [(depth, label) for _, _, depth, label in entries(section.text)]
    # the levels that fit 150; the cut one names the read that lists it all
    assert listed == [(0, "Def7{2}"), (1, "type"), (1, "properties{10} @section=definitions.Def7.properties@outline")]
    deeper = nas.read("schema.json@section=definitions.Def7.properties@250")  # its text is about 290
    assert header(deeper.text)["view"] == "outline"
    labels = [label for _, _, _, label in entries(deeper.text)]
    assert "p0{type, description}" in labels and "p3{2}" in labels and "leaf{type}" in labels
    # a key 7 levels down is a section of its own, with its exact lines
    leaf = nas.read("schema.json@section=definitions.Def7.properties.p3.items.properties.leaf")
    first, last = map(int, re.search(r"#L(\d+)-L(\d+)$", header(leaf.text)["pointer"]).groups())
    assert leaf.text.split(b"\n", 1)[1] == b"".join(l + b"\n" for l in big.read_bytes().split(b"\n")[first - 1 : last])
    assert leaf.text.split(b"\n", 1)[1].lstrip().startswith(b'"leaf": {')


def test_every_entry_pointer_verifies(nas: Nas, big: Path, home: Path) -> None:
    r = nas.read("schema.json@section=definitions.Def7.properties@600")
    base = header(r.text)["pointer"].split("#", 1)[0]
    for first, last, _, _ in entries(r.text):
        pointer = f"{base}#L{first}-L{last}"
        assert nas.verify(pointer).startswith("verified")
        commit, lines = pointer.rsplit("@", 1)[1].split("#")
        shown = subprocess.run(["git", "-C", str(home), "show", f"{commit}:schema.json"], capture_output=True, check=True).stdout
        a, b = (int(x) for x in lines[1:].replace("L", "").split("-"))
        assert nas.deref(pointer)[1] == b"".join(l + b"\n" for l in shown.split(b"\n")[a - 1 : b])


def test_array_elements_past_the_first_five_are_sections_not_lines(nas: Nas, home: Path) -> None:
    doc = {"items": [[f"n{i}", {"a": i, "b": [1, 2]}] for i in range(30)]}
    (home / "list.json").write_text(json.dumps(doc, indent=2) + "\n")
    outline = outline_data((home / "list.json").read_bytes(), "json")
    assert outline.entries[0].label == "items[30] (first 5 shown)"
    assert [e.path for e in outline.entries if e.depth == 1] == [("items", str(i)) for i in range(5)]
    element = nas.read("list.json@section=items.11")
    assert b'"n11"' in element.text
    inner = nas.read(f"list.json@section=items.11@{element.tokens - 1}")  # its text does not fit: its outline does
    assert header(inner.text)["view"] == "outline"
    assert [(depth, label) for _, _, depth, label in entries(inner.text)] == [(0, "11[2]"), (1, "1{2}"), (2, "a"), (2, "b[2]")]


def test_fitted_never_cuts_above_the_page_level_and_leaves_small_outlines_whole() -> None:
    from nasfs.outline.model import FLOOR, fitted

    guide = ("# Guide\n\n" + "".join(f"## Topic {i}\n\ntext {i}\n\n### Detail\n\nmore\n\n" for i in range(400))).encode()
    outline = fitted(outline_markdown(guide), len(guide))
    assert outline.shown == 1  # the title and its 400 topics; not the details
    assert len(outline.served().render()) > len(guide) * 0.04  # the page level is shown even when a large share
    small = b"# A\n\n## B\n\ntext\n\n### C\n\nmore\n"
    assert fitted(outline_markdown(small), len(small)).shown is None  # under FLOOR: every level
    assert len(outline_markdown(small).render()) < FLOOR


def test_a_long_markdown_file_keeps_every_heading_and_a_section_drills_down(nas: Nas, home: Path) -> None:
    """Only data outlines are fitted: headings, like code symbols, are what an
    agent picks its read from, so ``@outline`` lists every one."""
    body = "A paragraph that says what the fix changed and why, with a link to its pull request.\n"
    text = "".join(f"# 1.{i}.0\n\n## Fixes\n\n" + "".join(f"### Fix {i}.{j}\n\n{body * 3}\n" for j in range(6)) for i in range(80))
    (home / "CHANGES.md").write_text(text)
    r = nas.read("CHANGES.md@outline")
    assert "depth" not in header(r.text)
    assert sum(label.startswith("### ") for _, _, _, label in entries(r.text)) == 480
    text_tokens = nas.read("CHANGES.md@section=1.7.0").tokens
    inner = nas.read(f"CHANGES.md@section=1.7.0@{text_tokens - 1}")  # a heading with dots, by its own name
    assert (header(inner.text)["view"], header(inner.text)["section"]) == ("outline", "1.7.0")
    assert "### Fix 7.3" in [label for _, _, _, label in entries(inner.text)]


def test_drill_down_through_the_mount(mounted: Mount, big: Path) -> None:
    """The same reads with `cat` on a real mount: the fitted outline, then a section within a budget."""
    mnt = mounted.mountpoint

    def cat(name: str) -> bytes:
        return subprocess.run(["cat", str(mnt / name)], check=True, capture_output=True).stdout

    outline = cat("schema.json@outline")
    assert header(outline)["depth"] != "8/8" and b"Def7{" in outline
    section = cat("schema.json@section=definitions.Def7.properties@250")
    assert (header(section)["view"], header(section)["section"]) == ("outline", "definitions.Def7.properties")
    assert "leaf{type}" in [label for _, _, _, label in entries(section)]
    assert int(header(section)["tokens"]) <= 250
