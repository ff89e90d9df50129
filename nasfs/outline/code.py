"""Source-code outlines from tree-sitter: classes, functions, methods, types.

Speed matters (whole trees are outlined and compared against ``ctags -R``), so
the walk never visits every node: it only looks at the children of *container*
nodes (module bodies, class bodies, blocks, namespaces, export statements ...)
and of definitions that can hold further definitions. Per language, a small
table maps definition node types to a handler that pulls out the qualified
name, the node whose line is the signature, and the body.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from nasfs.lines import LineIndex
from nasfs.outline.model import Entry, Outline

if TYPE_CHECKING:  # tree-sitter loads on first parse: ``language_for`` alone must stay cheap
    from tree_sitter import Node, Parser

    # (qualified name parts, node whose line is the label, body, LEAF|SCOPE|FUNC).
    # Empty parts: no entry of its own, but the body is still walked
    # (anonymous namespace, ``class << self``).
    Found = tuple[tuple[str, ...], Node, Node | None, int]
    Handler = Callable[[Node], Found | None]

MAX_LABEL = 160

# How a definition's body is walked.
LEAF, SCOPE, FUNC = 0, 1, 2  # not at all / for members / for nested functions

COMMENTS = frozenset({"comment", "line_comment", "block_comment"})


# Flags for non-definition node types in a Spec's action table.
CONTAIN, WRAP, TOP, LEAD, COMMENT = 1, 2, 4, 8, 16


class Spec:
    """What to look for in one grammar, folded into one node-type -> action table.

    ``containers`` are walked for definitions; ``wrappers`` are containers whose
    start is the start of the definition they wrap (decorators, ``export``,
    ``template <...>``); ``leading`` are sibling nodes directly above a
    definition that belong to it (``#[attr]``, member decorators);
    ``toplevel`` are containers only walked outside function bodies (so
    ``const f = () => ...`` is an entry at top level, not inside functions).
    A single dict lookup per visited node keeps the walk cheap.

    ``nested`` are patterns one of which matches the text of any function body
    that holds a definition (``def\\s``, ``class\\s``); bodies none matches are
    skipped unread, which saves walking most function bodies statement by
    statement. One literal-prefixed pattern per keyword: ``re`` scans those far
    faster than an alternation.
    """

    __slots__ = ("actions", "nested")

    def __init__(
        self,
        defs: dict[str, Handler],
        containers: frozenset[str],
        wrappers: frozenset[str] = frozenset(),
        leading: frozenset[str] = frozenset(),
        toplevel: frozenset[str] = frozenset(),
        nested: tuple[bytes, ...] = (),
    ) -> None:
        self.nested = tuple(re.compile(p) for p in nested)
        flags: dict[str, int] = dict.fromkeys(COMMENTS, COMMENT)
        for kind in containers:
            flags[kind] = CONTAIN
        for kind in toplevel:
            flags[kind] = CONTAIN | TOP
        for kind in wrappers:
            flags[kind] = flags.get(kind, CONTAIN) | WRAP
        for kind in leading:
            flags[kind] = LEAD
        self.actions: dict[str, Handler | int] = {**flags, **defs}


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _named(nest: int, name: str = "name", body: str | None = "body") -> Handler:
    """Handler for the common shape: a ``name`` field and maybe a ``body`` field."""

    def handle(node: Node) -> Found | None:
        n = node.child_by_field_name(name)
        if n is None:
            return None
        return (_text(n),), n, node.child_by_field_name(body) if body else None, nest

    return handle


def _with_body(nest: int) -> Handler:
    """Like ``_named`` but only for nodes with a body (``struct S {...}``, not ``struct S *p``)."""

    def handle(node: Node) -> Found | None:
        body = node.child_by_field_name("body")
        if body is None:
            return None
        n = node.child_by_field_name("name")
        if n is None:
            return (), node, body, nest
        return (_text(n),), n, body, nest

    return handle


def _scoped_named(nest: int) -> Handler:
    """Named definition whose name may be qualified (``class Foo::Bar``, ``namespace a::b``)."""

    def handle(node: Node) -> Found | None:
        n = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if n is None:
            return (), node, body, nest
        parts = tuple(p.strip() for p in _text(n).split("::") if p.strip())
        return parts, n, body, nest

    return handle


# --- C / C++ ---------------------------------------------------------------

_DECLARATOR_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "function_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "array_declarator",
        "attributed_declarator",
    }
)


_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "operator_cast",
        "template_function",
    }
)


def _c_declared(decl: Node | None) -> Node | None:
    """The name node inside a (pointer/function/reference ...) declarator, if it has one.

    Macro-heavy code parses into odd declarators (expressions, ERROR); those have no name.
    """
    while decl is not None and decl.type in _DECLARATOR_WRAPPERS:
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in decl.named_children if c.type not in COMMENTS), None)
        decl = inner
    return decl if decl is not None and decl.type in _C_NAMES else None


_C_NAME_FIELDS = {"template_type": "name", "template_function": "name", "operator_cast": "type"}


def _c_unqualified(node: Node) -> str:
    """``A<T>`` -> ``A``; ``operator int*() const`` -> ``operator int``."""
    field = _C_NAME_FIELDS.get(node.type)
    inner = node.child_by_field_name(field) if field else None
    if inner is None:
        return _text(node)
    return f"operator {_text(inner)}" if node.type == "operator_cast" else _text(inner)


def _c_parts(node: Node) -> tuple[str, ...]:
    """``A<T>::B::f`` -> ("A", "B", "f")."""
    parts: list[str] = []
    while node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is not None:
            parts.append(_c_unqualified(scope))
        name = node.child_by_field_name("name")
        if name is None:
            return tuple(parts)
        node = name
    parts.append(_c_unqualified(node))
    return tuple(parts)


def _c_function(node: Node) -> Found | None:
    name = _c_declared(node.child_by_field_name("declarator"))
    if name is None:
        return None
    return _c_parts(name), name, node.child_by_field_name("body"), LEAF


def _c_typedef(node: Node) -> Found | None:
    name = _c_declared(node.child_by_field_name("declarator"))
    if name is None:
        return None
    kind = node.child_by_field_name("type")
    body = kind.child_by_field_name("body") if kind is not None else None
    return (_text(name),), node, body, SCOPE


_C_DEFS: dict[str, Handler] = {
    "function_definition": _c_function,
    "struct_specifier": _with_body(SCOPE),
    "union_specifier": _with_body(SCOPE),
    "enum_specifier": _with_body(LEAF),
    "type_definition": _c_typedef,
}
_C_CONTAINERS = frozenset(
    {
        "translation_unit",
        "linkage_specification",  # extern "C" { ... }, also in C headers
        "declaration_list",
        "declaration",
        "field_declaration",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "ERROR",
    }
)

# --- Go / Rust ---------------------------------------------------------------

_TYPE_WRAPPERS = {
    "generic_type": "type",
    "reference_type": "type",
    "pointer_type": "type",
    "parenthesized_type": "type",
    "array_type": "element",
    "scoped_type_identifier": "name",
    "qualified_type": "name",
}


def _type_name(node: Node) -> str:
    """Bare type name of ``*S``, ``S[T]``, ``&'a mod::S<T>``, ``[S]`` -> ``S``."""
    while node.type in _TYPE_WRAPPERS:
        inner = node.child_by_field_name(_TYPE_WRAPPERS[node.type])
        if inner is None:
            named = node.named_children
            if not named:
                break
            inner = named[-1]
        node = inner
    return _text(node)


def _go_method(node: Node) -> Found | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    parts: tuple[str, ...] = (_text(name),)
    receiver = node.child_by_field_name("receiver")
    if receiver is not None:
        for param in receiver.named_children:
            kind = param.child_by_field_name("type")
            if kind is not None:
                parts = (_type_name(kind), *parts)
                break
    return parts, name, node.child_by_field_name("body"), LEAF


def _go_type(node: Node) -> Found | None:
    """``type S struct {...}`` / ``type S = T`` inside a ``type`` declaration."""
    name = node.child_by_field_name("name")
    if name is None:
        return None
    kind = node.child_by_field_name("type")
    body = None
    if kind is not None and kind.type in ("struct_type", "interface_type"):
        named = kind.named_children
        body = named[0] if named else None
    return (_text(name),), _go_type_anchor(node, name), body, LEAF


def _go_type_anchor(spec: Node, name: Node) -> Node:
    """``type S struct`` labels from ``type``; inside ``type ( ... )`` from the name."""
    decl = spec.parent
    if decl is not None and decl.type == "type_declaration" and decl.named_child_count == 1:
        return decl
    return name


def _rust_impl(node: Node) -> Found | None:
    kind = node.child_by_field_name("type")
    parts = (_type_name(kind),) if kind is not None else ()
    return parts, node, node.child_by_field_name("body"), SCOPE


# --- JavaScript / TypeScript -------------------------------------------------

_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})


