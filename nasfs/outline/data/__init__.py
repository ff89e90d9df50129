"""Key-tree outlines of JSON, JSON Lines, YAML and TOML.

JSON and TOML are parsed with tree-sitter (:mod:`.json_keys`,
:mod:`.toml_tables`), which gives a byte span for every key; YAML is read as
libyaml parser events (:mod:`.yaml_events`). :mod:`.emit` turns any of them
into entries. Input that does not parse falls back to the plain-text outline,
with the parser's message as the reason.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib

import yaml
from tree_sitter import Node
from tree_sitter_language_pack import get_parser

from nasfs.lines import LineIndex
from nasfs.outline.data.emit import MAX_DEPTH, Emitter
from nasfs.outline.data.json_keys import Json
from nasfs.outline.data.toml_tables import Toml, toml_table
from nasfs.outline.data.yaml_events import ByteOffsets, Yaml, yaml_documents
from nasfs.outline.model import Outline
from nasfs.outline.text import outline_text

FORMATS = ("json", "jsonl", "yaml", "toml")


def outline_data(data: bytes, fmt: str, max_depth: int = MAX_DEPTH) -> Outline:
    """The key tree of a JSON, YAML or TOML file; the text outline if it does not parse."""
    if fmt not in FORMATS:
        raise ValueError(f"unsupported data format: {fmt!r}")
    body = data.removeprefix(codecs.BOM_UTF8)  # same line numbers: the BOM holds no newline
    lines = LineIndex(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        return _fallback(data, fmt, f"invalid UTF-8 at line {lines.line_of(err.start)}")
    if fmt == "yaml":
        try:
            documents = yaml_documents(body, text)
        except yaml.YAMLError as err:
            return _fallback(data, fmt, _yaml_error(err, text, lines))
        emitter = Emitter(Yaml(), lines, max_depth)
        if len(documents) > 1:
            return emitter.outline_documents(fmt, documents)
        return emitter.outline(fmt, documents[0] if documents else None)
    if fmt == "jsonl":
        return _outline_lines(data, body, text, lines, max_depth)
    root = get_parser(fmt).parse(body).root_node
    if fmt == "toml":
        if root.has_error:
            return _fallback(data, fmt, _strict_error(fmt, text) or _tree_error(root, lines))
        return Emitter(Toml(body), lines, max_depth).outline(fmt, toml_table(root, body))
    values = [c for c in root.named_children if c.type != "comment"]
    if root.has_error or len(values) != 1:  # tree-sitter-json also takes several top-level values, or none
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            return _fallback(data, fmt, _strict_error(fmt, text) or _tree_error(root, lines))
        # Python's json took it: only numbers it takes and tree-sitter-json does not
        # (1E+2, NaN, -Infinity) can differ; same-length digits keep every span.
        body = _NUMBER.sub(lambda m: m.group(0) if m.group(0)[:1] == b'"' else b"1" * len(m.group(0)), body)
        root = get_parser(fmt).parse(body).root_node
        values = [c for c in root.named_children if c.type != "comment"]
        if root.has_error or len(values) != 1:
            return _fallback(data, fmt, _tree_error(root, lines))
    return Emitter(Json(body), lines, max_depth).outline(fmt, values[0])


def _outline_lines(data: bytes, body: bytes, text: str, lines: LineIndex, max_depth: int) -> Outline:
    """JSON Lines: tree-sitter-json reads a file of several values as one tree,
    each record a top-level value; a line that is no JSON is named."""
    root = get_parser("json").parse(body).root_node
    if root.has_error:
        for number, line in enumerate(text.split("\n"), 1):
            try:
                if line.strip():
                    json.loads(line)
            except ValueError as err:
                return _fallback(data, "jsonl", f"line {number} is not JSON: {getattr(err, 'msg', err)}")
        return _fallback(data, "jsonl", _tree_error(root, lines))
    values = [c for c in root.named_children if c.type != "comment"]
    return Emitter(Json(body), lines, max_depth).outline_records("jsonl", values)


# A JSON string (kept) or number, as Python's json reads them.
_NUMBER = re.compile(rb'"(?:[^"\\]|\\.)*"|-?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|Infinity)|NaN', re.S)


# --- errors ------------------------------------------------------------------


def _fallback(data: bytes, fmt: str, reason: str) -> Outline:
    plain = outline_text(data)
    notes = (f"{fmt.upper()} did not parse: {reason}",) + plain.notes
    return Outline("text", plain.entries, notes)


def _strict_error(fmt: str, text: str) -> str | None:
    """The stdlib parser's complaint about JSON or TOML that tree-sitter rejected."""
    try:
        if fmt == "json":
            json.loads(text)
        else:
            tomllib.loads(text)
    except json.JSONDecodeError as err:
        return f"{err.msg} at line {err.lineno} column {err.colno}"
    except tomllib.TOMLDecodeError as err:
        return str(err)
    except RecursionError:
        return None  # too deep for the stdlib; tree-sitter still knows where it broke
    return None


def _tree_error(root: Node, lines: LineIndex) -> str:
    """The first ERROR or MISSING node tree-sitter produced, as a short reason."""
    node = root
    while True:
        for child in node.children:
            if child.is_missing:
                return f"missing {child.type!r} at line {lines.line_of(child.start_byte)}"
            if child.is_error:
                return f"syntax error at line {lines.line_of(child.start_byte)}"
            if child.has_error:
                node = child
                break
        else:
            return f"syntax error at line {lines.line_of(node.start_byte)}"


def _yaml_error(err: yaml.YAMLError, text: str, lines: LineIndex) -> str:
    """libyaml's complaint, placed by the nasfs line rule (libyaml also breaks lines at a lone CR)."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return str(err).splitlines()[0]
    problem = getattr(err, "problem", None) or getattr(err, "context", None) or "invalid YAML"
    return f"{problem} at line {lines.line_of(ByteOffsets(text)(mark.index))}"
