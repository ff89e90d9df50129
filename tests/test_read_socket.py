"""``nasfs read`` answered by a running mount daemon (read_client.py,
fuse/read_socket.py): the same bytes and exit codes as the CLI alone, and
nothing for a user the mount would not let read the file."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nasfs.read_client import parse

from .mounts import Mount, abort_connection, run_on_mount, stats

ACME = "notes/customer-acme.md"
NAMES = ["--node", "box", "--tree", "home"]  # as tests/mounts.py mounts it
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def read(*args: str, cwd: Path, user: list[str] | None = None, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    done = subprocess.run([*(user or []), sys.executable, "-P", "-m", "nasfs", "read", *args], cwd=cwd,
                          capture_output=True, timeout=120, env=env)
    return done.returncode, done.stdout, done.stderr


def socket_of(home: Path) -> Path:
    """The daemon's read socket, waited for: the daemon binds it on its
    request loop, just after the mount is ready (a read before then is the
    CLI's own)."""
    sock = home / ".git" / "nasfs-read.sock"
    deadline = time.monotonic() + 10
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return sock


def answered(m: Mount) -> int:
    return int(stats(m.mountpoint)["socket_reads"])


CASES = [  # (arguments, folder below the tree to run in)
    ([f"{ACME}@outline"], ""),
    ([ACME], ""),
    ([f"{ACME}@L3-L5"], ""),
    (["--json", f"{ACME}@section=Renewal"], ""),
    ([f"{ACME}@outline.json"], ""),
    ([f"{ACME}@200"], ""),
    (["code/billing.py@outline"], ""),
    (["notes@300"], ""),
    (["--at", "v1", f"{ACME}@L15"], ""),
    (["customer-acme.md@outline"], "notes"),  # relative to the current folder
    ([f"{ACME}@bogus"], ""),  # errors: exit 2 and one line on stderr
    (["notes/nope.md@outline"], ""),
    ([f"{ACME}@L9-L3"], ""),
    (["--at", "nosuchrev", f"{ACME}@L1"], ""),
]


def test_reads_through_the_daemon_are_the_cli_s_own_bytes(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt")
    try:
        assert socket_of(home).exists()
        before = answered(m)
        through = [read(*NAMES, *args, cwd=home / sub) for args, sub in CASES]
        assert answered(m) - before == len(CASES)  # every one answered by the daemon
        other = read(f"{ACME}@outline", cwd=home)  # another node name (the host's): the CLI reads it itself
        assert answered(m) - before == len(CASES) and other[0] == 0 and b"nas://box/" not in other[1]
    finally:
        assert m.stop() == 0
    assert not (home / ".git" / "nasfs-read.sock").exists()  # removed at the unmount
    alone = [read(*NAMES, *args, cwd=home / sub) for args, sub in CASES]
    for (args, _), a, b in zip(CASES, through, alone):
        assert a == b, args
    codes = [code for code, _, _ in alone]
    assert codes.count(0) == 10 and codes[10:] == [2, 2, 2, 2] and all(err.count(b"\n") == 1 for _, _, err in alone[10:])


def test_a_stale_socket_or_an_unusual_command_line_reads_alone(home: Path) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(home / ".git" / "nasfs-read.sock"))  # left by a daemon that died: nobody listens
    sock.close()
    code, out, _ = read(*NAMES, f"{ACME}@L1", cwd=home)
    assert (code, out) == (0, b"# Acme Corp\n")
    assert parse(["--js", "x"]) is None and parse(["-h"]) is None and parse(["a", "b"]) is None
    assert parse(["--at", "-x", "p"]) is None and parse(["--at", "v1", "--at", "v2", "p"]) is None and parse([]) is None
    assert parse(["--at=v1", "p@outline", "--json"]) == {"json": True, "spec": "p@outline", "at": "v1"}


def test_only_users_the_mount_lets_read_a_file_are_answered(home: Path) -> None:
    """Without --allow-other only the daemon's user is answered; with it,
    another user only for a file they may read, and never at a revision,
    with what the mount shows them. (Alone, the CLI of another user is
    refused by libgit2's check of the repository's owner, git's
    safe.directory: the daemon answers them as the mount does.)"""
    base = Path(tempfile.mkdtemp(prefix="nasfs-sock-", dir="/tmp"))
    os.chmod(base, 0o755)
    tree = base / "home"
    shutil.copytree(home, tree, symlinks=True)
    (tree / "secret.md").write_text("# Secret\n\nthe vault code is hunter2\n")
    os.chmod(tree / "secret.md", 0o600)
    cache = base / "cache"
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)
    env = dict(os.environ, NASFS_CACHE_DIR=str(cache))
    try:
        for allow_other in (False, True):
            m = Mount(tree, base / f"mnt{int(allow_other)}", *(["--allow-other"] if allow_other else []))
            try:
                assert socket_of(tree).exists()
                n = answered(m)
                mine = read(*NAMES, f"{ACME}@outline", cwd=tree)
                assert answered(m) == n + 1
                theirs = read(*NAMES, f"{ACME}@outline", cwd=tree, user=AS_NOBODY, env=env)
                assert answered(m) == n + 1 + allow_other
                if allow_other:
                    shown = subprocess.run([*AS_NOBODY, "cat", str(m.mountpoint / f"{ACME}@outline")], capture_output=True)
                    assert theirs == mine == (0, shown.stdout, b"")
                secret = read(*NAMES, "secret.md@L3", cwd=tree, user=AS_NOBODY, env=env)
                assert secret[0] != 0 and b"hunter2" not in secret[1]
                if allow_other:  # refused by the daemon, in one line (access.py's decision)
                    assert secret[2] == b"nasfs read: nobody may not read secret.md@L3; valid: paths this account could cat on the source tree\n"
                assert answered(m) == n + 1 + 2 * allow_other
                read(*NAMES, "--at", "v1", f"{ACME}@L1", cwd=tree, user=AS_NOBODY, env=env)
                assert answered(m) == n + 1 + 2 * allow_other
            finally:
                assert m.stop() == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_mount_with_a_summarizer_leaves_reads_to_the_cli(home: Path, tmp_path: Path) -> None:
    """Summary settings come from flags and environment variables the
    request does not carry, so such a daemon never answers: the CLI reads
    for itself, with its own settings, and gives the same bytes."""
    m = Mount(home, tmp_path / "mnt", "--summarizer", "cat", "--summaries", "off")
    try:
        assert socket_of(home).exists()  # bound: the daemon could answer, and does not
        before = answered(m)
        through = read(*NAMES, f"{ACME}@outline", cwd=home)
        summary = read(*NAMES, f"{ACME}@summary", cwd=home)
        assert answered(m) == before
    finally:
        assert m.stop() == 0
    assert through == read(*NAMES, f"{ACME}@outline", cwd=home) and through[0] == 0
    assert summary[0] == 2 and b"no summarizer" in summary[2]  # the CLI's own settings: none


