"""Outlines of data files (JSON, YAML, TOML), tables (CSV, TSV), plain text and binaries."""

from __future__ import annotations

import json
import os
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from nasfs.outline.data import outline_data
from nasfs.outline.model import Outline
from nasfs.outline.tabular import outline_table
from nasfs.outline.text import outline_binary, outline_text, outline_text_stream


def rows(outline: Outline) -> list[tuple[str, tuple[str, ...], int, int, int]]:
    return [(e.label, e.path, e.start, e.end, e.depth) for e in outline.entries]


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


# --- JSON --------------------------------------------------------------------

JSON_DOC = b"""{
  "name": "demo",
  "version": 3,
  "ratio": 0.5,
  "ok": true,
  "none": null,
  "spec": {
    "containers": [
      {"name": "web", "ports": [80, 443]},
      {"name": "db"}
    ],
    "tags": ["a", "b"]
  }
}
"""


def test_json_key_tree() -> None:
    outline = outline_data(JSON_DOC, "json")
    assert outline.kind == "json"
    assert outline.notes == ("root: {6}",)
    assert rows(outline) == [
        ("name", ("name",), 2, 2, 0),
        ("version", ("version",), 3, 3, 0),
        ("ratio", ("ratio",), 4, 4, 0),
        ("ok: boolean", ("ok",), 5, 5, 0),
        ("none: null", ("none",), 6, 6, 0),
        ("spec{2}", ("spec",), 7, 13, 0),
        ("containers[2]", ("spec", "containers"), 8, 11, 1),
        ("0{2}", ("spec", "containers", "0"), 9, 9, 2),
        ("name", ("spec", "containers", "0", "name"), 9, 9, 3),
        ("ports[2]", ("spec", "containers", "0", "ports"), 9, 9, 3),
        ("1{1}", ("spec", "containers", "1"), 10, 10, 2),
        ("name", ("spec", "containers", "1", "name"), 10, 10, 3),
        ("tags[2]", ("spec", "tags"), 12, 12, 1),
    ]


def test_json_long_array_shows_first_five_containers() -> None:
    data = json.dumps({"items": [[i] for i in range(120)], "nums": list(range(50))}, indent=1).encode()
    outline = outline_data(data, "json")
    items = outline.entries[0]
    assert items.label == "items[120] (first 5 shown)"
    elements = [e for e in outline.entries if e.depth == 1]
    assert [e.path for e in elements] == [("items", str(i)) for i in range(5)]
    assert (elements[0].start, elements[0].end) == (3, 5)  # "[", 0, "]" with indent=1
    assert outline.entries[-1].label == "nums[50]"  # scalar elements are never entries
    # the folded elements are named on the array's line: one read lists them all
    assert outline.marked(None).render().splitlines()[1].endswith("items[120] (first 5 shown) @section=items@outline")


def test_json_array_of_records_lists_every_record_and_counts_keys() -> None:
    records = [{"id": i, "name": f"n{i}"} | ({"tags": ["a"]} if i % 10 == 0 else {}) for i in range(37)]
    data = json.dumps({"items": records}, indent=1).encode()
    outline = outline_data(data, "json")
    assert outline.entries[0].label == "items[37]"
    assert [e.path for e in outline.entries if e.depth == 1] == [("items", str(i)) for i in range(37)]
    assert outline.notes == ("root: {1}", "items: 37 records; keys: id, name, tags (4)")
    top = outline_data(json.dumps(records[:3]).encode(), "json")
    assert top.notes == ("root: [3]", "3 records; keys: id, name, tags (1)")


def test_json_top_level_array_and_escaped_keys() -> None:
    outline = outline_data(b'[1, {"a\\u00e9": {"x\\ny": 2}}, [3]]', "json")
    assert outline.notes == ("root: [3]",)
    assert rows(outline) == [
        ("1{1}", ("1",), 1, 1, 0),
        ("a\u00e9{1}", ("1", "a\u00e9"), 1, 1, 1),
        ("x\\ny", ("1", "a\u00e9", "x\ny"), 1, 1, 2),  # label stays one line; path keeps the key
        ("2[1]", ("2",), 1, 1, 0),
    ]


def test_depth_limit_counts_hidden_entries() -> None:
    data = b'{\n"a": {"b": {"c": {"d": 1, "e": [{"f": 1}, 2]}}},\n"z": 1\n}\n'
    assert rows(outline_data(data, "json", max_depth=1)) == [
        ("a{1}", ("a",), 2, 2, 0),
        ("b{1} (+5 deeper)", ("a", "b"), 2, 2, 1),  # c, d, e, e.0, e.0.f
        ("z", ("z",), 3, 3, 0),
    ]
    assert outline_data(data, "json", max_depth=0).entries[0].label == "a{1} (+6 deeper)"
    full = outline_data(data, "json", max_depth=10)
    assert len(full.entries) == 1 + 6 + 1
    assert full.to_depth(1).entries[1].label == "b{1}"