def _js_bound(name_field: str) -> Handler:
    """``const f = () => ...`` / ``handle = function () {...}``: an entry only for function or class values."""

    def handle(node: Node) -> Found | None:
        value = node.child_by_field_name("value")
        if value is None:
            return None
        if value.type in _JS_FUNCTION_VALUES:
            nest = FUNC
        elif value.type == "class":
            nest = SCOPE
        else:
            return None
        name = node.child_by_field_name(name_field)
        if name is None:
            return None
        return (_text(name),), name, value.child_by_field_name("body"), nest

    return handle


def _ts_module(node: Node) -> Found | None:
    """``declare module "x" {}`` / ``namespace A.B {}``."""
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name is None:
        return (), node, body, SCOPE
    parts = tuple(p for p in _text(name).strip("'\"`").split(".") if p)
    return parts, name, body, SCOPE


_JS_DEFS: dict[str, Handler] = {
    "function_declaration": _named(FUNC),
    "generator_function_declaration": _named(FUNC),
    "class_declaration": _named(SCOPE),
    "method_definition": _named(FUNC),
    "variable_declarator": _js_bound("name"),
    "field_definition": _js_bound("property"),
}
_JS_CONTAINERS = frozenset({"program", "export_statement", "statement_block", "ERROR"})

_TS_DEFS: dict[str, Handler] = {
    **_JS_DEFS,
    "public_field_definition": _js_bound("name"),
    "abstract_class_declaration": _named(SCOPE),
    "interface_declaration": _named(SCOPE),
    "method_signature": _named(LEAF),
    "abstract_method_signature": _named(LEAF),
    "function_signature": _named(LEAF),
    "type_alias_declaration": _named(LEAF, body=None),
    "enum_declaration": _named(LEAF),
    "internal_module": _ts_module,
    "module": _ts_module,
}

