"""C and C++: declarators, qualified names, and what macros do to the tree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .spec import COMMENTS, LEAF, SCOPE, text

if TYPE_CHECKING:
    from tree_sitter import Node

    from .spec import Found, Handler

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
        return text(node)
    return f"operator {text(inner)}" if node.type == "operator_cast" else text(inner)


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
    return (text(name),), node, body, SCOPE


def c_record(nest: int) -> Handler:
    """``struct S {...}`` (not ``struct S *p``); ``struct fmt::formatter<T> {...}`` is named ``fmt``, ``formatter``."""

    def handle(node: Node) -> Found | None:
        body = node.child_by_field_name("body")
        if body is None:
            return None
        name = node.child_by_field_name("name")
        if name is None:
            return (), node, body, nest
        return _c_parts(name), name, body, nest

    return handle


C_DEFS: dict[str, Handler] = {
    "function_definition": _c_function,
    "struct_specifier": c_record(SCOPE),
    "union_specifier": c_record(SCOPE),
    "enum_specifier": c_record(LEAF),
    "type_definition": _c_typedef,
}
C_CONTAINERS = frozenset(
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
