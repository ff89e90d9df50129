"""A commit is read through its own objects only (nasfs/repo/own_objects.py):
an account that may write ``.git/objects`` (a repository its group commits
to) writes there, with plain git, a commit whose tree names another
account's private snapshot blob, or whose parent is a private snapshot it
may read; no door serves the private bytes through it, while the owner and
root still read the private snapshots themselves.

Real accounts and a real mount with --allow-other, as
tests/test_private_snapshots.py (whose fixtures and helpers these reuse).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from nasfs.access import AccessDenied, Caller
from nasfs.errors import NotFound
from nasfs.pointers import Pointer
from nasfs.repo import GitTree
from nasfs.repo.own_objects import REJUDGE_SECONDS
from nasfs.service import Nas

from .conftest import git
from .mounts import Mount
from .test_private_snapshots import (SECRET, accounts, as_account, blob_id, commit_of, nasfs_as,  # noqa: F401
                                     team, tree)

PLAN = "# Plan\n\nthe team code is 5150\n"
GIT_ID = {"GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@x", "GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@x"}


@pytest.fixture()
def writers(tree: Path, team):  # noqa: F811
    """The repository is the team's to commit to: ``.git/objects`` group-writable
    (setgid folders, core.sharedRepository=group), the member in the group.
    The owner's team/plan.md is 0640 to the group, in a 0750 team folder."""
    gid, member = team
    for folder, _, files in os.walk(tree / ".git" / "objects"):
        os.chown(folder, -1, gid)
        os.chmod(folder, 0o2775)
        for name in files:
            os.chown(os.path.join(folder, name), -1, gid)
    git(tree, "-c", "safe.directory=*", "config", "core.sharedRepository", "group")
    owner_uid = os.stat(tree).st_uid
    (tree / "team").mkdir(mode=0o750)
    (tree / "team" / "plan.md").write_text(PLAN)
    for name, mode in ((tree / "team", 0o750), (tree / "team" / "plan.md", 0o640)):
        os.chown(name, owner_uid, gid)
        os.chmod(name, mode)
    return member


def git_as(caller: Caller, root: Path, *args: str, given: str = "") -> str:
    """Plain git run by that account in the shared repository (what a committer may write there)."""
    groups = ",".join(str(g) for g in sorted(caller.groups | {caller.gid}))
    run = subprocess.run(["setpriv", f"--reuid={caller.uid}", f"--regid={caller.gid}", f"--groups={groups}", "git",
                          "-c", "safe.directory=*", *args], cwd=root, input=given.encode(), capture_output=True,
                         timeout=60, env=dict(os.environ, HOME="/tmp", **GIT_ID))
    assert run.returncode == 0, (args, run.stderr)
    return run.stdout.decode().strip()


def mktree(caller: Caller, root: Path, entries: dict[str, str]) -> str:
    """A tree written by ``caller`` with ``git mktree``: name -> 'blob ID' or 'tree ID' (missing objects allowed)."""
    lines = "".join(f"{'040000' if what.startswith('tree') else '100644'} {what}\t{name}\n" for name, what in entries.items())
    return git_as(caller, root, "mktree", "--missing", given=lines)


def recorded_by(caller: Caller, mnt: Path, path: str) -> str:
    """The snapshot commit of ``path`` that ``caller``'s read through the mount names."""
    read = as_account(caller, "cat", str(mnt / f"{path}@outline"))
    assert read.returncode == 0, read.stderr
    return commit_of(read.stdout)


def refused(ask: Callable[[], object]) -> None:
    """The door refuses (not found, or may not read) with a message, or answers without the secret."""
    try:
        answer = ask()
    except (AccessDenied, NotFound) as exc:
        assert str(exc) and "7731" not in str(exc)
        return
    assert "7731" not in json.dumps(answer, default=str), answer


def denied_through_mount(caller: Caller, mnt: Path, *paths: str) -> None:
    for path in paths:
        run = as_account(caller, "cat", str(mnt / path))
        assert run.returncode != 0 and b"7731" not in run.stdout and b"Launch" not in run.stdout, (path, run.stdout)