# --- Kotlin / Swift / C# / PHP / Lua -------------------------------------------


def _unnamed_fields(names: frozenset[str], bodies: frozenset[str], nest: int) -> Handler:
    """For grammars without field names (Kotlin): the first child of a name type, of a body type.

    Without a name the definition is anonymous (``companion object``).
    """

    def handle(node: Node) -> Found | None:
        name = body = None
        for child in node.named_children:
            kind = child.type
            if name is None and kind in names:
                name = child
            elif kind in bodies:
                body = child
                break
        if name is None:
            return (), node, body, nest
        return (_text(name),), name, body, nest

    return handle


_KOTLIN_NAMES = frozenset({"type_identifier", "simple_identifier"})
_KOTLIN_BODIES = frozenset({"class_body", "enum_class_body", "function_body"})


def _fixed(name: str, nest: int) -> Handler:
    """A definition named by its keyword (Swift ``init``/``deinit``)."""

    def handle(node: Node) -> Found | None:
        return (name,), node, node.child_by_field_name("body"), nest

    return handle


def _cs_destructor(node: Node) -> Found | None:
    """``~Top()``: named ``~Top`` so it does not collide with the constructor."""
    name = node.child_by_field_name("name")
    if name is None:
        return None
    return (f"~{_text(name)}",), name, node.child_by_field_name("body"), LEAF


def _split_named(separators: str, nest: int) -> Handler:
    """Names qualified by ``separators``: ``App\\Models``, ``App.Core``, Lua ``M.new``/``M:m``."""
    table = str.maketrans({c: " " for c in separators})

    def handle(node: Node) -> Found | None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None:
            return (), node, body, nest
        return tuple(_text(name).translate(table).split()), name, body, nest

    return handle


# --- Python / Ruby -----------------------------------------------------------


def _py_type_alias(node: Node) -> Found | None:
    """``type X[T] = ...``; the grammar also takes ``type(obj).attr = v`` for one, which is not."""
    left = node.child_by_field_name("left")
    name = left.named_child(0) if left is not None else None
    if name is not None and name.type == "generic_type":
        name = name.named_child(0)
    if name is None or name.type != "identifier":
        return None
    return (_text(name),), name, None, LEAF


