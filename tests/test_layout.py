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
