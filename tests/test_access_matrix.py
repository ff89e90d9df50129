"""Every door of a mount made with --allow-other shows each account exactly
what it could ``cat``: real accounts (useradd), real reads (setpriv + cat),
one tree (tests/access_world.py). No answer holds a byte of a file the
account may not read: its content, headings or name."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from .access_world import ANA, BO, PASS_NAME, World, as_user, leaks, run_as, start_world
from .conftest import header
from .mounts import communicate_on_mount

READERS = ("root", ANA, BO)
FILES = ["README.md", "public/notes.md", "public/link", "public/chain", "public/to-team", "public/plan-hard.md",
         "pass/qpw-hidden.md", "team/ywv-plan.md", "private/zqx-secret.md", "private/absent.md", "public/dangling"]
VIEWS = ["@outline", "@outline.json", "@L1-L3", "@L2", "@60", "@section=Harbor", "@section=ZQXSECRETHEAD",
         "@since=HEAD~1", "@outline=2"]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    yield from start_world()


def test_a_view_is_answered_exactly_when_its_file_is(world: World) -> None:
    """For every account, file and view kind: ``cat FILE@VIEW`` is refused
    when ``cat FILE`` is, with the same errno whether or not the file
    exists, and no refused answer tells anything (symlinks into a private
    folder, chained, to a group's folder, a hard link, a folder at 0711)."""
    os.symlink("../private/absent.md", world.tree / "public" / "dangling")
    try:
        for name in (ANA, BO):
            for rel in FILES:
                plain = world.cat(name, rel)
                for view in VIEWS:
                    got = world.cat(name, rel + view)
                    said = got.stdout + got.stderr
                    assert not leaks(name, said), (name, rel + view, said)
                    if plain.returncode != 0:
                        assert got.returncode != 0 and b"Permission denied" in got.stderr, (name, rel + view, said)
                    elif view in ("@outline", "@L1-L3", "@60", "@outline.json"):
                        assert got.returncode == 0, (name, rel + view, said)
        assert world.cat(BO, "pass/qpw-hidden.md@outline").returncode == 0  # searchable, not listable: by name
        assert world.cat(ANA, "public/to-team@outline").returncode == 0
        assert world.cat(BO, "public/to-team@outline").returncode != 0
        assert b"ZQXSECRETHEAD" in world.cat("root", "public/link@outline").stdout  # root reads all
    finally:
        os.unlink(world.tree / "public" / "dangling")


def test_a_view_out_of_the_tree_is_refused_to_everyone(world: World) -> None:
    for name in READERS:
        got = world.cat(name, "public/out@outline")
        assert got.returncode != 0 and not got.stdout, name


def test_folder_maps_list_and_count_only_what_the_account_could_find(world: World) -> None:
    """An entry the account could not ``ls`` and ``cat`` is not listed, not
    counted, and gives no heading; a folder it may not list is refused."""
    expect = {"root": 6, ANA: 4, BO: 2}  # README, notes; + team's plan and its hard link; + secret, pass
    for name in READERS:
        for view in (".@outline", ".@2000", ".@outline=1@300", "public@outline", ".@70"):  # 40 was at the edge: the header alone is 38-41 tokens, by how its commit id tokenizes
            got = world.cat(name, view)
            assert got.returncode == 0, (name, view, got.stderr)
            assert not leaks(name, got.stdout), (name, view, got.stdout)
            if name != "root":
                assert PASS_NAME.encode() not in got.stdout, (name, view)  # pass/ is 0711: not listable
        top = world.cat(name, ".@outline").stdout
        assert int(header(top)["files"]) == expect[name], (name, top)
        assert (b"plan-hard.md" in top) == (name != BO)
        assert b"public/notes.md" in top and b"Harbor" in top
    assert world.cat(ANA, "team@outline").returncode == 0
    for name in (ANA, BO):
        for folder in ("private@outline", "pass@outline", "private@2000"):
            got = world.cat(name, folder)
            assert got.returncode != 0 and not leaks(name, got.stdout + got.stderr), (name, folder)
    assert world.cat(BO, "team@outline").returncode != 0


def test_a_folder_summary_is_shown_only_to_who_sees_all_its_files(world: World) -> None:
    deadline = time.monotonic() + 120
    for folder in ("public@summary", ".@summary"):
        while world.cat("root", folder).returncode != 0:  # queued at the first read, then made
            assert time.monotonic() < deadline, f"{folder} was not summarized"
            time.sleep(0.5)
    assert world.cat(ANA, "public@summary").returncode == 0  # ana reads notes and the team's hard link
    for name, folder in ((BO, "public@summary"), (ANA, ".@summary"), (BO, ".@summary")):
        got = world.cat(name, folder)
        assert got.returncode != 0 and b"Permission denied" in got.stderr, (name, folder)
        assert not leaks(name, got.stdout + got.stderr)
    errors = (world.mnt / ".nas" / "errors").read_text()
    assert "may not read" in errors and "@outline (the map of the files this account may read)" in errors


def test_search_shows_hits_only_from_files_the_account_could_find(world: World) -> None:
    for name in READERS:
        for query in ("lighthouse", "lighthouse@2000", "lighthouse.json", "ZQXSECRETBODY", "YWVTEAMBODY"):
            got = world.cat(name, f".nas/search/{query}")
            assert got.returncode == 0, (name, query, got.stderr)
            words = query.split("@")[0].removesuffix(".json")
            assert not leaks(name, got.stdout.replace(f"query={words}".encode(), b"").replace(f'"{words}"'.encode(), b"")), \
                (name, query, got.stdout)
            if leaks(name, words.encode()):  # a marker of a file they may not read: not one hit, not counted
                assert header(got.stdout)["matches"] == "0", got.stdout
            if name != "root":
                assert PASS_NAME.encode() not in got.stdout
        hits = world.cat(name, ".nas/search/lighthouse").stdout
        assert b"public/notes.md" in hits and b"README.md" in hits
        assert (b"ywv-plan.md" in hits) == (name != BO)
    got = world.cat(BO, ".nas/search/lighthouse in:private")
    assert not leaks(BO, got.stdout + got.stderr) and got.returncode != 0


def test_deref_and_diffs_tell_nothing_private(world: World) -> None:
    text = world.cat("root", "private/zqx-secret.md@section=ZQXSECRETHEAD").stdout
    secret_ptr = header(text)["pointer"].split("/", 4)[4]  # drop nas://box/home/
    public_ptr = header(world.cat("root", "public/notes.md@section=Harbor").stdout)["pointer"].split("/", 4)[4]
    assert b"ZQXSECRETHEAD" in world.cat("root", f".nas/deref/{secret_ptr}").stdout
    for name in (ANA, BO):
        got = world.cat(name, f".nas/deref/{secret_ptr}")
        assert got.returncode != 0 and not leaks(name, got.stdout + got.stderr), name
        assert world.cat(name, f".nas/deref/{public_ptr}").stdout.startswith(b"## Harbor\n")
    for name in READERS:
        for diff in (".nas/diff/HEAD~1", ".nas/diff/HEAD~1@200", ".nas/diff/HEAD~1..HEAD"):
            got = world.cat(name, diff)
            assert got.returncode == 0 and not leaks(name, got.stdout), (name, diff, got.stdout)
    assert b"zqx-secret" in world.cat("root", ".nas/diff/HEAD~1").stdout


def test_history_follows_the_repository(world: World) -> None:
    """``.at`` is as readable as ``.git`` (0755 here): the committed files,
    and views of them; nothing uncommitted is in it."""
    for name in (ANA, BO):
        listing = run_as(name, ["ls", "-R", str(world.mnt / ".at" / "HEAD")])
        assert listing.returncode == 0 and b"notes.md" in listing.stdout and not leaks(name, listing.stdout)
        got = world.cat(name, ".at/main/public/notes.md@outline")
        assert got.returncode == 0 and b"Keepers" in got.stdout


def test_a_file_made_unreadable_while_mounted_is_refused_at_once(world: World) -> None:
    notes = world.tree / "public" / "notes.md"
    for _ in range(3):  # remembered by the mount (view_memo.py) from here on
        assert world.cat(BO, "public/notes.md@outline").returncode == 0
    map_before = world.cat(BO, ".@outline").stdout
    assert b"public/notes.md" in map_before
    os.chmod(notes, 0o600)
    try:
        got = world.cat(BO, "public/notes.md@outline")
        assert got.returncode != 0 and b"Permission denied" in got.stderr
        assert world.cat(BO, "public/notes.md@L1-L3").returncode != 0
        assert b"public/notes.md" not in world.cat(BO, ".@outline").stdout
        assert b"Harbor" not in world.cat(BO, ".nas/search/lighthouse").stdout
    finally:
        os.chmod(notes, 0o644)
    assert world.cat(BO, "public/notes.md@outline").returncode == 0
    os.chmod(world.tree / "public", 0o700)  # now the folder above it
    try:
        for view in ("public/notes.md@outline", "public@outline"):
            assert world.cat(BO, view).returncode != 0, view
        assert b"notes.md" not in world.cat(BO, ".@outline").stdout
    finally:
        os.chmod(world.tree / "public", 0o755)


def test_a_view_inode_opened_by_another_account_is_judged_again(world: World) -> None:
    """Root and bo share a view's inode; bo's open of a map made for ana
    is refused, and root's own view of a private file stays root's."""
    root_view = world.mnt / "public" / "link@outline"
    with open(root_view, "rb") as fh:  # root holds the inode open
        assert b"ZQXSECRETHEAD" in fh.read()
        got = world.cat(BO, "public/link@outline")
        assert got.returncode != 0 and not got.stdout


def test_the_cli_as_an_account_judges_as_that_account(world: World) -> None:
    """``nasfs`` run by an account (not through the mount's read socket)."""
    home = world.base / "bo-home"
    home.mkdir(exist_ok=True)
    uid = int(run_as(BO, ["id", "-u"]).stdout)
    os.chown(home, uid, -1)
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "XDG_CACHE_HOME")}  # root's caches
    env.update(HOME=str(home), NASFS_CACHE_DIR=str(home / "cache"), GIT_CEILING_DIRECTORIES=str(world.base))
    cli = [sys.executable, "-m", "nasfs"]
    names = ["--repo", str(world.tree), "--node", "box", "--tree", "home"]
    ok = run_as(BO, [*cli, "read", *names, "public/notes.md@outline"], env=env, cwd=str(world.base))
    assert ok.returncode == 0 and b"Harbor" in ok.stdout, ok.stderr
    for spec in ("public/link@outline", "public/chain@L1-L3", "private/zqx-secret.md@outline", "private/absent.md@outline",
                 "public/to-team@section=YWVTEAMHEAD"):
        got = run_as(BO, [*cli, "read", *names, spec], env=env, cwd=str(world.base))
        assert got.returncode == 2 and b"may not read" in got.stderr, (spec, got.stderr)
        assert not leaks(BO, got.stdout + got.stderr.replace(spec.split("@")[0].encode(), b"PATH")), spec
    found = run_as(BO, [*cli, "search", *names, "lighthouse"], env=env, cwd=str(world.base))
    assert found.returncode == 0 and b"public/notes.md" in found.stdout, found.stderr
    assert not leaks(BO, found.stdout + found.stderr) and PASS_NAME.encode() not in found.stdout


