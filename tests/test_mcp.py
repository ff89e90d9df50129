"""The MCP door, driven by the SDK's own stdio client: ``python -m nasfs mcp``
as a subprocess, ClientSession + stdio_client, as an agent's host would."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ACME = "notes/customer-acme.md"
TOOLS = {"nas_read", "nas_search", "nas_deref", "nas_diff", "nas_list", "nas_help"}


@contextlib.asynccontextmanager
async def session(home: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An initialized MCP session with ``nasfs mcp`` over ``home`` (node box, tree home)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nasfs", "mcp", "--repo", str(home), "--node", "box", "--tree", "home", *extra],
        env={"NASFS_CACHE_DIR": os.environ["NASFS_CACHE_DIR"]},  # the client passes a minimal environment
    )
    with (home.parent / "mcp.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            yield s


def run(home: Path, body: Callable[[ClientSession], Awaitable[None]], *extra: str) -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            async with session(home, *extra) as s:
                await body(s)

    anyio.run(main)


async def call(s: ClientSession, tool: str, **arguments: object) -> dict:
    """A successful call: its text content and structured content are the same JSON."""
    result = await s.call_tool(tool, arguments)
    assert not result.is_error, result.content
    [text] = result.content
    assert text.type == "text"
    parsed = json.loads(text.text)
    assert parsed == result.structured_content
    return parsed


DEFAULT = 8000  # nas_read's default budget


def envelope(response) -> dict:
    return json.loads(json.dumps(response.envelope()))


def core(nas, spec: str, at: str | None = None, default: int | None = DEFAULT) -> dict:
    return envelope(nas.read(spec, at, default_budget=default))


def test_tools_are_listed_and_teach_the_budget_workflow(home: Path) -> None:
    async def body(s: ClientSession) -> None:
        listed = (await s.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        by_name = {t.name: t for t in listed}
        read = by_name["nas_read"]
        for word in ("outline", "section", "lines", "evidence", "budget"):
            assert word in read.description
        for word in ("section=NAME", "L12-L18", "since=REV", "nas_help"):
            assert word in read.input_schema["properties"]["view"]["description"]
        assert "snippets" in by_name["nas_search"].description
        schema = read.input_schema
        assert schema["required"] == ["path"]
        assert set(schema["properties"]) == {"path", "view", "budget_tokens", "at", "tokenizer", "margin"}
        assert set(by_name["nas_diff"].input_schema["properties"]) == {"range", "path", "budget_tokens", "tokenizer", "margin"}
        assert set(by_name["nas_list"].input_schema["properties"]) == {"path", "budget_tokens", "skip", "tokenizer", "margin"}
        instructions = (await s.initialize()).instructions  # the handshake's answer, kept by the session
        assert "outline" in instructions and "nas_help" in instructions

    run(home, body)


def test_tools_list_costs_at_most_800_tokens_and_the_manual_is_asked_once(home: Path) -> None:
    """What an agent pays in every conversation before its first read: the
    tools/list result as the client receives it, counted with cl100k_base."""
    from nasfs.help import HELP, MCP_HELP
    from nasfs.tokens import count

    async def body(s: ClientSession) -> None:
        listed = await s.list_tools()
        sent = json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)
        assert count(sent) <= 800, count(sent)
        assert count((await s.initialize()).instructions) <= 150
        manual = (await s.call_tool("nas_help", {})).content[0].text
        assert "section=NAME@outline" in manual and "since=REV" in manual and manual == MCP_HELP + "\n" + HELP
        resource = await s.read_resource("nasfs://help")
        assert resource.contents[0].text == manual
        # the lean schema still validates calls: a bad budget is refused, naming the parameter
        bad = await s.call_tool("nas_read", {"path": ACME, "budget_tokens": -1})
        assert bad.is_error and "budget_tokens" in bad.content[0].text
        # ... and the bounds and types the listing leaves out are the models' (not the door's) to refuse
        for tool, arguments in (("nas_list", {"tokenizer": 123}), ("nas_search", {"query": "x", "margin": 99}),
                                ("nas_list", {"skip": -1})):
            bad = await s.call_tool(tool, arguments)
            [name] = arguments.keys() - {"query"}
            assert bad.is_error and f"validation error for {tool}Arguments" in bad.content[0].text, bad.content
            assert name in bad.content[0].text
        assert (await call(s, "nas_read", path=ACME, view="L1"))["content"] == "# Acme Corp\n"

    run(home, body)


def test_each_tool_answers_as_the_core_does(home: Path, nas) -> None:
    from nasfs.diffs import diff_response
    from nasfs.search import search

    async def body(s: ClientSession) -> None:
        assert await call(s, "nas_read", path=ACME, view="outline") == core(nas, ACME + "@outline")
        assert await call(s, "nas_read", path=ACME + "@section=Renewal") == core(nas, ACME + "@section=Renewal")
        assert await call(s, "nas_read", path=ACME, view="outline", budget_tokens=30) == envelope(nas.read(ACME + "@outline@30"))
        assert await call(s, "nas_read", path=ACME, budget_tokens=100) == envelope(nas.read(ACME + "@100"))
        assert await call(s, "nas_read", path=ACME, view="L14", at="v1") == core(nas, ACME + "@L14", at="v1")

        found = await call(s, "nas_search", query="renewal", budget_tokens=300)
        assert found == envelope(search(nas, "renewal", budget=300))
        pointer = found["evidence"][0]["pointer"]

        deref = await call(s, "nas_deref", pointer=pointer)
        _, raw = nas.deref(pointer)
        assert deref["content"].encode() == raw
        assert deref["sha256"] == found["evidence"][0]["sha256"]

        changed = await call(s, "nas_diff", range="v1..main", path=ACME)
        assert changed == envelope(diff_response(nas, "v1..main", ACME, None))
        whole = await call(s, "nas_diff", range="v1", budget_tokens=40)
        assert whole["tokens"] <= 40

    run(home, body)


def test_refusals_are_tool_errors_with_the_reason(home: Path) -> None:
    async def body(s: ClientSession) -> None:
        cases = [
            ("nas_read", {"path": "notes/absent.md"}, "no file 'notes/absent.md'"),
            ("nas_read", {"path": ACME, "view": "outlines"}, "valid: @outline"),
            ("nas_read", {"path": ACME, "view": "outlien"}, "did you mean @outline?"),
            ("nas_read", {"path": ACME, "view": "Outline"}, "did you mean @outline?"),
            ("nas_read", {"path": ACME, "view": "L5-L2"}, "did you mean @L2-L5?"),
            ("nas_read", {"path": "notes/absent.md"}, "does not exist"),
            ("nas_read", {"path": "notes", "view": "L1"}, "is a folder; @L1-L1 is a view of files"),
            ("nas_read", {"path": ACME, "view": "section=Pricing"}, "Pricing"),
            ("nas_read", {"path": ACME, "at": "no-such-rev"}, "unknown revision"),
            ("nas_read", {"path": ACME, "budget_tokens": -1}, "budget_tokens"),
            ("nas_search", {"query": "re:("}, "ripgrep refused"),
            ("nas_deref", {"pointer": "not a pointer"}, "malformed pointer"),
            ("nas_diff", {"range": "..."}, "bad revision range"),
        ]
        for tool, arguments, reason in cases:
            result = await s.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert reason in result.content[0].text, result.content[0].text
        # the server is still there after its refusals
        assert (await call(s, "nas_read", path=ACME, view="L1"))["content"] == "# Acme Corp\n"

    run(home, body)


def test_nas_read_without_a_budget_gets_the_default(home: Path) -> None:
    async def default(s: ClientSession) -> None:
        env = await call(s, "nas_read", path=ACME)
        assert env["budget_tokens"] == DEFAULT and env["view"] == "full"
        read = next(t for t in (await s.list_tools()).tools if t.name == "nas_read")
        assert f"Without budget_tokens: {DEFAULT}." in read.description

    async def small(s: ClientSession) -> None:
        env = await call(s, "nas_read", path=ACME)
        assert env["budget_tokens"] == 100 and env["view"] == "outline"  # the ladder applies
        assert (await call(s, "nas_read", path=ACME, view="L1"))["content"] == "# Acme Corp\n"
        assert (await call(s, "nas_read", path=ACME, view="L1-L38"))["view"] == "skeleton"
        assert (await call(s, "nas_read", path=ACME, budget_tokens=5000))["budget_tokens"] == 5000

    async def off(s: ClientSession) -> None:
        env = await call(s, "nas_read", path=ACME)
        assert env["budget_tokens"] is None and env["view"] == "full"

    run(home, default)
    run(home, small, "--default-budget", "100")
    run(home, off, "--default-budget", "none")


def test_search_numbers_and_a_budget_nothing_fits(home: Path) -> None:
    async def body(s: ClientSession) -> None:
        env = await call(s, "nas_search", query="renewal", budget_tokens=90)
        assert (env["view"], env["truncated"], env["shown"], env["matches"], env["next"]) == ("none", True, 0, 2, "skip:1")
        assert isinstance(env["needs"], int) and env["needs"] > 90
        changed = await call(s, "nas_diff", range="v1..main")
        assert [type(changed[k]) for k in ("files", "added", "deleted")] == [int] * 3

    run(home, body)


def test_nas_list_lists_a_folder_within_its_budget(home: Path) -> None:
    (home / "outside").symlink_to("/etc")

    async def body(s: ClientSession) -> None:
        await call(s, "nas_read", path=ACME, view="outline")  # counts the file's tokens once
        root = await call(s, "nas_list", path="")
        assert root["view"] == "list" and root["entries"] == root["shown"] and root["budget_tokens"] == DEFAULT
        assert "notes/\tdir" in root["content"] and "outside -> /etc\tlink" in root["content"] and ".git" not in root["content"]
        notes = await call(s, "nas_list", path="notes")
        acme = next(line for line in notes["content"].splitlines() if line.startswith("customer-acme.md\t"))
        assert acme.split("\t")[1:3] == ["file", str((home / ACME).stat().st_size)] and acme.split("\t")[3].isdigit()
        small = await call(s, "nas_list", path=".", budget_tokens=60)
        assert small["tokens"] <= 60 and 0 < small["shown"] < small["entries"]
        rest = await call(s, "nas_list", path=".", budget_tokens=1000, skip=int(small["next"].removeprefix("skip:")))
        assert rest["shown"] == rest["entries"] - small["shown"] and "next" not in rest
        for path, reason in (("../x", "leaves the tree"), ("outside", "outside the tree"), (".git", ".git"),
                             (ACME, "is a file, not a folder"), ("nope", "does not exist")):
            result = await s.call_tool("nas_list", {"path": path})
            assert result.is_error and reason in result.content[0].text, (path, result.content[0].text)

    run(home, body)
