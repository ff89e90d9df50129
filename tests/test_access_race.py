"""The access decision and the read are of one inode: a reader who can write
a folder swaps a file of their own for a symlink to another account's
private file while reading its views, and is never served a byte of it.

Real accounts (useradd ``nasfs-rx``, the attacker, and ``nasfs-ry``, whose
0600 file is the prize), a real mount with --allow-other, the attacker's own
processes: one swaps ``mine/x`` in a tight loop, others read its views with
``cat`` through the mount and through the daemon's read socket, each for a
bounded time. The readers run /usr/bin/python3 (the test's interpreter lives
where other accounts may not enter)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nasfs.access import Caller, decider
from nasfs.errors import NasError
from nasfs.repo import LARGE_BYTES, GitTree

from .access_world import account, as_user, shared_mount
from .conftest import git
from .mounts import Mount

ATTACKER, VICTIM = "nasfs-rx", "nasfs-ry"
MARKERS = (b"KVXSECRETHEAD", b"KVXSECRETBODY")
SECRET = "# KVXSECRETHEAD\n\n## KVXSECRETHEAD two\n\nKVXSECRETBODY the vault code is 3141.\n"
OWN = "# Mine\n\n## Mine two\n\nonly mine, nothing secret here.\n"
PYTHON = "/usr/bin/python3"
SECONDS = 10.0

SWAP = r"""
import os, sys, time
folder, target, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
x, own, link = (os.path.join(folder, n) for n in ("x", ".own", ".link"))
swaps = 0
while time.monotonic() < until:
    with open(own, "w") as fh:
        fh.write(sys.argv[4] + str(swaps) + "\n")  # a new version each time: nothing is answered from a cache
    os.rename(own, x)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    os.rename(link, x)
    swaps += 1
with open(own, "w") as fh:
    fh.write(sys.argv[4])
os.rename(own, x)
print(swaps)
"""

CAT = r"""
import json, subprocess, sys, time
names, until = sys.argv[1:-1], time.monotonic() + float(sys.argv[-1])
reads = ok = 0
leaked = None
while time.monotonic() < until:
    for name in names:
        got = subprocess.run(["cat", name], capture_output=True)
        reads += 1
        ok += got.returncode == 0
        if leaked is None and any(m in got.stdout + got.stderr for m in (b"KVXSECRETHEAD", b"KVXSECRETBODY")):
            leaked = reads
