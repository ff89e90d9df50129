"""A read never widens who can read content (issue 24, points 7 and 8): a
snapshot of a file some reader of ``.git`` could not read goes to its owner's
private store, out of other accounts' reach through plain git and through
every door of the mount; the owner's git and nasfs still verify it. And the
caches nasfs writes are 0700 folders of 0600 files.

Real accounts (made with useradd, removed after), a tree under a 0755 folder
in /tmp (pytest's own folders are 0700), a real mount with --allow-other.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2
import pytest

from nasfs.access import AccessDenied, Caller
from nasfs.audience import narrower_than_git
from nasfs.cache import DiskCache, private_folder
from nasfs.repo import GitTree
from nasfs.snapshot_access import check_commit
from nasfs.service import Nas
from nasfs.errors import NotFound

from .conftest import git, header
from .mounts import Mount

SECRET = "# Secret plan\n\n## Launch\nthe launch code is 7731\n"
AS_ACCOUNT = Path(__file__).with_name("as_account.py")


def _account(name: str) -> Caller:
    subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, capture_output=True)
    return Caller.of_account(name)


@pytest.fixture()
def accounts():
    """(owner, other): two real accounts, removed after the test."""
    names = [f"nsown{os.getpid() % 100000}", f"nsoth{os.getpid() % 100000}"]
    made = []
    try:
        for name in names:
            made.append(_account(name))
        yield tuple(made)
    finally:
        for name in names[:len(made)]:
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture()
def tree(accounts):
    """The owner's repository under a 0755 folder: public/readme.md
    committed; private/ (0700) holding secret.md, not committed."""
    owner, _ = accounts
    base = Path(tempfile.mkdtemp(prefix="nasfs-private-", dir="/tmp"))
    os.chmod(base, 0o755)
    root = base / "t"
    (root / "public").mkdir(parents=True)
    (root / "public" / "readme.md").write_text("# Readme\n\nhello\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    (root / "private").mkdir()
    (root / "private" / "secret.md").write_text(SECRET)
    os.chmod(root / "private", 0o700)
    for folder, dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.lchown(name, owner.uid, owner.gid)
    yield root
    shutil.rmtree(base)


def as_account(caller: Caller, *cmd: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A command run as that account (its uid, its groups)."""
    groups = ",".join(str(g) for g in sorted(caller.groups | {caller.gid}))
    return subprocess.run(["setpriv", f"--reuid={caller.uid}", f"--regid={caller.gid}", f"--groups={groups}", *cmd],
                          cwd=cwd, capture_output=True, timeout=60, env=dict(os.environ, HOME="/tmp", **(env or {})))


def nasfs_as(caller: Caller, root: Path, *args: str) -> subprocess.CompletedProcess:
    """The nasfs CLI run by that account (this interpreter lives in a folder
    only root may enter, so it starts as root and drops to the account before
    it opens anything of the tree)."""
    cache = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    os.chown(cache, caller.uid, caller.gid)
    try:
        return subprocess.run([sys.executable, str(AS_ACCOUNT), str(caller.uid), str(caller.gid), *args], cwd=root,
                              capture_output=True, timeout=120, env=dict(os.environ, HOME="/tmp", NASFS_CACHE_DIR=str(cache)))
    finally:
        shutil.rmtree(cache)


def commit_of(view: bytes) -> str:
    return header(view)["pointer"].split("@")[1].split("#")[0]


