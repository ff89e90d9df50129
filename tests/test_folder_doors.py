"""Folder maps through every door: the mount (real FUSE, read with ``cat``),
the CLI, HTTP (httpx against ``nasfs serve``) and MCP (the SDK's stdio
client). Each answer is within its budget and every pointer in it verifies;
bad folders and ``..`` get one-line refusals; ``readdir`` never lists a map."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession

from nasfs import tokens as tok
from nasfs.repo import GitTree
from nasfs.service import Nas

from .folder_trees import BUDGETS, pointers, tree, within  # noqa: F401 (tree: a fixture)
from .mounts import Mount
from .test_http import serving
from .test_mcp import call, run

CLI_BUDGETS = [0, 30, 60, 120, 500, 2000, 10**12]


@pytest.fixture
def core(tree: Path) -> Nas:
    """The core over the same tree, to check pointers and compare answers."""
    return Nas(GitTree(tree, node="box", tree="home"))


def test_the_mount_serves_maps_within_budget_with_pointers_that_verify(tree: Path, mounted: Mount, core: Nas) -> None:
    mnt = mounted.mountpoint
    for spec in (".", "pkg", "pkg/deep", ".at/v1/.", ".at/main/pkg", "pkg/."):
        for budget in BUDGETS:
            done = subprocess.run(["cat", str(mnt / f"{spec}@{budget}")], capture_output=True, timeout=60)
            if done.returncode:
                assert budget < 60 and b"No such file" in done.stderr, (spec, budget, done.stderr)
                assert "too small for any map" in (mnt / ".nas" / "errors").read_text().splitlines()[-1]
                continue
            keys = within(done.stdout, budget)
            assert keys["view"] in ("map", "skeleton", "none"), keys
            at = "v1" if spec.startswith(".at/v1") else None
            for p in pointers(done.stdout.decode()):
                core.verify(p)
                if at:
                    assert p.split("@")[1][:12] == str(core.tree.resolve("v1").id)[:12]
    text = (mnt / ".@outline").read_bytes()
    said = pointers(text.decode())
    assert len(said) > 40
    for p in said[:10]:  # the mount's own deref gives the bytes the core does
        assert (mnt / ".nas" / "deref" / p).read_bytes() == core.deref(p)[1]
    envelope = json.loads((mnt / "pkg@2000.json").read_text())
    for e in envelope["evidence"]:
        core.verify(e["pointer"], sha256=e["sha256"])


def test_readdir_never_lists_a_map(tree: Path, mounted: Mount) -> None:
    mnt = mounted.mountpoint
    assert (mnt / ".@2000").read_bytes().startswith(b"nasfs view=map")
    assert (mnt / "pkg@outline").read_bytes().startswith(b"nasfs view=map")
    for folder, dirs, files in os.walk(mnt):
        dirs[:] = [d for d in dirs if d != ".git"]
        assert not [n for n in dirs + files if "@" in n], folder
    assert set(os.listdir(mnt)) == set(os.listdir(tree)) and set(os.listdir(mnt / "pkg")) == set(os.listdir(tree / "pkg"))


def test_the_mount_and_the_cli_serve_the_pages_the_core_does(tree: Path, mounted: Mount, core: Nas) -> None:
    mnt = mounted.mountpoint
    spec = "pkg@150"
    for _ in range(40):  # pkg has 31 files: at most one page each
        want = core.read(spec)
        assert subprocess.run(["cat", str(mnt / spec)], capture_output=True, timeout=60).stdout == want.text
        assert nasfs(tree, "read", spec).stdout == want.text
        following = within(want.text, 150).get("next")
        if following is None:
            break
        spec = f"pkg{following}"
    assert spec.startswith("pkg@outline=") and "page=" in want.header


def test_the_mount_refuses_bad_folders_in_one_line(tree: Path, mounted: Mount) -> None:
    mnt = mounted.mountpoint
    for name, says in (("nosuch@2000", "does not exist"), ("pkg/..@2000", "leaves the folder through '..'"),
                       ("pkg@since=v1", "is a folder; @since=v1 is a view of files"), ("out-dir@2000", "outside the tree")):
        done = subprocess.run(["cat", str(mnt / name)], capture_output=True, timeout=60)
        assert done.returncode == 1 and b"No such file" in done.stderr, name
        assert says in (mnt / ".nas" / "errors").read_text().splitlines()[-1], name
    assert subprocess.run(["cat", str(mnt / "pkg")], capture_output=True).stderr.endswith(b"Is a directory\n")


def nasfs(tree: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "nasfs", *args[:1], "--repo", str(tree), "--node", "box", "--tree", "home", *args[1:]],
                          capture_output=True, timeout=120)


def test_the_cli_reads_maps_within_budget(tree: Path, core: Nas) -> None:
    for budget in CLI_BUDGETS:
        done = nasfs(tree, "read", f".@{budget}")
        if done.returncode:
            assert done.returncode == 2 and budget < 60 and done.stderr.count(b"\n") == 1 and b"too small" in done.stderr
            continue
        within(done.stdout, budget)
        assert done.stdout == core.read(f".@{budget}").text
    out = nasfs(tree, "read", "pkg@outline").stdout
    said = pointers(out.decode())
    for p in said[:3]:
        verified = nasfs(tree, "verify", p)
        assert verified.returncode == 0 and verified.stdout.startswith(b"verified "), verified.stderr
    for p in said:
        core.verify(p)
    sub = subprocess.run([sys.executable, "-m", "nasfs", "read", ".@300", "--node", "box", "--tree", "home"],
                         cwd=tree / "pkg", capture_output=True, timeout=120)  # '.' from a subfolder is that folder
    assert b" path=pkg " in sub.stdout.split(b"\n", 1)[0], sub.stderr
    for args, says in ((("read", "nosuch@2000"), b"does not exist"), (("read", "..@2000"), b"leaves the folder through"),
                       (("read", "pkg"), b"is a folder (a directory), not a file"), (("read", "pkg@L1"), b"view of files")):
        done = nasfs(tree, *args)
        assert done.returncode == 2 and done.stderr.count(b"\n") == 1 and says in done.stderr, (args, done.stderr)


def test_http_serves_maps_within_budget_with_pointers_that_verify(tree: Path, core: Nas) -> None:
    with serving(tree) as server:
        for budget in BUDGETS:
            for body in ({"path": "", "view": str(budget)}, {"path": "pkg", "budget_tokens": budget}):
                r = server.post("/v1/files/read", body)
                if r.status_code == 400:
                    assert budget < 60 and "too small" in r.json()["detail"] and r.json()["error"] == "bad_view"
                    continue
                env = r.json()
                assert r.status_code == 200 and env["budget_tokens"] == budget
                assert env["tokens"] == tok.count(env["content"]) <= budget
                spec = f"{body['path'] or '.'}@{budget}"
                assert env["content"] == core.read(spec).served.body.decode()  # whose text is within budget
                for e in env["evidence"]:
                    checked = server.post("/v1/evidence/verify", {"pointer": e["pointer"], "sha256": e["sha256"]}).json()
                    assert checked["verified"], checked
        page = server.post("/v1/files/read", {"path": "pkg", "view": "outline=5", "budget_tokens": 150}).json()
        assert page["content"] == core.read("pkg@outline=5@150").served.body.decode() and page["page"].startswith("5-")
        assert page["next"].startswith("@outline=") and page["next"].endswith("@150")
        bare = server.post("/v1/files/read", {"path": "pkg"}).json()  # no view: the map within the default budget
        assert bare["view"] == "map" and bare["budget_tokens"] == 8000 and bare["path"] == "pkg"
        for body, status, says in (({"path": "nosuch", "view": "2000"}, 404, "does not exist"),
                                   ({"path": "..", "view": "2000"}, 400, "leaves the folder through"),
                                   ({"path": "pkg", "view": "since=v1"}, 404, "is a folder"),
                                   ({"path": "pkg", "view": "2000", "at": "v1"}, 404, "does not exist")):
            r = server.post("/v1/files/read", body)
            assert r.status_code == status and says in r.json()["detail"] and "\n" not in r.json()["detail"], r.text


def test_mcp_serves_maps_within_budget_with_pointers_that_verify(tree: Path, core: Nas) -> None:
    async def body(s: ClientSession) -> None:
        for budget in BUDGETS:
            result = await s.call_tool("nas_read", {"path": ".", "view": str(budget)})
            if result.is_error:
                assert budget < 60 and "too small" in result.content[0].text
                continue
            env = json.loads(result.content[0].text)
            assert env["tokens"] == tok.count(env["content"]) <= budget
            assert env["content"] == core.read(f".@{budget}").served.body.decode()
            for e in env["evidence"][:20]:
                got = await call(s, "nas_deref", pointer=e["pointer"])
                assert got["sha256"] == e["sha256"]
        page = await call(s, "nas_read", path="pkg", view="outline=5@150")
        assert page["content"] == core.read("pkg@outline=5@150").served.body.decode() and page["page"].startswith("5-")
        env = await call(s, "nas_read", path="")  # the root, within the default budget
        assert env["view"] == "map" and env["path"] == "." and env["budget_tokens"] == 8000
        for e in env["evidence"]:
            core.verify(e["pointer"], sha256=e["sha256"])
        for arguments, says in (({"path": "nosuch", "view": "2000"}, "does not exist"),
                                ({"path": "pkg/..", "view": "2000"}, "leaves the folder through"),
                                ({"path": "pkg", "view": "section=Core"}, "is a folder")):
            result = await s.call_tool("nas_read", arguments)
            assert result.is_error and says in result.content[0].text and "\n" not in result.content[0].text, arguments

    run(tree, body)


def test_hashes_in_envelopes_are_of_the_named_bytes(core: Nas) -> None:
    env = core.read("pkg@outline.json").envelope()
    for e in env["evidence"]:
        assert hashlib.sha256(core.deref(e["pointer"])[1]).hexdigest() == e["sha256"]
