"""Issue 27: a data outline names every key it folds, with the key's own lines;
``P@keys`` lists every key of a data file. Every key is checked against the
file itself with PyYAML's composer (not nasfs's outliner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nasfs.errors import NasError
from nasfs.grammar import parse_view
from nasfs.service import Nas

from .conftest import git, header


def documents() -> str:
    """A YAML stream of 24 documents of different shapes: each key lives in a few of them."""
    shapes = [
        "name: Mark\naccomplishment: >\n  a record\n  in 1998.\nstats: |\n  65 home runs\n",
        "time: 20:03:20\nplayer: Sammy\naction: strike\n",
        "- item: hoop\n  quantity: 1\n- item: ball\n  quantity: 4\n",
        "bill-to:\n  given: Chris\n  address:\n    city: Royal Oak\n    postal: 48046\ntotal: 4443\n",
    ]
    return "".join(f"--- # document {n + 1}\n{shapes[n % len(shapes)]}" for n in range(24))


def every_key(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every mapping key, from PyYAML's composer."""
    found: list[tuple[str, int, int]] = []
    stack = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                last = value.end_mark.line + (0 if value.end_mark.column else -1)
                found.append((key.value, key.start_mark.line + 1, max(last + 1, key.start_mark.line + 1)))
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return found


def places(line: str) -> dict[str, list[tuple[int, int]]]:
    """``name 3-5,9, other 12`` (an index) to each key's line ranges."""
    index: dict[str, list[tuple[int, int]]] = {}
    for part in line.removesuffix(" (every place: @keys)").split(", "):
        name, _, spans = part.rpartition(" ")
        if spans.startswith("×"):  # "tier ×32": counted, the follow-ups list them
            index[name] = []
            continue
        index[name] = [(int(a), int(b or a)) for a, _, b in (s.partition("-") for s in spans.split(","))]
    return index


@pytest.fixture
def stream(home: Path) -> Path:
    path = home / "stream.yaml"
    path.write_text(documents())
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "a stream")
    return path


def test_every_folded_key_is_named_with_its_own_lines(nas: Nas, stream: Path) -> None:
    r = nas.read("stream.yaml@outline")
    keys = header(r.text)
    shown, levels = map(int, keys["depth"].split("/"))
    assert shown < levels  # the documents' keys are folded ...
    body = r.text.decode().split("\n")[1:]
    entries = [row for row in body if row[:1].isdigit()]
    inline = [row[len("keys: "):] for row in body if row.startswith("keys: ")]
    if inline:  # ... and named, once each, at the outline's end
        [line] = inline
        index = places(line)
    else:  # ... or, too long for it, in the one view its header names
        index = {}
        for row in nas.read(f"stream.yaml{keys['keys']}").text.decode().split("\n")[1:]:
            if row:
                index.update(places(row))
    source = stream.read_text().split("\n")
    for name, first, last in every_key(stream.read_text()):
        listed = any(f" {name}" in row for row in entries)
        assert listed or name in index, name
        if not listed:  # the index gives the key's own lines, or counts a key of many places
            assert (first, last) in index[name] or (inline and f"{name} ×" in inline[0]), (name, first, last)
            for a, _ in index[name]:
                assert source[a - 1].lstrip(" -").startswith(f"{name}:"), (name, a)
    assert r.tokens < nas.read("stream.yaml").tokens  # the outline stays under the file


def test_a_short_index_ends_the_outline(nas: Nas, home: Path) -> None:
    """60 services of one shape and one odd key deep down: the odd key is
    placed, the shared ones counted (their follow-ups list them)."""
    services = {f"service{i}": {"image": f"img{i}", "resources": {"limits": {"memory": f"{i}Mi", "cpu": "100m"},
                                                                   "requests": {"memory": "1Mi"}}} for i in range(60)}
    (home / "s.json").write_text(json.dumps({**services, "extra": {"only": {"here": {"rare_key": 1}}}}, indent=2))
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "services")
    r = nas.read("s.json@outline")
    assert "keys" not in header(r.text)
    last = r.text.decode().rstrip("\n").split("\n")[-1]
    assert last == ("keys: cpu ×60, here 724-726, image ×60, limits ×60, memory ×120, only 723-727, rare_key 725, "
                    "requests ×60, resources ×60 (every place: @keys)")
    assert nas.read("s.json@L725").text.strip() == b'"rare_key": 1'


def test_keys_lists_every_key_with_every_place(nas: Nas, stream: Path) -> None:
    r = nas.read("stream.yaml@keys")
    assert header(r.text)["view"] == "keys"
    listed = {}
    for row in r.text.decode().split("\n")[1:]:
        if row:
            listed.update(places(row))
    expected: dict[str, list[tuple[int, int]]] = {}
    for name, first, last in sorted(every_key(stream.read_text()), key=lambda k: k[1]):
        expected.setdefault(name, []).append((first, last))
    assert listed == expected
    assert parse_view("keys@300.json").kind == "keys"
    assert nas.read("stream.yaml@keys@2000").envelope()["view"] == "keys"


def test_an_index_too_long_for_the_outline_is_named_in_the_header(nas: Nas, home: Path) -> None:
    # 300 records of distinct keys: the index would be most of the file
    path = home / "wide.json"
    path.write_text(json.dumps({"records": {f"r{i}": {f"key_{i}_{j}": {"v": j} for j in range(3)} for i in range(300)}},
                               indent=2))
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "wide")
    r = nas.read("wide.json@outline")
    keys = header(r.text)
    assert keys["keys"] == "@keys" and b"\nkeys: " not in r.text
    assert b"\nkey_299_2 " in nas.read(f"wide.json{keys['keys']}").text


def test_keys_of_a_file_that_is_not_data_is_a_clear_refusal(nas: Nas, home: Path) -> None:
    (home / "notes.md").write_text("# A\ntext\n")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "md")
    with pytest.raises(NasError, match="not keyed data .*@keys lists the keys of JSON"):
        nas.read("notes.md@keys")


def test_keys_named_by_a_number_are_keys_and_elements_are_not(nas: Nas, home: Path) -> None:
    """OpenAPI's ``"404"`` and a YAML ``8080:`` are keys (found by name); an
    array's elements, a stream's documents and JSON Lines records are numbered
    and found by number, so neither index lists them."""
    api = {"paths": {f"/p{i}": {"get": {"responses": {"200": {"d": "ok"}, "404": {"d": "nf"}}, "tags": [{"n": 1}]}}
                     for i in range(30)}}
    (home / "api.json").write_text(json.dumps(api, indent=2))
    (home / "ports.yaml").write_text("".join(f"---\nports:\n  8080: http\n  list:\n    - a: 1\n" for _ in range(3)))
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "numbered keys")
    listed = {}
    for row in nas.read("api.json@keys").text.decode().split("\n")[1:]:
        if row:
            listed.update(places(row))
    source = (home / "api.json").read_text().split("\n")
    assert set(listed) == {"paths", *(f"/p{i}" for i in range(30)), "get", "responses", "200", "404", "d", "tags", "n"}
    assert all(source[a - 1].strip().startswith('"404"') for a, _ in listed["404"]) and len(listed["404"]) == 30
    outline = nas.read("api.json@outline").text.decode()
    assert "keys=@keys" in outline.split("\n")[0] or " 404 " in outline.split("\n")[-2]
    yaml_keys = {row.split(" ")[0] for row in nas.read("ports.yaml@keys").text.decode().split("\n")[1:] if row}
    assert yaml_keys == {"ports", "8080", "list", "a"}
