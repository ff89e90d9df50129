"""Rewrites of the source before it is parsed, for what a grammar cannot read.

tree-sitter parses one file without a preprocessor, so ``FMT_BEGIN_NAMESPACE``,
``class FMT_API file`` or ``int ZEXPORT f(...)`` (macros a compiler expands to
nothing or to attributes) and C#'s ``#if`` between a signature and its body
break the tree around them. Each rewrite here only turns bytes into spaces
(a newline into a space at most): every byte keeps its offset, so the entries'
lines and labels, which are read from the original bytes, stay exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# An all-caps identifier (``FMT_API``, ``ZEXPORT``, ``GTEST_API_``).
_CAPS = rb"[A-Z][A-Z0-9_]*[A-Z0-9_]"
# Keywords a declaration goes on with after a specifier macro.
_C_KEYWORDS = (
    rb"template|class|struct|union|enum|namespace|inline|static|constexpr|consteval|virtual|explicit|"
    rb"extern|friend|typename|typedef|using|void|int|auto|bool|char|const|unsigned|signed|long|short|"
    rb"double|float|size_t|std|operator"
)
_C_TOKENS = re.compile(
    rb"(?P<skip>^[ \t]*#(?:[^\n]*\\\n)*[^\n]*|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')"
    rb"|(?P<open>[(\[])|(?P<close>[)\]])"
    rb"|(?P<alone>^[ \t]*" + _CAPS + rb"(?:\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))?[ \t]*(?=$|//))"
    rb"|(?P<caps>(?<![\w.:>~])" + _CAPS + rb"\b)"
    rb"(?=[ \t]+(?P<next>[A-Za-z_~]\w*)(?:(?P<call>[ \t]*\()|(?P<third>[ \t*&]+[A-Za-z_]))?)",
    re.M | re.S,
)
_C_KEYWORD = re.compile(rb"(?:" + _C_KEYWORDS + rb")\Z")
_C_CAPS = re.compile(_CAPS + rb"\Z")
_C_AFTER_TAG = re.compile(rb"(?:class|struct|union)[ \t]+\Z")
_C_AFTER_TYPE = re.compile(rb"[\w*&>][ \t]+\Z")


# ``template <typename T, FMT_ENABLE_IF(cond)>``: a macro call standing for a template parameter.
_C_PARAM_MACRO = re.compile(rb"(?<=[,<])[ \t\n]*(" + _CAPS + rb")\(")


def _template_parameter_macros(data: bytes) -> bytes:
    """``FMT_ENABLE_IF(...)`` after ``<`` or ``,`` becomes ``int`` and spaces (its parentheses balanced)."""
    out: bytearray | None = None
    for m in _C_PARAM_MACRO.finditer(data):
        depth, at = 0, m.end() - 1
        while at < len(data):
            char = data[at]
            depth += (char == 40) - (char == 41)  # ( and )
            if depth == 0:
                break
            at += 1
        else:
            break
        start = m.start(1)
        if out is None:
            out = bytearray(data)
        out[start : at + 1] = b"int".ljust(at + 1 - start, b" ")
    return data if out is None else bytes(out)


def blank_c_macros(data: bytes, cpp: bool = False) -> bytes:
    """Blank the specifier macros of C/C++ declarations, outside parentheses.

    Blanked: a macro alone on its line, called or not (``FMT_BEGIN_NAMESPACE``,
    ``GTEST_DISABLE_MSC_WARNINGS_POP_()``, with no ``;`` or ``{`` after); one before a
    keyword, another macro or a type and a name (``FMT_EXPORT template <...>``,
    ``FMT_API void``, ``FMT_NO_UNIQUE_ADDRESS Allocator alloc_;``);
    one between ``class`` and the name (``class FMT_API file``); one between a
    type and a function's name (``int ZEXPORT deflate(``). A macro that is the
    first word before a name and ``(`` is left alone: it may be the return
    type (``DWORD f(void)``), and parses as one; but not before a destructor.
    A macro call that stands for a template parameter becomes ``int``.
    """
    data = _template_parameter_macros(data)
    out: bytearray | None = None
    depth = 0
    for m in _C_TOKENS.finditer(data):
        kind = m.lastgroup if m.lastgroup in ("skip", "open", "close", "alone") else "caps"
        if kind == "skip":
            continue
        if kind == "open":
            depth += 1
            continue
        if kind == "close":
            depth = max(0, depth - 1)
            continue
        if depth:
            continue
        start, end = m.span("alone") if kind == "alone" else m.span("caps")
        if kind == "caps":
            following = m.group("next")
            # What precedes, as blanked so far: ``DWORD WINAPI f(`` keeps ``WINAPI`` once ``DWORD`` went.
            before = (data if out is None else out)[max(0, start - 32) : start]
            if m.group("call") is not None:
                if not (cpp or following.startswith(b"~") or _C_AFTER_TYPE.search(before)):
                    continue
            elif not (
                m.group("third") is not None
                or _C_KEYWORD.match(following)
                or _C_CAPS.match(following)
                or _C_AFTER_TAG.search(before)
            ):
                continue
        if out is None:
            out = bytearray(data)
        out[start:end] = b" " * (end - start)
    return data if out is None else bytes(out)


_CS_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(?:if|elif|else|endif|region|endregion|pragma|nullable)\b[^\n]*", re.M)


# ``#else`` / ``;`` / ``#endif``: the other ending of a member whose ``#if`` branch holds its body.
_CS_ELSE_END = re.compile(rb"(^[ \t]*#[ \t]*else\b[^\n]*\n\s*);(?=\s*^[ \t]*#[ \t]*endif\b)", re.M)


def blank_csharp_directives(data: bytes) -> bytes:
    """Blank C#'s ``#if``/``#else``/``#endif`` lines (and ``#region``), keeping every branch.

    The grammar takes a directive for a statement, so one between a signature
    and its body (``class A : B`` / ``#if X`` / ``, C`` / ``#endif`` / ``{``)
    breaks the definition. Both branches are kept: each normally holds whole
    members, which then all appear. An ``#else`` that only ends the member
    with ``;`` (serilog's ``ILogger``: a default body when the feature is on)
    is blanked too: after a body, that ``;`` is no member and breaks the rest.
    """
    if b"#" not in data:
        return data
    data = _CS_ELSE_END.sub(lambda m: m.group(1) + b" ", data)
    return _CS_DIRECTIVE.sub(lambda m: b" " * len(m.group()), data)


# ``class A`` / ``private constructor(``: the grammar ends the class at the newline.
_KT_CONSTRUCTOR = re.compile(
    rb"^([ \t]*(?:(?:\w+|@\w+(?:\([^()\n]*\))?)[ \t]+)*(?:class|object)[ \t]+\w+(?:<[^\n]*>)?)[ \t]*\n"
    rb"(?=[ \t]*(?:(?:\w+|@\w+(?:\([^()\n]*\))?)[ \t]+)*constructor\b)",  # ``internal actual constructor(``
    re.M,
)
# ``@JvmName("x") fun f()``, ``@A @B(X) annotation class C`` at the start of a line: read as
# annotations of an expression. Every annotation before the declaration's modifiers is blanked.
_KT_ANNOTATION = re.compile(
    rb"^(?:@(?:\w+:)?[\w.]+(?:\([^()\n]*\))?[ \t]+)*@(?:\w+:)?[\w.]+\([^()\n]*\)(?:[ \t]+@(?:\w+:)?[\w.]+(?:\([^()\n]*\))?)*"
    rb"(?=[ \t]+(?:[a-z]+[ \t]+)*(?:fun|class|object|val|var|interface|typealias)\b)", re.M)


def join_kotlin_headers(data: bytes) -> bytes:
    """Join ``class A`` to a ``constructor(`` on the next line; blank ``@Ann(...)`` before ``fun`` on one line."""
    if b"constructor" in data:
        data = _KT_CONSTRUCTOR.sub(lambda m: m.group(1).ljust(len(m.group()), b" "), data)
    if b"@" in data:
        data = _KT_ANNOTATION.sub(lambda m: b" " * len(m.group()), data)
    return data


FIXUPS: dict[str, Callable[[bytes], bytes]] = {
    "c": blank_c_macros,
    "cpp": lambda data: blank_c_macros(data, cpp=True),
    "csharp": blank_csharp_directives,
    "kotlin": join_kotlin_headers,
}
