"""``nasfs read`` answered by a running mount daemon (read_client.py,
fuse/read_socket.py): the same bytes and exit codes as the CLI alone, and
nothing for a user the mount would not let read the file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nasfs.read_client import parse

from .mounts import Mount, stats

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
                assert secret[0] != 0 and b"hunter2" not in secret[1] and answered(m) == n + 1 + allow_other
                read(*NAMES, "--at", "v1", f"{ACME}@L1", cwd=tree, user=AS_NOBODY, env=env)
                assert answered(m) == n + 1 + allow_other
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
