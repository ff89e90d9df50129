"""The language table: per grammar, which nodes are definitions and which are walked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .c_family import C_CONTAINERS, C_DEFS, c_record
from .spec import FUNC, LEAF, SCOPE, Spec, fixed, named, scoped_named, split_named, text, unnamed_fields, unquoted

if TYPE_CHECKING:
    from tree_sitter import Node

    from .spec import Found, Handler

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
    return text(node)


def _go_method(node: Node) -> Found | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    parts: tuple[str, ...] = (text(name),)
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
    return (text(name),), _go_type_anchor(node, name), body, LEAF


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
            nest, body = FUNC, value.child_by_field_name("body")
        elif value.type == "class":
            nest, body = SCOPE, value.child_by_field_name("body")
        elif value.type == "object" and _js_has_functions(value):
            nest, body = SCOPE, value
        elif (called := _js_iife(value)) is not None:
            nest, body = SCOPE, called.child_by_field_name("body")
        else:
            return None
        name = node.child_by_field_name(name_field)
        if name is None:
            return None
        return (text(name),), name, body, nest

    return handle


def _js_iife(node: Node) -> Node | None:
    """The function of ``function () {...}()`` / ``(function () {...})()`` (the module pattern)."""
    if node.type != "call_expression":
        return None
    called = node.child_by_field_name("function")
    while called is not None and called.type == "parenthesized_expression":
        called = called.named_child(0)
    return called if called is not None and called.type in _JS_FUNCTION_VALUES else None


def _js_function_expression(node: Node) -> Found | None:
    """A function expression reached by the walk (a call's argument): an entry if it has a name.

    An anonymous one (a library's IIFE or AMD wrapper) is walked as a module body.
    """
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    return ((text(name),), name, body, FUNC) if name is not None else ((), node, body, SCOPE)


def _js_has_functions(node: Node) -> bool:
    """An object literal with a method or function-valued key (a module or prototype, not data)."""
    for child in node.named_children:
        if child.type == "method_definition":
            return True
        if child.type == "pair" and (value := child.child_by_field_name("value")) is not None:
            if value.type in _JS_FUNCTION_VALUES:
                return True
    return False


def _js_pair(node: Node) -> Found | None:
    """``key: function (...) {...}`` in an object literal that is itself an entry."""
    key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
    if key is None or value is None or value.type not in _JS_FUNCTION_VALUES:
        return None
    if key.type not in ("property_identifier", "string", "identifier"):
        return None
    return (text(key).strip("'\"`"),), key, value.child_by_field_name("body"), FUNC


def _member_parts(node: Node) -> tuple[str, ...]:
    """``exports.a.b`` -> ("exports", "a", "b"), without ``prototype``; () for computed names."""
    parts: list[str] = []
    while node.type == "member_expression":
        prop = node.child_by_field_name("property")
        if prop is None:
            return ()
        parts.append(text(prop))
        node = node.child_by_field_name("object") or node
        if node.type not in ("member_expression", "identifier", "this"):
            return ()
    if node.type not in ("identifier", "this"):
        return ()
    parts.append(text(node))
    return tuple(p for p in reversed(parts) if p not in ("prototype", "this"))


def _js_assigned(node: Node) -> Found | None:
    """``app.handle = function handle() {...}`` / ``exports.f = () => ...``: an entry for function values."""
    value = node.child_by_field_name("right")
    left = node.child_by_field_name("left")
    if value is None or left is None:
        return None
    if value.type in _JS_FUNCTION_VALUES:
        nest, body = FUNC, value.child_by_field_name("body")
    elif value.type == "object" and _js_has_functions(value):
        nest, body = SCOPE, value
    else:
        return None
    parts = _member_parts(left) if left.type == "member_expression" else (text(left),)
    if not parts or left.type not in ("member_expression", "identifier"):
        return None
    anchor = left.child_by_field_name("property") if left.type == "member_expression" else left
    return parts, anchor or left, body, nest


def _ts_module(node: Node) -> Found | None:
    """``declare module "x" {}`` / ``namespace A.B {}``."""
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name is None:
        return (), node, body, SCOPE
    parts = tuple(p for p in text(name).strip("'\"`").split(".") if p)
    return parts, name, body, SCOPE


_JS_DEFS: dict[str, Handler] = {
    "function_declaration": named(FUNC),
    "generator_function_declaration": named(FUNC),
    "class_declaration": named(SCOPE),
    "method_definition": named(FUNC),
    "variable_declarator": _js_bound("name"),
    "assignment_expression": _js_assigned,
    "field_definition": _js_bound("property"),
    "pair": _js_pair,
    "function_expression": _js_function_expression,
}
# Functions passed to a call (``describe(..., function () {...})``, an IIFE or AMD
# ``define([...], function () {...})`` wrapping a whole library) are walked into, listed only
# when named; ``return {...}`` is walked for the members of a module-pattern object.
_JS_CONTAINERS = frozenset(
    {"program", "export_statement", "statement_block", "expression_statement", "call_expression", "arguments",
     "parenthesized_expression", "arrow_function", "return_statement", "object", "if_statement", "else_clause",
     "ERROR"}
)

_TS_DEFS: dict[str, Handler] = {
    **_JS_DEFS,
    "public_field_definition": _js_bound("name"),
    "abstract_class_declaration": named(SCOPE),
    "interface_declaration": named(SCOPE),
    "method_signature": named(LEAF),
    "abstract_method_signature": named(LEAF),
    "function_signature": named(LEAF),
    "type_alias_declaration": named(LEAF, body=None),
    "enum_declaration": named(LEAF),
    "internal_module": _ts_module,
    "module": _ts_module,
}

_KOTLIN_NAMES = frozenset({"type_identifier", "simple_identifier"})
_KOTLIN_BODIES = frozenset({"class_body", "enum_class_body", "function_body"})


def _kotlin_enum_entry(node: Node) -> Found | None:
    """An enum constant with a body of its own (``NewBuffer { override fun pipe() ... }``)."""
    name = next((c for c in node.named_children if c.type == "simple_identifier"), None)
    body = next((c for c in node.named_children if c.type == "class_body"), None)
    if name is None or body is None:
        return None
    return (text(name),), name, body, SCOPE


def _swift_subscript(node: Node) -> Found | None:
    """``subscript(i: Int) -> T { ... }``: named ``subscript``, its accessors the body (not in the label)."""
    keyword = next((c for c in node.children if c.type == "subscript"), node)
    body = next((c for c in node.named_children if c.type == "computed_property"), None)
    return ("subscript",), keyword, body, LEAF


def _cs_destructor(node: Node) -> Found | None:
    """``~Top()``: named ``~Top`` so it does not collide with the constructor."""
    name = node.child_by_field_name("name")
    if name is None:
        return None
    return (f"~{text(name)}",), name, node.child_by_field_name("body"), LEAF



# --- Lua ---------------------------------------------------------------------


def _lua_function_table(node: Node) -> bool:
    """A table constructor with a function among its fields (a module or metatable, not data)."""
    return any(
        child.type == "field" and (value := child.child_by_field_name("value")) is not None
        and value.type == "function_definition"
        for child in node.named_children
    )


def _lua_assigned(node: Node) -> Found | None:
    """``M.wrap = function(...)``, ``local f = function(...)``; ``local t = { __call = function ... }``."""
    names, values = node.named_children[0], node.named_children[-1]
    if len(node.named_children) != 2 or names.named_child_count != 1 or values.named_child_count != 1:
        return None
    target, value = names.named_children[0], values.named_children[0]
    if target.type not in ("identifier", "dot_index_expression", "method_index_expression"):
        return None
    parts = tuple(text(target).replace(":", ".").split("."))
    if value.type == "function_definition":
        return parts, target, value.child_by_field_name("body"), FUNC
    if value.type == "table_constructor" and _lua_function_table(value):
        return parts, target, value, SCOPE
    # No entry, but the value is walked: ``local s = setmetatable({ revert = function ... })``.
    return (), node, values, SCOPE


def _lua_field(node: Node) -> Found | None:
    """``name = function(...)`` inside a table constructor."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None or value.type != "function_definition" or name.type != "identifier":
        return None
    return (text(name),), name, value.child_by_field_name("body"), FUNC


# --- Python / Ruby -----------------------------------------------------------


def _py_type_alias(node: Node) -> Found | None:
    """``type X[T] = ...``; the grammar also takes ``type(obj).attr = v`` for one, which is not."""
    left = node.child_by_field_name("left")
    name = left.named_child(0) if left is not None else None
    if name is not None and name.type == "generic_type":
        name = name.named_child(0)
    if name is None or name.type != "identifier":
        return None
    return (text(name),), name, None, LEAF


def _ruby_method(node: Node) -> Found | None:
    """``def x`` / ``def self.x``: a one-liner is labelled whole, a longer body is walked for nested definitions."""
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = next((c for c in node.named_children if c.type == "body_statement"), None)
    if body is not None and body.start_point[0] == node.start_point[0]:
        body = None  # ``def x; 1; end`` shares its line: keep the label whole
    return (text(name),), name, body, FUNC


SPECS: dict[str, Spec] = {
    "python": Spec(
        defs={
            "function_definition": named(FUNC),
            "class_definition": named(SCOPE),
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
            "function_declaration": named(LEAF),
            "method_declaration": _go_method,
            "type_spec": _go_type,
            "type_alias": _go_type,
        },
        containers=frozenset({"source_file", "type_declaration", "ERROR"}),
    ),
    "rust": Spec(
        defs={
            "function_item": named(FUNC),
            "function_signature_item": named(LEAF),
            "struct_item": named(LEAF),
            "enum_item": named(LEAF),
            "union_item": named(LEAF),
            "trait_item": named(SCOPE),
            "impl_item": _rust_impl,
            "mod_item": named(SCOPE),
            "type_item": named(LEAF, body=None),
            "macro_definition": named(LEAF),
        },
        containers=frozenset({"source_file", "foreign_mod_item", "declaration_list", "ERROR"}),
        leading=frozenset({"attribute_item"}),
        # Items declared directly in a function body (helper fns, local structs).
        nested=(rb"fn\s", rb"struct\s", rb"enum\s", rb"impl\b", rb"trait\s", rb"mod\s"),
    ),
    "java": Spec(
        defs={
            "class_declaration": named(SCOPE),
            "interface_declaration": named(SCOPE),
            "enum_declaration": named(SCOPE),
            "record_declaration": named(SCOPE),
            "annotation_type_declaration": named(SCOPE),
            "method_declaration": named(LEAF),
            "constructor_declaration": named(LEAF),
            "annotation_type_element_declaration": named(LEAF),
        },
        containers=frozenset({"program", "enum_body_declarations", "ERROR"}),
    ),
    "c": Spec(defs=C_DEFS, containers=C_CONTAINERS),
    "cpp": Spec(
        defs={
            **C_DEFS,
            "class_specifier": c_record(SCOPE),
            "namespace_definition": scoped_named(SCOPE),
            "alias_declaration": named(LEAF, body=None),
        },
        containers=C_CONTAINERS | {"template_declaration", "friend_declaration"},
        wrappers=frozenset({"template_declaration"}),
    ),
    "ruby": Spec(
        defs={
            "class": scoped_named(SCOPE),
            "module": scoped_named(SCOPE),
            "method": _ruby_method,
            "singleton_method": _ruby_method,
        },
        containers=frozenset(
            # ``argument_list``: ``private def x`` is a call of ``private`` with the method as argument;
            # ``assignment``, ``block``: ``c = Class.new(Base) do def initialize ... end``.
            {"program", "body_statement", "singleton_class", "call", "argument_list", "do_block", "block",
             "block_body", "assignment", "begin", "ERROR"}
        ),
        nested=(rb"def\s", rb"class\s", rb"module\s"),
    ),
    "bash": Spec(
        defs={"function_definition": named(LEAF)},
        # ``list``: ``[ -n "$x" ] || f() { ...; }``; ``compound_statement``: a script in ``{ ... }``
        # (nvm.sh), walked only outside functions since those are leaves.
        containers=frozenset(
            {"program", "list", "compound_statement", "redirected_statement", "if_statement", "elif_clause",
             "else_clause", "ERROR"}
        ),
    ),
    "kotlin": Spec(
        defs={
            "class_declaration": unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE),
            "object_declaration": unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE),
            "companion_object": unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, SCOPE, anonymous="Companion"),
            "function_declaration": unnamed_fields(_KOTLIN_NAMES, _KOTLIN_BODIES, FUNC),
            "object_literal": unnamed_fields(frozenset(), _KOTLIN_BODIES, SCOPE),  # ``object : Source {...}``
            "enum_entry": _kotlin_enum_entry,
            "type_alias": unnamed_fields(_KOTLIN_NAMES, frozenset(), LEAF),
        },
        # In function bodies: local functions, and the members of anonymous objects wherever
        # an expression holds one: ``return object : T {...}``, ``val x = object : T {...}``,
        # ``return object : Sink {...}.buffer()``, an argument, a ``try`` or ``when`` branch.
        containers=frozenset({
            "source_file", "statements", "jump_expression", "property_declaration", "try_expression",
            "navigation_expression", "call_expression", "call_suffix", "value_arguments", "value_argument",
            "when_expression", "when_entry", "control_structure_body", "if_expression", "ERROR",
        }),
        nested=(rb"fun\s", rb"object\b", rb"class\s"),
    ),
    "swift": Spec(
        defs={
            "class_declaration": named(SCOPE),  # also struct, enum, extension, actor
            "protocol_declaration": named(SCOPE),
            "function_declaration": unquoted(named(FUNC)),
            "protocol_function_declaration": unquoted(named(LEAF)),
            "init_declaration": fixed("init", FUNC),
            "deinit_declaration": fixed("deinit", LEAF),
            "subscript_declaration": _swift_subscript,
            "typealias_declaration": named(LEAF, body=None),
        },
        # In function bodies: local functions and types (also inside closures); and in a computed
        # property's getter or setter (``var description: String { func path() ... }``).
        containers=frozenset(
            {"source_file", "statements", "lambda_literal", "property_declaration", "computed_property",
             "computed_getter", "computed_setter", "ERROR"}
        ),
        nested=(rb"func\s", rb"class\s", rb"struct\s", rb"enum\s"),
    ),
    "csharp": Spec(
        defs={
            "namespace_declaration": split_named(".", SCOPE),
            "file_scoped_namespace_declaration": split_named(".", LEAF),
            "class_declaration": named(SCOPE),
            "struct_declaration": named(SCOPE),
            "interface_declaration": named(SCOPE),
            "record_declaration": named(SCOPE),
            "enum_declaration": named(LEAF),
            "delegate_declaration": named(LEAF),
            "method_declaration": named(LEAF),
            "constructor_declaration": named(LEAF),
            "destructor_declaration": _cs_destructor,
            "property_declaration": named(LEAF, body="accessors"),
        },
        containers=frozenset({"compilation_unit", "declaration_list", "ERROR"}),
    ),
    "php": Spec(
        defs={
            "namespace_definition": split_named("\\", SCOPE),
            "class_declaration": named(SCOPE),
            "interface_declaration": named(SCOPE),
            "trait_declaration": named(SCOPE),
            "enum_declaration": named(SCOPE),
            "function_definition": named(LEAF),
            "method_declaration": named(LEAF),
        },
        containers=frozenset({"program", "compound_statement", "ERROR"}),
    ),
    "scala": Spec(
        defs={
            "class_definition": named(SCOPE),
            "object_definition": named(SCOPE),
            "package_object": named(SCOPE),
            "trait_definition": named(SCOPE),
            "enum_definition": named(SCOPE),
            "function_definition": unquoted(named(FUNC)),
            "function_declaration": unquoted(named(LEAF)),
            "type_definition": named(LEAF, body=None),
        },
        # Scala 3 ``extension (s: String)`` methods (in the scope around it: an extension has no
        # name). In bodies: local ``def``s and classes, the members of ``new T { def f = ... }`` (a
        # ``val`` or a ``def`` whose value is an anonymous class), and what is defined in a block
        # passed to a call (``test("x") { def check() = ... }``, utest's ``test("x") - check {...}``)
        # or as its argument (also a named one: ``parser = { def p = ... }``), a lambda, a ``case``,
        # a branch or a loop.
        containers=frozenset(
            {"compilation_unit", "package_clause", "template_body", "extension_definition", "block",
             "indented_block", "instance_expression", "val_definition", "var_definition", "call_expression",
             "arguments", "assignment_expression", "infix_expression", "lambda_expression", "match_expression", "case_block",
             "case_clause", "if_expression", "try_expression", "for_expression", "while_expression", "ERROR"}
        ),
        nested=(rb"def\s", rb"class\s", rb"object\s", rb"trait\s"),
    ),
    "lua": Spec(
        defs={
            "function_declaration": split_named(".:", FUNC),
            "assignment_statement": _lua_assigned,
            "field": _lua_field,
        },
        # Also tables passed to calls and returned (``setmetatable({}, { __index = function ... })``,
        # ``return { new = function ... }``), whose function fields are methods, and anonymous
        # functions passed to calls (``describe("x", function() ... end)``).
        containers=frozenset(
            {"chunk", "block", "variable_declaration", "if_statement", "elseif_statement", "else_statement",
             "do_statement", "return_statement", "expression_list", "function_call", "arguments",
             "table_constructor", "parenthesized_expression", "function_definition", "ERROR"}
        ),
        wrappers=frozenset({"variable_declaration"}),
        nested=(rb"function\b",),
    ),
}
SPECS["tsx"] = SPECS["typescript"]