print(json.dumps({"reads": reads, "ok": ok, "leaked_at": leaked}))
"""

SOCKET = r"""
import json, socket, sys, time
sock, root, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[-1])
specs = sys.argv[3:-1]
reads = ok = 0
leaked = None
while time.monotonic() < until:
    for spec in specs:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(20)
        s.connect(sock)
        s.sendall(json.dumps({"root": root, "spec": spec, "node": "box", "tree": "home"}).encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        got = b""
        while part := s.recv(65536):
            got += part
        s.close()
        reads += 1
        head = json.loads(got.split(b"\n", 1)[0]) if got else {}
        ok += head.get("fallback") is False and head.get("exit") == 0
        if leaked is None and any(m in got for m in (b"KVXSECRETHEAD", b"KVXSECRETBODY")):
            leaked = reads
print(json.dumps({"reads": reads, "ok": ok, "leaked_at": leaked}))
"""


@dataclass
class Race:
    base: Path
    tree: Path
    mount: Mount


def _remove_accounts() -> None:
    for name in (ATTACKER, VICTIM):
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(scope="module")
def race() -> Iterator[Race]:
    _remove_accounts()  # a crashed earlier run's
    account(["useradd", "-M", "-s", "/usr/sbin/nologin", ATTACKER])
    account(["useradd", "-M", "-s", "/usr/sbin/nologin", VICTIM])
    base = Path(tempfile.mkdtemp(prefix="nasfs-race-", dir="/tmp"))
    os.chmod(base, 0o755)
    with shared_mount(base, _remove_accounts) as mounted:
        tree = base / "tree"
        (tree / "public").mkdir(parents=True)
        (tree / "public" / "notes.md").write_text("# Notes\n\n## Harbor\n\nThe harbor is open.\n")
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "public/notes.md")
        git(tree, "commit", "-q", "-m", "first")
        attacker, victim = pwd.getpwnam(ATTACKER), pwd.getpwnam(VICTIM)
        for folder, who, name, text in (("mine", attacker, "x", OWN), ("theirs", victim, "key.md", SECRET)):
            (tree / folder).mkdir(mode=0o755)
            (tree / folder / name).write_text(text)
            os.chmod(tree / folder / name, 0o600)
            for p in (tree / folder, tree / folder / name):
                os.chown(p, who.pw_uid, who.pw_gid)
        os.chmod(tree, 0o755)
        yield Race(base, tree, mounted(tree))


def _as_attacker(script: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*as_user(ATTACKER), PYTHON, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd="/")


def _finish(proc: subprocess.Popen[bytes]) -> bytes:
    out, err = proc.communicate(timeout=SECONDS + 60)  # a hang fails the test
    assert proc.returncode == 0, err.decode()
    return out


def _race(race: Race, door: str, reader: str, *args: str) -> dict[str, object]:
    """The attacker's swapping and reading, side by side, for SECONDS."""
    swapper = _as_attacker(SWAP, str(race.tree / "mine"), "../theirs/key.md", str(SECONDS), OWN)
    readers = [_as_attacker(reader, *args, str(SECONDS)) for _ in range(2)]
    results = [json.loads(_finish(r)) for r in readers]
    swaps = int(_finish(swapper))
    found = {"swaps": swaps, "reads": sum(r["reads"] for r in results), "ok": sum(r["ok"] for r in results),
             "leaked_at": [r["leaked_at"] for r in results]}
    print(door, found)  # the numbers, for the record (pytest -s)
    return found


def test_a_swapped_symlink_never_serves_the_other_inode_through_the_mount(race: Race) -> None:
    names = [str(race.mount.mountpoint / "mine" / f"x{view}") for view in ("@outline", "@L1-L3")]
    found = _race(race, "mount", CAT, *names)
    assert found["leaked_at"] == [None, None], found
    assert found["ok"], found  # the attacker's own file was read meanwhile


def test_a_swapped_symlink_never_serves_the_other_inode_through_the_read_socket(race: Race) -> None:
    sock = race.tree / ".git" / "nasfs-read.sock"
    found = _race(race, "read socket", SOCKET, str(sock), str(race.tree), "mine/x@outline", "mine/x@L1-L3")
    assert found["leaked_at"] == [None, None], found
    assert found["ok"], found


def _ask(race: Race, spec: str) -> dict[str, object]:
    """One read of the daemon's socket as the attacker: its header and body."""
    one = SOCKET.replace("while time.monotonic() < until:", "for _ in range(1):").replace(
        'print(json.dumps({"reads": reads, "ok": ok, "leaked_at": leaked}))', "sys.stdout.buffer.write(got)")
    got = _finish(_as_attacker(one, str(race.tree / ".git" / "nasfs-read.sock"), str(race.tree), spec, "1"))
    head, _, body = got.partition(b"\n")
    return {**json.loads(head), "body": body}


def test_ordinary_reads_and_a_symlink_in_the_tree_still_work(race: Race) -> None:
    link = race.tree / "mine" / "to-notes"
    os.symlink("../public/notes.md", link)
    try:
        for _ in range(2):  # made, then remembered (view_memo.py)
            for rel in ("mine/x@outline", "mine/to-notes@outline", "mine/to-notes@L3", "public/notes.md@L1-L3"):
                got = subprocess.run([*as_user(ATTACKER), "cat", str(race.mount.mountpoint / rel)], capture_output=True,
                                     timeout=60)
                assert got.returncode == 0, (rel, got.stderr)
                answer = _ask(race, rel)
                assert answer["exit"] == 0 and answer["body"] == got.stdout, (rel, answer)
        assert b"Harbor" in _ask(race, "mine/to-notes@outline")["body"]
        assert b"KVXSECRETHEAD" in (race.mount.mountpoint / "theirs" / "key.md@outline").read_bytes()  # root reads all
        assert _ask(race, "theirs/key.md@outline")["exit"] == 2
    finally:
        link.unlink()


def test_the_core_refuses_a_file_that_changed_after_its_decision(race: Race) -> None:
    """In process: the decision allows ``mine/x`` (its inode), the path then
    names another inode, and the read says so instead of serving it."""
    tree = GitTree(race.tree, node="box", tree="home")
    attacker = Caller.of_account(ATTACKER)
    allowed = decider(race.tree, attacker).check("mine/x")
    assert allowed is not None
    assert tree.working("mine/x", None, allowed).read().startswith(b"# Mine")
    x = race.tree / "mine" / "x"
    moved = race.tree / "mine" / ".kept"
    os.rename(x, moved)
    os.symlink("../theirs/key.md", x)
    try:
        with pytest.raises(NasError, match="changed while it was read"):
            tree.working("mine/x", None, allowed)
    finally:
        x.unlink()
        os.rename(moved, x)


def test_a_large_file_streamed_later_is_read_from_the_inode_decided(race: Race) -> None:
    """A file too large to hold is hashed from one open file, and streamed
    later by path: from that inode, or else from the blob it named."""
    tree = GitTree(race.tree, node="box", tree="home")
    big, other = race.tree / "mine" / "big", race.tree / "theirs" / "big"
    big.write_bytes(b"a\n" * (LARGE_BYTES // 2 + 1))
    other.write_bytes(b"KVXSECRETBODY\n" * (LARGE_BYTES // 14 + 1))
    kept = race.tree / "mine" / ".big"
    try:
        content = tree.working("mine/big", None, decider(race.tree, Caller.of_account(ATTACKER)).check("mine/big"))
        assert content.large
        os.rename(big, kept)
        os.symlink("../theirs/big", big)
        head = next(iter(content.stream()))
        assert head.startswith(b"a\na\n") and b"KVXSECRETBODY" not in head
    finally:
        for p in (big, kept, other):
            if os.path.lexists(p):
                p.unlink()


def test_a_search_counts_no_hit_of_a_file_swapped_in_during_rg(race: Race, monkeypatch: pytest.MonkeyPatch) -> None:
    """rg reads the tree by path as the daemon: a swap during its run reports
    the other file's hit under mine/x. A hit counts for the attacker only
    when that line of the file read for them (the inode their decision
    allowed) still matches: not in matches=, files=, nor by its line number."""
    from dataclasses import replace

    from nasfs import search as searching
    from nasfs.service import Nas

    from .conftest import header

    rg = searching.run_rg

    def raced(q: searching.Query, root: Path) -> list[searching.Hit]:  # what rg reports when the swap wins
        return [replace(h, path="mine/x") if h.path == "theirs/key.md" else h for h in rg(q, root)]

    monkeypatch.setattr(searching, "run_rg", raced)
    nas = Nas(GitTree(race.tree, node="box", tree="home"))
    attacker = Caller.of_account(ATTACKER)
    long = race.tree / "mine" / "long"
    long.write_text("x" * 1500 + " needleword\n")  # reported by rg as an omitted long line
    os.chown(long, pwd.getpwnam(ATTACKER).pw_uid, -1)
    try:
        for query in ("vault code", "re:KVX[A-Z]+"):
            got = searching.search(nas, query, caller=attacker)
            keys = header(got.text)
            assert (keys["matches"], keys["files"]) == ("0", "0"), got.text
            assert b"mine/x" not in got.text, got.text
            assert header(searching.search(nas, query).text)["matches"] != "0"  # root: every hit rg reports
        assert header(searching.search(nas, "only mine", caller=attacker).text)["matches"] == "1"
        assert header(searching.search(nas, "needleword", caller=attacker).text)["matches"] == "1"
    finally:
        long.unlink()


def test_a_view_decided_on_a_file_never_maps_a_folder_swapped_in(race: Race) -> None:
    """The mount makes a file's view once, as the daemon, for every reader
    whose decision allows that inode (node.source): the name swapped for a
    symlink to a folder by the time the view is made must not give the
    daemon's whole map of that folder."""
    from nasfs.errors import FileChanged
    from nasfs.service import Nas

    nas = Nas(GitTree(race.tree, node="box", tree="home"))
    path, view = nas.split("mine/x@outline")
    allowed = decider(race.tree, Caller.of_account(ATTACKER)).check(path)
    assert b"Mine" in nas.read_view(path, view, None, False, None, allowed).text
    x, moved = race.tree / "mine" / "x", race.tree / "mine" / ".kept"
    os.rename(x, moved)
    os.symlink("../theirs", x)
    try:
        with pytest.raises(FileChanged):
            nas.read_view(path, view, None, False, None, allowed)
    finally:
        x.unlink()
        os.rename(moved, x)


HELD = r"""
import json, os, sys, time
view, x, target = sys.argv[1:4]
fd = os.open(view, os.O_RDONLY)
os.rename(x, x + ".kept")
os.symlink(target, x)
try:
    time.sleep(1.5)  # past the attributes' timeout: the kernel asks the daemon again
    try:
        st = os.fstat(fd)
        print(json.dumps({"uid": st.st_uid, "mode": st.st_mode}))
    except OSError as exc:
        print(json.dumps({"errno": exc.errno}))
finally:
    os.unlink(x)
    os.rename(x + ".kept", x)
"""


def test_a_held_view_never_takes_the_attributes_of_a_file_swapped_in(race: Race) -> None:
    """A view's owner and mode are its file's: once the name is another
    file (a symlink to a file in a folder the reader may not even search),
    a getattr of the view held open says ESTALE, not that file's owner."""
    vault = race.tree / "vault"
    vault.mkdir(mode=0o700)
    (vault / "key.md").write_text(SECRET)
    victim = pwd.getpwnam(VICTIM)
    for p in (vault, vault / "key.md"):
        os.chown(p, victim.pw_uid, victim.pw_gid)
    try:
        out = _finish(_as_attacker(HELD, str(race.mount.mountpoint / "mine" / "x@outline"), str(race.tree / "mine" / "x"),
                                   "../vault/key.md"))
        got = json.loads(out)
        assert got.get("uid") != victim.pw_uid, got
    finally:
        shutil.rmtree(vault)


def test_a_fifo_swapped_in_after_the_stat_is_never_waited_on(tmp_path: Path) -> None:
    """working() stats the name, then opens it to read: a FIFO swapped in
    between must be refused at once, not hold the core thread until someone
    writes to it."""
    import threading

    from nasfs.repo.one_version import read_one_version

    fifo = tmp_path / "x"
    os.mkfifo(fifo)
    outcome: list[object] = []
    reader = threading.Thread(target=lambda: outcome.append(_try(read_one_version, fifo)), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # it waits: release it (a writer opens the other end)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert outcome and isinstance(outcome[0], NasError), outcome


def _try(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        return exc


def test_a_folder_listing_tells_nothing_of_a_folder_swapped_in(race: Race, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP/MCP list a folder the decision allowed: swapped after it for a
    symlink into a folder the reader may not search, the answer is the same
    (FileChanged) whether what it points at exists or not."""
    from nasfs import listing
    from nasfs.errors import FileChanged
    from nasfs.service import Nas

    sub, kept = race.tree / "mine" / "sub", race.tree / "mine" / ".sub"
    vault = race.tree / "vault2"
    vault.mkdir(mode=0o700)
    (vault / "there").mkdir()
    victim = pwd.getpwnam(VICTIM)
    os.chown(vault, victim.pw_uid, victim.pw_gid)
    nas = Nas(GitTree(race.tree, node="box", tree="home"))
    attacker = Caller.of_account(ATTACKER)
    decide = listing.decider
    target = ["../vault2/there"]

    class Swapping:
        def __init__(self, root: Path, caller: Caller) -> None:
            self.judge = decide(root, caller)

        def check(self, path: str, want_dir: bool = False):  # type: ignore[no-untyped-def]
            allowed = self.judge.check(path, want_dir)
            os.rename(sub, kept)
            os.symlink(target[0], sub)
            return allowed

    monkeypatch.setattr(listing, "decider", Swapping)
    try:
        for target[0] in ("../vault2/there", "../vault2/nothing"):
            sub.mkdir()
            os.chown(sub, pwd.getpwnam(ATTACKER).pw_uid, -1)
            try:
                with pytest.raises(FileChanged):
                    listing.list_folder(nas, "mine/sub", caller=attacker)
            finally:
                sub.unlink()
                kept.rmdir()
    finally:
        shutil.rmtree(vault)