ASK = """import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(float(sys.argv[2]))
s.connect(sys.argv[1])
try:
    s.sendall(sys.stdin.buffer.read())
    s.shutdown(socket.SHUT_WR)
except (BrokenPipeError, ConnectionResetError):
    pass  # the daemon refused before reading it all: its line is still there to read
got = b""
try:
    while part := s.recv(65536):
        got += part
except ConnectionResetError:  # closed with some of the request unread: after the line, the end
    pass
sys.stdout.buffer.write(got)
"""


def ask(sock: Path, payload: bytes, user: list[str] | None = None, timeout: float = 20) -> bytes:
    """Everything the daemon sends for ``payload`` until it closes the
    connection (as ``user`` with setpriv); a hang fails the test."""
    done = subprocess.run([*(user or []), sys.executable, "-c", ASK, str(sock), str(timeout)], input=payload,
                          capture_output=True, timeout=timeout + 10)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def request(tree: Path, spec: str, **fields: object) -> bytes:
    return json.dumps({"root": str(tree), "spec": spec, "node": "box", "tree": "home", **fields}).encode() + b"\n"


def one_line(answer: bytes) -> dict[str, object]:
    """A refusal: exactly one JSON line, then the connection closed."""
    assert answer.endswith(b"\n") and answer.count(b"\n") == 1, answer[:300]
    header = json.loads(answer)
    assert header["fallback"] is True and header["size"] == 0 and "\n" not in header["error"], header
    return header


