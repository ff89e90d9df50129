"""Tree-relative paths: checked before any use (:func:`clean_path`), and
looked up in a git tree without the leak of pygit2's lookups
(:func:`git_key`, :func:`tree_entry`, :func:`tree_get`)."""

from __future__ import annotations

import sys

import pygit2

from ..errors import BadPath, check_text


def clean_path(path: str) -> str:
    """A tree-relative POSIX path, or :class:`BadPath` saying why not."""
    check_text("the path", path, BadPath)
    if path.startswith("/"):
        raise BadPath(f"{path!r} is absolute", "a path relative to the tree root, like notes/acme.md")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BadPath(f"{path!r} leaves the tree through '..'", "a path inside the tree, without '..'")
    if parts and parts[0] == ".git":
        raise BadPath(f"{path!r} is inside .git, which is not served")
    return "/".join(parts)


def git_key(path: str) -> str:
    """The string to give pygit2 for a lookup by path or name (a tree's
    ``[]``, ``in`` and ``/``, a TreeBuilder's ``get`` and ``remove``).
    pygit2 1.21 keeps one reference to that string for good, so a fresh
    string per call grew the daemon by a string per call (a view read, a
    listing at a commit, a write). An interned key is one object per path,
    so what is kept is bounded by the paths ever looked up."""
    return sys.intern(path)


def tree_entry(tree: pygit2.Tree, path: str) -> pygit2.Object:
    """``tree[path]`` without pygit2's leak (:func:`git_key`). KeyError when
    absent, or when a folder on the way is not among the objects of the
    handle ``tree`` was read through (own_objects.py: as if absent)."""
    try:
        return tree[git_key(path)]
    except pygit2.GitError:  # libgit2's "object not found" for a folder on the way
        raise KeyError(path) from None


def tree_get(tree: pygit2.Tree | None, path: str) -> pygit2.Object | None:
    """The entry at ``path`` in ``tree``, or None when absent (or no tree):
    ``path in tree`` and ``tree[path]`` in one lookup, without pygit2's leak."""
    if tree is None:
        return None
    try:
        return tree_entry(tree, path)
    except KeyError:
        return None
