"""Benchmark of code outlines against universal-ctags, scalameta and an ANTLR Swift parser (issue 10, part 1).

    .venv/bin/python scripts/bench/outline_recall.py CORPUS [--per-language 20] [--worst 12] [--misses 0]
        [--scalameta DIR] [--swift-grammar DIR [--swift-build DIR] [--swift-timeout 20]]

CORPUS is a folder of public source (repositories extracted with ``git
archive``; nothing of it is committed). Per language (as nasfs names a file's
language) up to --per-language files are picked in a fixed order (by the
SHA-1 of their path under CORPUS, so the pick is stable and does not favour
large or small files), among files where ctags finds at least one structural
definition (minified files are left out). Each file is run through ``ctags --output-format=json --fields=+ne``
(the baseline, in the same run) and ``nasfs.outline.code.outline_code``.

Structural definitions are ctags' classes, structs, interfaces, enums,
traits, objects, functions, methods and namespaces/modules (not fields,
variables, macros, typedefs or prototypes). One is *found* when the outline has
an entry of the same name (the last part of a qualified name) whose signature
line is ctags' line: the entry's first line, or the line its label is taken
from (an entry starts at its first decorator or ``template <...>``, ctags at
the name). A ``typedef struct tag {...} name;`` is found under either name (the
outline names it by its typedef), and a JavaScript ``key: function name()``
under its key (ctags names it by the function's own name). Of the found ones, *end* counts those whose last line is ctags'
``end``. Printed: the CPU time of the outlines against one ctags run over
the same files, both shares per language and overall, the worst files, and (with
--misses N) up to N missed definitions per language.

ctags 5.9 has no Swift or Scala parser. With ``--scalameta DIR`` (a folder
where ``npm install scalameta-parsers`` was run) Scala files are measured
against scalameta's syntax tree, and with ``--swift-grammar DIR``
(antlr/grammars-v4's ``swift/swift5``; needs Debian's ``antlr4`` and a JDK)
Swift files against an ANTLR parser built from that grammar (see
``_outline_references.py``). Their definitions are classes, traits, objects,
enums, ``def``s (Scala), classes, structs, enums, protocols, extensions,
functions, ``init``/``deinit`` and subscripts (Swift), each at its name's line.
A file the reference cannot parse whole (a syntax error, or over
--swift-timeout seconds) is not picked, and is counted in the report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import _outline_references as R  # noqa: E402

from nasfs.lines import LineIndex  # noqa: E402
from nasfs.outline.code import language_for, outline_code  # noqa: E402
from nasfs.outline.model import Entry  # noqa: E402

STRUCTURAL = frozenset(
    {
        "class", "struct", "interface", "enum", "trait", "object", "function", "func",
        "method", "singletonMethod", "namespace", "module", "generator", "getter", "setter",
    }
)
SEPARATORS = str.maketrans({c: " " for c in ".:\\/"})


def short(name: str) -> str:
    """Last part of a qualified name: ``M.new`` / ``A::f`` / ``App\\X`` -> the last one;
    C++ operators without spaces (ctags' ``operator ()`` is the outline's ``operator()``)."""
    if "operator" in name:
        return "operator" + "".join(name.rsplit("operator", 1)[1].split())
    parts = name.translate(SEPARATORS).split()
    return parts[-1] if parts else name


@dataclass
class FileResult:
    path: str
    language: str
    defs: int = 0
    found: int = 0
    ends: int = 0
    partial: bool = False
    misses: list[str] = field(default_factory=list)
    bad_ends: list[str] = field(default_factory=list)


def not_a_definition(tag: dict) -> str | None:
    """Why a structural ctags tag names no definition an outline can list, or None.

    Counted and printed, never silently dropped: anonymous functions and
    lambdas (ctags makes up ``AnonymousFunction…``, ``<lambda>``, ``__anon…``),
    imports (``import simplejson as json`` is a Python ``namespace`` with a
    ``nameref``), and names that are no identifier, which ctags' Sh parser
    makes of ``local cc_args=()`` (``cc_args=``) and its Lua parser of
    ``t[key] = function``. Two tags of ctags' own that name no definition are
    also left out: Kotlin "methods" on a line without ``fun`` (ctags' Kotlin
    parser tags ``for (i in 1..5)`` and lambda parameters ``use { source ->``
    as methods), JavaScript "classes" on a line without ``class`` or
    ``function`` (object literals: ``var headers = { ... }``), and Lua
    "functions" whose value is not a function (ctags' Lua parser names whatever
    stands left of ``= ... function``: a call's result ``opts.plugins =
    vim.tbl_map(function(p)``, a default ``cb = cb or function() end``, even
    ``local f = require "plenary.functional"``).
    """
    name = tag["name"]
    if name.startswith(("AnonymousFunction", "__anon", "<")):
        return "anonymous"
    if "nameref" in tag:
        return "import"
    if not name.startswith("operator") and any(c in name for c in "=[]() "):
        return "not a name"
    pattern = tag.get("pattern", "")
    if tag["language"] == "kotlin" and tag["kind"] == "method" and not re.search(r"\bfun\b", pattern):
        return "not a function"
    if tag["language"] == "javascript" and tag["kind"] == "class" and not re.search(r"\b(class|function)\b", pattern):
        return "object literal"
    if tag["language"] == "lua" and (value := re.search(r"=\s*(?!=)(.*?)\bfunction", pattern)) and value.group(1):
        return "not a function value"
    return None


def ctags_defs(path: Path, dropped: Counter[tuple[str, str]], language: str) -> list[dict]:
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+ner", "--sort=no", "-f", "-", str(path)],
        capture_output=True, text=True, check=False,
    ).stdout
    defs = []
    seen: set[tuple[str, int]] = set()  # ctags tags ``app.init = function init`` as a class and a function
    typedefs: dict[str, str] = {}  # ``typedef struct config_s {...} config;``: config_s -> config
    for line in out.splitlines():
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue
        if tag.get("kind") == "typedef" and str(tag.get("typeref", "")).startswith(("struct:", "union:", "enum:")):
            typedefs[tag["typeref"].split(":", 1)[1]] = tag["name"]
        if tag.get("_type") != "tag" or tag.get("kind") not in STRUCTURAL:
            continue
        tag["language"] = language
        why = not_a_definition(tag) or ("duplicate" if (tag["name"], tag["line"]) in seen else None)
        if why is None:
            seen.add((tag["name"], tag["line"]))
            defs.append(tag)
        else:
            dropped[(language, why)] += 1
    for tag in defs:
        if tag["name"] in typedefs:
            tag["alias"] = typedefs[tag["name"]]
    return defs


def reference_defs(record: dict, language: str, dropped: Counter[tuple[str, str]]) -> list[dict]:
    """A reference's tags of one file, as ctags' (anonymous ones, ``given Ord[Int] with``, counted apart)."""
    defs = []
    for tag in record["defs"]:
        if tag["name"].startswith("<"):
            dropped[(language, "anonymous")] += 1
        else:
            defs.append({**tag, "language": language})
    return defs


def signature_lines(entry: Entry, lines: LineIndex) -> set[int]:
    """The entry's first line and the line its label was taken from."""
    found = {entry.start}
    head = entry.label.split(" … ")[0][:24]
    for number in range(entry.start, min(entry.end, entry.start + 40) + 1):
        line = " ".join(lines.slice(number, number).decode("utf-8", "replace").split())
        # A label may join several lines, and leaves out the macros blanked before parsing.
        if line and (head in line or head.startswith(line)):
            found.add(number)
            break
    return found


def measure(root: Path, rel: str, language: str, defs: list[dict]) -> FileResult:
    data = (root / rel).read_bytes()
    lines = LineIndex(data)
    outline = outline_code(data, language, lines)
    result = FileResult(rel, language, defs=len(defs))
    if outline is None:
        return result
    result.partial = getattr(outline, "partial", False)
    at: dict[tuple[str, int], Entry] = {}
    by_line: dict[int, list[Entry]] = defaultdict(list)
    for entry in outline.entries:
        if entry.path:
            for number in signature_lines(entry, lines):
                at.setdefault((short(entry.path[-1]), number), entry)
                by_line[number].append(entry)
    for tag in defs:
        entry = at.get((short(tag["name"]), tag["line"]))
        if entry is None and "alias" in tag:  # the outline names a typedef'd struct by its typedef
            entry = at.get((tag["alias"], tag["line"]))
        if entry is None:  # ``_onBlur: function onBlur()``: the outline names it by its key
            entry = next((e for e in by_line.get(tag["line"], ()) if f"function {tag['name']}(" in e.label), None)
        where = f"{rel}:{tag['line']} {tag['kind']} {tag['name']}"
        if entry is None:
            result.misses.append(where)
            continue
        result.found += 1
        if "end" not in tag or entry.end == tag["end"]:
            result.ends += 1
        else:
            result.bad_ends.append(f"{where} ends L{tag['end']}, outline L{entry.end}")
    return result


def minified(path: str) -> bool:
    """Generated, not written: ``jquery.min.js`` (lines of over 300 characters on average)."""
    with open(path, "rb") as fh:
        head = fh.read(65536)
    return len(head) > 2000 and len(head) / (head.count(b"\n") + 1) > 300


def pick(
    root: Path, per_language: int, dropped: Counter[tuple[str, str]], references: dict[str, R.Reference],
    unparsed: dict[str, list[str]],
) -> dict[str, list[tuple[str, list[dict]]]]:
    """Up to ``per_language`` files per language with a structural definition, in SHA-1 order.

    Languages in ``references`` are read by that reference (files it cannot parse
    whole are listed in ``unparsed`` with the reason, and passed over), the others by ctags.
    """
    candidates: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), root)
            language = language_for(rel)
            if language is not None and not minified(os.path.join(folder, name)):
                candidates[language].append((hashlib.sha1(rel.encode()).hexdigest(), rel))
    chosen: dict[str, list[tuple[str, list[dict]]]] = {}
    for language, items in sorted(candidates.items()):
        ordered = [rel for _, rel in sorted(items)]
        picked: list[tuple[str, list[dict]]] = []
        if language in references:
            for at in range(0, len(ordered), per_language):
                if len(picked) == per_language:
                    break
                batch = ordered[at : at + per_language]
                records = references[language].tags([str(root / rel) for rel in batch])
                for rel in batch:
                    record = records[str(root / rel)]
                    if record["errors"] or record.get("timeout"):
                        why = "timeout" if record.get("timeout") else record.get("error") or "syntax error"
                        unparsed[language].append(f"{rel}: {why}")
                        continue
                    skipped: Counter[tuple[str, str]] = Counter()
                    defs = reference_defs(record, language, skipped)
                    if defs and len(picked) < per_language:
                        dropped.update(skipped)
                        picked.append((rel, defs))
        else:
            for rel in ordered:
                if len(picked) == per_language:
                    break
                skipped = Counter()
                defs = ctags_defs(root / rel, skipped, language)
                if defs:
                    dropped.update(skipped)
                    picked.append((rel, defs))
        if picked:
            chosen[language] = picked
    return chosen