SPECS: dict[str, Spec] = {
    "python": Spec(
        defs={
            "function_definition": _named(FUNC),
            "class_definition": _named(SCOPE),
            "type_alias_statement": _py_type_alias,
        },
        containers=frozenset(
            {
                "module",
                "block",
                "decorated_definition",
                "if_statement",
                "elif_clause",
                "else_clause",
                "try_statement",
                "except_clause",
                "finally_clause",
                "with_statement",
                "for_statement",
                "while_statement",
                "ERROR",
            }
        ),
        wrappers=frozenset({"decorated_definition"}),
        nested=(rb"def\s", rb"class\s"),
    ),
    "javascript": Spec(
        defs=_JS_DEFS,
        containers=_JS_CONTAINERS,
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
        toplevel=frozenset({"lexical_declaration", "variable_declaration"}),
        nested=(rb"function\b", rb"class\b"),
    ),
    "typescript": Spec(
        defs=_TS_DEFS,
        containers=_JS_CONTAINERS | {"ambient_declaration", "expression_statement"},
        wrappers=frozenset(
            {"export_statement", "lexical_declaration", "variable_declaration", "ambient_declaration"}
        ),
        leading=frozenset({"decorator"}),
        toplevel=frozenset({"lexical_declaration", "variable_declaration"}),
        nested=(rb"function\b", rb"class\b", rb"interface\b", rb"enum\b"),
    ),
    "go": Spec(
        defs={
            "function_declaration": _named(LEAF),
            "method_declaration": _go_method,
            "type_spec": _go_type,
            "type_alias": _go_type,
        },
        containers=frozenset({"source_file", "type_declaration", "ERROR"}),
    ),
    "rust": Spec(
        defs={
            "function_item": _named(FUNC),
            "function_signature_item": _named(LEAF),
            "struct_item": _named(LEAF),
            "enum_item": _named(LEAF),
            "union_item": _named(LEAF),
            "trait_item": _named(SCOPE),
            "impl_item": _rust_impl,
            "mod_item": _named(SCOPE),
            "type_item": _named(LEAF, body=None),
            "macro_definition": _named(LEAF),
        },
        containers=frozenset({"source_file", "foreign_mod_item", "declaration_list", "ERROR"}),
        leading=frozenset({"attribute_item"}),
        # Items declared directly in a function body (helper fns, local structs).
        nested=(rb"fn\s", rb"struct\s", rb"enum\s", rb"impl\b", rb"trait\s", rb"mod\s"),
    ),
    "java": Spec(
        defs={
            "class_declaration": _named(SCOPE),
            "interface_declaration": _named(SCOPE),
            "enum_declaration": _named(SCOPE),
            "record_declaration": _named(SCOPE),
            "annotation_type_declaration": _named(SCOPE),
            "method_declaration": _named(LEAF),
            "constructor_declaration": _named(LEAF),
            "annotation_type_element_declaration": _named(LEAF),
        },
        containers=frozenset({"program", "enum_body_declarations", "ERROR"}),
    ),
    "c": Spec(defs=_C_DEFS, containers=_C_CONTAINERS),
    "cpp": Spec(
        defs={
            **_C_DEFS,
            "class_specifier": _with_body(SCOPE),
            "namespace_definition": _scoped_named(SCOPE),
            "alias_declaration": _named(LEAF, body=None),
        },
        containers=_C_CONTAINERS | {"template_declaration", "friend_declaration"},
        wrappers=frozenset({"template_declaration"}),
    ),
    "ruby": Spec(
        defs={
            "class": _scoped_named(SCOPE),
            "module": _scoped_named(SCOPE),
            # Ruby bodies only share the ``def`` line in one-liners; keep those whole.
            "method": _named(LEAF, body=None),
            "singleton_method": _named(LEAF, body=None),
        },
        containers=frozenset(
            {"program", "body_statement", "singleton_class", "call", "do_block", "begin", "ERROR"}
        ),
    ),
    "bash": Spec(
        defs={"function_definition": _named(LEAF)},
        # ``list``: ``[ -n "$x" ] || f() { ...; }``
        containers=frozenset({"program", "list", "if_statement", "elif_clause", "else_clause", "ERROR"}),
    ),
    "kotlin": Spec(
        defs={
            "class_declaration": _unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE),
            "object_declaration": _unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE),
            "companion_object": _unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE),
            "function_declaration": _unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, LEAF),
            "type_alias": _unnamed_fields(_KOTLIN_NAMES, frozenset(), LEAF),
        },
        containers=frozenset({"source_file", "ERROR"}),
    ),
    "swift": Spec(
        defs={
            "class_declaration": _named(SCOPE),  # also struct, enum, extension, actor
            "protocol_declaration": _named(SCOPE),
            "function_declaration": _named(LEAF),
            "protocol_function_declaration": _named(LEAF),
            "init_declaration": _fixed("init", LEAF),
            "deinit_declaration": _fixed("deinit", LEAF),
            "typealias_declaration": _named(LEAF, body=None),
        },
        containers=frozenset({"source_file", "ERROR"}),
    ),
    "csharp": Spec(
        defs={
            "namespace_declaration": _split_named(".", SCOPE),
            "file_scoped_namespace_declaration": _split_named(".", LEAF),
            "class_declaration": _named(SCOPE),
            "struct_declaration": _named(SCOPE),
            "interface_declaration": _named(SCOPE),
            "record_declaration": _named(SCOPE),
            "enum_declaration": _named(LEAF),
            "delegate_declaration": _named(LEAF),
            "method_declaration": _named(LEAF),
            "constructor_declaration": _named(LEAF),
            "destructor_declaration": _cs_destructor,
            "property_declaration": _named(LEAF, body="accessors"),
        },
        containers=frozenset({"compilation_unit", "declaration_list", "ERROR"}),
    ),
    "php": Spec(
        defs={
            "namespace_definition": _split_named("\\", SCOPE),
            "class_declaration": _named(SCOPE),
            "interface_declaration": _named(SCOPE),
            "trait_declaration": _named(SCOPE),
            "enum_declaration": _named(SCOPE),
            "function_definition": _named(LEAF),
            "method_declaration": _named(LEAF),
        },
        containers=frozenset({"program", "compound_statement", "ERROR"}),
    ),
    "scala": Spec(
        defs={
            "class_definition": _named(SCOPE),
            "object_definition": _named(SCOPE),
            "trait_definition": _named(SCOPE),
            "enum_definition": _named(SCOPE),
            "function_definition": _named(LEAF),
            "function_declaration": _named(LEAF),
            "type_definition": _named(LEAF, body=None),
        },
        containers=frozenset({"compilation_unit", "package_clause", "template_body", "ERROR"}),
    ),
    "lua": Spec(
        defs={"function_declaration": _split_named(".:", LEAF)},
        containers=frozenset({"chunk", "ERROR"}),
    ),
}
SPECS["tsx"] = SPECS["typescript"]

