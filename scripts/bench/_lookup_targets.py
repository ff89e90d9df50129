"""Look-up targets for ``outline_cost.py``, from parsers independent of nasfs's outliners.

Each function gives (qualified name, first line, last line) of every target in
a file's text: markdown-it-py's headings, ``ast``'s symbols, PyYAML's keys
(JSON and YAML, several documents too), Python's ``json`` for JSON Lines, a
line scanner checked by ``tomllib`` for TOML.
"""

from __future__ import annotations

import ast
import html
import json
import re

import yaml
from markdown_it import MarkdownIt


def markdown_targets(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Top-level headings with the section each runs (to the next of the same or higher level)."""
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    lines = text.split("\n")
    skip = 0  # YAML front matter is not Markdown
    if lines[0].rstrip("\r") == "---":
        skip = next((i + 1 for i in range(1, len(lines)) if lines[i].rstrip("\r") in ("---", "...")), 0)
    md = MarkdownIt("commonmark")
    tokens = md.parse("\n".join(lines[skip:]))
    heads = [(int(t.tag[1]), skip + t.map[0] + 1, plain(md.renderInline(tokens[i + 1].content)))
             for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0]
    found, stack = [], []
    for n, (level, line, title) in enumerate(heads):
        end = next((later - 1 for lv, later, _ in heads[n + 1:] if lv <= level), total)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        found.append((tuple(t for _, t in stack), line, end))
    return found


def plain(html_text: str) -> str:
    """Rendered heading HTML as the words a reader sees (tags dropped, entities decoded)."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", "", html_text)).split())


def python_targets(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Module-level functions and classes, and the functions and classes in those classes."""
    found = []

    def visit(body: list[ast.stmt], prefix: tuple[str, ...]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((prefix + (node.name,), start, node.end_lineno or node.lineno))
                if isinstance(node, ast.ClassDef) and not prefix:
                    visit(node.body, (node.name,))

    visit(ast.parse(text).body, ())
    return found


def data_targets(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Every mapping key (array elements named by index), from the key's line to its value's last line."""
    lines = text.split("\n")
    found = []

    def last_line(node: yaml.Node) -> int:
        """A scalar's or flow collection's end mark is exact; a block collection ends with its last child."""
        while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
            node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
        mark = node.end_mark
        line = mark.line if mark.column == 0 else mark.line + 1  # column 0: it ended with the line before
        while line > node.start_mark.line + 1 and not lines[line - 1].strip():
            line -= 1
        return line

    documents = list(yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    # several documents: each named by its number from 1, as "--- document 3" reads
    stack = [((), documents[0])] if len(documents) == 1 else [((str(n),), d) for n, d in enumerate(documents, 1)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = path + (str(key.value),)
                found.append((name, key.start_mark.line + 1, max(key.start_mark.line + 1, last_line(value))))
                stack.append((name, value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                stack.append((path + (str(index),), item))
    return found


def jsonl_targets(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """Every key of every record of JSON Lines (Python's json), records named by
    their index from 0; a record's keys are on its line."""
    found = []
    index = 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        stack = [((str(index),), json.loads(line))]
        index += 1
        while stack:
            path, value = stack.pop()
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for key, inner in items:
                if isinstance(value, dict):
                    found.append((path + (str(key),), number, number))
                if isinstance(inner, (dict, list)):
                    stack.append((path + (str(key),), inner))
    return found


TOML_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?")
TOML_KEY = re.compile(r"\s*([A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')\s*=")


def toml_targets(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """``key = value`` keys under ``[table]`` and ``[[array]]`` headers, read
    by line (stdlib tomllib has no positions) and kept only where tomllib finds
    the same path; a key runs to the line before the next key, header or blank."""
    import tomllib

    data = tomllib.loads(text)
    lines = text.split("\n")
    found, prefix, counts = [], (), {}
    starts = []  # (line, path) of each key, in order
    for number, line in enumerate(lines, 1):
        header = TOML_HEADER.fullmatch(line)
        if header and not line.lstrip().startswith(("#",)):
            parts = tuple(p.strip().strip('"').strip("'") for p in header.group(2).split("."))
            if header.group(1) == "[[":
                counts[parts] = counts.get(parts, -1) + 1
                prefix = parts + (str(counts[parts]),)
            else:
                prefix = parts
            starts.append((number, None))
            continue
        key = TOML_KEY.match(line)
        if key:
            starts.append((number, prefix + (key.group(1).strip('"').strip("'"),)))

    def has(path: tuple[str, ...]) -> bool:
        node = data
        for part in path:
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return False
        return True

    for i, (number, path) in enumerate(starts):
        if path is None or not has(path):
            continue
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines)
        while end > number and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        found.append((path, number, end))
    return found


def targets(family: str, text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """A file's targets; a name several share (overloads, repeated headings) only by its first,
    since the agent looks it up by name."""
    try:
        parse = {"markdown": markdown_targets, "python": python_targets, "toml": toml_targets,
                 "jsonl": jsonl_targets}.get(family, data_targets)
        found = parse(text)
    except (SyntaxError, ValueError, yaml.YAMLError, RecursionError):  # tomllib's error is a ValueError
        return []
    first: dict[tuple[str, ...], tuple[tuple[str, ...], int, int]] = {}
    for target in sorted(found, key=lambda t: t[1]):
        first.setdefault(target[0], target)
    return list(first.values())