def test_http_answers_a_token_as_its_account(world: World) -> None:
    """``--token-file`` lines ``TOKEN USER``: each request is judged as that
    account; a line without an account is the server's own (root here)."""
    import httpx

    from .summary_servers import free_port

    tokens = world.base / "tokens"
    tokens.write_text(f"# token and account\ntok-ana {ANA}\ntok-bo {BO}\n\ntok-server\n")
    os.chmod(tokens, 0o600)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "nasfs", "serve", "--repo", str(world.tree),
                               "--node", "box", "--tree", "home", "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/v1/health", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)

        def post(token: str, op: str, body: dict) -> httpx.Response:
            return httpx.post(f"{url}{op}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60)

        assert post("tok-nobody", "/v1/files/read", {"path": "README.md"}).status_code == 401
        for token, name in (("tok-ana", ANA), ("tok-bo", BO)):
            for path, view in (("public/link", "outline"), ("public/chain", "L1-L3"), ("private/zqx-secret.md", "outline"),
                               ("private/absent.md", "outline"), ("private", "outline")):
                r = post(token, "/v1/files/read", {"path": path, "view": view})
                assert r.status_code == 403 and r.json()["error"] == "access_denied", (name, path, r.text)
                assert not leaks(name, r.content.replace(path.encode(), b"PATH"))  # the name asked is said back
            for op, body in (("/v1/files/read", {"path": ".", "budget_tokens": 2000}),
                             ("/v1/search", {"query": "lighthouse"}), ("/v1/files/list", {"path": "public"}),
                             ("/v1/diff", {"range": "HEAD~1"})):
                r = post(token, op, body)
                told = r.content.replace(b"../private/zqx-secret.md", b"T").replace(b"../team/ywv-plan.md", b"T")  # links: as ls -l tells anyone
                assert r.status_code == 200 and not leaks(name, told), (name, op, r.text)
                assert PASS_NAME.encode() not in r.content or op == "/v1/diff"
            r = post(token, "/v1/files/list", {"path": "private"})
            assert r.status_code == 403 and r.json()["error"] == "access_denied" and not leaks(name, r.content)
        team = post("tok-ana", "/v1/files/read", {"path": "public/to-team", "view": "outline"})
        assert team.status_code == 200 and b"YWVTEAMHEAD" in team.content
        assert post("tok-bo", "/v1/files/read", {"path": "public/to-team", "view": "outline"}).status_code == 403
        mine = post("tok-server", "/v1/files/read", {"path": "public/link", "view": "outline"})
        assert mine.status_code == 200 and b"ZQXSECRETHEAD" in mine.content  # the server's own account: root
        shown = post("tok-bo", "/v1/files/read", {"path": ".", "view": "outline"}).json()
        assert ["README.md", "public/notes.md"] == sorted(e["pointer"].split("/", 4)[4].split("@")[0]
                                                         for e in shown["evidence"] if "#" not in e["pointer"] and not e["pointer"].split("@")[0].endswith("/"))
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_a_token_file_naming_an_unknown_account_is_refused(world: World) -> None:
    tokens = world.base / "bad-tokens"
    tokens.write_text("tok-x nasfs-nobody-such\n")
    got = subprocess.run([sys.executable, "-m", "nasfs", "serve", "--repo", str(world.tree),
                          "--listen", "127.0.0.1:1", "--token-file", str(tokens)], capture_output=True, timeout=60)
    assert got.returncode == 2 and b"no account named 'nasfs-nobody-such'" in got.stderr, got.stderr
    assert len(got.stderr.strip().splitlines()) == 1


def test_the_mcp_server_run_as_an_account_answers_as_that_account(world: World) -> None:
    """``nasfs mcp`` started by an agent's host as ``nasfs-bo`` (stdio)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    home = world.base / "bo-mcp"
    home.mkdir(exist_ok=True)
    os.chown(home, int(run_as(BO, ["id", "-u"]).stdout), -1)
    params = StdioServerParameters(
        command="setpriv", args=[*as_user(BO)[1:], sys.executable, "-m", "nasfs", "mcp", "--repo", str(world.tree),
                                 "--node", "box", "--tree", "home"],
        env={"HOME": str(home), "NASFS_CACHE_DIR": str(home / "cache")}, cwd=str(world.base))
    said: dict[str, tuple[bool, str]] = {}

    async def main() -> None:
        with anyio.fail_after(120), (world.base / "mcp.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                for key, tool, args in (("notes", "nas_read", {"path": "public/notes.md", "view": "outline"}),
                                        ("link", "nas_read", {"path": "public/link", "view": "outline"}),
                                        ("team", "nas_read", {"path": "public/to-team", "view": "section=YWVTEAMHEAD"}),
                                        ("search", "nas_search", {"query": "lighthouse"}),
                                        ("list", "nas_list", {"path": "team"})):
                    result = await s.call_tool(tool, args)
                    said[key] = (result.is_error, "".join(c.text for c in result.content if c.type == "text"))

    anyio.run(main)
    assert said["notes"][0] is False and "Harbor" in said["notes"][1]
    for key in ("link", "team", "list"):
        failed, text = said[key]
        assert failed and "may not read" in text, (key, text)
        assert not leaks(BO, text.replace("public/to-team", "").encode()), (key, text)
    assert said["search"][0] is False and "public/notes.md" in said["search"][1]
    assert not leaks(BO, said["search"][1].encode()) and PASS_NAME not in said["search"][1]


def test_samba_mapped_to_an_account_shows_what_it_may_read(world: World, tmp_path) -> None:
    """The mount re-exported by Samba with ``nasfs-bo`` as the forced user
    (scripts/samba-export, as tests/test_reexport.py runs it)."""
    from .test_reexport import smb_server

    with smb_server(world.mount, tmp_path, reader=BO) as smb:
        assert b"Harbor" in smb.get("public/notes.md@outline")
        for spec in ("public/link@outline", "public/chain@L1-L3", "public/to-team@outline", "public/plan-hard.md@outline",
                     "private/zqx-secret.md@outline", "private@outline", "public/link@section=ZQXSECRETHEAD"):
            said = smb.refused(spec).replace(spec, "PATH").replace(spec.replace("/", "\\"), "PATH")
            assert not leaks(BO, said.encode()), (spec, said)
        for spec in (".@outline", ".@2000", "public@outline", ".nas/search/lighthouse"):
            got = smb.get(spec)
            assert got and not leaks(BO, got) and PASS_NAME.encode() not in got, (spec, got)
        assert b"plan-hard" not in smb.get(".@outline")


def test_the_errors_file_tells_each_account_only_its_own_refusals(world: World) -> None:
    """Root's refusal names the sections of a file only root may read; bo's
    ``.nas/errors`` holds bo's own refusals, never root's."""
    assert world.cat("root", "private/zqx-secret.md@section=Nope").returncode != 0  # lists its sections
    assert world.cat(BO, "public/link@outline").returncode != 0
    mine = world.cat(BO, ".nas/errors")
    assert mine.returncode == 0 and b"public/link@outline" in mine.stdout, mine.stdout
    assert b"section=Nope" not in mine.stdout and b"ZQXSECRETHEAD two" not in mine.stdout, mine.stdout
    assert b"ZQXSECRETHEAD two" in world.cat("root", ".nas/errors").stdout


def test_a_view_of_a_symlink_into_the_mount_itself_is_refused_without_wedging_it(world: World) -> None:
    """``wedge -> MNT/.at/HEAD/README.md``: access.py resolves the link by
    string (OUTSIDE) and the door refuses it before its core follows it with
    realpath, through the mount, holding the core slot the mount's own
    ``.at`` lookup then waits for (the daemon wedged, as root and as bo)."""

    (world.tree / "public" / "wedge").symlink_to(world.mnt / ".at" / "HEAD" / "README.md")
    (world.tree / "public" / "wedgedir").symlink_to(world.mnt / ".at" / "HEAD" / "public")
    try:
        for name in ("root", BO):
            for spec in ("public/wedge@outline", "public/wedgedir@outline", "public/wedge@L1"):
                code, out, _ = communicate_on_mount(world.mnt, [*as_user(name), "cat", "--", str(world.mnt / spec)],
                                                    20, f"{name} cat {spec}")
                assert code != 0 and not out, (name, spec)
        assert world.cat(BO, "public/notes.md@outline").returncode == 0  # the mount still answers
    finally:
        (world.tree / "public" / "wedge").unlink()
        (world.tree / "public" / "wedgedir").unlink()


def test_status_tells_another_account_only_that_a_task_runs(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """``.nas/status`` while ana's map of ``team`` runs: root and ana see the
    folder and its count of files read; bo sees only that a task runs."""
    from nasfs import folders
    from nasfs.access import Caller
    from nasfs.cache import DiskCache
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    nas = Nas(GitTree(world.tree, node="box", tree="home"), disk=DiskCache())
    ana, bo = Caller.of_account(ANA), Caller.of_account(BO)
    seen: list[tuple[str, str, str]] = []
    head = folders._head

    def watched(*args: object) -> bytes:
        seen.append((nas.progress.render(), nas.progress.render(ana.key), nas.progress.render(bo.key)))
        return head(*args)

    monkeypatch.setattr(folders, "_head", watched)
    nas.read("team@1999", caller=ana)
    assert seen, "the map read no file"
    for everyone, mine, other in seen:
        assert "folder map of 'team'" in everyone and "folder map of 'team'" in mine, (everyone, mine)
        assert "team" not in other and "files read" not in other and other.startswith("working: another reader's task"), other
    got = world.cat(BO, ".nas/status")
    assert got.returncode == 0 and got.stdout == b"idle\n"


def test_answers_made_for_an_account_snapshot_only_what_it_may_see(world: World) -> None:
    """A diff to now and a folder map name a snapshot commit of the working
    tree; made for bo it must not hold the private or team files (bo reads
    ``.at/COMMIT/`` as anyone who may read ``.git`` does): it held all."""
    import re

    said = b"".join(world.cat(BO, spec).stdout for spec in (".nas/diff/HEAD~1", ".@outline", "public@outline", ".@2000"))
    commits = set(re.findall(rb"@([0-9a-f]{12})\b", said)) | set(re.findall(rb"\bto=([0-9a-f]{12})\b", said))
    assert commits, said
    for commit in commits:
        listed = subprocess.run(["git", "-C", str(world.tree), "ls-tree", "-r", "--name-only", commit.decode()],
                                capture_output=True, check=True).stdout
        assert b"zqx-secret" not in listed and b"ywv-plan" not in listed and b"plan-hard" not in listed and PASS_NAME.encode() not in listed, (commit, listed)
        got = world.cat(BO, f".at/{commit.decode()}/private/zqx-secret.md")
        assert got.returncode != 0 and not leaks(BO, got.stdout), commit


def test_a_view_held_open_whose_file_became_a_link_into_the_mount_does_not_wedge_it(world: World) -> None:
    """An account that may write in the tree holds ``f@outline`` open, then
    makes ``f`` a symlink into the mount's ``.at/HEAD``: a later fstat asks
    the view's attributes, which stat'ed ``f`` on the request loop, through
    the mount itself: the loop waited on its own answer."""

    f = world.tree / "public" / "swap.md"
    f.write_text("# Swap\n\nA public file.\n")
    os.utime(f, (time.time() - 60, time.time() - 60))
    script = ("import os, sys, time\n"
              "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
              "os.unlink(sys.argv[2]); os.symlink(sys.argv[3], sys.argv[2])\n"
              "time.sleep(1.5)\n"  # past the view's attribute timeout
              "os.fstat(fd)\n"
              "print('ok')\n")
    try:
        communicate_on_mount(world.mnt, [sys.executable, "-c", script, str(world.mnt / "public" / "swap.md@outline"),
                                         str(f), str(world.mnt / ".at" / "HEAD" / "README.md")],
                             30, "fstat of a view whose file became a link into the mount")
        assert world.cat(BO, "public/notes.md@outline").returncode == 0  # the mount still answers
    finally:
        f.unlink()