def test_a_shared_commit_naming_a_private_blob_serves_it_through_no_door(tree: Path, accounts, writers,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The member writes in .git/objects (git mktree, commit-tree, a tag) a commit whose
    public/readme.md is the owner's private snapshot blob (its id: the hash of a guess, or a
    SWHID seen). Plain git finds no such blob; neither does any door, for the member or for
    root: the commit is read through .git/objects. The owner and root still read the
    snapshot itself."""
    from nasfs.http import Door

    owner, _ = accounts
    member = writers
    cache = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    m = Mount(tree, tree.parent / "mnt", "--allow-other", "--no-warm")
    try:
        mnt = m.mountpoint
        victim = recorded_by(owner, mnt, "private/secret.md")
        assert not GitTree(tree).in_shared_store(victim)
        head = GitTree(tree).head()
        public = mktree(member, tree, {"readme.md": f"blob {blob_id(SECRET)}"})
        top = mktree(member, tree, {"public": f"tree {public}"})
        forged = git_as(member, tree, "commit-tree", top, "-p", str(head.id), "-m", "forged")
        tag = git_as(member, tree, "hash-object", "-t", "tag", "-w", "--stdin",
                     given=f"object {forged}\ntype commit\ntag v\ntagger m <m@x> 0 +0000\n\nforged\n")
        assert GitTree(tree).in_shared_store(forged)
        shown = as_account(member, "git", "-c", "safe.directory=*", "cat-file", "-p", f"{forged}:public/readme.md", cwd=tree)
        assert shown.returncode != 0 and b"7731" not in shown.stdout  # plain git: no such blob

        denied_through_mount(member, mnt, f".at/{forged}/public/readme.md", f".at/{forged[:12]}/public/readme.md@outline",
                             f".at/{tag}/public/readme.md", f".nas/deref/public/readme.md@{forged[:12]}",
                             f".nas/deref/public/readme.md@{forged[:12]}#L1-L4", f".nas/diff/HEAD..{forged[:12]}",
                             f"public/readme.md@since=HEAD..{forged[:12]}")
        cli = nasfs_as(member, tree, "read", "--at", forged, "public/readme.md")
        assert cli.returncode != 0 and b"7731" not in cli.stdout, cli.stdout
        monkeypatch.setenv("NASFS_CACHE_DIR", str(cache))  # search at a revision writes its tree there
        nas = Nas(GitTree(tree, node="box", tree="home"))
        door = Door(nas)  # a root server (HTTP, MCP) answering each caller as that caller
        pointer = str(Pointer("box", "home", "public/readme.md", forged, 1, 4))
        for who in (member, Caller.root()):  # root too: git finds no such blob in the commit's objects
            refused(lambda: door.read("public/readme.md", at=forged, caller=who))
            refused(lambda: door.read("public/readme.md", at=tag, caller=who))
            refused(lambda: door.deref(pointer, caller=who))
            refused(lambda: door.diff(f"HEAD..{forged}", caller=who))
            refused(lambda: door.search("launch", at=forged, caller=who))
            refused(lambda: nas.read(f"public/readme.md@since=HEAD..{forged}", caller=who))
        with pytest.raises(NotFound, match="not among its own objects|does not exist"):
            door.read("public/readme.md", at=forged, caller=member)

        # the owner and root still read the private snapshot, through the mount and the Door
        for path in (f".at/{victim}/private/secret.md", f".nas/deref/private/secret.md@{victim[:12]}#L4",
                     f".nas/diff/HEAD..{victim[:12]}"):
            run = as_account(owner, "cat", str(mnt / path))
            assert run.returncode == 0 and b"7731" in run.stdout, (path, run.stderr)
        for who in (owner, Caller.root()):
            assert "7731" in json.dumps(door.read("private/secret.md", at=victim, caller=who))
        with pytest.raises(AccessDenied):
            door.read("private/secret.md", at=victim, caller=member)
        assert m.alive()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_a_shared_commit_over_a_private_snapshot_shows_no_other_private_blob_in_a_diff(tree: Path, accounts,  # noqa: F811
                                                                                       writers) -> None:
    """The member may read the owner's private snapshot of team/plan.md (0640 to the team). It
    writes in .git/objects a commit over that snapshot whose team/plan.md is the owner's 0600
    secret's blob (in the same private store). A diff or @since between the two is made through
    both commits' objects, but each side must be its own commit's: refused, never the secret."""
    from nasfs.http import Door

    owner, _ = accounts
    member = writers
    m = Mount(tree, tree.parent / "mnt", "--allow-other", "--no-warm")
    try:
        mnt = m.mountpoint
        plan, victim = recorded_by(member, mnt, "team/plan.md"), recorded_by(owner, mnt, "private/secret.md")
        t = GitTree(tree)
        assert not t.in_shared_store(plan) and not t.in_shared_store(victim)
        full = str(t.resolve(plan).id)
        team_tree = mktree(member, tree, {"plan.md": f"blob {blob_id(SECRET)}"})
        top = mktree(member, tree, {"public": f"tree {t.head().tree['public'].id}", "team": f"tree {team_tree}"})
        raw = f"tree {top}\nparent {full}\nauthor m <m@x> 0 +0000\ncommitter m <m@x> 0 +0000\n\nover the plan\n"
        forged = git_as(member, tree, "hash-object", "-t", "commit", "-w", "--stdin", given=raw)
        assert GitTree(tree).in_shared_store(forged)

        denied_through_mount(member, mnt, f".nas/diff/{plan[:12]}..{forged[:12]}", f".at/{forged}/team/plan.md",
                             f"team/plan.md@since={plan[:12]}..{forged[:12]}")
        nas = Nas(GitTree(tree, node="box", tree="home"))
        door = Door(nas)
        for who in (member, Caller.root()):
            refused(lambda: door.diff(f"{plan}..{forged}", caller=who))
            refused(lambda: nas.read(f"team/plan.md@since={plan}..{forged}", caller=who))
        with pytest.raises(NotFound, match="not among its own objects|does not exist"):
            door.diff(f"{plan}..{forged}", caller=member)

        # the member still reads the plan's snapshot; the owner their secret's, in a diff too
        run = as_account(member, "cat", str(mnt / ".at" / plan / "team" / "plan.md"))
        assert run.returncode == 0 and b"5150" in run.stdout, run.stderr
        run = as_account(owner, "cat", str(mnt / ".nas" / "diff" / f"{plan[:12]}..{victim[:12]}"))
        assert run.returncode == 0 and b"7731" in run.stdout and b"5150" in run.stdout, run.stderr
        assert "7731" in json.dumps(door.diff(f"{plan}..{victim}", caller=Caller.root()))
        assert m.alive()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]



def test_a_snapshot_over_a_head_naming_a_private_blob_serves_that_blob_to_no_one(tree: Path, accounts,  # noqa: F811
                                                                                writers) -> None:
    """A committer makes the branch's HEAD a commit of .git/objects whose public/readme.md is the
    owner's private blob, and whose private/ is the owner's private snapshot's folder; the member's read of team/plan.md then records a snapshot over it, in
    the owner's store, which holds that blob. The snapshot records team/plan.md only: what it
    does not record is its parent's, read as .git/objects holds it, so public/readme.md there is
    not found, for the member and for root, nor is the owner's private folder the HEAD names
    listed; team/plan.md is read as before."""
    from nasfs.http import Door

    owner, _ = accounts
    member = writers
    m = Mount(tree, tree.parent / "mnt", "--allow-other", "--no-warm")
    try:
        mnt = m.mountpoint
        victim = recorded_by(owner, mnt, "private/secret.md")  # the blob and its folder are in the owner's store
        t = GitTree(tree)
        folder = t.resolve(victim).tree["private"].id  # (its id: the hash of the guessed blob's tree)
        public = mktree(member, tree, {"readme.md": f"blob {blob_id(SECRET)}"})
        forged = git_as(member, tree, "commit-tree", mktree(member, tree, {"public": f"tree {public}",
                                                                           "private": f"tree {folder}"}),
                        "-p", str(t.head().id), "-m", "forged")
        git(tree, "-c", "safe.directory=*", "update-ref", "refs/heads/main", forged)  # as the committer's push would
        snapshot = recorded_by(member, mnt, "team/plan.md")
        assert not GitTree(tree).in_shared_store(snapshot) and str(GitTree(tree).resolve(snapshot).parents[0].id) == forged

        denied_through_mount(member, mnt, f".at/{snapshot}/public/readme.md", f".nas/deref/public/readme.md@{snapshot[:12]}",
                             f".at/{snapshot}/public/readme.md@outline", f".at/{snapshot}/private/secret.md")
        listed = as_account(member, "ls", str(mnt / ".at" / snapshot / "private"))
        assert listed.returncode != 0 and b"secret" not in listed.stdout, listed.stdout
        for path in (f".at/{snapshot}/team/plan.md", f".nas/diff/HEAD..{snapshot[:12]}"):  # what it records
            run = as_account(member, "cat", str(mnt / path))
            assert run.returncode == 0 and b"5150" in run.stdout and b"7731" not in run.stdout, run.stderr
        door = Door(Nas(GitTree(tree, node="box", tree="home")))
        for who in (member, owner, Caller.root()):
            refused(lambda: door.read("public/readme.md", at=snapshot, caller=who))
            refused(lambda: door.read("private/secret.md", at=snapshot, caller=who))
            refused(lambda: door.diff(f"{forged}..{snapshot}", caller=who))
        assert "5150" in json.dumps(door.read("team/plan.md", at=snapshot, caller=member))
        assert m.alive()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def their_private_snapshot(tree: Path, other: Caller) -> str:
    """The commit of theirs/note.md (0700 folder, the other account's, "the safe code is 7731")
    snapshotted for that account: a private snapshot in its store."""
    (tree / "theirs").mkdir(mode=0o700)
    (tree / "theirs" / "note.md").write_text("# Theirs\n\nthe safe code is 7731\n")
    for name in (tree / "theirs", tree / "theirs" / "note.md"):
        os.chown(name, other.uid, other.gid)
    return GitTree(tree).working("theirs/note.md", caller=other).commit


def lent_repository(text: str) -> tuple[Path, str]:
    """A repository outside the tree (a 0755 folder under /tmp, removed by the caller) whose one
    commit holds f.md with ``text``: an alternate to name in .git/objects/info/alternates."""
    outside = Path(tempfile.mkdtemp(prefix="nasfs-lent-", dir="/tmp"))
    os.chmod(outside, 0o755)
    (outside / "f.md").write_text(text)
    git(outside, "init", "-q", "-b", "main")
    git(outside, "add", "-A")
    git(outside, "commit", "-q", "-m", "lent")
    return outside, git(outside, "rev-parse", "HEAD").strip()


def test_an_alternate_of_git_objects_that_some_reader_may_not_read_is_not_shared(tree: Path, accounts) -> None:  # noqa: F811
    """Whoever may write .git/objects/info/alternates (here the owner of .git; a group that commits
    to it could too) names another account's private store there: plain git run by them cannot read
    it, and neither does nasfs take its objects for shared ones, so the other's snapshot is still
    judged as theirs (refused to the owner, not published). An alternate every reader of
    .git/objects may read (git clone --shared) is still read."""
    from nasfs.http import Door
    from nasfs.repo.remotes import Publishing
    from nasfs.snapshot_access import check_commit

    owner, other = accounts
    theirs = their_private_snapshot(tree, other)
    outside, lent = lent_repository("# Shared by all\n")
    try:
        alternates = tree / ".git" / "objects" / "info" / "alternates"
        alternates.write_text(f"{tree / '.git' / 'nasfs-private' / f'{other.uid}.git' / 'objects'}\n"
                              f"{outside / '.git' / 'objects'}\n")
        os.chown(alternates, owner.uid, owner.gid)

        t = GitTree(tree, node="box", tree="home")
        assert not t.in_shared_store(theirs)
        with pytest.raises(AccessDenied):
            check_commit(t, theirs, owner)
        door = Door(Nas(t))
        refused(lambda: door.read("theirs/note.md", at=theirs, caller=owner))
        assert "7731" in json.dumps(door.read("theirs/note.md", at=theirs, caller=other))
        assert not Publishing(tree / ".git", "file:///nowhere", "box").is_public_snapshot(theirs)
        assert str(t.resolve(lent).id) == lent and t.at(lent, "f.md").read() == b"# Shared by all\n"
    finally:
        shutil.rmtree(outside)


def test_a_shared_commit_whose_tree_is_a_private_stores_is_not_found_by_any_door(tree: Path, accounts) -> None:  # noqa: F811
    """The owner of .git writes there a commit whose root tree is another account's private
    snapshot's tree (in that account's store only). Read through .git/objects its tree is
    missing: every door says NotFound (HTTP 404, ENOENT), never libgit2's GitError (a 500, EIO)."""
    from nasfs.http import Door

    owner, other = accounts
    theirs = their_private_snapshot(tree, other)
    top = str(GitTree(tree).resolve(theirs).tree_id)
    raw = f"tree {top}\nauthor m <m@x> 0 +0000\ncommitter m <m@x> 0 +0000\n\nforged\n"
    forged = git_as(owner, tree, "hash-object", "-t", "commit", "-w", "--stdin", given=raw)
    t = GitTree(tree, node="box", tree="home")
    nas = Nas(t)
    door = Door(nas)
    for who in (owner, Caller.root()):
        for ask in (lambda: door.read("theirs/note.md", at=forged, caller=who),
                    lambda: door.diff(f"HEAD..{forged}", caller=who),
                    lambda: door.search("safe", at=forged, caller=who),
                    lambda: nas.read(f"public/readme.md@since={forged}..HEAD", caller=who)):
            with pytest.raises(NotFound, match="not among its own objects"):
                ask()
    for ask in (lambda: t.listing_at(forged, ""), lambda: t.item_at(forged, "theirs"),
                lambda: t.ls_tree_at(forged, "theirs"), lambda: t.raw_at(forged, "theirs/note.md")):
        with pytest.raises(NotFound, match="not among its own objects"):
            ask()
    assert not t.in_shared_store(forged)


