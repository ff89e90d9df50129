"""The MCP door: ``nasfs mcp`` — the core's answers as MCP tools over stdio.

Built on the official Python SDK's ``MCPServer``. Each tool is one call
through :class:`~nasfs.http.Door` (the same operations, worker thread and
one-at-a-time limit as the HTTP door), answered with the JSON envelope as
text content and as structured content. A :class:`NasError` becomes a tool
error carrying its message, so the agent reads what was wrong and what is
valid; the SDK reports anything else as a crash and logs it on stderr
(stdout is the protocol's).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from . import __version__
from .errors import NasError
from .grammar import MAX_BUDGET
from .http import DEFAULT_READ_BUDGET, Door
from .service import Nas
from .tokens import MAX_MARGIN

WORKFLOW = """\
nasfs serves a git-backed tree with budgeted, checkable reads. Spend tokens like this:
0. Map the tree: nas_read(path=".", budget_tokens=2000), or a folder's path: its files by importance, with top symbols.
1. Look before reading: nas_read(path, view="outline") or a budget alone, nas_read(path, budget_tokens=300).
2. Read only what you need: view="section=NAME" (a heading, Class.method, or key.path) or view="L12-L18";
   where an outline line ends with @section=NAME@outline, view="section=NAME@outline" lists what it left out.