def test_deep_nesting_does_not_recurse() -> None:
    outline = outline_data(b"[" * 50_000 + b"]" * 50_000, "json", max_depth=2)
    assert outline.entries[-1].label == "0[1] (+49996 deeper)"  # 50000 arrays: root + 3 shown


def test_invalid_json_falls_back_to_text() -> None:
    data = b'{"a": 1,\n "b": }\n\nsecond paragraph\n'
    outline = outline_data(data, "json")
    assert outline.kind == "text"
    assert outline.notes == ("JSON did not parse: Expecting value at line 2 column 7", "text: 4 lines")
    assert rows(outline) == [('{"a": 1,', (), 1, 2, 0), ("second paragraph", (), 4, 4, 0)]


def test_json_python_takes_outlines_as_json() -> None:
    # tree-sitter-json refuses 1E+2, NaN and -Infinity; Python's json takes them
    data = b'{"z": 0.8e-0, "u": 2E10, "p": 1E+2,\n "n": [NaN, -Infinity, {"s": "1E+2"}]}\n'
    outline = outline_data(data, "json")
    assert outline.kind == "json", outline.notes
    assert rows(outline) == [
        ("z", ("z",), 1, 1, 0), ("u", ("u",), 1, 1, 0), ("p", ("p",), 1, 1, 0),
        ("n[3]", ("n",), 2, 2, 0), ("2{1}", ("n", "2"), 2, 2, 1), ("s", ("n", "2", "s"), 2, 2, 2),
    ]


def test_every_document_pythons_json_writes_outlines_as_json() -> None:
    rng = random.Random(10)
    scalars = [0, -0.0, 1.5e300, -2, 12345678901234567890, float("nan"), float("inf"), -float("inf"), True, None,
               "", 'q"b\\c\u2028\x7f', "\u00e9\t\n", 1e-7]

    def value(depth: int) -> object:
        r = rng.random()
        if depth > 3 or r < 0.3:
            return rng.choice(scalars)
        if r < 0.6:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice("ab\"\u00e9\\") + str(rng.randint(0, 9)): value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(300):
        text = json.dumps(value(0), indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
        text = text.replace("e+", rng.choice(["e+", "E+", "E"]))  # json.dumps writes 1.5e+300
        json.loads(text)
        assert outline_data(text.encode(), "json").kind == "json", text


@pytest.mark.parametrize(
    ("data", "note"),
    [
        (b'{"a": "\xff"}', "JSON did not parse: invalid UTF-8 at line 1"),
        (b"[1] [2]", "JSON did not parse: Extra data at line 1 column 5"),
        (b"", "JSON did not parse: Expecting value at line 1 column 1"),
    ],
)
def test_json_that_is_not_one_value(data: bytes, note: str) -> None:
    outline = outline_data(data, "json")
    assert (outline.kind, outline.notes[0]) == ("text", note)


def test_json_with_bom_and_comments() -> None:
    outline = outline_data(b'\xef\xbb\xbf{\n  // jsonc\n  "a": 1\n}\n', "json")
    assert rows(outline) == [("a", ("a",), 3, 3, 0)]


# --- YAML --------------------------------------------------------------------

CLOUDFORMATION = b"""---
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Ref Name
      Arn: !GetAtt Bucket.Arn
  Evil: !!python/name:os.system
  Boom: !!python/object/apply:os.system ["touch MARKER"]
Outputs: !Sub |
  text

  more

List:
  - a
  - {k: 1}
  - &x
    n: 2
  - *x
# trailing comment
"""


def test_yaml_tags_are_shown_not_constructed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "pwned"
    calls: list[object] = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a) or 0)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a YAML constructor ran")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_object", refuse)
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", refuse)
    outline = outline_data(CLOUDFORMATION.replace(b"MARKER", str(marker).encode()), "yaml")
    assert calls == [] and not marker.exists()
    assert outline.kind == "yaml"
    assert outline.notes == ("root: {4}",)  # the leading "---" is one document, not a stream
    assert rows(outline) == [
        ("AWSTemplateFormatVersion", ("AWSTemplateFormatVersion",), 2, 2, 0),
        ("Resources{3}", ("Resources",), 3, 10, 0),
        ("Bucket{2}", ("Resources", "Bucket"), 4, 8, 1),
        ("Type", ("Resources", "Bucket", "Type"), 5, 5, 2),
        ("Properties{2}", ("Resources", "Bucket", "Properties"), 6, 8, 2),
        ("BucketName: !Ref", ("Resources", "Bucket", "Properties", "BucketName"), 7, 7, 3),
        ("Arn: !GetAtt", ("Resources", "Bucket", "Properties", "Arn"), 8, 8, 3),
        ("Evil: !!python/name:os.system", ("Resources", "Evil"), 9, 9, 1),
        ("Boom: !!python/object/apply:os.system [1]", ("Resources", "Boom"), 10, 10, 1),
        ("Outputs: !Sub", ("Outputs",), 11, 14, 0),  # the block scalar, without its trailing blank line
        ("List[4]", ("List",), 16, 21, 0),  # not the trailing comment
        ("1{1}", ("List", "1"), 18, 18, 1),
        ("k", ("List", "1", "k"), 18, 18, 2),
        ("2{1}", ("List", "2"), 19, 20, 1),
        ("n", ("List", "2", "n"), 20, 20, 2),
    ]