def test_a_diff_cached_before_commits_were_read_through_their_own_objects_is_not_served(
        tree: Path, accounts, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A response is cached by the commits of A..B, and a hit is served without making the diff
    again. Before each commit was read through its own objects, @since=FORGED..HEAD (FORGED a
    shared commit naming another's private blob at that path) was made through one handle over
    every store, and held the private lines: an answer cached then (the previous VIEW_FORMAT) is
    not served now; the diff is made, and refused."""
    from nasfs.cache import DiskCache
    from nasfs import service

    owner, other = accounts
    theirs = their_private_snapshot(tree, other)
    public = mktree(owner, tree, {"readme.md": f"blob {blob_id('# Theirs' + chr(10) * 2 + 'the safe code is 7731' + chr(10))}"})
    forged = git_as(owner, tree, "commit-tree", mktree(owner, tree, {"public": f"tree {public}"}), "-m", "forged")
    cache = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    try:
        spec = f"public/readme.md@since={forged}..HEAD"
        with monkeypatch.context() as before:  # what the previous format cached, made through the wide handle
            before.setattr(service, "VIEW_FORMAT", 7)
            nas = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache(cache))
            path, view = nas.split(spec)
            leaked = nas.read("theirs/note.md", at=theirs)
            assert b"7731" in leaked.text
            nas.remember(nas._response_key(nas.content(path, "HEAD"), view), leaked)
        nas = Nas(GitTree(tree, node="box", tree="home"), disk=DiskCache(cache))
        refused(lambda: nas.read(spec, caller=owner).text)
        with pytest.raises(NotFound, match="not among its own objects"):
            nas.read(spec, caller=Caller.root())
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_a_working_tree_snapshot_deleting_a_file_still_shows_that_files_folder(tree: Path, accounts) -> None:  # noqa: F811
    """A snapshot of the whole working tree goes to a private store (private/secret.md is the
    owner's alone) and deletes docs/b.md: its docs/ is a folder it wrote to that store, on the way
    to nothing it records. Its files are .git/objects' and are still listed, mapped, searched
    and read at the snapshot; the deleted file is not there."""
    from nasfs.http import Door

    owner, _ = accounts
    (tree / "docs").mkdir()
    (tree / "docs" / "a.md").write_text("# A\n\nkept\n")
    (tree / "docs" / "b.md").write_text("# B\n\ngone\n")
    git(tree, "-c", "safe.directory=*", "add", "-A", "docs")
    git(tree, "-c", "safe.directory=*", "commit", "-q", "-m", "docs")
    for folder, dirs, files in os.walk(tree / "docs"):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.lchown(name, owner.uid, owner.gid)
    (tree / "docs" / "b.md").unlink()
    t = GitTree(tree, node="box", tree="home")
    snapshot = t.snapshot_worktree(owner)
    assert not t.in_shared_store(snapshot)
    assert [i.name for i in t.listing_at(snapshot, "")] == ["docs", "private", "public"]
    assert [i.name for i in t.listing_at(snapshot, "docs")] == ["a.md"]
    assert t.item_at(snapshot, "docs/b.md") is None
    nas = Nas(t)
    assert b"docs/a.md@" in nas.read("docs@outline", at=snapshot, caller=owner).text
    door = Door(nas)
    assert "kept" in json.dumps(door.search("kept", at=snapshot, caller=owner))


def test_a_linked_worktree_reads_its_common_folders_objects(tmp_path: Path) -> None:
    """A linked worktree's git folder (.git/worktrees/NAME) holds no objects: its shared objects
    are its common folder's (shared_odb)."""
    main = tmp_path / "main"
    main.mkdir()
    (main / "f.md").write_text("# F\n")
    git(main, "init", "-q", "-b", "main")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "f")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    t = GitTree(tmp_path / "linked")
    head = str(t.head().id)
    assert t.at(head, "f.md").read() == b"# F\n" and t.in_shared_store(head)


def test_a_diff_from_a_shared_commit_naming_a_private_blob_shows_none_of_its_lines(tree: Path, accounts,  # noqa: F811
                                                                                   writers) -> None:
    """The member writes in .git/objects a commit (over HEAD) whose team/plan.md is the owner's
    0600 secret's blob, and asks the diff from it to the plan's private snapshot (which it may
    read): the two places are diffed through a handle reading both, and a diff shows the old
    side's lines, which no read at the old commit would serve. That side is not its own commit's:
    refused, for the member and for root."""
    from nasfs.http import Door

    owner, _ = accounts
    member = writers
    t = GitTree(tree)
    plan = t.working("team/plan.md", caller=member).commit
    victim = t.working("private/secret.md", caller=owner).commit
    assert not t.in_shared_store(plan) and not t.in_shared_store(victim)
    team_tree = mktree(member, tree, {"plan.md": f"blob {blob_id(SECRET)}"})
    top = mktree(member, tree, {"public": f"tree {t.head().tree['public'].id}", "team": f"tree {team_tree}"})
    forged = git_as(member, tree, "commit-tree", top, "-p", str(t.head().id), "-m", "forged")
    nas = Nas(GitTree(tree, node="box", tree="home"))
    door = Door(nas)
    for who in (member, Caller.root()):
        refused(lambda: door.diff(f"{forged}..{plan}", caller=who))
        refused(lambda: nas.read(f"team/plan.md@since={forged}..{plan}", caller=who).text)
        with pytest.raises(NotFound, match="not among its own objects"):
            nas.tree.changes(forged, plan)
    assert "5150" in json.dumps(door.read("team/plan.md", at=plan, caller=member))


@pytest.mark.skipif(shutil.which("setfacl") is None, reason="setfacl (Debian package acl) is not installed")
def test_an_alternate_is_shared_by_what_the_acls_on_git_and_on_its_folders_let_each_reader_do(tree: Path, accounts) -> None:  # noqa: F811
    """Who reads .git/objects and who may read an alternate are both told by the ACLs too (real
    setfacl, each case checked against the kernel by the account itself): an alternate folder whose
    ACL denies a reader of .git/objects (0755, u:other:---) is not shared; one that only an ACL
    opens (0700, u:other:r-x) is shared when .git is just as narrow (0700, u:other:r-x: the
    named user is a reader, strangers are not), and not once its mask is emptied (the kernel then
    ignores the ACL and other is kept out by the mode)."""
    owner, other = accounts
    outside, lent = lent_repository("# Lent\n")
    try:
        for folder, dirs, files in os.walk(outside):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, owner.uid, owner.gid)
        objects = outside / ".git" / "objects"
        (tree / ".git" / "objects" / "info" / "alternates").write_text(f"{objects}\n")

        def shared() -> bool:
            return GitTree(tree).in_shared_store(lent)

        def lists(caller: Caller, folder: Path) -> bool:
            return as_account(caller, "ls", str(folder)).returncode == 0

        assert shared()  # 0755 all the way: every reader of .git/objects may read it
        subprocess.run(["setfacl", "-m", f"u:{other.uid}:---", str(outside / ".git")], check=True)
        assert lists(other, tree / ".git" / "objects") and not lists(other, objects)
        assert not shared()  # a reader of .git/objects the alternate's folder ACL keeps out

        subprocess.run(["setfacl", "-b", str(outside / ".git")], check=True)
        os.chmod(outside / ".git", 0o700)
        subprocess.run(["setfacl", "-m", f"u:{other.uid}:r-x", str(outside / ".git")], check=True)
        assert lists(other, objects)
        assert not shared()  # strangers read .git/objects (0755), not the alternate
        os.chmod(tree / ".git", 0o700)
        subprocess.run(["setfacl", "-m", f"u:{other.uid}:r-x", str(tree / ".git")], check=True)
        assert lists(other, tree / ".git" / "objects")
        assert shared()  # .git's readers (its owner, other by its ACL) may all read the alternate
        subprocess.run(["setfacl", "-m", "m::---", str(outside / ".git")], check=True)
        assert not lists(other, objects)
        assert not shared()  # an empty mask: the kernel judges the mode, and other is kept out
    finally:
        shutil.rmtree(outside)


@pytest.mark.skipif(shutil.which("setfacl") is None, reason="setfacl (Debian package acl) is not installed")
def test_an_alternate_an_acl_closes_to_a_reader_while_served_is_no_longer_read(tree: Path, accounts) -> None:  # noqa: F811
    """An alternate every reader of .git/objects may read is shared; once an ACL (or a mode) keeps
    one of them out of it, the tree already served stops reading it within REJUDGE_SECONDS (as the
    kernel sees an ACL changed beside the mount within about a second: docs/mount.md), and reads
    it again once it is open again. Judged once when served, the lent objects stayed shared to the account kept out (root's
    daemon read them for it) until the repository was reopened."""
    _, other = accounts
    outside, lent = lent_repository("# Lent\n")
    try:
        (tree / ".git" / "objects" / "info" / "alternates").write_text(f"{outside / '.git' / 'objects'}\n")
        t = GitTree(tree)
        assert t.in_shared_store(lent) and t.at(lent, "f.md").read() == b"# Lent\n"
        subprocess.run(["setfacl", "-m", f"u:{other.uid}:---", str(outside / ".git")], check=True)
        assert as_account(other, "ls", str(outside / ".git" / "objects")).returncode != 0
        time.sleep(REJUDGE_SECONDS + 0.1)
        assert not t.in_shared_store(lent)
        with pytest.raises(NotFound):
            t.at(lent, "f.md").read()
        subprocess.run(["setfacl", "-b", str(outside / ".git")], check=True)
        time.sleep(REJUDGE_SECONDS + 0.1)
        assert t.in_shared_store(lent)
    finally:
        shutil.rmtree(outside)