def private_tree(home: Path) -> Path:
    """``home`` copied where other accounts may reach it, with a private
    folder (0700) and links into it and out of the tree."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-sock-", dir="/tmp"))
    os.chmod(base, 0o755)
    tree = base / "home"
    shutil.copytree(home, tree, symlinks=True)
    (tree / "private").mkdir(mode=0o700)
    (tree / "private" / "secret.md").write_text("# Secret\n\nthe vault code is hunter2\n")
    os.chmod(tree / "private" / "secret.md", 0o644)
    (tree / "private" / "out").symlink_to("/etc/hostname")
    (tree / "public").mkdir(mode=0o755)
    (tree / "public" / "link").symlink_to("../private/secret.md")
    (tree / "public" / "gone").symlink_to("../private/nope.md")
    (tree / "public" / "chain").symlink_to("../private/out")  # in the tree, through a private folder, out of it
    return tree


@contextmanager
def wedge_fails(mnt: Path) -> Iterator[None]:
    """A failure here may be a daemon wedged on its own mount, which nothing
    but aborting its FUSE connection ends: abort it, so the test fails
    instead of hanging at the unmount."""
    try:
        yield
    except BaseException:
        abort_connection(mnt)
        raise


def test_a_folder_of_the_mount_maps_to_the_tree_and_a_virtual_one_is_refused(home: Path, tmp_path: Path) -> None:
    """The client's folder is never looked up through the mount: on main a
    request whose cwd was in ``.at/HEAD/`` deadlocked the daemon for good.
    Nor is a path of the tree whose symlink leads into the mount: the
    client reads that for itself."""
    (home / "intomount").symlink_to(tmp_path / "mnt" / ".at" / "HEAD")
    m = Mount(home, tmp_path / "mnt")
    sock = socket_of(home)
    try:
        with wedge_fails(m.mountpoint):
            through = ask(sock, request(home, f"intomount/{ACME}@outline", cwd=str(home)), timeout=10)
            assert json.loads(through) == {"size": 0, "fallback": True}
            from_tree = read(*NAMES, "customer-acme.md@outline", cwd=home / "notes")
            mapped = ask(sock, request(home, "customer-acme.md@outline", cwd=str(m.mountpoint / "notes")))
            header, _, body = mapped.partition(b"\n")
            assert json.loads(header)["exit"] == 0 and body == from_tree[1] and from_tree[0] == 0
            for virtual in (".at/HEAD/notes", ".nas/search", ".at"):
                header = json.loads(ask(sock, request(home, "customer-acme.md@outline", cwd=str(m.mountpoint / virtual)), timeout=10))
                assert header["exit"] == 2 and header["stderr"].count("\n") == 1, header
                assert f"inside the mount's virtual {virtual.split('/')[0]}/" in header["stderr"], header
            run_on_mount(m.mountpoint, ["stat", str(m.mountpoint / f"{ACME}@outline")], timeout=5, what="stat of a view")
    finally:
        assert m.stop() == 0


def test_nothing_about_a_private_path_is_told_before_access_is_decided(home: Path) -> None:
    """A private file and an absent one in a private folder get the same
    answer, whatever the view (on main a bad view of the existing one said
    'no view', of the absent one 'no file'); so do a link into the private
    folder and a dangling one, and a private symlink's target is not told."""
    tree = private_tree(home)
    m = Mount(tree, tree.parent / "mnt", "--allow-other")
    sock = socket_of(tree)
    try:
        def answer(spec: str) -> str:
            header = json.loads(ask(sock, request(tree, spec, cwd=str(tree)), user=AS_NOBODY))
            assert header["fallback"] is False and header["exit"] == 2 and header["size"] == 0, (spec, header)
            return header["stderr"]

        for real, absent in [("private/secret.md@bogus", "private/nope.md@bogus"),
                             ("private/secret.md@outline", "private/nope.md@outline"),
                             ("private/out@outline", "private/nope.md@outline"),
                             ("private/secret.md", "private/nope.md"),
                             ("private@200", "private/nope@200"),
                             ("public/link@outline", "public/gone@outline"),
                             ("public/chain@outline", "public/gone@outline"),
                             ("public/chain@bogus", "public/gone@bogus")]:
            said, unsaid = answer(real), answer(absent)
            assert said.replace(real, "X") == unsaid.replace(absent, "X"), (said, unsaid)
            assert "may not read" in said and "hostname" not in said and "hunter2" not in said, said
        header, _, body = ask(sock, request(tree, f"{ACME}@outline", cwd=str(tree)), user=AS_NOBODY).partition(b"\n")
        assert json.loads(header)["exit"] == 0 and body.startswith(b"nasfs ")
        # a folder's map is made with the daemon's rights: another uid makes its own
        assert json.loads(ask(sock, request(tree, "public@200", cwd=str(tree)), user=AS_NOBODY)) == {"size": 0, "fallback": True}
    finally:
        assert m.stop() == 0
        shutil.rmtree(tree.parent, ignore_errors=True)


def test_the_socket_has_its_mode_at_once_and_a_leftover_that_is_no_socket_is_left_alone(home: Path, tmp_path: Path) -> None:
    """Bound in a private folder and renamed into place (no chmod through a
    link at the socket's path); a file, folder or symlink found there is
    said in the log and left as it was, and the mount goes on without a
    socket (on main a folder there ended the mount, a file was deleted)."""
    path = home / ".git" / "nasfs-read.sock"
    m = Mount(home, tmp_path / "mnt")
    try:
        st = os.lstat(socket_of(home))
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o666
        assert not list((home / ".git").glob(".nasfs-read-*"))
    finally:
        assert m.stop() == 0
    target = tmp_path / "target"
    target.write_text("keep\n")
    os.chmod(target, 0o600)
    for kind, make in [("file", lambda: path.write_text("keep\n")), ("folder", path.mkdir),
                       ("symlink", lambda: path.symlink_to(target))]:
        make()
        m = Mount(home, tmp_path / f"mnt-{kind}")
        try:
            time.sleep(1)  # the socket would be bound by now
            assert m.alive() and (m.mountpoint / ".nas" / "HELP").exists()
            assert f"no read socket: {path} is there and is not a socket" in m.log.read_text(), kind
            before = answered(m)
            assert read(*NAMES, f"{ACME}@L1", cwd=home) == (0, b"# Acme Corp\n", b"") and answered(m) == before
        finally:
            assert m.stop() == 0, kind
        assert (path.is_dir() if kind == "folder" else path.read_text() == "keep\n"), kind
        assert path.is_symlink() == (kind == "symlink") and stat.S_IMODE(target.stat().st_mode) == 0o600
        path.rmdir() if kind == "folder" else path.unlink()