# File extension (lower case, no dot) or whole file name -> language.
_EXTENSIONS = {
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "cpp",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "inl": "cpp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "cs": "csharp",
    "php": "php",
    "scala": "scala",
    "sc": "scala",
    "lua": "lua",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "ksh": "bash",
}
_FILENAMES = {
    "rakefile": "ruby",
    "gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".profile": "bash",
    ".zshrc": "bash",
}


def language_for(path: str) -> str | None:
    """tree-sitter-language-pack name for a file, from its name alone."""
    base = os.path.basename(path).lower()
    if base in _FILENAMES:
        return _FILENAMES[base]
    _, dot, ext = base.rpartition(".")
    return _EXTENSIONS.get(ext) if dot else None


_PARSERS: dict[str, Parser | None] = {}


def _parser(language: str) -> Parser | None:
    """One cached parser per language; None when the pack cannot provide it."""
    if language not in _PARSERS:
        try:
            from tree_sitter_language_pack import get_parser

            _PARSERS[language] = get_parser(language)  # type: ignore[arg-type]
        except Exception:  # unknown name, missing binary, ABI mismatch
            _PARSERS[language] = None
    return _PARSERS[language]


def outline_code(data: bytes, language: str, lines: LineIndex | None = None) -> Outline | None:
    """Outline ``data`` as ``language``; None if that language is not supported.
    ``lines`` is the line index of ``data`` when the caller has built it already."""
    spec = SPECS.get(language)
    parser = _parser(language) if spec is not None else None
    if spec is None or parser is None:
        return None
    kind = f"code:{language}"
    if b"\0" in data:
        # Source text never holds NUL; tree-sitter's error recovery on binary
        # data costs seconds per megabyte and finds nothing.
        return Outline(kind=kind, notes=("binary data (NUL bytes), not parsed",), indent=True)
    tree = parser.parse(data)
    walker = _Walker(spec, lines or LineIndex(data))
    walker.walk(tree.root_node.named_children, (), 0, None, False, 0)
    return Outline(kind=kind, entries=tuple(walker.entries), indent=True)


