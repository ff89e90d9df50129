"""A tree for the access matrix, real accounts to read it, and a mount of it
with --allow-other (tests/test_access_matrix*.py).

Accounts ``nasfs-ana`` (in group ``nasfs-team``) and ``nasfs-bo`` (not) are
made with ``useradd`` and removed after. The tree lives under a mkdtemp in
/tmp made 0755 (pytest's folders are root's, 0700), owned by root:

    README.md, public/notes.md        everyone
    private/ (0700)  secret.md        root alone (never committed)
    team/ (0750, nasfs-team) plan.md  ana and root
    pass/ (0711)     hidden.md        anyone who knows the name (no listing)
    public/link -> ../private/secret.md, public/chain -> link,
    public/to-team -> ../team/plan.md, public/out -> /etc/hostname,
    public/plan-hard.md: a hard link of team/plan.md (0640, nasfs-team)

Each private file holds unique markers (content, heading, name) that no
answer to an account who may not ``cat`` it may contain.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .conftest import git
from .mounts import Mount
from .summary_servers import CITING_SCRIPT

TEAM = "nasfs-team"
ANA, BO = "nasfs-ana", "nasfs-bo"
ACCOUNTS = (ANA, BO)

# what each account must never see a byte of: file -> its markers
SECRET = ("ZQXSECRETBODY", "ZQXSECRETHEAD", "zqx-secret")  # private/zqx-secret.md
TEAMS = ("YWVTEAMBODY", "YWVTEAMHEAD", "ywv-plan")  # team/ywv-plan.md and its hard link
PASS_NAME = "qpw-hidden"  # pass/qpw-hidden.md: readable by name, never listed to an account
FILES = {
    "README.md": "# Readme\n\nThe lighthouse guide for this tree.\n",
    "public/notes.md": "# Notes\n\n## Harbor\n\nThe lighthouse stands at the harbor.\n\n## Tides\n\nTides turn twice a day.\n",
    "private/zqx-secret.md": "# ZQXSECRETHEAD\n\n## ZQXSECRETHEAD two\n\nZQXSECRETBODY the lighthouse code is 7141.\n",
    "team/ywv-plan.md": "# YWVTEAMHEAD\n\n## YWVTEAMHEAD budget\n\nYWVTEAMBODY the lighthouse budget.\n",
    "pass/qpw-hidden.md": "# Passage\n\nA lighthouse passage, readable by name.\n",
}


def account(args: list[str]) -> None:
    subprocess.run(args, check=True, capture_output=True)


def remove_accounts(group: str = TEAM, names: tuple[str, ...] = ACCOUNTS) -> None:
    for name in names:
        subprocess.run(["userdel", name], capture_output=True)
    subprocess.run(["groupdel", group], capture_output=True)


def make_accounts(group: str, member: str, stranger: str) -> Path:
    """A group with one ``member`` and an account in no group of ours (any
    left by a crashed earlier run removed first), and a 0755 folder in /tmp
    for their test's tree and mount."""
    remove_accounts(group, (member, stranger))
    account(["groupadd", group])
    account(["useradd", "-M", "-s", "/usr/sbin/nologin", "-G", group, member])
    account(["useradd", "-M", "-s", "/usr/sbin/nologin", stranger])
    base = Path(tempfile.mkdtemp(prefix=f"{group}-", dir="/tmp"))
    os.chmod(base, 0o755)
    return base


def as_user(name: str) -> list[str]:
    """The prefix that runs a command as ``name`` with its login groups."""
    if name == "root":
        return []
    entry = pwd.getpwnam(name)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups"]


def run_as(name: str, args: list[str], timeout: float = 60, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*as_user(name), *args], capture_output=True, timeout=timeout, **kw)  # type: ignore[call-overload]


@dataclass
class World:
    base: Path
    tree: Path
    mount: Mount

    @property
    def mnt(self) -> Path:
        return self.mount.mountpoint

    def cat(self, name: str, rel: str) -> subprocess.CompletedProcess[bytes]:
        """``cat`` as ``name``; its stderr without the name it was asked for
        (which ``cat`` repeats in its error)."""
        path = str(self.mnt / rel)
        got = run_as(name, ["cat", "--", path])
        got.stderr = got.stderr.replace(f"'{path}'".encode(), b"PATH").replace(path.encode(), b"PATH")
        return got


def make_tree(base: Path) -> Path:
    tree = base / "tree"
    for rel, text in FILES.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    team = grp.getgrnam(TEAM).gr_gid
    os.chmod(tree / "private", 0o700)
    os.chown(tree / "team", 0, team)
    os.chmod(tree / "team", 0o750)
    os.chown(tree / "team" / "ywv-plan.md", 0, team)
    os.chmod(tree / "team" / "ywv-plan.md", 0o640)
    os.chmod(tree / "pass", 0o711)
    os.link(tree / "team" / "ywv-plan.md", tree / "public" / "plan-hard.md")
    os.symlink("../private/zqx-secret.md", tree / "public" / "link")
    os.symlink("link", tree / "public" / "chain")
    os.symlink("../team/ywv-plan.md", tree / "public" / "to-team")
    os.symlink("/etc/hostname", tree / "public" / "out")
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "README.md", "public/notes.md")
    git(tree, "commit", "-q", "-m", "first")
    with open(tree / "public" / "notes.md", "a") as fh:
        fh.write("\n## Keepers\n\nKeepers log the lighthouse.\n")
    git(tree, "commit", "-q", "-am", "keepers")
    os.chmod(tree, 0o755)
    return tree


def start_world() -> Iterator[World]:
    base = make_accounts(TEAM, ANA, BO)
    script = base / "cite.py"
    script.write_text(CITING_SCRIPT)
    with shared_mount(base, remove_accounts) as mounted:
        tree = make_tree(base)
        mount = mounted(tree, "--summarizer", f"{sys.executable} {script}")
        yield World(base, tree, mount)


@contextmanager
def shared_mount(base: Path, cleanup: Callable[[], None]) -> Iterator[Callable[..., Mount]]:
    """A mount others may enter (``--allow-other``) over a tree under ``base``, its daemon's cache
    private under ``base``: yields the function that mounts it; after, the mount is stopped, the
    cache setting restored, ``base`` removed and ``cleanup`` (the test's accounts) run."""
    cache = base / "cache"
    cache.mkdir(mode=0o700)
    before = os.environ.get("NASFS_CACHE_DIR")
    os.environ["NASFS_CACHE_DIR"] = str(cache)  # the daemon's own, private
    mounts: list[Mount] = []

    def mount(tree: Path, *args: str) -> Mount:
        mounts.append(Mount(tree, base / "mnt", "--allow-other", *args))
        return mounts[-1]

    try:
        yield mount
    finally:
        for m in mounts:
            m.stop()
        if before is None:
            os.environ.pop("NASFS_CACHE_DIR", None)
        else:
            os.environ["NASFS_CACHE_DIR"] = before
        shutil.rmtree(base, ignore_errors=True)
        cleanup()


def leaks(name: str, data: bytes) -> list[str]:
    """The markers of files ``name`` may not read that occur in ``data``."""
    if name == "root":
        return []
    forbidden = SECRET + (TEAMS if name == BO else ())
    return [m for m in forbidden if m.encode() in data]
