"""The layout's promises, checked on the package's source: git is reached
only through nasfs/repo/, the one package that imports pygit2 (so the core
stays pure, and pygit2's quirks, such as the key strings its lookups by path
keep, are handled in one place)."""

from __future__ import annotations

import ast
from pathlib import Path

import nasfs

PACKAGE = Path(nasfs.__file__).resolve().parent
REPO = PACKAGE / "repo"


def pygit2_imports(source: str, filename: str = "<source>") -> list[int]:
    """Line numbers of every import of pygit2 or one of its modules, in either form."""
    lines = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name == "pygit2" or name.startswith("pygit2.") for name in names):
            lines.append(node.lineno)
    return sorted(lines)


def repo_of_a_tree(source: str, filename: str = "<source>") -> list[int]:
    """Line numbers where ``.repo`` is taken of a tree (``nas.tree.repo``,
    ``tree.repo``, ``self.nas.tree.repo``): the pygit2 handle a GitTree holds."""
    lines = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Attribute) and node.attr == "repo":
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
            if name in ("tree", "git_tree"):
                lines.append(node.lineno)
    return sorted(lines)


def outside_repo() -> list[Path]:
    """Every module of the package outside nasfs/repo/."""
    return [p for p in sorted(PACKAGE.rglob("*.py")) if REPO not in p.parents]


def test_the_scans_find_what_they_look_for() -> None:
    """Each form counts: a scan that found nothing anywhere would pass the tests below."""
    source = ("import os, pygit2 as git\nfrom pygit2 import Oid\nfrom pygit2.enums import FileMode\n"
              "import pygit2.enums\nfrom .pygit2 import x\nimport pygit2x\n"
              "a = nas.tree.repo\nb = tree.repo['x']\nc = self.nas.tree.repo.path\nd = args.repo\n")
    assert pygit2_imports(source) == [1, 2, 3, 4]
    assert repo_of_a_tree(source) == [7, 8, 9]
    modules = outside_repo()
    assert PACKAGE / "folders.py" in modules and PACKAGE / "fuse" / "virtual.py" in modules
    assert REPO / "served.py" not in modules
    assert pygit2_imports((REPO / "served.py").read_text()) != []


def test_only_nasfs_repo_imports_pygit2() -> None:
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}" for p in outside_repo()
             for line in pygit2_imports(p.read_text(), str(p))]
    assert found == [], f"pygit2 imported outside nasfs/repo/ (reach git through GitTree instead): {found}"


def test_no_module_outside_nasfs_repo_takes_a_trees_repo() -> None:
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}" for p in outside_repo()
             for line in repo_of_a_tree(p.read_text(), str(p))]
    assert found == [], f"a GitTree's pygit2 handle used outside nasfs/repo/ (add a GitTree method): {found}"


# -- no import cycles among nasfs modules ------------------------------------------


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The nasfs modules ``name`` imports anywhere in its source: at the top,
    inside functions (a lazy import is still a dependency) or for type
    checking only. ``from .x import y`` counts ``x.y`` when that is a module."""
    found = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    known = set(sources)
    return {name: imported_modules(source, name, is_package, known) for name, (source, is_package) in sources.items()}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_scan_finds_cycles() -> None:
    """Each kind of import counts: top level, lazy, type-checking only, a package's submodule."""
    sources = {
        "nasfs": ("", True),
        "nasfs.a": ("from . import b\n", False),
        "nasfs.b": ("def f():\n    from .c import thing\n", False),
        "nasfs.c": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from nasfs.a import X\n", False),
        "nasfs.p": ("", True),
        "nasfs.p.q": ("from ..d import y\n", False),
        "nasfs.d": ("import nasfs.p.q\n", False),
        "nasfs.e": ("from .p import q\nimport os\n", False),
    }
    assert sorted(sorted(c) for c in cycles(import_graph(sources))) == [
        ["nasfs.a", "nasfs.b", "nasfs.c"], ["nasfs.d", "nasfs.p.q"]]


def test_no_import_cycles_among_nasfs_modules() -> None:
    """The core is handed what it needs (a protocol, a function); it never
    imports the modules that call it, lazily or for type checking."""
    sources = {module_name(p): (p.read_text(), p.name == "__init__.py") for p in sorted(PACKAGE.rglob("*.py"))}
    assert "nasfs.service" in sources and "nasfs.fuse.virtual" in sources
    found = cycles(import_graph(sources))
    assert not found, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)
