"""Outlines that never hide what a reader looks for (issue 21): where a fitted
data outline leaves a level out, the entry's line names the one read that lists
it (``@section=NAME@outline``); files of records say how many and their keys."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from nasfs.errors import BadView, NotFound
from nasfs.grammar import parse_view
from nasfs.outline.data import outline_data
from nasfs.service import Nas

from .conftest import git, header
from .mounts import Mount

FOLLOW = re.compile(r" (@section=\S+@outline)$")


def manifest(number: int) -> str:
    """One document of a stream: a Deployment-like manifest, 20 lines, keys 6 levels deep."""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{number}\n  labels:\n    tier: web\n"
        f"spec:\n  replicas: {number}\n  template:\n    spec:\n      containers:\n      - name: app\n"
        f"        image: app:{number}\n        resources:\n          limits:\n            memory: {number}Mi\n"
        f"            cpu: 100m\n        ports:\n        - containerPort: 80\n          protocol: TCP\n"
    )


@pytest.fixture
def stream(home: Path) -> Path:
    path = home / "deploy" / "all.yaml"
    path.parent.mkdir()
    path.write_text("---\n".join(manifest(n) for n in range(1, 33)))
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "a stream of 32 manifests")
    return path


def lines_of(text: bytes) -> list[str]:
    return text.decode().split("\n")[1:]


def test_a_cut_level_names_its_follow_up_on_its_line(nas: Nas, stream: Path) -> None:
    r = nas.read("deploy/all.yaml@outline")
    keys = header(r.text)
    shown, levels = map(int, keys["depth"].split("/"))
    assert shown < levels  # the stream's deeper keys are not listed ...
    entries = [row for row in lines_of(r.text) if row[:1].isdigit()]
    assert not any("memory" in row or "containerPort" in row for row in entries)
    named = [FOLLOW.search(line).group(1) for line in lines_of(r.text) if FOLLOW.search(line)]
    assert named, r.text.decode()  # ... and every line that hides them names the read that lists them
    for view in named:
        assert parse_view(view[1:]).kind == "inside"  # one grammar, one parser
    # document 7's hidden keys are listed by the follow-up its line names, with their exact lines
    follow = next(v for v in named if v.startswith(("@section=7.", "@section=7@")))
    inner = nas.read(f"deploy/all.yaml{follow}")
    assert header(inner.text)["section"] == "7"
    assert "memory" in inner.text.decode() and "containerPort" in inner.text.decode()
    # a document of 20 short lines costs less than its whole outline: its text is the answer
    assert header(inner.text)["view"] == "section" and inner.tokens < nas.read("deploy/all.yaml@section=7@9999").tokens + 1
    deep = nas.read("deploy/all.yaml@section=7.spec@outline@400")
    rows = [row for row in lines_of(deep.text) if row]
    if header(deep.text)["view"] == "outline":  # the section's key tree, each key with its exact lines
        line = next(row for row in rows if row.split(" ", 1)[1].strip().startswith("memory"))
        first = int(line.split(" ", 1)[0].split("-")[0])
        assert stream.read_text().split("\n")[first - 1].strip() == "memory: 7Mi"
    # a stream says how many documents it holds and the keys they share
    assert "32 documents (numbered from 1); keys: apiVersion, kind, metadata, spec" in r.text.decode()


def test_a_follow_up_lists_every_level_and_every_folded_element(nas: Nas, home: Path) -> None:
    doc = {"grid": [[i, {"deep": {"deeper": {"deepest": f"{i} " + "words " * 40}}}] for i in range(30)]}
    (home / "grid.json").write_text(json.dumps(doc, indent=2) + "\n")
    r = nas.read("grid.json@outline")
    assert "grid[30] (first 5 shown) @section=grid@outline" in r.text.decode()
    inner = nas.read("grid.json@section=grid@outline")
    assert header(inner.text)["view"] == "outline" and "depth" not in header(inner.text)
    names = [row.split(" ", 1)[1].strip() for row in lines_of(inner.text) if row]
    assert [n for n in names if re.fullmatch(r"\d+\[2\]", n)] == [f"{i}[2]" for i in range(30)]  # none folded
    assert names.count("deeper{deepest}") == 30  # every level (one-line keys in their braces)
    assert "@section=" not in inner.text.decode()  # nothing left hidden: no further follow-up


def test_a_follow_up_is_the_sections_text_when_that_costs_less(nas: Nas, home: Path) -> None:
    (home / "tiny.yaml").write_text("a:\n  b:\n    c: 1\n    d: 2\n  e:\n    f: 3\ng: 4\n")
    r = nas.read("tiny.yaml@section=a@outline")
    assert header(r.text)["view"] == "section" and r.served.body == b"a:\n  b:\n    c: 1\n    d: 2\n  e:\n    f: 3\n"


def test_bad_follow_up_names_say_what_is_valid(nas: Nas, stream: Path) -> None:
    with pytest.raises(NotFound) as missing:
        nas.read("deploy/all.yaml@section=7.spec.nope@outline")
    assert "no section '7.spec.nope'" in str(missing.value) and "7.spec.template" in str(missing.value)
    with pytest.raises(BadView) as empty:
        nas.read("deploy/all.yaml@section=@outline")
    assert "@section=NAME@outline needs a NAME" in str(empty.value) and "@section=NAME@outline (the section's whole outline)" in str(empty.value)
    with pytest.raises(BadView, match=r"after @section=7@outline only a budget @N and .json may follow, not '@x'"):
        nas.read("deploy/all.yaml@section=7@outline@x")


def test_json_lines_records_named_with_their_keys() -> None:
    data = b"".join(json.dumps({"question": f"q{i}", "answer": f"a{i}"} | ({"tag": "x"} if i == 2 else {})).encode() + b"\n"
                    for i in range(37))
    outline = outline_data(data, "jsonl")
    assert outline.kind == "jsonl"
    assert outline.notes == ("37 records (numbered from 0); keys: question, answer, tag (1)",)
    assert [(e.label, e.start, e.end) for e in outline.entries if e.depth == 0][:3] == [("0{2}", 1, 1), ("1{2}", 2, 2), ("2{3}", 3, 3)]
    assert [e.path for e in outline.entries if e.depth == 1][:2] == [("0", "question"), ("0", "answer")]
    assert outline.render().split("\n")[1] == "1 0{question, answer}"


def test_json_lines_that_do_not_parse_say_which_line() -> None:
    outline = outline_data(b'{"a": 1}\n{"a": 2}\n{"a": \n{"a": 4}\n', "jsonl")
    assert outline.kind == "text" and outline.notes[0].startswith("JSONL did not parse: line 3 is not JSON")


def test_toml_arrays_of_tables_and_json_arrays_of_objects_count_their_records() -> None:
    toml = b"".join(b'[[product]]\nname = "p%d"\nsku = %d\n%s\n' % (i, i, b'color = "red"' if i < 2 else b"") for i in range(37))
    outline = outline_data(toml, "toml")
    assert outline.notes == ("root: {1}", "product: 37 records; keys: name, sku, color (2)")
    assert [e.path for e in outline.entries if e.depth == 1] == [("product", str(i)) for i in range(37)]  # each named
    rows = json.dumps([{"id": i, "name": f"n{i}"} for i in range(37)], indent=1).encode()
    assert outline_data(rows, "json").notes == ("root: [37]", "37 records; keys: id, name")


def test_the_follow_up_through_the_mount_with_cat(mounted: Mount, stream: Path) -> None:
    """An agent's two reads on a real mount: the outline, then the read its line names."""
    mnt = mounted.mountpoint

    def cat(name: str) -> bytes:
        return subprocess.run(["cat", str(mnt / name)], check=True, capture_output=True, timeout=60).stdout

    outline = cat("deploy/all.yaml@outline")
    line = next(row for row in lines_of(outline) if row.split(" ", 1)[-1].lstrip().startswith("--- document 12:"))
    follow = FOLLOW.search(line) or next(
        FOLLOW.search(row) for row in lines_of(outline)[lines_of(outline).index(line):] if FOLLOW.search(row))
    inner = cat(f"deploy/all.yaml{follow.group(1)}")
    assert b"memory" in inner and header(inner)["section"].startswith("12")
    missing = subprocess.run(["cat", str(mnt / "deploy/all.yaml@section=12.nope@outline")], capture_output=True, timeout=60)
    assert missing.returncode != 0 and b"No such file" in missing.stderr
    assert "no section '12.nope'" in (mnt / ".nas" / "errors").read_text().splitlines()[-1]