def test_a_private_snapshot_is_read_only_by_those_who_could_read_its_source(tree: Path, accounts) -> None:
    owner, other = accounts
    mnt = tree.parent / "mnt"
    # no warm-up: a late `nasfs index` (nice'd, slow on a loaded machine) snapshots the unchanged file
    # again, the same commit, and puts back the ref the owner deletes below before git gc
    m = Mount(tree, mnt, "--allow-other", "--no-warm")
    try:
        read = as_account(owner, "cat", str(mnt / "private" / "secret.md@outline"))
        assert read.returncode == 0, read.stderr
        commit = commit_of(read.stdout)
        store = tree / ".git" / "nasfs-private" / f"{owner.uid}.git"
        st = os.stat(store)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (owner.uid, 0o700)
        assert all(os.lstat(f).st_uid == owner.uid for f, _, _ in os.walk(store))  # its own git gc may prune it

        # another account: plain git on the shared .git (0755) finds nothing
        for cmd in (["git", "-c", "safe.directory=*", "show", f"{commit}:private/secret.md"],
                    ["git", "-c", "safe.directory=*", "cat-file", "-p", commit],
                    ["git", "-c", "safe.directory=*", "log", "--all", "-p"]):
            run = as_account(other, *cmd, cwd=tree)
            assert b"7731" not in run.stdout + run.stderr, cmd
            if cmd[3] != "log":
                assert run.returncode != 0, cmd
        assert as_account(other, "cat", str(store / "HEAD")).returncode != 0
        # ... and every door of the mount refuses it, saying nothing of what is inside
        for path in (f".at/{commit}/private/secret.md", f".at/{commit[:12]}/private/secret.md",
                     f".nas/deref/private/secret.md@{commit[:12]}#L1-L4", f".nas/deref/private/secret.md@{commit[:12]}",
                     f".nas/diff/HEAD..{commit[:12]}", f".at/{commit}/private/secret.md@outline"):
            run = as_account(other, "cat", str(mnt / path))
            assert run.returncode != 0 and b"7731" not in run.stdout and b"Launch" not in run.stdout, (path, run.stdout)
        run = as_account(other, "ls", str(mnt / ".at" / commit))
        assert run.returncode != 0 and b"Permission denied" in run.stderr

        # the owner reads it through the mount, with git and with nasfs verify
        for path in (f".at/{commit}/private/secret.md", f".nas/deref/private/secret.md@{commit[:12]}#L4"):
            run = as_account(owner, "cat", str(mnt / path))
            assert run.returncode == 0 and b"7731" in run.stdout, (path, run.stderr)
        objects = str(store / "objects")
        shown = as_account(owner, "git", "show", f"{commit}:private/secret.md", cwd=tree,
                           env={"GIT_ALTERNATE_OBJECT_DIRECTORIES": objects})
        assert shown.stdout.decode() == SECRET, shown.stderr
        shown = as_account(owner, "git", f"--git-dir={store}", "show", f"{commit}:private/secret.md")
        assert shown.stdout.decode() == SECRET, shown.stderr
        verified = nasfs_as(owner, tree, "verify", "--node", "box", "--tree", "home", header(read.stdout)["pointer"])
        assert verified.returncode == 0 and verified.stdout.startswith(b"verified "), verified.stderr
        refused = nasfs_as(other, tree, "verify", "--node", "box", "--tree", "home", header(read.stdout)["pointer"])
        assert refused.returncode != 0 and b"7731" not in refused.stdout
        assert not GitTree(tree).in_shared_store(commit)
        # the other account's own read of a public change is a snapshot in .git/objects, as before
        (tree / "public" / "readme.md").write_text("# Readme\n\nhello again\n")
        public = as_account(other, "cat", str(mnt / "public" / "readme.md@outline"))
        shared = commit_of(public.stdout)
        run = as_account(other, "git", "-c", "safe.directory=*", "show", f"{shared}:public/readme.md", cwd=tree)
        assert run.returncode == 0 and b"hello again" in run.stdout
        assert GitTree(tree).in_shared_store(shared)
        assert m.alive()
        # the store is the owner's to clean: without its ref, the owner's git gc removes the snapshot
        full = str(GitTree(tree).resolve(commit).id)
        for cmd in (["update-ref", "-d", f"refs/nasfs/private/{full}"], ["gc", "-q", "--prune=now"]):
            run = as_account(owner, "git", f"--git-dir={store}", *cmd)
            assert run.returncode == 0, (cmd, run.stderr)
        assert not has_object(store, commit)
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def blob_id(data: str) -> str:
    return subprocess.run(["git", "hash-object", "--stdin"], input=data.encode(), capture_output=True,
                          check=True).stdout.decode().strip()


def has_object(git_dir: Path, oid: str) -> bool:
    return subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", oid], capture_output=True).returncode == 0


def blob_anywhere(root: Path, data: str) -> bool:
    """Whether any object store of the repository (shared or private) holds a blob of ``data``."""
    stores = [root / ".git", *sorted((root / ".git" / "nasfs-private").glob("*.git"))]
    return any(has_object(s, blob_id(data)) for s in stores)


def test_no_request_snapshots_a_file_its_reader_may_not_see(tree: Path, accounts) -> None:
    owner, other = accounts
    t = GitTree(tree)
    with pytest.raises(AccessDenied):
        t.working("private/secret.md", caller=other)
    whole = t.snapshot_worktree(other)
    assert whole == str(t.head().id)  # the only change is one it may not see: nothing to record
    assert not blob_anywhere(tree, SECRET)
    mnt = tree.parent / "mnt"
    # no warm-up: the daemon's own `nasfs index` snapshots the private file into its owner's store
    # (rightly, as root), which is no request of the other account's but would race the check below
    m = Mount(tree, mnt, "--allow-other", "--no-warm")
    try:
        (tree / "public" / "readme.md").write_text("# Readme\n\nchanged\n")
        diff = as_account(other, "cat", str(mnt / ".nas" / "diff" / "HEAD.."))
        assert diff.returncode == 0 and b"changed" in diff.stdout and b"secret" not in diff.stdout, diff.stderr
        assert not blob_anywhere(tree, SECRET)
        mine = as_account(owner, "cat", str(mnt / ".nas" / "diff" / "HEAD.."))
        assert b"secret.md" in mine.stdout, mine.stderr
        assert blob_anywhere(tree, SECRET) and not has_object(tree / ".git", blob_id(SECRET))  # the owner's store only
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_a_file_saved_by_rename_while_snapshotted_for_a_reader_is_looked_at_again(tree: Path, accounts,
                                                                                 monkeypatch) -> None:
    """An editor saves by rename: a file replaced between the reader's access
    decision and its read was FileChanged, and the whole snapshot (a diff
    against now, a folder map) refused; the tree is looked at again, and the
    snapshot holds what was saved."""
    from nasfs.repo import snapshots

    _, other = accounts
    readme = tree / "public" / "readme.md"
    readme.write_text("# Readme\n\nfirst save\n")
    opened, saves = snapshots.open_regular, []

    def saved_then_opened(path, root=None):
        if not saves:
            saves.append(path)
            (tree / "public" / ".readme.md.swp").write_text("# Readme\n\nsecond save\n")
            os.rename(tree / "public" / ".readme.md.swp", readme)
        return opened(path, root)

    monkeypatch.setattr(snapshots, "open_regular", saved_then_opened)
    t = GitTree(tree)
    commit = t.snapshot_worktree(other)
    assert saves == [readme]
    shown = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(tree), "show", f"{commit}:public/readme.md"],
                           capture_output=True, check=True)
    assert shown.stdout == b"# Readme\n\nsecond save\n"