def test_yaml_scalar_types_aliases_and_keys() -> None:
    data = "a: 1\nb: 1.5\nc: true\nd: ~\ne:\nf: 'q'\ng: 2024-01-02\nh: &h x\ni: *h\né: x\n? [p, q]\n: v\n"
    outline = outline_data(data.encode(), "yaml")
    assert [e.label for e in outline.entries] == [
        "a", "b", "c: boolean", "d: null", "e: null", "f", "g: date", "h",
        "i: *h", "é", "[p, q]",
    ]
    assert [(e.start, e.end) for e in outline.entries][-2:] == [(10, 10), (11, 12)]


def test_yaml_multi_document_stream() -> None:
    data = b"a: 1\n---\nb:\n  c: true\n--- !Ref\nx\n"
    outline = outline_data(data, "yaml")
    assert outline.notes == ("3 documents (numbered from 1), 2 of them mappings; keys: a (1), b (1)",)
    assert rows(outline) == [
        ("--- document 1: {1}", ("1",), 1, 1, 0),
        ("a", ("1", "a"), 1, 1, 1),
        ("--- document 2: {1}", ("2",), 2, 4, 0),
        ("b{1}", ("2", "b"), 3, 4, 1),
        ("c: boolean", ("2", "b", "c"), 4, 4, 2),
        ("--- document 3: !Ref", ("3",), 5, 6, 0),
    ]


def test_yaml_past_32768_lines() -> None:
    # tree-sitter-yaml overflows a 16-bit row counter there; libyaml events do not.
    data = b"".join(b"k%d: v\n" % i for i in range(40_000)) + b"last:\n  x: 1\n"
    outline = outline_data(data, "yaml")
    assert outline.kind == "yaml"
    assert rows(outline)[-2:] == [
        ("last{1}", ("last",), 40_001, 40_002, 0),
        ("x", ("last", "x"), 40_002, 40_002, 1),
    ]


def test_invalid_yaml_falls_back_with_line() -> None:
    outline = outline_data(b"a: 1\n b: 2\n", "yaml")
    assert outline.kind == "text"
    assert outline.notes == (
        "YAML did not parse: mapping values are not allowed in this context at line 2",
        "text: 2 lines",
    )


def test_empty_yaml() -> None:
    assert outline_data(b"# only a comment\n", "yaml") == Outline("yaml", (), ("root: null",), runs=True)


# --- TOML --------------------------------------------------------------------

TOML_DOC = b"""title = "demo"
owner.name = "Tom"
owner.dob = 1979-05-27T07:32:00-08:00

[database]
ports = [8000, 8001]
enabled = true # inline comment
temp = 79.5
# trailing comment

[servers.alpha]
ip = "10.0.0.1"

[[fruits]]
name = "apple"

[[fruits]]
name = "banana"
when = 2024-01-02
[fruits.color]
hue = "yellow"
"""