def speed(root: Path, paths: list[str], results: dict[str, list[FileResult]]) -> None:
    """CPU time of the outlines (in process, parse included, best of 3) against ctags' over the same files.

    CPU time, not wall time: the machine is shared, and CPU time moves far less with its load.
    """
    language = {r.path: r.language for rows in results.values() for r in rows}
    blobs = [((root / p).read_bytes(), language[p]) for p in paths]
    ours = float("inf")
    for _ in range(3):
        started = time.process_time()
        for data, lang in blobs:
            outline_code(data, lang)
        ours = min(ours, time.process_time() - started)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["ctags", "--output-format=json", "--fields=+ner", "-f", "/dev/null", *(str(root / p) for p in paths)],
                   capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    theirs = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    size = sum(len(d) for d, _ in blobs)
    print(f"CPU time: outlines of the {len(paths)} files ({size / 1e6:.1f} MB) {ours:.2f} s (best of 3), "
          f"ctags over them {theirs:.2f} s (ratio {ours / theirs:.2f})")
    print()


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="folder of public source files (not committed)")
    ap.add_argument("--per-language", type=int, default=20)
    ap.add_argument("--worst", type=int, default=12, help="how many worst files to list")
    ap.add_argument("--misses", type=int, default=0, help="missed definitions listed per language")
    ap.add_argument("--scalameta", type=Path, help="folder holding node_modules/scalameta-parsers (Scala's reference)")
    ap.add_argument("--swift-grammar", type=Path, help="grammars-v4's swift/swift5 folder (Swift's reference)")
    ap.add_argument("--swift-build", type=Path, help="where the Swift parser is built (default: SWIFT_GRAMMAR/build)")
    ap.add_argument("--swift-timeout", type=float, default=20.0, help="seconds the Swift reference gets per file")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        ap.error(f"corpus {args.corpus} is not a folder; give a folder of source files")
    C.banner("outline recall against universal-ctags")
    version = subprocess.run(["ctags", "--version"], capture_output=True, text=True, check=False).stdout
    print(f"baseline: {version.splitlines()[0] if version else 'ctags not found'}")
    references: dict[str, R.Reference] = {}
    if args.scalameta:
        references["scala"] = R.scalameta(args.scalameta.resolve())
    if args.swift_grammar:
        grammar = args.swift_grammar.resolve()
        references["swift"] = R.swift(grammar, (args.swift_build or grammar / "build").resolve(), args.swift_timeout)
    for language, reference in sorted(references.items()):
        print(f"baseline for {language}: {reference.name}")
    sources = args.corpus / "SOURCES"
    if sources.is_file():
        print("corpus sources (repository commit):")
        for line in sources.read_text().splitlines():
            print(f"  {line}")
    print()
    results: dict[str, list[FileResult]] = {}
    dropped: Counter[tuple[str, str]] = Counter()
    unparsed: dict[str, list[str]] = defaultdict(list)
    for language, files in pick(args.corpus.resolve(), args.per_language, dropped, references, unparsed).items():
        results[language] = [measure(args.corpus.resolve(), rel, language, defs) for rel, defs in files]
    speed(args.corpus.resolve(), [r.path for rows in results.values() for r in rows], results)
    print(f"{'language':<12}{'files':>6}{'defs':>7}{'recall':>9}{'ends':>9}{'partial':>9}")
    total = [0, 0, 0]
    for language, rows in results.items():
        defs = sum(r.defs for r in rows)
        found = sum(r.found for r in rows)
        ends = sum(r.ends for r in rows)
        total = [total[0] + defs, total[1] + found, total[2] + ends]
        partial = sum(r.partial for r in rows)
        print(f"{language:<12}{len(rows):>6}{defs:>7}{share(found, defs):>9}{share(ends, found):>9}{partial:>9}")
    print(f"{'overall':<12}{sum(map(len, results.values())):>6}{total[0]:>7}"
          f"{share(total[1], total[0]):>9}{share(total[2], total[1]):>9}")
    if unparsed:
        print("\nfiles passed over because their reference did not parse them whole: "
              + ", ".join(f"{lang} {len(files)}" for lang, files in sorted(unparsed.items())))
        for lang, files in sorted(unparsed.items()):
            for line in files[: args.misses]:
                print(f"  {lang:<10} {line[:160]}")
    if dropped:
        print("\ntags not counted (see not_a_definition, reference_defs): "
              + ", ".join(f"{lang} {why} {n}" for (lang, why), n in sorted(dropped.items())))
    every = [r for rows in results.values() for r in rows]
    print("\nworst files (missed definitions, then wrong ends):")
    for r in sorted(every, key=lambda r: (r.found - r.defs, r.ends - r.found))[: args.worst]:
        print(f"  {r.language:<10} {r.path}: found {r.found}/{r.defs}, ends {r.ends}/{r.found}"
              + (" (partial)" if r.partial else ""))
    if args.misses:
        for language, rows in results.items():
            missed = [m for r in rows for m in r.misses]
            bad = [m for r in rows for m in r.bad_ends]
            if missed or bad:
                print(f"\n{language}: {len(missed)} missed, {len(bad)} wrong ends")
                for m in missed[: args.misses]:
                    print(f"  miss {m}")
                for m in bad[: args.misses]:
                    print(f"  end  {m}")


if __name__ == "__main__":
    main()