def _label(lines: LineIndex, node: Node, anchor: Node, start: int, body: Node | None, name: str) -> str:
    """The anchor's line, cut to the definition's own text and before its body.

    The line is taken from the definition's start when that is on the same
    line (``class A { void f() {} }`` labels ``f`` as ``void f()``); a trailing
    ``{``/``:``/``=`` (before an expression body) goes; a name not on that line
    (``typedef struct {`` ... ``} pair_t;``) is appended.
    """
    at = anchor.start_byte
    first, end = lines.span(lines.line_of(at), lines.line_of(at))
    first = max(first, min(at, start))
    end = min(end, node.end_byte)
    if body is not None and at < body.start_byte < end:
        end = body.start_byte
    text = lines.data[first:end].decode("utf-8", "replace").strip()
    if text.endswith(("{", ":", "=")):
        text = text[:-1].rstrip()
    if name not in text:
        text = f"{text} … {name}" if text else name
    if len(text) > MAX_LABEL:
        text = text[: MAX_LABEL - 1] + "…"
    return text


# Containers nested deeper than this are not walked (keeps recursion bounded on
# pathological input; real code never gets near it).
MAX_NESTING = 100


class _Walker:
    """Collects entries in document order from the children of containers only."""

    __slots__ = ("actions", "nested", "lines", "entries")

    def __init__(self, spec: Spec, lines: LineIndex) -> None:
        self.actions = spec.actions
        self.nested = spec.nested
        self.lines = lines
        self.entries: list[Entry] = []

    def walk(
        self,
        children: list[Node],
        scope: tuple[str, ...],
        depth: int,
        lead: int | None,
        in_func: bool,
        nesting: int,
    ) -> None:
        """Walk one container's children.

        ``lead`` is the start byte of a wrapper around them (decorators,
        ``export``); ``in_func`` says we are inside a function body.
        """
        if nesting > MAX_NESTING:
            return
        actions = self.actions
        pending: int | None = None  # start byte of leading siblings (``#[attr]``) seen so far
        for node in children:
            action = actions.get(node.type)
            if action is None:
                pending = None
            elif isinstance(action, int):
                if action & LEAD:
                    if pending is None:
                        pending = node.start_byte
                elif action & COMMENT:
                    pass
                else:
                    inner_lead = None
                    if action & WRAP:
                        inner_lead = node.start_byte if lead is None else lead
                        if pending is not None:
                            inner_lead = min(inner_lead, pending)
                    pending = None
                    if not (action & TOP and in_func):
                        self.walk(node.named_children, scope, depth, inner_lead, in_func, nesting + 1)
            else:
                found = action(node)
                if found is not None:
                    start = node.start_byte
                    if lead is not None:
                        start = min(start, lead)
                    if pending is not None:
                        start = min(start, pending)
                    self.define(node, found, start, scope, depth, in_func, nesting)
                pending = None

    def define(
        self,
        node: Node,
        found: Found,
        start: int,
        scope: tuple[str, ...],
        depth: int,
        in_func: bool,
        nesting: int,
    ) -> None:
        """Record one definition starting at byte ``start`` and walk its body."""
        parts, anchor, body, nest = found
        if parts and all(parts):  # an empty part is a MISSING node in broken code
            scope += parts
            line_of = self.lines.line_of
            first = line_of(start)
            last = max(first, line_of(node.end_byte - 1))
            label = _label(self.lines, node, anchor, start, body, parts[-1])
            self.entries.append(Entry(label, first, last, depth, scope))
            depth += 1
        if not nest or body is None:
            return
        if nest == FUNC:
            if not self._may_nest(body):
                return
            in_func = True
        self.walk(body.named_children, scope, depth, None, in_func, nesting + 1)

    def _may_nest(self, body: Node) -> bool:
        """Whether a function body's text could hold a definition (see ``Spec``)."""
        data, start, end = self.lines.data, body.start_byte, body.end_byte
        for pattern in self.nested:
            if pattern.search(data, start, end) is not None:
                return True
        return False