def test_the_audience_decides_the_store(tree: Path) -> None:
    git_dir = tree / ".git"
    assert not narrower_than_git(tree, git_dir, ["public/readme.md"])
    assert narrower_than_git(tree, git_dir, ["private/secret.md"])
    assert narrower_than_git(tree, git_dir, ["public/readme.md", "private/secret.md"])
    os.chmod(git_dir, 0o700)  # .git is its owner's alone: so are its snapshots, wherever they go
    assert not narrower_than_git(tree, git_dir, ["private/secret.md"])
    os.chmod(git_dir, 0o755)
    os.chmod(tree / "public" / "readme.md", 0o600)
    assert narrower_than_git(tree, git_dir, ["public/readme.md"])


def test_caches_are_private_after_a_real_read(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    os.chmod(cache, 0o755)  # an existing folder of ours, as wide as nasfs made it before: tightened
    monkeypatch.setenv("NASFS_CACHE_DIR", str(cache))
    mnt = tree.parent / "mnt"
    m = Mount(tree, mnt)
    try:
        assert b"Secret plan" in (mnt / "private" / "secret.md@outline").read_bytes()
        assert b"hello" in (mnt / ".at" / "HEAD" / ".nas" / "search" / "hello").read_bytes()  # writes a tree here
        made = {f.name: stat.S_IMODE(f.lstat().st_mode) for f in cache.iterdir()}  # the daemon's, while it runs
        assert made.keys() >= {"cache.sqlite3", "cache.sqlite3-wal", "cache.sqlite3-shm", "trees"}, made
        assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
        assert made == {name: 0o700 if (cache / name).is_dir() else 0o600 for name in made}, made
    finally:
        assert m.stop() == 0
        shutil.rmtree(cache)


def test_a_cache_folder_of_another_account_is_not_used(accounts, caplog: pytest.LogCaptureFixture) -> None:
    owner, _ = accounts
    theirs = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    try:
        os.chown(theirs, owner.uid, owner.gid)
        os.chmod(theirs, 0o777)
        disk = DiskCache(theirs)
        disk.put("k", b"v")
        assert disk.get("k") is None and not (theirs / "cache.sqlite3").exists()
        assert f"belongs to uid {owner.uid}" in caplog.text and "NASFS_CACHE_DIR" in caplog.text
        assert stat.S_IMODE(os.stat(theirs).st_mode) == 0o777  # left as its owner made it
    finally:
        shutil.rmtree(theirs)


def test_a_root_daemon_writes_a_store_only_where_its_owner_could(tree: Path, accounts) -> None:
    """The store is its owner's: a symlink they plant in it (for the refs, or
    for an object folder) leads root's writes nowhere the owner could not
    write; the snapshot then fails rather than land in root's folder."""
    owner, _ = accounts
    t = GitTree(tree)
    first = t.working("private/secret.md", caller=owner).commit
    store = tree / ".git" / "nasfs-private" / f"{owner.uid}.git"
    assert not t.in_shared_store(first) and (store / "refs" / "nasfs" / "private" / first).exists()
    victim = Path(tempfile.mkdtemp(prefix="nasfs-victim-", dir="/tmp"))  # root's, 0700
    try:
        later = SECRET + "more\n"
        planted = store / "objects" / blob_id(later)[:2]
        for link in (store / "refs" / "nasfs" / "private", planted):
            if link.exists():
                shutil.rmtree(link)
            assert as_account(owner, "ln", "-s", str(victim), str(link)).returncode == 0
        (tree / "private" / "secret.md").write_text(later)
        try:
            GitTree(tree).working("private/secret.md", caller=owner)
        except Exception as exc:  # the owner's own store is broken: their read fails, nothing lands elsewhere
            failed: Exception | None = exc
        else:
            failed = None
        assert list(victim.iterdir()) == []
        assert failed is not None
    finally:
        shutil.rmtree(victim)


def test_a_store_swapped_for_another_accounts_folder_is_not_written(tree: Path, accounts) -> None:
    """A store folder that is not its account's (or is a symlink) takes no snapshot."""
    owner, other = accounts
    GitTree(tree).working("private/secret.md", caller=owner)
    store = tree / ".git" / "nasfs-private" / f"{owner.uid}.git"
    theirs = tree.parent / "theirs.git"
    shutil.move(store, theirs)
    os.symlink(theirs, store)
    (tree / "private" / "secret.md").write_text(SECRET + "again\n")
    with pytest.raises(OSError):
        GitTree(tree).working("private/secret.md", caller=owner)


def test_a_member_removed_from_a_group_is_judged_without_it_at_once(tree: Path, accounts) -> None:
    """The other account reads .git (its own, 0700) and team/ through group g
    only. Removed from g, it may no longer read team/plan.md: a snapshot of
    it must go to a private store from the next question on, not a minute
    later (no memo of groups or answers outlives a change of /etc/group)."""
    owner, other = accounts
    group = f"nsgrp{os.getpid() % 100000}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    try:
        subprocess.run(["usermod", "-aG", group, f"nsoth{os.getpid() % 100000}"], check=True, capture_output=True)
        gid = int(subprocess.run(["getent", "group", group], capture_output=True, text=True).stdout.split(":")[2])
        (tree / "team").mkdir()
        (tree / "team" / "plan.md").write_text("# Plan\n")
        os.chown(tree / "team", owner.uid, gid)
        os.chown(tree / "team" / "plan.md", owner.uid, gid)
        os.chmod(tree / "team", 0o750)
        os.chmod(tree / "team" / "plan.md", 0o640)
        for folder, dirs, files in os.walk(tree / ".git"):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, other.uid, other.gid)
        os.chmod(tree / ".git", 0o700)
        assert not narrower_than_git(tree, tree / ".git", ["team/plan.md"])
        subprocess.run(["gpasswd", "-d", f"nsoth{os.getpid() % 100000}", group], check=True, capture_output=True)
        assert narrower_than_git(tree, tree / ".git", ["team/plan.md"])
    finally:
        subprocess.run(["groupdel", group], capture_output=True)


