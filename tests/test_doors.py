"""One core, four doors, the same answers (contract §1): the same reads through
the CLI, HTTP, MCP and the FUSE mount give identical JSON envelopes.

Each door runs as its own process with its own disk cache, so each computes
its answers afresh rather than sharing one cached copy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession

from .mounts import Mount
from .test_http import serving
from .test_mcp import call, session

ACME = "notes/customer-acme.md"
# (path, view, budget_tokens): spelled P@view@N for the CLI and the mount
READS = [
    (ACME, "outline", None),
    (ACME, "section=Renewal", None),
    (ACME, "L12-L18", None),
    (ACME, None, 120),
    (ACME, "outline", 70),  # the outline, its deeper levels dropped
    (ACME, "section=Renewal", 100),  # degraded to the section's outline
    (ACME, "outline", 30),  # not even the skeleton fits: view=none
    (ACME, "since=v1", None),
    ("code/billing.py", "outline", None),
    ("code/billing.py", "section=Invoice.add", None),
    ("config/agent.json", "section=customers@outline", None),  # the follow-up a cut outline names
    ("code/billing.py", "section=Invoice@outline", 80),
    (".", None, 300),  # the root's map
    ("notes", "outline", None),  # a folder's map, unbudgeted
]
SKELETON = "config/deploy.yaml"  # read at the budget its skeleton fits and its outline does not


def skeleton_budget(home: Path) -> int:
    """The budget at which the core serves SKELETON's skeleton: it moves by a token or two with
    how the fixture's commit id tokenizes, so it is found, not written down."""
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    nas = Nas(GitTree(home, node="box", tree="home"))
    return next(b for b in range(40, 200) if nas.read(f"{SKELETON}@outline@{b}").view == "skeleton")
SEARCH = ("renewal", 300)


def spelled(path: str, view: str | None, budget: int | None) -> str:
    return path + "".join(f"@{part}" for part in (view, budget) if part is not None)


def cli(home: Path, *args: str) -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "nasfs", *args, "--repo", str(home), "--node", "box", "--tree", "home"],
        check=True, capture_output=True, timeout=120,
    ).stdout


def test_every_door_gives_the_same_envelopes(mounted: Mount, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    query, budget = SEARCH
    answers: dict[str, list[object]] = {}
    reads = [*READS, (SKELETON, "outline", skeleton_budget(home))]

    # FUSE: P@view.json files, .nas/search/Q@N.json, .nas/deref/<pointer>
    mnt = mounted.mountpoint
    fuse = [json.loads((mnt / (spelled(*r) + ".json")).read_text()) for r in reads]
    fuse.append(json.loads((mnt / ".nas" / "search" / f"{query}@{budget}.json").read_text()))
    pointers = [ev["pointer"] for env in fuse for ev in env["evidence"]]
    assert len(pointers) >= len(reads)
    shorts = [p.removeprefix("nas://box/home/") for p in pointers]
    fuse += [(mnt / ".nas" / "deref" / s).read_bytes().decode() for s in shorts]
    answers["fuse"] = fuse

    # CLI: read --json, search --json, deref
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path / "cache-cli"))
    answers["cli"] = (
        [json.loads(cli(home, "read", "--json", spelled(*r))) for r in reads]
        + [json.loads(cli(home, "search", "--json", "--budget", str(budget), query))]
        + [cli(home, "deref", p).decode() for p in pointers]
    )

    # HTTP: {path, view, budget_tokens}, /v1/search, /v1/evidence/dereference
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path / "cache-http"))
    with serving(home, "--default-budget", "0") as server:  # the mount and the CLI have no default budget
        answers["http"] = (
            [server.post("/v1/files/read", {"path": p, "view": v, "budget_tokens": n}).json() for p, v, n in reads]
            + [server.post("/v1/search", {"query": query, "budget_tokens": budget}).json()]
            + [server.post("/v1/evidence/dereference", {"pointer": p}).json()["content"] for p in pointers]
        )

    # MCP: nas_read, nas_search, nas_deref over stdio
    monkeypatch.setenv("NASFS_CACHE_DIR", str(tmp_path / "cache-mcp"))

    async def over_mcp() -> list[object]:
        with anyio.fail_after(120):
            async with session(home, "--default-budget", "0") as s:
                return await mcp_answers(s, reads, pointers, query, budget)

    answers["mcp"] = anyio.run(over_mcp)

    for door in ("cli", "http", "mcp"):
        for i, (theirs, ours) in enumerate(zip(answers["fuse"], answers[door], strict=True)):
            assert ours == theirs, f"{door} differs from the mount on answer {i}"
    served = [env["view"] for env in answers["fuse"][: len(reads)]]
    assert {"outline", "section", "lines", "diff", "skeleton", "none", "map"} <= set(served), served


async def mcp_answers(s: ClientSession, reads: list[tuple[str, str | None, int | None]], pointers: list[str],
                      query: str, budget: int) -> list[object]:
    out: list[object] = []
    for p, v, n in reads:
        out.append(await call(s, "nas_read", **{k: x for k, x in (("path", p), ("view", v), ("budget_tokens", n)) if x is not None}))
    out.append(await call(s, "nas_search", query=query, budget_tokens=budget))
    for p in pointers:
        out.append((await call(s, "nas_deref", pointer=p))["content"])
    return out


def test_every_door_says_what_a_misspelled_view_meant(mounted: Mount, home: Path) -> None:
    """The hint is in the one grammar error, so the mount's .nas/errors has it too."""
    mnt = mounted.mountpoint
    for name, says in ((f"{ACME}@outlien", "did you mean @outline?"), (f"{ACME}@Outline", "did you mean @outline?"),
                       (f"{ACME}@L5-L2", "did you mean @L2-L5?")):
        with pytest.raises(FileNotFoundError):
            (mnt / name).read_bytes()
        assert says in (mnt / ".nas" / "errors").read_text().splitlines()[-1], name


def test_the_mount_answers_numbers_and_a_search_nothing_fits(mounted: Mount) -> None:
    env = json.loads((mounted.mountpoint / ".nas" / "search" / "renewal@90.json").read_text())
    assert (env["view"], env["truncated"], env["shown"], env["matches"], env["next"]) == ("none", True, 0, 2, "skip:1")
    assert isinstance(env["needs"], int) and env["needs"] > 90
    header = (mounted.mountpoint / ".nas" / "search" / "renewal@90").read_text().split("\n")[0]
    assert " view=none " in header and " truncated=true " in header and f" needs={env['needs']} " in header
