"""POSIX ACLs are judged as the kernel judges them, through every door of a
mount made with --allow-other: an entry that keeps an account out of a file
or a folder keeps its views, maps, search hits and diffs from it too (and
``cat`` through the mount is refused as on the source); an entry that lets a
named user read a 0600 file lets it ``cat`` the file and its views; a
snapshot of a file an ACL narrows goes to a private store, never to the
shared ``.git/objects``. Real accounts (useradd), real ``setfacl``, real
reads (setpriv + cat)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nasfs import acl
from nasfs.access import Caller, Seen, decider, may_have_read, trail_of
from nasfs.audience import narrower_than_git
from nasfs.repo import GitTree
from nasfs.repo.private_stores import read_trails

from .access_world import make_accounts, remove_accounts, run_as, shared_mount
from .conftest import git, header
from .mounts import Mount

pytestmark = pytest.mark.skipif(shutil.which("setfacl") is None, reason="setfacl (Debian package acl) is not installed")

GROUP = "nasfs-aclg"
OTHER, BYSTANDER = "nasfs-acla", "nasfs-aclb"  # OTHER is in GROUP; BYSTANDER in no group of ours
DENIED = ("AQDENYBODY", "AQDENYHEAD", "aq-denied")  # aq-denied.md: 0644, u:OTHER:---
HIDDEN = ("AQHIDDENBODY", "AQHIDDENHEAD", "aq-inner")  # hidden/aq-inner.md, in a folder with g:GROUP:---
FILES = {
    "README.md": "# Readme\n\nThe lantern guide.\n",
    "aq-denied.md": "# AQDENYHEAD\n\n## AQDENYHEAD two\n\nAQDENYBODY the lantern code is 5521.\n",
    "granted.md": "# Granted\n\n## Granted part\n\nAQGRANTBODY the lantern is lit.\n",
    "hidden/aq-inner.md": "# AQHIDDENHEAD\n\n## AQHIDDENHEAD two\n\nAQHIDDENBODY the lantern room.\n",
}


@dataclass
class AclWorld:
    tree: Path
    mount: Mount

    def cat(self, name: str, rel: str) -> subprocess.CompletedProcess[bytes]:
        return run_as(name, ["cat", "--", str(self.mount.mountpoint / rel)])

    def cat_source(self, name: str, rel: str) -> subprocess.CompletedProcess[bytes]:
        return run_as(name, ["cat", "--", str(self.tree / rel)])


def setfacl(*args: str) -> None:
    subprocess.run(["setfacl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def world() -> Iterator[AclWorld]:
    base = make_accounts(GROUP, OTHER, BYSTANDER)
    with shared_mount(base, lambda: remove_accounts(GROUP, (OTHER, BYSTANDER))) as mounted:
        tree = base / "tree"
        for rel, text in FILES.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "README.md")
        git(tree, "commit", "-q", "-m", "first")
        with open(tree / "README.md", "a") as fh:
            fh.write("\n## More\n\nMore lanterns.\n")
        git(tree, "commit", "-q", "-am", "more")
        os.chmod(tree, 0o755)
        os.chmod(tree / "aq-denied.md", 0o644)
        setfacl("-m", f"u:{OTHER}:---", str(tree / "aq-denied.md"))
        os.chmod(tree / "granted.md", 0o600)
        setfacl("-m", f"u:{OTHER}:r--", str(tree / "granted.md"))
        os.chmod(tree / "hidden", 0o755)
        setfacl("-m", f"g:{GROUP}:---", str(tree / "hidden"))
        yield AclWorld(tree, mounted(tree, "--no-warm"))


def leaks(data: bytes, markers: tuple[str, ...] = DENIED + HIDDEN) -> list[str]:
    return [m for m in markers if m.encode() in data]


def test_an_acl_entry_that_denies_keeps_every_view_map_hit_and_diff_from_the_account(world: AclWorld) -> None:
    """``u:OTHER:---`` on a 0644 file: OTHER cannot ``cat`` it, on the
    source or through the mount, and gets none of its views, no map entry,
    no search hit and no diff line of it; the bystander (mode bits: other)
    and root get them all."""
    assert world.cat_source(OTHER, "aq-denied.md").returncode != 0
    got = world.cat(OTHER, "aq-denied.md")
    assert got.returncode != 0 and not leaks(got.stdout), got.stdout  # the raw bytes, passed through
    for view in ("@outline", "@L1-L3", "@60", "@outline.json", "@section=AQDENYHEAD"):
        got = world.cat(OTHER, "aq-denied.md" + view)
        assert got.returncode != 0 and b"Permission denied" in got.stderr and not leaks(got.stdout), (view, got.stdout)
        assert world.cat(BYSTANDER, "aq-denied.md" + view).returncode == 0, view
    for view in (".@outline", ".@2000", ".@outline=1@300"):
        got = world.cat(OTHER, view)
        assert got.returncode == 0 and not leaks(got.stdout, DENIED), (view, got.stdout)
        assert b"README.md" in got.stdout
        assert leaks(world.cat(BYSTANDER, view).stdout, DENIED), view
    got = world.cat(OTHER, ".nas/search/AQDENYBODY")
    assert got.returncode == 0 and header(got.stdout)["matches"] == "0", got.stdout
    assert header(world.cat(BYSTANDER, ".nas/search/AQDENYBODY").stdout)["matches"] != "0"
    got = world.cat(OTHER, ".nas/search/lantern")
    assert b"README.md" in got.stdout and not leaks(got.stdout), got.stdout
    for diff in (".nas/diff/HEAD~1", ".nas/diff/HEAD~1@200"):
        got = world.cat(OTHER, diff)
        assert got.returncode == 0 and not leaks(got.stdout, DENIED), (diff, got.stdout)
    assert b"aq-denied" in world.cat("root", ".nas/diff/HEAD~1").stdout


def test_an_acl_entry_that_grants_a_named_user_lets_it_cat_and_view_a_0600_file(world: AclWorld) -> None:
    """``u:OTHER:r--`` on a 0600 file: OTHER reads it, on the source and
    through the mount, and gets its views; the bystander gets neither."""
    assert world.cat_source(OTHER, "granted.md").returncode == 0
    got = world.cat(OTHER, "granted.md")
    assert got.returncode == 0 and b"AQGRANTBODY" in got.stdout, got.stderr
    for view in ("@outline", "@L5", "@section=Granted part"):
        got = world.cat(OTHER, "granted.md" + view)
        assert got.returncode == 0 and (b"AQGRANTBODY" in got.stdout or view == "@outline"), (view, got.stderr)
        got = world.cat(BYSTANDER, "granted.md" + view)
        assert got.returncode != 0 and b"AQGRANTBODY" not in got.stdout, view
    assert b"granted.md" in world.cat(OTHER, ".@outline").stdout
    assert b"granted.md" not in world.cat(BYSTANDER, ".@outline").stdout
    assert header(world.cat(OTHER, ".nas/search/AQGRANTBODY").stdout)["matches"] != "0"
    assert header(world.cat(BYSTANDER, ".nas/search/AQGRANTBODY").stdout)["matches"] == "0"


def test_a_folder_acl_that_denies_a_group_hides_its_files_from_maps_and_search(world: AclWorld) -> None:
    """``g:GROUP:---`` on a 0755 folder: a member cannot list it or ``cat``
    its files (source and mount), and no map or search names them; the
    bystander (not in the group) sees them."""
    assert world.cat_source(OTHER, "hidden/aq-inner.md").returncode != 0
    got = world.cat(OTHER, "hidden/aq-inner.md")
    assert got.returncode != 0 and not leaks(got.stdout), got.stdout
    assert run_as(OTHER, ["ls", str(world.mount.mountpoint / "hidden")]).returncode != 0
    for view in ("hidden/aq-inner.md@outline", "hidden@outline", "hidden/aq-inner.md@L1"):
        got = world.cat(OTHER, view)
        assert got.returncode != 0 and not leaks(got.stdout), (view, got.stdout)
    got = world.cat(OTHER, ".@outline")
    assert got.returncode == 0 and not leaks(got.stdout, HIDDEN) and b"hidden/" not in got.stdout, got.stdout
    got = world.cat(OTHER, ".nas/search/AQHIDDENBODY")
    assert header(got.stdout)["matches"] == "0", got.stdout
    assert leaks(world.cat(BYSTANDER, ".@outline").stdout, HIDDEN)
    assert header(world.cat(BYSTANDER, ".nas/search/AQHIDDENBODY").stdout)["matches"] != "0"


def test_a_snapshot_of_a_file_an_acl_narrows_stays_out_of_the_shared_objects(world: AclWorld) -> None:
    """``.git`` is 0755, the file 0644: by modes everyone who reads ``.git``
    reads it, but its ACL keeps OTHER out, so its snapshot goes to a private
    store (narrower_than_git); the snapshot's trail keeps the ACL, so OTHER
    is refused the old version and the bystander, who could read it then,
    is not."""
    assert narrower_than_git(world.tree, world.tree / ".git", ["aq-denied.md"])
    assert not narrower_than_git(world.tree, world.tree / ".git", ["README.md"])
    view = world.cat("root", "aq-denied.md@outline")
    assert view.returncode == 0, view.stderr
    commit = header(view.stdout)["pointer"].split("@")[1].split("#")[0]
    assert not GitTree(world.tree).in_shared_store(commit)
    trails = read_trails(GitTree(world.tree).resolve(commit).message)["aq-denied.md"]
    assert trails and all(len(trail[-1]) > 4 for trail in trails)  # the file's step keeps its ACL
    got = world.cat(OTHER, f".at/{commit}/aq-denied.md")
    assert got.returncode != 0 and not leaks(got.stdout), got.stdout
    got = world.cat(BYSTANDER, f".at/{commit}/aq-denied.md")
    assert got.returncode == 0 and b"AQDENYBODY" in got.stdout, got.stderr


def test_an_acl_on_git_that_denies_keeps_history_from_the_account(world: AclWorld) -> None:
    """``u:OTHER:---`` on ``.git`` (0755): OTHER cannot ``git show``, and
    ``.at`` and the diffs between commits are refused to it through the
    mount as well (they take ``.git``'s owner, mode and ACL); the bystander
    reads them."""
    ptr = header(world.cat("root", "README.md@section=More").stdout)["pointer"].split("/", 4)[4]  # drop nas://box/home/
    setfacl("-m", f"u:{OTHER}:---", str(world.tree / ".git"))
    try:
        shown = run_as(OTHER, ["git", "-c", "safe.directory=*", "-C", str(world.tree), "show", "HEAD:README.md"])
        assert b"lantern" not in shown.stdout
        for path in (".at/HEAD/README.md", ".at/HEAD/README.md@outline", ".nas/diff/HEAD~1..HEAD", f".nas/deref/{ptr}"):
            got = world.cat(OTHER, path)
            assert got.returncode != 0 and b"lantern" not in got.stdout, (path, got.stdout)
            assert world.cat(BYSTANDER, path).returncode == 0, path
        assert world.cat(OTHER, "README.md@outline").returncode == 0  # the working tree stays its to read
    finally:
        setfacl("-b", str(world.tree / ".git"))
    assert world.cat(OTHER, ".at/HEAD/README.md").returncode == 0


def test_the_decision_trail_and_audience_follow_an_acl_changed_beside_the_mount(world: AclWorld) -> None:
    """No cache keeps an answer that rests on an ACL: a ``setfacl`` (which
    moves the ctime, not the mode) is judged at the next question."""
    other = Caller.of_account(OTHER)
    target = world.tree / "README.md"
    assert decider(world.tree, other).decide("README.md") is Seen.ALLOWED
    assert not narrower_than_git(world.tree, world.tree / ".git", ["README.md"])
    setfacl("-m", f"u:{OTHER}:---", str(target))
    try:
        assert decider(world.tree, other).decide("README.md") is Seen.DENIED
        assert narrower_than_git(world.tree, world.tree / ".git", ["README.md"])
        trail = trail_of(world.tree, "README.md")
        assert trail is not None and not may_have_read(other, [trail])
        assert may_have_read(Caller.of_account(BYSTANDER), [trail])
    finally:
        setfacl("-b", str(target))
    assert decider(world.tree, other).decide("README.md") is Seen.ALLOWED


def test_the_acl_evaluation_follows_posix_1e() -> None:
    """Owner entry; a named user masked; the owning and named groups masked,
    any one granting; 'other'. And a trail written before ACLs (four
    integers a step) is still read, judged by its modes."""
    a = (acl.USER_OBJ, 0o6, -1), (acl.USER, 0o4, 1001), (acl.GROUP_OBJ, 0o0, -1), (acl.GROUP, 0o4, 2002), \
        (acl.MASK, 0o4, -1), (acl.OTHER, 0o4, -1)
    assert acl.parse(acl.encode(a)) == a
    assert acl.allows(a, 1000, 100, 1000, {100}, 0o4)  # the owner
    assert acl.allows(a, 1000, 100, 1001, {5}, 0o4)  # a named user
    assert not acl.allows(a, 1000, 100, 1001, {5}, 0o2)
    assert not acl.allows(a, 1000, 100, 1003, {100}, 0o4)  # the owning group: ---, no other group of its grants
    assert acl.allows(a, 1000, 100, 1003, {100, 2002}, 0o4)  # ... but a named group it is also in does
    assert acl.allows(a, 1000, 100, 1004, {5}, 0o4)  # other
    masked = tuple((t, 0 if t == acl.MASK else p, w) for t, p, w in a)
    assert not acl.allows(masked, 1000, 100, 1001, {5}, 0o4)  # the mask takes a named user's read away
    old = 'x\n\nNasfs-Readers: {"a.md":[[[0,0,493,1],[0,0,420,4]]]}'
    assert read_trails(old) == {"a.md": (((0, 0, 493, 1), (0, 0, 420, 4)),)}
    assert may_have_read(Caller(1004, 1004), read_trails(old)["a.md"])
    new = f'x\n\nNasfs-Readers: {{"a.md":[[[0,0,493,1],[1000,100,416,4,{",".join(map(str, acl.flat(a)))}]]]}}'
    assert not may_have_read(Caller(1003, 100), read_trails(new)["a.md"])
    assert may_have_read(Caller(1001, 5), read_trails(new)["a.md"])



def test_a_tree_on_a_filesystem_that_keeps_no_acls_is_read_by_other_accounts_through_the_mount() -> None:
    """ramfs keeps no xattrs (getxattr: EOPNOTSUPP). With enable_acl the kernel
    asks the daemon for each real inode's ACL at a non-owner's permission
    check, and fails the access with whatever error but ENODATA it is told:
    `cat`, `ls` and views were refused (EOPNOTSUPP) to every account but the owner."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-noacl-", dir="/tmp"))
    os.chmod(base, 0o755)
    tree = base / "tree"
    tree.mkdir()
    if subprocess.run(["mount", "-t", "ramfs", "-o", "mode=0755", "none", str(tree)], capture_output=True).returncode:
        shutil.rmtree(base)
        pytest.skip("cannot mount ramfs here")
    try:
        (tree / "plain.md").write_text("# Plain\n\nRAMFSBODY the lantern.\n")
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "plain.md")
        git(tree, "commit", "-q", "-m", "first")
        with pytest.raises(OSError) as none_kept:
            os.getxattr(tree / "plain.md", acl.XATTR)
        assert none_kept.value.errno == errno.EOPNOTSUPP  # the premise: a filesystem that keeps no ACLs
        with shared_mount(base, lambda: None) as mounted:
            mnt = mounted(tree).mountpoint
            for args in (["cat", "--", str(mnt / "plain.md")], ["ls", "--", str(mnt)], ["cat", "--", str(mnt / "plain.md@outline")]):
                out = run_as("nobody", args)
                assert out.returncode == 0, (args, out.stderr)
            assert b"RAMFSBODY" in run_as("nobody", ["cat", "--", str(mnt / "plain.md")]).stdout
            assert run_as("nobody", ["sh", "-c", f"echo x >> {mnt / 'plain.md'}"]).returncode != 0  # 0644: still no write
    finally:
        subprocess.run(["umount", "-l", str(tree)], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


# (uid, primary gid, supplementary gids): the owner, a named user, a member of the owning group, of a
# named group, of both, and a stranger; the file's owner is 41000, its group 41100, the named group 41200
KINDS = {"owner": (41000, 41900, ()), "named": (41001, 41901, ()), "group": (41002, 41100, ()),
         "named group": (41003, 41903, (41200,)), "both groups": (41004, 41100, (41200,)), "stranger": (41005, 41905, ())}
SPECS = ("u::rw-,u:41001:r--,g::---,g:41200:r--,m::r--,o::---",  # named entries grant through the mask; the mode shows 0640
         "u::rw-,u:41001:r--,g::r--,g:41200:r--,m::---,o::r--",  # the mask takes every group-class grant away; other reads
         "u::---,u:41001:r--,g::r--,m::r--,o::r--",  # the owner entry refuses the owner, unmasked
         "u::rw-,u:41001:---,g::r--,m::r--,o::r--",  # a named user refused, though group and other read
         "u::rw-,g::---,g:41200:---,m::rw-,o::r--",  # both groups refuse: their members are refused, other reads
         "u::rw-,g::r--,g:41200:---,m::r--,o::---",  # one matching group grants: enough
         "u::rw-,u:41001:rw-,g::---,m::--x,o::---",  # the mask has no read bit: a named user's rw- is masked away
         "u::rw-,g::r--,o::---")  # no named entry: the mode bits alone


@pytest.mark.parametrize("spec", SPECS)
def test_decisions_under_an_acl_match_the_kernels(spec: str) -> None:
    """The Decider (the shortcut that skips reading an ACL, then acl.allows)
    answers as the kernel does, for a file's read bit and for a folder's
    search bit, for the owner, a named user, the owning group, a named
    group, both groups and a stranger; asked of the kernel with setpriv and
    numeric ids (no accounts needed)."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-aclk-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        (base / "f.md").write_text("f\n")
        (base / "d").mkdir()
        (base / "d" / "in.md").write_text("in\n")
        os.chmod(base / "d" / "in.md", 0o644)
        for rel, acl_spec in (("f.md", spec), ("d", spec.replace("r--", "--x").replace("rw-", "-wx"))):
            os.chown(base / rel, 41000, 41100)
            setfacl("--set", acl_spec, str(base / rel))
        for kind, (uid, gid, groups) in KINDS.items():
            ids = [f"--reuid={uid}", f"--regid={gid}", f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"]
            for rel in ("f.md", "d/in.md"):
                kernel = subprocess.run(["setpriv", *ids, "cat", str(base / rel)], capture_output=True).returncode == 0
                ours = decider(base, Caller(uid, gid, frozenset(groups))).decide(rel) is Seen.ALLOWED
                assert ours == kernel, (spec, kind, rel, "kernel allows" if kernel else "kernel refuses")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_files_way_changes_with_an_acl_on_it_or_on_a_folder_above_though_no_mode_does(tmp_path: Path) -> None:
    """The Way (one_version.readers_key of the root, each folder and the
    file), checked from a read to the snapshot's store and trail, moves on
    an ACL change that leaves every mode as it was: a snapshot judged
    before a ``setfacl -m u:X:---`` is not stored by that judgement."""
    from nasfs.repo.one_version import way_in_tree as way_of

    (tmp_path / "d").mkdir(mode=0o755)
    (tmp_path / "d" / "f.md").write_text("f\n")
    os.chmod(tmp_path / "d" / "f.md", 0o644)
    first = way_of(tmp_path, "d/f.md")
    assert first is not None
    for rel in ("d/f.md", "d"):
        mode = os.stat(tmp_path / rel).st_mode
        setfacl("-m", "u:41001:---", str(tmp_path / rel))
        assert os.stat(tmp_path / rel).st_mode == mode  # the mask is the group bits as they were
        now = way_of(tmp_path, "d/f.md")
        assert now is not None and now[1] != first[1], rel
        first = now


def test_a_file_made_through_the_mount_in_a_folder_with_a_default_acl_is_no_wider_than_one_made_natively() -> None:
    """A folder's default ACL ``o::---,g::---`` keeps strangers out of
    what is made in it: the filesystem gives a new file the mode asked for
    cut by the ACL (0640 of 0644), ignoring the umask. The daemon then chmod'ed
    the new file to the mode asked less the caller's umask (0644), which
    widened it past the ACL: a stranger read it through the mount."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-acld-", dir="/tmp"))
    os.chmod(base, 0o755)
    with shared_mount(base, lambda: None) as mounted:
        tree = base / "tree"
        tree.mkdir(mode=0o755)
        (tree / "README.md").write_text("# r\n")
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "README.md")
        git(tree, "commit", "-q", "-m", "first")
        (tree / "priv").mkdir(mode=0o777)
        os.chmod(tree / "priv", 0o777)
        setfacl("-d", "-m", "o::---,g::---,u:nobody:---", str(tree / "priv"))
        mnt = mounted(tree).mountpoint
        subprocess.run(["sh", "-c", f"umask 022 && echo AQNEWBODY > {tree}/priv/native.md && mkdir {tree}/priv/native-dir"
                        f" && echo AQNEWBODY > {mnt}/priv/made.md && mkdir {mnt}/priv/made-dir"], check=True)
        for native, made in (("native.md", "made.md"), ("native-dir", "made-dir")):
            assert stat.S_IMODE(os.stat(tree / "priv" / made).st_mode) == stat.S_IMODE(os.stat(tree / "priv" / native).st_mode)
            assert stat.S_IMODE(os.stat(tree / "priv" / made).st_mode) & 0o077 == 0
        got = run_as("nobody", ["cat", "--", str(mnt / "priv" / "made.md")])
        assert got.returncode != 0 and b"AQNEWBODY" not in got.stdout