def test_a_store_naming_another_accounts_store_as_alternate_gains_nothing(tree: Path, accounts) -> None:
    """An account lists another's store in its own store's alternates: a
    snapshot of the other's (since removed) file is still judged by the
    store that really holds it, and refused to the first account."""
    owner, other = accounts  # owner's uid sorts before other's: its store is looked in first
    (tree / "theirs").mkdir(mode=0o700)
    (tree / "theirs" / "note.md").write_text("# Theirs\n\nthe safe code is 4412\n")
    for name in (tree / "theirs", tree / "theirs" / "note.md"):
        os.chown(name, other.uid, other.gid)
    theirs = GitTree(tree).working("theirs/note.md", caller=other).commit
    GitTree(tree).working("private/secret.md", caller=owner)
    stores = tree / ".git" / "nasfs-private"
    alternates = stores / f"{owner.uid}.git" / "objects" / "info" / "alternates"
    with open(alternates, "a") as fh:  # what the owner may write in their own store
        fh.write(f"{stores / f'{other.uid}.git' / 'objects'}\n")
    shutil.rmtree(tree / "theirs")  # gone: its path is missing to anyone
    t = GitTree(tree)
    with pytest.raises(AccessDenied):
        check_commit(t, theirs, owner)
    assert t.private_sources(theirs)[0] == str(stores / f"{other.uid}.git")
    check_commit(GitTree(tree), theirs, other)


def test_a_store_alternate_opens_no_other_repository(tree: Path, accounts) -> None:
    """The owner names a repository they cannot read (root's, 0700) in their
    store's alternates: its commits stay unknown to the mount's core."""
    owner, _ = accounts
    GitTree(tree).working("private/secret.md", caller=owner)
    outside = Path(tempfile.mkdtemp(prefix="nasfs-outside-", dir="/tmp"))
    try:
        (outside / "f.md").write_text("# Root's own\n")
        git(outside, "init", "-q", "-b", "main")
        git(outside, "add", "-A")
        git(outside, "commit", "-q", "-m", "root's")
        theirs = git(outside, "rev-parse", "HEAD").strip()
        alternates = tree / ".git" / "nasfs-private" / f"{owner.uid}.git" / "objects" / "info" / "alternates"
        with open(alternates, "a") as fh:
            fh.write(f"{outside / '.git' / 'objects'}\n")
        nas = Nas(GitTree(tree, node="box", tree="home"))
        with pytest.raises((NotFound, AccessDenied)):
            nas.commit_for(theirs, owner)
    finally:
        shutil.rmtree(outside)


def test_a_cache_folder_symlinked_by_another_account_is_refused(accounts) -> None:
    """Another account makes the cache folder's name (a /tmp name anyone may
    take) a symlink to one of root's folders: nasfs neither tightens that
    folder nor writes into it."""
    owner, _ = accounts
    base = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    target = Path(tempfile.mkdtemp(prefix="nasfs-roots-", dir="/tmp"))
    try:
        os.chmod(base, 0o1777)
        os.chmod(target, 0o755)
        name = base / "nasfs-tiktoken-0"
        assert as_account(owner, "ln", "-s", str(target), str(name)).returncode == 0
        with pytest.raises(OSError):
            private_folder(name)
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o755
    finally:
        shutil.rmtree(base)
        shutil.rmtree(target)


