"""The references of ``outline_recall.py`` for languages ctags 5.9 has no parser for (not a benchmark itself).

Scala: scalameta (npm ``scalameta-parsers``, the Scala.js build of the parser
scalafmt and metals use), run by ``reference/scalameta_defs.js`` under the
machine's ``node``. Swift: the ANTLR grammar of antlr/grammars-v4
(``swift/swift5``), built into a Java parser and run by
``reference/SwiftDefs.java``. Neither is tree-sitter, which the outlines use.
Both print what they find as ctags-like tags: kind, name, the name's line, end.

The Swift grammar is Swift 5.4's; public Swift code of today is full of what came
after it (``async``/``await``, ``actor``, ``any P``, ``@unchecked Sendable``,
``package``, ``nonisolated``, ``public import``), and one such token makes it drop the whole
declaration around it. So a few rules are widened here before ANTLR generates
the parser; each edit must apply (a grammar that moved on is an error, never a
silent half-patched reference). The result is built with Debian's ``antlr4``
(Java target) and ``javac``, with ``reference/SwiftDefs.java``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

RUNTIME = "/usr/share/java/antlr4-runtime.jar"
HERE = Path(__file__).resolve().parent / "reference"

# New contextual keywords: tokens of their own, still usable as identifiers.
_KEYWORDS = {"ASYNC": "async", "AWAIT": "await", "ACTOR": "actor", "NONISOLATED": "nonisolated",
             "PACKAGE": "package", "ANY_KW": "any", "CONSUMING": "consuming", "BORROWING": "borrowing"}

LEXER_EDITS = [
    ("FUNC               : 'func';\n",
     "FUNC               : 'func';\n" + "".join(f"{t:<19}: '{w}';\n" for t, w in _KEYWORDS.items())),
]
PARSER_EDITS = [
    # ``func f() async throws -> T``, ``init() async throws``, ``() async -> T``, ``{ () async in }``
    ("function_signature\n    : parameter_clause (THROWS? | RETHROWS) function_result?",
     "function_signature\n    : parameter_clause ASYNC? (THROWS? | RETHROWS) ASYNC? function_result?"),
    ("initializer_head generic_parameter_clause? parameter_clause (THROWS | RETHROWS)? generic_where_clause? initializer_body",
     "initializer_head generic_parameter_clause? parameter_clause ASYNC? (THROWS | RETHROWS)? generic_where_clause? initializer_body"),
    ("initializer_head generic_parameter_clause? parameter_clause (THROWS? | RETHROWS) generic_where_clause?",
     "initializer_head generic_parameter_clause? parameter_clause ASYNC? (THROWS? | RETHROWS) generic_where_clause?"),
    ("attributes? function_type_argument_clause THROWS? arrow_operator type",
     "attributes? function_type_argument_clause ASYNC? THROWS? arrow_operator type"),
    ("capture_list? closure_parameter_clause THROWS? function_result? IN",
     "capture_list? closure_parameter_clause ASYNC? THROWS? function_result? IN"),
    # ``try await f()``, ``await f()``
    ("expression\n    : try_operator? prefix_expression binary_expressions?",
     "expression\n    : try_operator? AWAIT? prefix_expression binary_expressions?"),
    # ``class A: @unchecked Sendable, B``, ``struct S: ~Copyable``
    ("type_inheritance_list\n    : type_identifier (COMMA type_identifier)*",
     "type_inheritance_list\n    : attributes? TILDE? type_identifier (COMMA attributes? TILDE? type_identifier)*"),
    # ``actor A { }`` reads as a class
    ("FINAL access_level_modifier?) CLASS class_name",
     "FINAL access_level_modifier?) (CLASS | ACTOR) class_name"),
    # ``package func``, ``nonisolated func``, ``consuming func``
    ("(PRIVATE | FILE_PRIVATE | INTERNAL | PUBLIC | OPEN) (LPAREN SET RPAREN)?",
     "(PRIVATE | FILE_PRIVATE | INTERNAL | PUBLIC | OPEN | PACKAGE) (LPAREN SET RPAREN)?"),
    ("    | WEAK\n    | access_level_modifier",
     "    | WEAK\n    | NONISOLATED\n    | CONSUMING\n    | BORROWING\n    | access_level_modifier"),
    # ``public import M`` (Swift 6)
    ("import_declaration\n    : attributes? IMPORT import_kind? import_path",
     "import_declaration\n    : attributes? access_level_modifier? IMPORT import_kind? import_path"),
    # ``any P``
    ("    | any_type\n    | self_type", "    | any_type\n    | ANY_KW type\n    | self_type"),
    # the new keywords stay identifiers (``let actor = ...``, ``case any``)
    ("        | CATCH\n    )\n    | Identifier",
     "        | CATCH\n" + "".join(f"        | {t}\n" for t in _KEYWORDS) + "    )\n    | Identifier"),
]


def _edit(text: str, edits: list[tuple[str, str]], name: str) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise SystemExit(f"{name}: expected exactly one {old.splitlines()[0]!r}; the grammar changed, update swift_grammar.py")
        text = text.replace(old, new)
    return text


def build_swift(grammar: Path, build_dir: Path) -> Path:
    """Patch, generate and compile into ``build_dir`` (once); the class path to run ``SwiftDefs``."""
    classes = build_dir / "classes"
    stamp = classes / "SwiftDefs.class"
    sources = [grammar / "Swift5Lexer.g4", grammar / "Swift5Parser.g4", HERE / "SwiftDefs.java", Path(__file__)]
    if not sources[0].is_file():
        raise SystemExit(f"--swift-grammar {grammar}: no Swift5Lexer.g4 there; give grammars-v4's swift/swift5 folder")
    if stamp.is_file() and all(stamp.stat().st_mtime >= s.stat().st_mtime for s in sources):
        return classes
    for tool in ("antlr4", "javac"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found: apt-get install antlr4 default-jdk-headless")
    src = build_dir / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "Swift5Lexer.g4").write_text(_edit((grammar / "Swift5Lexer.g4").read_text(), LEXER_EDITS, "Swift5Lexer.g4"))
    (src / "Swift5Parser.g4").write_text(_edit((grammar / "Swift5Parser.g4").read_text(), PARSER_EDITS, "Swift5Parser.g4"))
    for support in (grammar / "Java").glob("*.java"):
        shutil.copy(support, src)
    shutil.copy(HERE / "SwiftDefs.java", src)
    subprocess.run(["antlr4", "-Dlanguage=Java", "Swift5Lexer.g4", "Swift5Parser.g4"], cwd=src, check=True)
    classes.mkdir(exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-cp", RUNTIME, "-d", str(classes), *map(str, src.glob("*.java"))], check=True)
    return classes


def run(command: list[str], paths: list[str], env: dict[str, str] | None = None) -> dict[str, dict]:
    """Run a reference over ``paths`` (in batches: one process start each); its JSON line per path."""
    found: dict[str, dict] = {}
    for at in range(0, len(paths), 50):
        out = subprocess.run([*command, *paths[at : at + 50]], capture_output=True, text=True, check=False,
                             env={**os.environ, **(env or {})})
        if out.returncode != 0:
            raise SystemExit(f"{command[0]} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
        for line in out.stdout.splitlines():
            record = json.loads(line)
            found[record["path"]] = record
    return found


class Reference:
    """One language's reference: its name for the report, and how to run it over files.

    With a ``cache`` file, what it found is kept there by the SHA-1 of each file's
    bytes (the Swift parser takes seconds a file; a rerun over the same files is then
    as fast as the outlines).
    """

    def __init__(self, name: str, command: list[str], env: dict[str, str] | None = None,
                 cache: Path | None = None) -> None:
        self.name, self.command, self.env, self.cache = name, command, env, cache

    def tags(self, paths: list[str]) -> dict[str, dict]:
        if self.cache is None:
            return run(self.command, paths, self.env)
        known: dict[str, dict] = json.loads(self.cache.read_text()) if self.cache.is_file() else {}
        keys = {p: hashlib.sha1(Path(p).read_bytes()).hexdigest() for p in paths}
        missing = [p for p in paths if keys[p] not in known]
        if missing:
            for path, record in run(self.command, missing, self.env).items():
                known[keys[path]] = record
            self.cache.write_text(json.dumps(known))
        return {p: {**known[keys[p]], "path": p} for p in paths}


def scalameta(folder: Path) -> Reference:
    """``folder`` holds ``node_modules/scalameta-parsers`` (``npm install scalameta-parsers`` there)."""
    package = folder / "node_modules" / "scalameta-parsers" / "package.json"
    if not package.is_file():
        raise SystemExit(f"--scalameta {folder}: no node_modules/scalameta-parsers there; run npm install scalameta-parsers in it")
    if shutil.which("node") is None:
        raise SystemExit("node not found: the Scala reference runs under node")
    version = json.loads(package.read_text())["version"]
    return Reference(f"scalameta-parsers {version} (npm)", ["node", str(HERE / "scalameta_defs.js")],
                     {"NODE_PATH": str(folder / "node_modules")})


def swift(grammar: Path, build_dir: Path, timeout: float) -> Reference:
    """Build (once) and run the patched grammars-v4 Swift 5 parser; ``timeout`` seconds a file."""
    classes = build_swift(grammar, build_dir)
    limit = str(int(timeout * 1000))
    cache = build_dir / f"found-{limit}ms.json"
    if cache.is_file() and cache.stat().st_mtime < (classes / "SwiftDefs.class").stat().st_mtime:
        cache.unlink()  # found by a parser built before this one
    return Reference("ANTLR grammars-v4 swift/swift5 (Swift 5.4, patched: see _outline_references.py)",
                     ["java", "-Xss64m", "-cp", f"{classes}:{RUNTIME}", "SwiftDefs", limit], cache=cache)