def test_toml_tables_arrays_of_tables_and_dotted_keys() -> None:
    outline = outline_data(TOML_DOC, "toml")
    assert outline.kind == "toml"
    assert outline.notes == ("root: {5}", "fruits: 2 records; keys: name, when (1), color (1)")
    assert rows(outline) == [
        ("title", ("title",), 1, 1, 0),
        ("owner{2}", ("owner",), 2, 3, 0),
        ("name", ("owner", "name"), 2, 2, 1),
        ("dob: datetime", ("owner", "dob"), 3, 3, 1),
        ("database{3}", ("database",), 5, 8, 0),
        ("ports[2]", ("database", "ports"), 6, 6, 1),
        ("enabled: boolean", ("database", "enabled"), 7, 7, 1),
        ("temp", ("database", "temp"), 8, 8, 1),
        ("servers{1}", ("servers",), 11, 12, 0),
        ("alpha{1}", ("servers", "alpha"), 11, 12, 1),
        ("ip", ("servers", "alpha", "ip"), 12, 12, 2),
        ("fruits[2]", ("fruits",), 14, 21, 0),
        ("0{1}", ("fruits", "0"), 14, 15, 1),
        ("name", ("fruits", "0", "name"), 15, 15, 2),
        ("1{3}", ("fruits", "1"), 17, 21, 1),  # [fruits.color] extends the last element
        ("name", ("fruits", "1", "name"), 18, 18, 2),
        ("when: date", ("fruits", "1", "when"), 19, 19, 2),
        ("color{1}", ("fruits", "1", "color"), 20, 21, 2),
        ("hue", ("fruits", "1", "color", "hue"), 21, 21, 3),
    ]


def test_toml_inline_tables_and_quoted_keys() -> None:
    outline = outline_data(b'"a.b" = { x = 1, y.z = [{ w = 1 }] }\n', "toml")
    assert rows(outline) == [
        ("a.b{2}", ("a.b",), 1, 1, 0),
        ("x", ("a.b", "x"), 1, 1, 1),
        ("y{1}", ("a.b", "y"), 1, 1, 1),
        ("z[1]", ("a.b", "y", "z"), 1, 1, 2),
        ("0{1}", ("a.b", "y", "z", "0"), 1, 1, 3),
        ("w", ("a.b", "y", "z", "0", "w"), 1, 1, 4),
    ]


def test_invalid_toml_falls_back() -> None:
    outline = outline_data(b"a = 1\nb = \n", "toml")
    assert outline.kind == "text"
    assert outline.notes[0] == "TOML did not parse: Invalid value (at line 2, column 5)"


def test_data_outline_never_raises() -> None:
    rng = random.Random(7)
    seeds = [JSON_DOC, CLOUDFORMATION, TOML_DOC]
    for _ in range(300):
        data = bytearray(rng.choice(seeds))
        for _ in range(3):
            pos = rng.randrange(len(data))
            data[pos : pos + rng.randint(0, 3)] = rng.randbytes(rng.randint(0, 3))
        for fmt in ("json", "yaml", "toml"):
            outline = outline_data(bytes(data), fmt)
            assert all(1 <= e.start <= e.end for e in outline.entries)


# --- CSV / TSV ---------------------------------------------------------------


def test_csv_quoted_newlines_count_one_record() -> None:
    data = b'id,name,note\r\n1,a,"multi\r\nline"\r\n2,b,plain\r\n3,c,"x ""q"" y"\r\n'
    outline = outline_table(chunked(data, 5), ",")
    assert outline.kind == "csv"
    assert outline.notes == (
        "header: id, name, note",
        "records: 3",
        "dialect: delimiter=',' quotechar='\"' lineterminator='\\r\\n' header=yes",
        "lines: 5",
    )
    assert rows(outline) == [("header", ("header",), 1, 1, 0), ("records 1-3", ("records",), 2, 5, 0)]


def test_tsv() -> None:
    data = b"name\tcity\tzip\nal\tparis\t75001\nbo\trome\t00100\n"
    outline = outline_table([data], "\t")
    assert outline.kind == "tsv"
    assert outline.notes[:2] == ("header: name, city, zip", "records: 2")
    assert outline.notes[2].startswith("dialect: delimiter='\\t'")
    assert rows(outline) == [("header", ("header",), 1, 1, 0), ("records 1-2", ("records",), 2, 3, 0)]


def test_ragged_csv_is_reported() -> None:
    outline = outline_table([b"id,v\n1,a\n2,b,c\n3\n4,d\n"], ",")
    assert "records: 4" in outline.notes
    assert "ragged: 2 records do not have 2 fields" in outline.notes


def test_unterminated_quote_is_reported() -> None:
    outline = outline_table([b'a,b\n1,2\n3,"open\n4,5\n'], ",")
    assert "records: 2" in outline.notes
    assert "unterminated quote: the record at line 3 runs to the end of the file" in outline.notes
    assert rows(outline)[-1] == ("records 1-2", ("records",), 2, 4, 0)


def test_headerless_csv_and_wide_header() -> None:
    outline = outline_table([b"1,2\n3,4\n"], ",")
    assert outline.notes[0] == "header: none (2 columns)"
    assert rows(outline) == [("records 1-2", ("records",), 1, 2, 0)]
    wide = ",".join(f"c{i}" for i in range(45)).encode() + b"\n" + b",".join([b"1"] * 45) + b"\n"
    assert outline_table([wide], ",").notes[0].endswith("c39, … (+5 more, 45 columns)")