def test_every_door_asks_about_a_private_snapshot_for_its_caller(tree: Path, accounts,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A root server (HTTP, MCP, the read socket's core) answers each caller
    as that caller: the owner's private snapshot is refused to another
    account at a revision (read, raw read, @since, search), by pointer
    (deref, verify) and in a diff; the owner gets it."""
    from nasfs.diffs import diff_response
    from nasfs.http import Door
    from nasfs.pointers import Pointer
    from nasfs.reads import read_chunks
    from nasfs.service import Nas

    owner, other = accounts
    cache = Path(tempfile.mkdtemp(prefix="nasfs-cache-", dir="/tmp"))
    monkeypatch.setenv("NASFS_CACHE_DIR", str(cache))  # search at a revision writes its tree there
    try:
        nas = Nas(GitTree(tree, node="box", tree="home"))
        commit = nas.tree.working("private/secret.md", caller=owner).commit
        assert not nas.tree.in_shared_store(commit)
        door = Door(nas)
        pointer = str(Pointer("box", "home", "private/secret.md", commit, 1, 4))
        asks = {
            "read --at": lambda c: door.read("private/secret.md", at=commit, caller=c),
            "read --at, a public file": lambda c: door.read("public/readme.md", at=commit, caller=c),
            "raw read --at": lambda c: b"".join(read_chunks(nas, "private/secret.md", commit, False, caller=c)),
            "@since": lambda c: nas.read(f"public/readme.md@since=HEAD..{commit}", caller=c),
            "search --at": lambda c: door.search("launch", at=commit, caller=c),
            "deref": lambda c: door.deref(pointer, caller=c),
            "diff": lambda c: door.diff(f"HEAD..{commit}", caller=c),
            "diff to it": lambda c: diff_response(nas, f"{commit}..", None, None, c),
        }
        for name, ask in asks.items():
            with pytest.raises(AccessDenied):
                ask(other)
            assert ask(owner), name  # the owner is answered
        with pytest.raises(AccessDenied):  # a refusal, not "does not verify"
            door.verify(pointer, caller=other)
        assert door.verify(pointer, caller=owner)["verified"] is True
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture()
def team(accounts):
    """A group the other account is in (added, removed after): (its gid, the other account with it)."""
    _, other = accounts
    group = f"nstm{os.getpid() % 100000}"
    subprocess.run(["groupadd", group], check=True, capture_output=True)
    try:
        subprocess.run(["usermod", "-aG", group, str(other)], check=True, capture_output=True)
        gid = int(subprocess.run(["getent", "group", group], capture_output=True, text=True).stdout.split(":")[2])
        yield gid, Caller.of_account(str(other))
    finally:
        subprocess.run(["groupdel", group], capture_output=True)


def test_an_old_private_version_is_read_only_by_those_who_could_read_it_then(tree: Path, accounts, team) -> None:
    """The owner's 0600 file and their 0640 team file are snapshotted (private store), then rewritten
    with public text and made 0644. The 0600 version stays the owner's through every door (it was told
    to every reader of the path now); the team version stays readable by the team member who could
    read it then."""
    from nasfs.http import Door

    owner, _ = accounts
    gid, member = team
    mine, shared = tree / "public" / "plan.md", tree / "public" / "team.md"
    mine.write_text(SECRET)
    shared.write_text("# Team\n\nthe team code is 5150\n")
    for name, mode in ((mine, 0o600), (shared, 0o640)):
        os.chown(name, owner.uid, gid)
        os.chmod(name, mode)
    m = Mount(tree, tree.parent / "mnt", "--allow-other", "--no-warm")
    try:
        mnt = m.mountpoint
        commits = {}
        for name in ("plan.md", "team.md"):
            read = as_account(owner, "cat", str(mnt / "public" / f"{name}@outline"))
            assert read.returncode == 0, read.stderr
            commits[name] = commit_of(read.stdout)
            assert not GitTree(tree).in_shared_store(commits[name])
        for name in (mine, shared):
            name.write_text("# Public\n\nnothing to hide\n")
            os.chmod(name, 0o644)
        old = commits["plan.md"]
        for path in (f".at/{old}/public/plan.md", f".nas/deref/public/plan.md@{old[:12]}#L1-L4",
                     f".at/{old}/public/plan.md@outline", f".nas/diff/HEAD..{old[:12]}"):
            run = as_account(member, "cat", str(mnt / path))
            assert run.returncode != 0 and b"7731" not in run.stdout and b"Launch" not in run.stdout, (path, run.stdout)
            run = as_account(owner, "cat", str(mnt / path))
            assert run.returncode == 0 and b"Launch" in run.stdout, (path, run.stderr)
        cli = nasfs_as(member, tree, "read", "--at", old, "public/plan.md")  # its own process reads no store of the owner's
        assert cli.returncode != 0 and b"7731" not in cli.stdout, cli.stdout
        door = Door(Nas(GitTree(tree, node="box", tree="home")))  # a root server (HTTP, MCP) answering the member
        with pytest.raises(AccessDenied, match="could not when it was recorded"):
            door.read("public/plan.md", at=old, caller=member)
        assert "Launch" in json.dumps(door.read("public/plan.md", at=old, caller=owner))
        assert b"nothing to hide" in as_account(member, "cat", str(mnt / "public" / "plan.md")).stdout  # now public
        run = as_account(member, "cat", str(mnt / ".at" / commits["team.md"] / "public" / "team.md"))
        assert run.returncode == 0 and b"5150" in run.stdout, run.stderr  # the member could read it then
        assert m.alive()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_a_private_snapshot_keeps_each_trail_taken_and_one_that_kept_none_is_its_owners(tree: Path, accounts,
                                                                                       team) -> None:
    """A mode changed between the trail taken before a file is read and the one after keeps both (a
    reader must pass both); a snapshot whose message keeps no trail (as every one made before trails
    were kept), or a line that is not one, is read by its store's owner only."""
    from nasfs.access import may_have_read, trail_of
    from nasfs.repo.private_stores import TRAILS, read_trails
    from nasfs.repo.snapshots import _Trails

    owner, _ = accounts
    gid, member = team
    plan = tree / "public" / "plan.md"
    plan.write_text("# Team\n\nthe team code is 5150\n")
    os.chown(plan, owner.uid, gid)
    os.chmod(plan, 0o640)
    trails = _Trails(tree, private=True)
    trails.take("public/plan.md")
    os.chmod(plan, 0o600)
    trails.take("public/plan.md")
    assert len(trails.taken["public/plan.md"]) == 2
    assert not may_have_read(member, trails.taken["public/plan.md"]) and may_have_read(owner, trails.taken["public/plan.md"])
    assert trail_of(tree, "public/nothing.md") is None and trail_of(tree, "public") is None
    os.symlink("public", tree / "linked")
    assert trail_of(tree, "linked/plan.md") is None  # no link followed on the way

    os.chmod(plan, 0o640)
    t = GitTree(tree)
    commit = t.working("public/plan.md", caller=owner).commit
    sources = t.private_sources(commit)
    assert sources.paths == ("public/plan.md",) and may_have_read(member, sources.trails["public/plan.md"])
    check_commit(t, commit, member)
    store = pygit2.Repository(sources.store)
    made = t.resolve(commit)
    for message in ([line for line in made.message.splitlines(keepends=True) if not line.startswith(TRAILS)],
                    [made.message.replace(TRAILS, TRAILS + "[")]):
        raw = store.create_commit_string(made.author, made.committer, "".join(message), made.tree_id, made.parent_ids)
        oid = store.odb.write(pygit2.GIT_OBJECT_COMMIT, raw)
        assert read_trails("".join(message)) == {}
        fresh = GitTree(tree)
        with pytest.raises(AccessDenied):
            check_commit(fresh, str(oid), member)
        check_commit(fresh, str(oid), owner)


def _git_in_store(caller: Caller, store: Path, *args: str, given: bytes = b"") -> str:
    """Plain git run by that account in its own store (what it may write there)."""
    groups = ",".join(str(g) for g in sorted(caller.groups | {caller.gid}))
    run = subprocess.run(["setpriv", f"--reuid={caller.uid}", f"--regid={caller.gid}", f"--groups={groups}", "git",
                          f"--git-dir={store}", *args], input=given, capture_output=True, timeout=60,
                         env=dict(os.environ, HOME="/tmp"))
    assert run.returncode == 0, run.stderr
    return run.stdout.decode().strip()


def test_a_commit_an_owner_writes_in_their_store_naming_another_stores_objects_is_refused(tree: Path, accounts) -> None:
    """The other account writes commits in its own store (git hash-object, as it may): one whose
    tree puts the owner's private blob (its id is the hash of a guess, or of a SWHID seen) under the
    other account's own file, and one whose parent is the owner's private snapshot with a file of
    its own changed. Its tree holds the owner's secret, and the files it changes are its own:
    neither is read by anyone, root included: a commit is read through its own objects (its store's
    and .git/objects), where the owner's blob is not found; the one with a foreign parent is
    refused to all but root outright (private_stores._recorded)."""
    from nasfs.http import Door

    owner, other = accounts
    (tree / "theirs").mkdir(mode=0o700)
    (tree / "theirs" / "note.md").write_text("# Theirs\n")
    for name in (tree / "theirs", tree / "theirs" / "note.md"):
        os.chown(name, other.uid, other.gid)
    t = GitTree(tree)
    mine = t.working("theirs/note.md", caller=other).commit  # its store, made by the daemon
    victim = t.working("private/secret.md", caller=owner).commit
    store = tree / ".git" / "nasfs-private" / f"{other.uid}.git"
    head, at_victim = t.head(), t.resolve(victim).tree

    def tree_of(entries: str) -> str:
        return _git_in_store(other, store, "mktree", "--missing", given=entries.encode())

    def commit_of_tree(top: str, parent: str) -> str:
        raw = f"tree {top}\nparent {parent}\nauthor x <x@x> 0 +0000\ncommitter x <x@x> 0 +0000\n\nnasfs snapshot of x\n"
        return _git_in_store(other, store, "hash-object", "-t", "commit", "-w", "--literally", "--stdin", given=raw.encode())

    theirs = tree_of(f"100644 blob {blob_id(SECRET)}\tnote.md\n")
    borrowed_blob = commit_of_tree(tree_of(f"040000 tree {head.tree['public'].id}\tpublic\n040000 tree {theirs}\ttheirs\n"),
                                   str(head.id))
    own_edit = tree_of(f"100644 blob {blob_id('# Theirs, again')}\tnote.md\n")
    borrowed_parent = commit_of_tree(tree_of(f"040000 tree {at_victim['public'].id}\tpublic\n"
                                             f"040000 tree {at_victim['private'].id}\tprivate\n040000 tree {own_edit}\ttheirs\n"),
                                     victim)
    door = Door(Nas(GitTree(tree, node="box", tree="home")))
    for forged, path in ((borrowed_blob, "theirs/note.md"), (borrowed_parent, "private/secret.md")):
        for who in (other, owner):
            with pytest.raises((AccessDenied, NotFound)):
                door.read(path, at=forged, caller=who)
        with pytest.raises(NotFound, match="not among its own objects|does not exist"):  # not even root: git finds no such blob there
            door.read(path, at=forged, caller=Caller.root())
    with pytest.raises(AccessDenied):  # refused before any object is read
        door.read("private/secret.md", at=borrowed_parent, caller=owner)
    assert "Theirs" in json.dumps(door.read("theirs/note.md", at=mine, caller=other))  # its own snapshot, as before
    assert "7731" in json.dumps(door.read("private/secret.md", at=victim, caller=owner))


@pytest.mark.parametrize("hashed", ["read", "known"])
@pytest.mark.parametrize("mode", [0o644, 0o640])
def test_a_version_read_before_its_file_was_opened_is_recorded_with_the_modes_it_was_read_under(
        tree: Path, accounts, team, monkeypatch: pytest.MonkeyPatch, hashed: str, mode: int) -> None:
    """The owner's 0600 file is read (or its blob id known by its stat, the blob already in the
    store) for the owner's read; before its snapshot is written, the owner writes public text to it
    and opens it to the team (0640) or to everyone (0644). The snapshot of the version read must
    not take the modes of the one written since (the team member would read the secret through
    .at; at 0644 it went to .git/objects, read by everyone with plain git): the file is read again."""
    from nasfs.repo import hashes
    from nasfs.repo.hashes import WorkingHashes

    owner, _ = accounts
    gid, member = team
    monkeypatch.setattr(hashes, "SETTLED_NS", -1)  # a blob id is known by stat at once, not two seconds on
    plan = tree / "public" / "plan.md"
    plan.write_text(SECRET)
    os.chown(plan, owner.uid, gid)
    os.chmod(plan, 0o600)
    t = GitTree(tree, node="box", tree="home")
    if hashed == "known":
        old = t.working("public/plan.md", caller=owner).commit  # the blob is in the owner's store, its id known by stat
        with pytest.raises(AccessDenied):
            check_commit(t, old, member)
    hashing, done = WorkingHashes._hash, []

    def then_published(self, real, st):
        found = hashing(self, real, st)
        if not done and real == plan:
            done.append(found[1] is not None)
            with open(plan, "r+") as fh:  # in place: the same inode the owner's decision allowed
                fh.write("# Public\n\nnothing to hide\n")
                fh.truncate()
            os.chmod(plan, mode)
        return found

    monkeypatch.setattr(WorkingHashes, "_hash", then_published)
    content = Nas(t).content("public/plan.md", caller=owner)
    assert done == [hashed == "read"]
    if b"7731" in t.at(content.commit, "public/plan.md").read():
        with pytest.raises(AccessDenied):
            check_commit(t, content.commit, member)
    assert not has_object(tree / ".git", blob_id(SECRET))
    assert b"nothing to hide" in content.read()  # read again: the version there now, for the team too
    check_commit(t, content.commit, member)


@pytest.mark.parametrize("change", ["closed", "closed and opened again"])
def test_a_file_chmodded_and_rewritten_while_the_working_tree_is_snapshotted_is_looked_at_again(
        tree: Path, accounts, team, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """A whole-tree snapshot (the team member's diff against now, a folder map) chooses its store
    and takes each file's trail before it reads the file. The owner makes their team file 0600 and writes a secret
    into it in place just before it is read: it went to .git/objects when the store was chosen on the
    modes before (0644), or, made 0640 again with other text before its trail after the read, kept
    a trail that let the team read the secret. The tree is looked at again (errors.settled)."""
    from nasfs.repo import snapshots

    owner, _ = accounts
    gid, member = team
    plan = tree / "public" / "team.md"
    plan.write_text("# Team\n\nthe agenda\n")
    os.chown(plan, owner.uid, gid)
    os.chmod(plan, 0o644 if change == "closed" else 0o640)
    opened, trailed, done = snapshots.open_regular, snapshots.trail_of, []

    def rewrite(text: str, mode: int) -> None:
        os.chmod(plan, mode)
        with open(plan, "r+") as fh:  # in place: the inode the decision allowed
            fh.write(text)
            fh.truncate()

    def closed_then_opened(path, root=None):
        if path == plan and not done:
            done.append("closed")
            rewrite(SECRET, 0o600)
        return opened(path, root)

    def opened_again(root, rel):
        if rel == "public/team.md" and done == ["closed"] and change != "closed":
            done.append("opened")
            rewrite("# Team\n\nthe agenda, again\n", 0o640)
        return trailed(root, rel)

    monkeypatch.setattr(snapshots, "open_regular", closed_then_opened)
    monkeypatch.setattr(snapshots, "trail_of", opened_again)
    t = GitTree(tree)
    commit = t.snapshot_worktree(member)  # the member's diff against now: the files it may read
    assert done[0] == "closed"
    assert not has_object(tree / ".git", blob_id(SECRET))
    recorded = t.at(commit, "public/team.md").read() if t.exists("public/team.md", commit) else b""
    if b"7731" in recorded:
        with pytest.raises(AccessDenied):
            check_commit(t, commit, member)
    assert recorded == b""  # looked at again: 0600 now, not the member's to record


def test_a_snapshots_trail_is_read_from_its_last_line_and_a_malformed_one_keeps_none(tree: Path, accounts,
                                                                                     team) -> None:
    """The message names the file (its first line): a name holding a line that starts like the
    trail's hid the real trail, the last line, and refused the team its file. A line its store's
    owner wrote that is not a trail (nested past the parser's depth, a number past any int, a step
    that is not four integers) keeps none and raises nothing (an exception in a FUSE handler)."""
    from nasfs.repo.private_stores import TRAILS, read_trails

    owner, _ = accounts
    gid, member = team
    named = tree / "public" / f"x\n{TRAILS}{{}}"
    named.write_text("# Team\n\nthe team code is 5150\n")
    os.chown(named, owner.uid, gid)
    os.chmod(named, 0o640)
    t = GitTree(tree)
    commit = t.working(f"public/x\n{TRAILS}{{}}", caller=owner).commit
    assert not t.in_shared_store(commit)
    check_commit(t, commit, member)
    for line in ("[" * 100000, '{"p": [[[1e999, 0, 0, 0]]]}', '{"p": [["7777"]]}', '{"p": [[[1, 2, 3]]]}',
                 '{"p": [[[true, 0, 420, 4]]]}', '{"p": 5}', "[]", "{"):
        assert read_trails(f"nasfs snapshot of p\n\n{TRAILS}{line}\n") == {}, line
    assert read_trails(f"nasfs snapshot of p\n\n{TRAILS}{{\"p\": [[[1, 2, 420, 4]]]}}\n") == {"p": (((1, 2, 420, 4),),)}


@pytest.mark.parametrize("hashed", ["read", "known"])
def test_a_version_read_in_a_closed_folder_is_not_recorded_once_the_folder_is_opened(
        tree: Path, accounts, monkeypatch: pytest.MonkeyPatch, hashed: str) -> None:
    """The owner's 0644 file in their 0700 folder is read for the owner's view; before its snapshot
    is written, the owner writes public text to it in place and opens the folder (0755). The file's
    own inode, owner, group and mode are as they were, but the folder's are not: the version read
    behind the closed folder must not go to .git/objects, where everyone reads it with plain git."""
    from nasfs.repo import hashes
    from nasfs.repo.hashes import WorkingHashes

    owner, _ = accounts
    monkeypatch.setattr(hashes, "SETTLED_NS", -1)  # a blob id is known by stat at once
    secret = tree / "private" / "secret.md"
    t = GitTree(tree, node="box", tree="home")
    if hashed == "known":
        t.working("private/secret.md", caller=owner)  # the blob in the owner's store, its id known by stat
    hashing, done = WorkingHashes._hash, []

    def then_opened(self, real, st):
        found = hashing(self, real, st)
        if not done and real == secret:
            done.append(found[1] is not None)
            with open(secret, "r+") as fh:  # in place: same inode, owner, group and mode
                fh.write("# Public\n\nnothing to hide\n")
                fh.truncate()
            os.chmod(tree / "private", 0o755)
        return found

    monkeypatch.setattr(WorkingHashes, "_hash", then_opened)
    content = Nas(t).content("private/secret.md", caller=owner)
    assert done == [hashed == "read"]
    assert not has_object(tree / ".git", blob_id(SECRET))
    assert b"nothing to hide" in content.read()  # read again: the version there now


def test_a_secret_written_in_a_folder_closed_while_the_working_tree_is_snapshotted_is_looked_at_again(
        tree: Path, accounts, team, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-tree snapshot chooses its store before it reads its files. The owner closes the
    folder of their 0644 file (0700) and writes a secret into the file in place just before it is
    read: the file's inode, owner, group and mode are unchanged, its folder's are not; the secret
    went to .git/objects, chosen on the open folder. The tree is looked at again."""
    from nasfs.repo import snapshots

    owner, _ = accounts
    plan = tree / "public" / "team.md"
    plan.write_text("# Team\n\nthe agenda\n")
    os.chown(plan, owner.uid, owner.gid)
    os.chmod(plan, 0o644)
    opened, done = snapshots.open_regular, []

    def closed_then_written(path, root=None):
        if path == plan and not done:
            done.append("closed")
            os.chmod(tree / "public", 0o700)
            with open(plan, "r+") as fh:  # in place: the inode the decision allowed
                fh.write(SECRET)
                fh.truncate()
        return opened(path, root)

    monkeypatch.setattr(snapshots, "open_regular", closed_then_written)
    t = GitTree(tree)
    commit = t.snapshot_worktree(keep=lambda path: path == "public/team.md")  # the team file alone
    assert done == ["closed"]
    assert not has_object(tree / ".git", blob_id(SECRET))
    assert t.at(commit, "public/team.md").read() == SECRET.encode()  # looked at again: in the owner's store
    assert not t.in_shared_store(commit)


def test_a_file_rewritten_in_place_while_the_working_tree_is_snapshotted_is_recorded_as_one_version(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer rewrites a file in place (its owner, group and modes as they were) while a whole-tree
    snapshot reads it: the snapshot records one version's bytes, never a version's start joined to the
    next one's end, which no one wrote."""
    import io

    from nasfs.repo import snapshots

    plan = tree / "public" / "notes.md"
    first, second = "A" * 64 + "\n", "B" * 64 + "\n"
    plan.write_text(first)
    opened, done = snapshots.open_regular, []

    class Rewritten(io.RawIOBase):
        """The file, rewritten in place once its first bytes are read."""

        def __init__(self, fh) -> None:
            self.fh = fh

        def fileno(self) -> int:
            return self.fh.fileno()

        def readable(self) -> bool:
            return True

        def tell(self) -> int:
            return os.lseek(self.fh.fileno(), 0, os.SEEK_CUR)

        def readinto(self, buffer) -> int:
            chunk = os.read(self.fh.fileno(), 8 if not done else len(buffer))  # no buffer of old bytes
            got = len(chunk)
            buffer[:got] = chunk
            if not done:
                done.append("rewritten")
                with open(plan, "r+") as fh:
                    fh.write(second)
            return got

        def close(self) -> None:
            self.fh.close()
            super().close()

    def torn(path, root=None):
        fh = opened(path, root)
        return Rewritten(fh) if path == plan and not done else fh

    monkeypatch.setattr(snapshots, "open_regular", torn)
    t = GitTree(tree)
    commit = t.snapshot_worktree(keep=lambda path: path == "public/notes.md")
    assert done == ["rewritten"]
    assert t.at(commit, "public/notes.md").read() in (first.encode(), second.encode())