def test_every_named_follow_up_finds_the_entry_it_is_named_on(nas: Nas, home: Path) -> None:
    """The shortest name is used (an entry's own name), unless another entry
    would be found by it first: then the qualified name."""
    deep = {"type": "object", "properties": {f"p{i}": {"type": "string", "enum": ["a", "b"]} for i in range(3)}}
    doc = {"a": {"properties": deep}, "b": {"properties": deep}, "properties": {"x": deep}}
    (home / "dup.json").write_text(json.dumps(doc, indent=2) + "\n")
    outline = outline_data((home / "dup.json").read_bytes(), "json")
    named = {line.split(" ", 1)[0]: FOLLOW.search(line).group(1) for line in outline.marked(1).render().splitlines()
             if FOLLOW.search(line)}
    assert sorted(named.values()) == ["@section=a.properties@outline", "@section=b.properties@outline", "@section=x@outline"]
    for span, view in named.items():  # each resolves to the entry whose line names it
        first, _, last = span.partition("-")
        served = header(nas.read(f"dup.json{view}").text)["pointer"]
        assert served.endswith(f"#L{first}-L{last or first}"), (view, served)


def test_a_huge_array_of_records_is_folded_and_says_how_to_read_the_rest() -> None:
    rows = json.dumps([{"id": i, "name": f"n{i}"} for i in range(1500)], indent=1).encode()
    outline = outline_data(rows, "json")
    assert outline.notes == ("root: [1500] (first 5 shown)",
                             "1500 records (the first 5 listed, each read as @section=N); keys: id, name")
    assert len(outline.entries) == 15 and outline.sections is not None and len(outline.sections) == 4500