def test_malformed_huge_or_deep_requests_get_one_line_and_a_closed_connection(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt")
    sock = socket_of(home)
    try:
        deep = b"[" * 30000 + b"]" * 30000 + b"\n"  # within the size limit: json.loads raises RecursionError
        said = {}
        for name, payload in [("text", b"hello daemon\n"), ("bytes", bytes(range(256)) * 3 + b"\n"),
                              ("deep", deep), ("deeper", b"[" * 10**5), ("huge", request(home, "x" * 100_000)),
                              ("list", b"[1, 2]\n"), ("string", b'"x"\n'), ("half", b'{"spec": "a"')]:
            said[name] = one_line(ask(sock, payload))["error"]
        assert "RecursionError" in said["deep"] and "longer than 65536 bytes" in said["deeper"] == said["huge"]
        assert "not JSON" in said["text"] and "not JSON" in said["bytes"] and "list, not an object" in said["list"]
        assert "ended before the request's newline" in said["half"]
        with socket.socket(socket.AF_UNIX) as quiet:  # sends nothing: refused after the read timeout
            quiet.settimeout(20)
            quiet.connect(str(sock))
            started = time.monotonic()
            got = quiet.makefile("rb").read()
            assert "no request line within 5 s" in one_line(got)["error"] and 4 < time.monotonic() - started < 15
        assert m.alive() and read(*NAMES, f"{ACME}@L1", cwd=home) == (0, b"# Acme Corp\n", b"")
    finally:
        assert m.stop() == 0


def test_an_owner_of_the_git_dir_cannot_redirect_the_sockets_mode(tmp_path: Path, monkeypatch) -> None:
    """The daemon may run as root over a ``.git`` another account owns and
    may write. That account renames the daemon's private folder away the
    moment the socket is bound in it and puts its own folder there, with
    ``sock`` a symlink to a file of root's: the socket's mode 0666 must go
    to the socket the daemon bound, never through that link (on the
    branch's first version ``os.chmod(inside, 0o666)`` followed it)."""
    from nasfs.fuse import read_socket

    git = tmp_path / "git"
    git.mkdir()
    victim = tmp_path / "shadow"
    victim.write_text("root's\n")
    os.chmod(victim, 0o600)
    real_socket = socket.socket
    swapped: list[Path] = []

    class Raced(real_socket):  # type: ignore[misc, valid-type]
        def bind(self, address):  # type: ignore[no-untyped-def]
            super().bind(address)
            for private in git.glob(".nasfs-read-*"):  # the attacker's move, between bind and chmod
                private.rename(tmp_path / "moved")
                private.mkdir()
                (private / "sock").symlink_to(victim)
                swapped.append(private)

    monkeypatch.setattr(socket, "socket", Raced)
    sock = read_socket._bind_in_place(str(git / "nasfs-read.sock"))
    monkeypatch.setattr(socket, "socket", real_socket)
    sock.close()
    assert swapped, "the race was not run"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    st = os.lstat(git / "nasfs-read.sock")
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o666


def test_a_view_of_a_symlink_into_the_mount_is_left_to_the_client(home: Path, tmp_path: Path) -> None:
    """``link@outline`` where ``link`` itself (not a folder above it) points
    into the mount's ``.at/HEAD/``: the path as written does not exist, so
    the first access check passes it; the core must not then resolve the
    link (realpath, through the mount, holding the core slot)."""
    (home / "filelink").symlink_to(tmp_path / "mnt" / ".at" / "HEAD" / ACME)
    (home / "dirlink").symlink_to(tmp_path / "mnt" / ".at" / "HEAD" / "notes")
    m = Mount(home, tmp_path / "mnt")
    sock = socket_of(home)
    try:
        with wedge_fails(m.mountpoint):
            for spec in ("filelink@outline", "dirlink@200", "filelink@L1"):
                assert json.loads(ask(sock, request(home, spec, cwd=str(home)), timeout=10)) == {"size": 0, "fallback": True}, spec
            run_on_mount(m.mountpoint, ["stat", str(m.mountpoint / f"{ACME}@outline")], timeout=5, what="stat of a view")
    finally:
        assert m.stop() == 0
