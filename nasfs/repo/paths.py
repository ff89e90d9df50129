"""Tree-relative paths: checked before any use (:func:`clean_path`), and
looked up in a git tree without the leak of pygit2's lookup
(:func:`tree_entry`)."""

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


def tree_entry(tree: pygit2.Tree, path: str) -> pygit2.Object:
    """``tree[path]`` without pygit2 1.21's leak: its lookup keeps one
    reference to the key string for good, so a fresh string per read grew the
    daemon by a string per view read. An interned key is one object per path,
    so what is kept is bounded by the tree's paths. KeyError when absent."""
    return tree[sys.intern(path)]
