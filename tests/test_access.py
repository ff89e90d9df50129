"""The one access decision (nasfs/access.py), judged against the kernel's own
answer: each case runs `cat`/`ls` as the same uid and groups with setpriv."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from nasfs.access import AccessDenied, Caller, Seen, decider

UID, GID, OTHER_GID = 64011, 64011, 64012


def kernel_may(root: Path, path: str, caller: Caller, folder: bool = False) -> bool:
    """What the kernel says: the command run as that caller on the source."""
    groups = ",".join(str(g) for g in sorted(caller.groups)) or str(caller.gid)
    cmd = ["ls", "--", str(root / path)] if folder else ["cat", "--", str(root / path)]
    run = subprocess.run(["setpriv", f"--reuid={caller.uid}", f"--regid={caller.gid}", f"--groups={groups}", *cmd],
                         capture_output=True, timeout=10)
    return run.returncode == 0


@pytest.fixture()
def tree():
    """A tree every account may walk to (pytest's own folders are root's, 0700)."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-access-", dir="/tmp"))
    os.chmod(base, 0o755)
    root = base / "t"
    for folder, mode, gid in [("public", 0o755, 0), ("private", 0o700, 0), ("team", 0o750, OTHER_GID),
                              ("pass", 0o711, 0)]:
        (root / folder).mkdir(parents=True)
        (root / folder / "f.md").write_text(f"# {folder}\n")
        os.chown(root / folder, 0, gid)
        os.chmod(root / folder, mode)
    (root / "public" / "closed.md").write_text("x\n")
    os.chmod(root / "public" / "closed.md", 0o600)
    os.chmod(root, 0o755)
    os.symlink("../private/f.md", root / "public" / "to-private")
    os.symlink("../team/f.md", root / "public" / "to-team")
    os.symlink("to-private", root / "public" / "chain")
    os.symlink("/etc/passwd", root / "public" / "out")
    os.symlink("../pass/f.md", root / "public" / "to-pass")
    yield root
    shutil.rmtree(base)


CASES = ["public/f.md", "public/closed.md", "private/f.md", "team/f.md", "pass/f.md",
         "public/to-private", "public/to-team", "public/chain", "public/to-pass", "public/nope.md"]


@pytest.mark.parametrize("groups", [frozenset(), frozenset({OTHER_GID})])
def test_decision_agrees_with_the_kernel(tree: Path, groups: frozenset[int]) -> None:
    caller = Caller(UID, GID, groups | {GID})
    for path in CASES:
        seen = decider(tree, caller).decide(path)
        assert (seen is Seen.ALLOWED) == kernel_may(tree, path, caller), (path, seen)
    for folder in ["public", "private", "team", "pass", ""]:
        seen = decider(tree, caller).decide(folder, want_dir=True)
        assert (seen is Seen.ALLOWED) == kernel_may(tree, folder, caller, folder=True), (folder, seen)


def test_a_symlink_out_of_the_tree_is_outside(tree: Path) -> None:
    assert decider(tree, Caller(UID, GID)).decide("public/out") is Seen.OUTSIDE
    assert decider(tree, Caller.root()).decide("public/out") is Seen.OUTSIDE
    assert decider(tree, Caller(UID, GID)).decide("../t/public/f.md") is Seen.OUTSIDE


def test_a_private_path_is_denied_whether_or_not_it_exists(tree: Path) -> None:
    caller = Caller(UID, GID)
    assert decider(tree, caller).decide("private/f.md") is Seen.DENIED
    assert decider(tree, caller).decide("private/absent.md") is Seen.DENIED
    with pytest.raises(AccessDenied) as exc:
        decider(tree, caller).check("private/absent.md")
    with pytest.raises(AccessDenied) as exc2:
        decider(tree, caller).check("private/f.md")
    assert str(exc.value).replace("absent", "f") == str(exc2.value)


def test_the_decision_is_made_again_each_time(tree: Path) -> None:
    caller = Caller(UID, GID)
    assert decider(tree, caller).may_see("public/f.md")
    os.chmod(tree / "public" / "f.md", 0o600)
    assert not decider(tree, caller).may_see("public/f.md")


def test_root_sees_all_and_accounts_resolve() -> None:
    assert Caller.of_account("root") == Caller(0, 0, frozenset(os.getgrouplist("root", 0)))
    assert Caller.from_key(Caller(5, 6, frozenset({7, 8})).key) == Caller(5, 6, frozenset({7, 8}))
    assert Caller.of_process(os.getpid(), 0, 0).groups == frozenset(os.getgroups()) | frozenset()


def test_a_reused_pid_of_another_account_gives_no_groups() -> None:
    """SO_PEERCRED's pid may be reused once the client is gone: groups are
    taken from /proc only while that pid still runs as the caller's uid."""
    assert Caller.of_process(os.getpid(), 12345, 12345).groups == frozenset()
    assert Caller.of_process(os.getpid(), os.geteuid(), os.getegid()).groups == frozenset(os.getgroups())
