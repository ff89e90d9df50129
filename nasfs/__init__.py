"""nasfs: budgeted, checkable reads over a git-backed tree.

The core (grammar, outlines, tokens, budgets, pointers, git access) knows
nothing of its doors; the CLI, FUSE, HTTP and MCP doors call ``nasfs.service``.
"""

__version__ = "0.1.0"