3. Cite the evidence pointers each answer carries (nas://node/tree/path@commit#La-Lb); nas_deref shows their bytes.
4. Find text with nas_search: ranked snippets with pointers, never whole files.
5. See what changed with view="since=REV" or nas_diff("REV..").
Every answer declares the view it served and its tokens; when the budget is too small the view
degrades (outline, shallower outline, a page of entries whose `next` names the view of the next
page, skeleton, none) instead of being cut. An outline line "11-20 ## Renewal" covers lines 11-20.
"""

Budget = Annotated[
    int | None,
    Field(ge=0, le=MAX_BUDGET, description="tokens for the whole answer; the view degrades to fit, never cut"),
]
At = Annotated[str | None, Field(description="read at this revision: commit, branch or tag (default: the working tree)")]
Tokenizer = Annotated[str | None, Field(description="count for your model: a tokenizer (cl100k_base, o200k_base, llama3, "
                                                    "qwen2.5, ...), max:A,B,... (every one within the budget), or a preset "
                                                    "(claude, gemini, llama, qwen, mistral, deepseek, openai)")]
Margin = Annotated[float | None, Field(ge=0, le=MAX_MARGIN, description="fit into budget/(1+margin) of the largest count (e.g. 0.30)")]


async def _answer(door: Door, op: Callable[..., dict[str, Any]], **kwargs: Any) -> CallToolResult:
    """The envelope as JSON text and as structured content; refusals as tool errors."""
    try:
        result = await door.call(op, **{k: v for k, v in kwargs.items() if v is not None})
    except NasError as exc:
        raise ToolError(str(exc)) from None
    text = json.dumps(result, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def build(nas: Nas, default_budget: int = DEFAULT_READ_BUDGET) -> MCPServer:
    """The MCP server with its tools over one tree; ``default_budget`` is
    that of an nas_read naming no budget (0: none)."""
    door = Door(nas, default_budget)
    default_said = (f"Without a budget (budget_tokens or @N) a read gets {default_budget} tokens, declared as budget_tokens. "
                    if default_budget else "")
    server: MCPServer = MCPServer("nasfs", instructions=WORKFLOW, version=__version__)

    @server.tool(
        description=(
            "Read a file of the tree, or a view of it, within a token budget; a folder's path gives its map "
            "(files by importance, top symbols, pointers). Start with view='outline' "
            "(or budget_tokens alone: the richest view that fits), then read view='section=NAME' or "
            "view='L12-L18'. view='since=REV' is the file's diff since REV. Cite the evidence pointers. "
            + default_said +
            "Returns the envelope: view, tokens, generated, truncated, content, evidence[{pointer, sha256}]."
        )
    )
    async def nas_read(
        path: Annotated[str, Field(description="a file relative to the tree root, e.g. notes/acme.md (may carry @view); "
                                               "a folder ('' or '.' for the root) gives its map")],
        view: Annotated[str | None, Field(description="outline | L12-L18 | section=NAME | section=NAME@outline | since=REV | N (a budget)")] = None,
        budget_tokens: Budget = None,
        at: At = None,
        tokenizer: Tokenizer = None,
        margin: Margin = None,
    ) -> CallToolResult:
        return await _answer(door, door.read, path=path, view=view, budget_tokens=budget_tokens, at=at,
                             tokenizer=tokenizer, margin=margin)

    @server.tool(
        description=(
            "List a folder of the tree: one line per entry (name, kind file/dir/link, bytes, tokens when "
            "already known), within a token budget. When an answer says next=skip:K, call again with "
            "skip=K for the rest. Use it to find files, then nas_read them (view='outline' first)."
        )
    )
    async def nas_list(
        path: Annotated[str, Field(description="a folder relative to the tree root; '' or '.' for the root")] = "",
        budget_tokens: Budget = None,
        skip: Annotated[int | None, Field(ge=0, le=MAX_BUDGET, description="entries to pass over (next=skip:K)")] = None,
        tokenizer: Tokenizer = None,
        margin: Margin = None,
    ) -> CallToolResult:
        return await _answer(door, door.list, path=path, budget_tokens=budget_tokens, skip=skip, tokenizer=tokenizer, margin=margin)

    @server.tool(
        description=(
            "Search the tree: ranked snippets (the hit line with one line of context), each with an evidence "
            "pointer and the section or symbol it sits in; never whole files. Query: a literal (smart case), "
            "re:REGEX, in:FOLDER, glob:PATTERN; when an answer says next=skip:K, add skip:K for the next page. "
            "Then read the section you need with nas_read."
        )
    )
    async def nas_search(
        query: Annotated[str, Field(description="e.g. 'renewal', 're:price.*2026 in:notes'")],
        budget_tokens: Annotated[int | None, Field(ge=0, le=MAX_BUDGET, description="tokens for the answer (default 1000)")] = None,
        at: At = None,
        tokenizer: Tokenizer = None,
        margin: Margin = None,
    ) -> CallToolResult:
        return await _answer(door, door.search, query=query, budget_tokens=budget_tokens, at=at, tokenizer=tokenizer, margin=margin)

    @server.tool(
        description=(
            "Dereference an evidence pointer (nas://node/tree/path@commit#La-Lb): exactly those bytes at that "
            "commit, with their sha256. Use it to check a citation or to quote it."
        )
    )
    async def nas_deref(pointer: Annotated[str, Field(description="a pointer from an answer's evidence")]) -> CallToolResult:
        return await _answer(door, door.deref, pointer=pointer)

    @server.tool(
        description=(
            "Check that a pointer's commit holds its lines (and the given sha256 or quote); "
            "another registered node's pointer or a SWHID works too."
        )
    )
    async def nas_verify(
        pointer: Annotated[str, Field(description="a pointer or a SWHID")],
        sha256: Annotated[str | None, Field(description="the lines' sha256")] = None,
        quote: Annotated[str | None, Field(description="text the lines contain")] = None,
    ) -> CallToolResult:
        return await _answer(door, door.verify, pointer=pointer, sha256=sha256, quote=quote)

    @server.tool(
        description=(
            "What changed between revisions: 'REV' or 'REV..' (to now) or 'A..B', for the whole tree or one "
            "path. Within budget_tokens it degrades from the full diff to the changed outline entries to a "
            "diffstat. For one file you can also nas_read(path, view='since=REV')."
        )
    )
    async def nas_diff(
        range: Annotated[str, Field(description="REV, REV.. or A..B (commits, branches, tags)")],
        path: Annotated[str | None, Field(description="one file; without it, the whole tree")] = None,
        budget_tokens: Budget = None,
        tokenizer: Tokenizer = None,
        margin: Margin = None,
    ) -> CallToolResult:
        return await _answer(door, door.diff, range=range, path=path, budget_tokens=budget_tokens, tokenizer=tokenizer, margin=margin)

    return server


def serve_stdio(nas: Nas, default_budget: int = DEFAULT_READ_BUDGET) -> int:
    """Serve MCP on stdin/stdout until the client closes them."""
    build(nas, default_budget).run("stdio")
    return 0


__all__ = ["WORKFLOW", "build", "serve_stdio"]