# --- text --------------------------------------------------------------------


def test_text_paragraphs() -> None:
    long_line = "x" * 150
    data = f"\n\n  Hello world  \nmore\n\n\n{long_line}\r\n  \t\nlast line without newline".encode()
    outline = outline_text(data)
    assert outline == outline_text_stream(chunked(data, 4))
    assert outline.kind == "text"
    assert outline.notes == ("text: 9 lines",)
    assert rows(outline) == [
        ("Hello world", (), 3, 4, 0),
        ("x" * 100 + "…", (), 7, 7, 0),
        ("last line without newline", (), 9, 9, 0),
    ]


def test_text_caps_paragraphs() -> None:
    outline = outline_text(b"".join(b"p%d\n\n" % i for i in range(250)))
    assert len(outline.entries) == 200
    assert outline.notes == ("text: 500 lines", "(+50 more paragraphs)")
    assert (outline.entries[-1].label, outline.entries[-1].start) == ("p199", 399)


def test_text_stream_of_50_mb_in_bounded_memory() -> None:
    paragraph = b"".join(b"line %d of a paragraph\n" % i for i in range(40)) + b"\n"
    per_chunk = 1_048_576 // len(paragraph)

    def stream() -> Iterator[bytes]:
        for i in range(48):  # distinct chunks, made on demand: holding them would show in the peak
            yield (b"chunk %d " % i) + paragraph * per_chunk
        yield b"y" * 3_000_000  # one 3 MB line split across chunks
        yield b"y" * 3_000_000 + b"\n"

    tracemalloc.start()
    try:
        outline = outline_text_stream(stream())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000
    paragraphs = 48 * per_chunk + 1
    assert outline.notes == (f"text: {48 * per_chunk * 41 + 1} lines", f"(+{paragraphs - 200} more paragraphs)")
    assert outline.entries[0].label == "chunk 0 line 0 of a paragraph"


def test_text_stream_matches_whole_buffer_on_long_lines() -> None:
    data = b"  " + b"z" * 5000 + b"\n\n" + b" " * 3000 + b"w\nnext\n"
    whole = outline_text(data)
    assert whole == outline_text_stream(chunked(data, 700))
    assert [e.label for e in whole.entries] == ["z" * 100 + "…", "w"]


# --- binary ------------------------------------------------------------------


def test_binary_kinds() -> None:
    assert outline_binary(2048, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") == Outline(
        "binary", notes=("binary: PNG image, 2048 bytes",)
    )
    assert outline_binary(10, b"\x1f\x8b\x08\x00").notes == ("binary: gzip, 10 bytes",)
    assert outline_binary(10, b"\x7fELF\x02\x01").notes == ("binary: ELF executable, 10 bytes",)
    assert outline_binary(4096, b"\x00" * 257 + b"ustar\x0000").notes == ("binary: tar archive, 4096 bytes",)
    noise = random.Random(0).randbytes(64)
    assert outline_binary(64, noise).notes == ("binary: data, 64 bytes",)


def test_one_line_sibling_keys_share_an_outline_line() -> None:
    data = b'{\n "a": 1,\n "b": "x",\n "c": {"d": 1},\n "e": {\n  "f": true,\n  "g": [1, 2]\n },\n "h": null\n}\n'
    lines = outline_data(data, "json").render().splitlines()
    # a and b are one-line leaves in a row; c and e hold only such leaves, so they list them
    assert lines == ["root: {5}", "2-3 a, b", "4 c{d}", "5-8 e{f: boolean, g[2]}", "9 h: null"]
    deeper = b'{"x": {\n "y": {"z": 1},\n "w": 2\n}}\n'  # x holds y, which is not a leaf: x keeps its lines
    assert outline_data(deeper, "json").render().splitlines() == ["root: {1}", "1-4 x{2}", "2   y{z}", "3   w"]
    digits = b'{"x": {\n "5": 1\n}}\n'  # x{5} would read as five keys: a lone key "5" follows a colon
    assert outline_data(digits, "json").render().splitlines() == ["root: {1}", "1-3 x{1}: 5"]
    many = b"{\n" + b",\n".join(b' "k%d": %d' % (i, i) for i in range(20)) + b"\n}\n"
    rendered = outline_data(many, "json").render().splitlines()
    assert rendered[1:] == ["2-9 k0, k1, k2, k3, k4, k5, k6, k7", "10-17 k8, k9, k10, k11, k12, k13, k14, k15",
                            "18-21 k16, k17, k18, k19"]
