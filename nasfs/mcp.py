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
from mcp.types import Tool as MCPTool
from pydantic import Field

from . import __version__
from .errors import NasError
from .grammar import MAX_BUDGET
from .help import HELP, MCP_HELP
from .http import DEFAULT_READ_BUDGET, Door
from .service import Nas
from .tokens import MAX_MARGIN

WORKFLOW = """\
nasfs: budgeted, checkable reads of a git-backed tree. Map a folder (nas_read path="."), read a
file's outline (view="outline"), then only the section or lines you need; cite the evidence
pointers. A view too big for its budget degrades (outline, shallower, a page, skeleton), never cut.
nas_help (or the resource nasfs://help) gives the whole view grammar with examples, once.
"""

Budget = Annotated[int | None, Field(ge=0, le=MAX_BUDGET, description="tokens for the whole answer")]
At = Annotated[str | None, Field(description="a revision: commit, branch or tag")]
Tokenizer = Annotated[str | None, Field(description="cl100k_base, o200k_base, a preset (claude, llama, ...) or max:A,B")]
Margin = Annotated[float | None, Field(ge=0, le=MAX_MARGIN, description="fit budget/(1+margin)")]
# the other tools take the same, described once (on nas_read)
Budgeted = Annotated[int | None, Field(ge=0, le=MAX_BUDGET)]
Counted = str | None
Margined = Annotated[float | None, Field(ge=0, le=MAX_MARGIN)]


class LeanServer(MCPServer):
    """``tools/list`` as short as it can say the same: an agent pays for it
    in every conversation. Optional parameters are listed as their type alone
    (absent means default), without pydantic's titles and bounds; calls are
    still validated against the full models, which name a bad value."""

    async def list_tools(self) -> list[MCPTool]:
        return [tool.model_copy(update={"input_schema": lean_schema(tool.input_schema)}) for tool in await super().list_tools()]


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without what a model does not need to call it."""
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        typed = [t for t in prop.get("anyOf", [prop]) if t.get("type") != "null"]
        kept = {"type": typed[0]["type"]} if len(typed) == 1 else {"anyOf": typed}
        if prop.get("default") not in (None, ""):
            kept["default"] = prop["default"]
        if "description" in prop:
            kept["description"] = prop["description"]
        properties[name] = kept
    lean = {"type": "object", "properties": properties}
    if schema.get("required"):
        lean["required"] = schema["required"]
    return lean


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
    default_said = f" Without budget_tokens: {default_budget}." if default_budget else ""
    server: MCPServer = LeanServer("nasfs", instructions=WORKFLOW, version=__version__)
    manual = MCP_HELP + "\n" + HELP

    @server.tool(description="Read a file, a view of it, or a folder's map within a token budget; the view degrades "
                             "to fit, never cut. Start with view='outline', then read a section or lines; cite the "
                             "evidence pointers." + default_said)
    async def nas_read(
        path: Annotated[str, Field(description="file or folder from the tree root ('.': the root)")],
        view: Annotated[str | None, Field(description="outline | section=NAME | L12-L18 | keys | since=REV | N (nas_help)")] = None,
        budget_tokens: Budget = None,
        at: At = None,
        tokenizer: Tokenizer = None,
        margin: Margin = None,
    ) -> CallToolResult:
        return await _answer(door, door.read, path=path, view=view, budget_tokens=budget_tokens, at=at,
                             tokenizer=tokenizer, margin=margin)

    @server.tool(description="List a folder: name, kind, bytes, tokens of each entry. An answer saying next=skip:K "
                             "continues with skip=K.")
    async def nas_list(
        path: Annotated[str, Field(description="folder ('.': the root)")] = "",
        budget_tokens: Budgeted = None,
        skip: Annotated[int | None, Field(ge=0, le=MAX_BUDGET)] = None,
        tokenizer: Counted = None,
        margin: Margined = None,
    ) -> CallToolResult:
        return await _answer(door, door.list, path=path, budget_tokens=budget_tokens, skip=skip, tokenizer=tokenizer, margin=margin)

    @server.tool(description="Search the tree: ranked snippets with evidence pointers and the section each is in, "
                             "never whole files.")
    async def nas_search(
        query: Annotated[str, Field(description="literal, re:REGEX, in:FOLDER, glob:PATTERN, skip:K")],
        budget_tokens: Annotated[int | None, Field(ge=0, le=MAX_BUDGET, description="default 1000")] = None,
        at: At = None,
        tokenizer: Counted = None,
        margin: Margined = None,
    ) -> CallToolResult:
        return await _answer(door, door.search, query=query, budget_tokens=budget_tokens, at=at, tokenizer=tokenizer, margin=margin)

    @server.tool(description="The exact bytes a pointer or SWHID names (any registered node's), with their sha256; "
                             "given sha256 or quote, checks them instead.")
    async def nas_deref(
        pointer: Annotated[str, Field(description="nas://node/tree/path@commit#La-Lb")],
        sha256: str | None = None,
        quote: str | None = None,
    ) -> CallToolResult:
        if sha256 is None and quote is None:
            return await _answer(door, door.deref, pointer=pointer)
        return await _answer(door, door.verify, pointer=pointer, sha256=sha256, quote=quote)

    @server.tool(description="What changed between revisions, for the tree or one path; degrades from the diff "
                             "to changed outline entries to a diffstat.")
    async def nas_diff(
        range: Annotated[str, Field(description="REV, REV.. or A..B")],
        path: str | None = None,
        budget_tokens: Budgeted = None,
        tokenizer: Counted = None,
        margin: Margined = None,
    ) -> CallToolResult:
        return await _answer(door, door.diff, range=range, path=path, budget_tokens=budget_tokens, tokenizer=tokenizer, margin=margin)

    @server.tool(description="The view grammar with examples and how to spend tokens well; ask once if unsure.",
                 structured_output=False)
    async def nas_help() -> str:
        return manual

    @server.resource("nasfs://help", name="help", description="the view grammar with examples", mime_type="text/plain")
    def help_resource() -> str:
        return manual

    return server


def serve_stdio(nas: Nas, default_budget: int = DEFAULT_READ_BUDGET) -> int:
    """Serve MCP on stdin/stdout until the client closes them."""
    build(nas, default_budget).run("stdio")
    return 0


__all__ = ["WORKFLOW", "LeanServer", "build", "lean_schema", "serve_stdio"]
