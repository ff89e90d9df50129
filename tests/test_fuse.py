"""The mount, read and written with real programs through real FUSE."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
import threading
from pathlib import Path

import pytest

from nasfs.fuse.mount import mount_at
from nasfs.repo import GitTree
from nasfs.service import Nas

from .conftest import git, header
from .mounts import Mount

ACME = "notes/customer-acme.md"
VIEWS = [
    f"{ACME}@outline", f"{ACME}@L11-L13", f"{ACME}@section=Renewal", f"{ACME}@200", f"{ACME}@outline@80",
    f"{ACME}@outline.json", f"{ACME}@since=v1", "code/billing.py@outline", "code/billing.py@section=Invoice.add",
    "config/deploy.yaml@outline", "config/agent.json@section=model", "data/shipments.csv@outline", "README.txt@50",
]


def cat(path: Path) -> bytes:
    return subprocess.run(["cat", str(path)], check=True, capture_output=True).stdout


def cat_fails(path: Path) -> str:
    done = subprocess.run(["cat", str(path)], capture_output=True, text=True)
    assert done.returncode != 0, f"{path} was served"
    return done.stderr


def real_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)


def test_real_files_are_byte_identical(mounted: Mount, home: Path) -> None:
    for rel in real_files(home) + [".git/HEAD", ".git/config"]:
        assert cat(mounted.mountpoint / rel) == (home / rel).read_bytes(), rel


def test_views_equal_the_cli_and_stay_out_of_listings(mounted: Mount, home: Path) -> None:
    nas = Nas(GitTree(home, node="box", tree="home"))
    mnt = mounted.mountpoint
    for spec in VIEWS:
        got = cat(mnt / spec)
        cli = subprocess.run([sys.executable, "-m", "nasfs", "read", "--repo", str(home), "--node", "box", "--tree", "home", spec],
                             check=True, capture_output=True).stdout
        assert got == cli, spec
        path, view = nas.split(spec)
        want = nas.read_view(path, view)
        assert got == (want.envelope_bytes() if view.json else want.text), spec
        assert os.stat(mnt / spec).st_size == len(got), spec  # true st_size, as Samba needs
    found = subprocess.run(["find", "."], cwd=mnt, check=True, capture_output=True, text=True).stdout.split()
    native = subprocess.run(["find", "."], cwd=home, check=True, capture_output=True, text=True).stdout.split()
    assert sorted(found) == sorted(native)
    assert not any("@" in name for name in os.listdir(mnt / "notes"))
    assert ".at" not in os.listdir(mnt) and ".nas" not in os.listdir(mnt)


def test_view_reads_leave_the_source_and_git_status_alone(mounted: Mount, home: Path) -> None:
    before_files = real_files(home)
    before_status = git(home, "status", "--porcelain", "--ignored")
    for _ in range(3):
        for spec in VIEWS:
            cat(mounted.mountpoint / spec)
    assert real_files(home) == before_files
    assert git(home, "status", "--porcelain", "--ignored") == before_status
    assert subprocess.run(["git", "status", "--porcelain"], cwd=mounted.mountpoint, capture_output=True, text=True, check=True).stdout == ""


def test_tools_work_on_views(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    sed = subprocess.run(["sed", "-n", "2p", str(mnt / f"{ACME}@outline")], capture_output=True, text=True, check=True).stdout
    assert sed == "1-38 # Acme Corp\n"
    grep = subprocess.run(["grep", "-c", "Renewal", str(mnt / f"{ACME}@outline")], capture_output=True, text=True).stdout
    assert grep.strip() == "1"
    with open(mnt / f"{ACME}@section=Contacts") as fh:
        assert "Priya Raman" in fh.read()
    assert os.getxattr(mnt / f"{ACME}@outline", "user.nas.view") == b"outline"
    tokens = int(os.getxattr(mnt / f"{ACME}@outline", "user.nas.tokens"))
    assert tokens == int(header(cat(mnt / f"{ACME}@outline"))["tokens"])
    assert os.getxattr(mnt / f"{ACME}@L1-L2", "user.nas.pointer").decode().endswith("#L1-L2")
    assert set(os.listxattr(mnt / f"{ACME}@outline")) >= {"user.nas.view", "user.nas.generated", "user.nas.truncated"}


def test_edits_through_the_mount_land_and_show_in_views(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    branch = git(home, "rev-parse", "HEAD")
    cat(mnt / f"{ACME}@outline")
    with open(mnt / ACME, "a") as fh:
        fh.write("\n## Pricing\n\nGold tier.\n")
    assert (home / ACME).read_text().endswith("Gold tier.\n")
    outline = cat(mnt / f"{ACME}@outline").decode()
    assert "\n40-42 ## Pricing\n" in outline
    ptr = header(cat(mnt / f"{ACME}@section=Pricing"))["pointer"]
    commit = ptr.split("@")[1].split("#")[0]
    assert "Gold tier." in git(home, "show", f"{commit}:{ACME}")
    assert git(home, "rev-parse", "HEAD") == branch  # snapshot only; the branch did not move
    # an editor's write-to-temp-then-rename, through the mount
    subprocess.run(["sed", "-i", "s/Gold tier./Platinum tier./", str(mnt / ACME)], check=True)
    assert "Platinum tier." in (home / ACME).read_text()
    assert "Platinum tier." in cat(mnt / f"{ACME}@section=Pricing").decode()
    # changed beside the mount: the next view read follows
    (home / "README.txt").write_text("# Replaced\n\nbeside the mount\n")
    assert "beside the mount" in cat(mnt / "README.txt@outline").decode()


def test_file_operations_pass_through(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    (mnt / "new").mkdir()
    (mnt / "new" / "a.txt").write_text("alpha\n")
    os.rename(mnt / "new" / "a.txt", mnt / "new" / "b.txt")
    os.symlink("b.txt", mnt / "new" / "link")
    os.link(mnt / "new" / "b.txt", mnt / "new" / "hard")
    os.truncate(mnt / "new" / "hard", 3)
    os.chmod(mnt / "new" / "b.txt", 0o600)
    os.utime(mnt / "new" / "b.txt", ns=(1_000_000_000, 2_000_000_000))
    assert (home / "new" / "b.txt").read_text() == "alp"
    assert os.readlink(mnt / "new" / "link") == "b.txt"
    st = os.stat(home / "new" / "b.txt")
    assert st.st_mode & 0o777 == 0o600 and st.st_mtime_ns == 2_000_000_000
    os.setxattr(mnt / "new" / "b.txt", "user.tag", b"x")
    assert os.getxattr(home / "new" / "b.txt", "user.tag") == b"x"
    os.unlink(mnt / "new" / "link")
    os.unlink(mnt / "new" / "hard")
    os.unlink(mnt / "new" / "b.txt")
    os.rmdir(mnt / "new")
    assert not (home / "new").exists()
    assert os.statvfs(mnt).f_blocks > 0
    ino1 = os.stat(mnt / ACME).st_ino
    assert os.stat(mnt / ACME).st_ino == ino1  # stable inode numbers


def test_history_at_revisions(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    assert set(os.listdir(mnt / ".at")) >= {"main", "v1"}
    old = git(home, "show", f"v1:{ACME}").encode()
    assert cat(mnt / ".at" / "v1" / ACME) == old
    first = git(home, "rev-parse", "v1").strip()
    assert cat(mnt / ".at" / first[:7] / ACME) == old
    assert sorted(os.listdir(mnt / ".at" / "v1" / "notes")) == ["customer-acme.md", "meeting-2026-11-12.md"]
    section = cat(mnt / ".at" / "v1" / f"{ACME}@section=Renewal").decode()
    assert "then +3%" not in section and header(section.encode())["pointer"].split("@")[1].startswith(first[:12])
    with pytest.raises(OSError) as err:
        open(mnt / ".at" / "v1" / ACME, "w")
    assert err.value.errno in (errno.EROFS, errno.EACCES)
    cat_fails(mnt / ".at" / "nosuchrev" / ACME)
    assert "unknown revision" in cat(mnt / ".nas" / "errors").decode()
    # '..' inside history is resolved by the kernel and never reaches outside the tree through nasfs
    assert cat(mnt / ".at" / "v1" / "notes" / ".." / ".." / "v1" / ACME) == old
    cat_fails(mnt / ".at" / "..%2F..%2F.." / ACME)


def test_pointers_from_headers_verify_with_git_and_deref(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    for spec in (f"{ACME}@section=Renewal", f"{ACME}@outline", "code/billing.py@section=Invoice"):
        text = cat(mnt / spec)
        ptr = header(text)["pointer"]
        short = ptr.split("/", 4)[4]  # drop nas://box/home/
        path, rest = short.rsplit("@", 1)
        commit, lines = rest.split("#")
        a, b = (int(x) for x in lines[1:].split("-L"))
        shown = git(home, "show", f"{commit}:{path}").encode().splitlines(keepends=True)[a - 1 : b]
        deref = cat(mnt / ".nas" / "deref" / short)
        assert deref == b"".join(shown)
        subprocess.run([sys.executable, "-m", "nasfs", "verify", "--repo", str(home), "--node", "box", "--tree", "home", ptr],
                       check=True, capture_output=True)


def test_side_directory(mounted: Mount) -> None:
    mnt = mounted.mountpoint
    help_text = cat(mnt / ".nas" / "HELP").decode()
    assert "cat notes.md@outline" in help_text and ".nas/search/" in help_text and "glob:" in help_text
    cat(mnt / f"{ACME}@outline")
    stats = cat(mnt / ".nas" / "stats").decode()
    assert "view.outline=1" in stats and "tokens_saved=" in stats
    assert cat(mnt / ".nas" / "status") == b"idle\n" and "status" in os.listdir(mnt / ".nas")  # long work: none now
    cat_fails(mnt / f"{ACME}@section=Nope")
    errors = cat(mnt / ".nas" / "errors").decode()
    assert "no section 'Nope'" in errors and "Acme Corp.Renewal" in errors


BAD = [
    f"{ACME}@bogus", f"{ACME}@L0", f"{ACME}@L9-L3", f"{ACME}@L1-L999999999", f"{ACME}@section=Nope",
    f"{ACME}@since=nosuchrev", "missing.md@outline", "notes@L1",
]


def test_bad_input_through_the_mount(mounted: Mount, home: Path, tmp_path: Path) -> None:
    mnt = mounted.mountpoint
    for spec in BAD:
        assert "No such file" in cat_fails(mnt / spec), spec
    errors = cat(mnt / ".nas" / "errors").decode()
    for reason in ("unknown view", "start at 1", "ends before", "past the end", "no section", "unknown revision"):
        assert reason in errors, reason
    # writes to virtual paths
    for target in (f"{ACME}@outline", ".nas/HELP"):
        with pytest.raises(OSError) as err:
            open(mnt / target, "w")
        assert err.value.errno in (errno.EROFS, errno.EACCES)
    with pytest.raises(OSError) as err:
        open(mnt / f"{ACME}@L2-L3", "x")  # creating a file on a view's name
    assert err.value.errno in (errno.EROFS, errno.EEXIST, errno.EACCES)
    with pytest.raises(OSError) as err:
        os.stat(mnt / ("x" * 256))
    assert err.value.errno == errno.ENAMETOOLONG
    # a symlink that leaves the tree: shown as a link, its views refused
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    os.symlink(outside, home / "escape.txt")
    assert os.readlink(mnt / "escape.txt") == str(outside)
    cat_fails(mnt / "escape.txt@outline")
    assert "outside the tree" in cat(mnt / ".nas" / "errors").decode()
    # binary and empty files
    (home / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    assert b"binary" in cat(mnt / "img.png@outline")
    cat_fails(mnt / "img.png@L1")
    (home / "empty.md").write_bytes(b"")
    assert header(cat(mnt / "empty.md@outline"))["pointer"] == "none"
    assert mounted.alive()


def test_file_deleted_while_open(mounted: Mount) -> None:
    mnt = mounted.mountpoint
    (mnt / "doomed.txt").write_text("still here\n")
    with open(mnt / "doomed.txt") as fh:
        os.unlink(mnt / "doomed.txt")
        assert fh.read() == "still here\n"
        assert os.fstat(fh.fileno()).st_size == 11
    assert not (mnt / "doomed.txt").exists()
    (mnt / "doomed.txt").write_text("new file\n")
    assert (mnt / "doomed.txt").read_text() == "new file\n"


def test_crash_in_view_code_does_not_take_the_mount_down(mounted: Mount) -> None:
    mnt = mounted.mountpoint
    os.setxattr(mnt / ".nas", "user.nas.fault", b"1")
    with pytest.raises(OSError) as err:
        (mnt / f"{ACME}@section=Contacts").read_bytes()
    assert err.value.errno == errno.EIO
    assert mounted.alive()
    assert b"Priya" in cat(mnt / f"{ACME}@section=Contacts")
    assert "internal_errors=1" in cat(mnt / ".nas" / "stats").decode()
    assert "injected fault" in mounted.log.read_text()


def test_concurrent_readers_and_a_writer(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    expected = {spec: cat(mnt / spec) for spec in VIEWS if "since" not in spec}
    raw = {rel: (home / rel).read_bytes() for rel in real_files(home)}
    failures: list[str] = []
    stop = threading.Event()

    def reader(n: int) -> None:
        specs = list(expected)
        for i in range(40):
            spec = specs[(n + i) % len(specs)]
            try:
                got = (mnt / spec).read_bytes()
                if got != expected[spec]:
                    failures.append(f"{spec}: wrong bytes")
                rel = list(raw)[(n + i) % len(raw)]
                if (mnt / rel).read_bytes() != raw[rel]:
                    failures.append(f"{rel}: wrong bytes")
            except OSError as exc:
                failures.append(f"{spec}: {exc}")

    def writer() -> None:
        i = 0
        while not stop.is_set():
            (mnt / "scratch.md").write_text(f"# Scratch {i}\n\nline\n")
            body = (mnt / "scratch.md@outline").read_text()
            if f"# Scratch {i}\n" not in body:  # a file this small is served whole by @outline
                failures.append(f"scratch {i}: {body!r}")
            i += 1

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
    w = threading.Thread(target=writer)
    w.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    assert failures == []
    assert mounted.alive()


def test_autocommit_commits_on_close(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt2", "--autocommit")
    try:
        before = git(home, "rev-parse", "HEAD").strip()
        with open(m.mountpoint / "notes" / "todo.md", "w") as fh:
            fh.write("# Todo\n\n- renew Acme\n")
        log = git(home, "log", "-1", "--format=%H %P %an %s")
        commit, parent, author, *subject = log.split()
        assert parent == before and author == "nasfs" and " ".join(subject) == "nasfs: update notes/todo.md"
        assert git(home, "status", "--porcelain") == ""
        ptr = header(cat(m.mountpoint / "notes" / "todo.md@outline"))["pointer"]
        assert commit.startswith(ptr.split("@")[1][:12])  # the pointer names the autocommit
        os.unlink(m.mountpoint / "notes" / "todo.md")
        assert "remove notes/todo.md" in git(home, "log", "-1", "--format=%s")
        assert git(home, "status", "--porcelain") == ""
    finally:
        assert m.stop() == 0


def test_lifecycle_signals_refusals_and_stale_mounts(home: Path, tmp_path: Path) -> None:
    nasfs = [sys.executable, "-m", "nasfs"]
    not_git = tmp_path / "plain"
    not_git.mkdir()
    (tmp_path / "mp").mkdir()
    done = subprocess.run([*nasfs, "mount", str(not_git), str(tmp_path / "mp")], capture_output=True, text=True)
    assert done.returncode == 2 and "not inside a git work tree" in done.stderr
    m = Mount(home, tmp_path / "mnt3")
    busy = subprocess.run([*nasfs, "mount", str(home), str(m.mountpoint)], capture_output=True, text=True)
    assert busy.returncode == 2 and "already a nasfs mount" in busy.stderr
    status = subprocess.run([*nasfs, "status", str(m.mountpoint)], capture_output=True, text=True)
    assert str(home) in status.stdout and "answering" in status.stdout
    m.proc.send_signal(signal.SIGTERM)
    assert m.proc.wait(timeout=15) == 0 and mount_at(str(m.mountpoint)) is None
    # a crash leaves a stale mount: detected, explained, cleared
    m = Mount(home, tmp_path / "mnt4")
    m.proc.kill()
    m.proc.wait()
    assert mount_at(str(m.mountpoint)) is not None
    again = subprocess.run([*nasfs, "mount", str(home), str(m.mountpoint)], capture_output=True, text=True)
    assert again.returncode == 2 and "stale" in again.stderr
    subprocess.run([*nasfs, "umount", str(m.mountpoint)], check=True)
    assert mount_at(str(m.mountpoint)) is None
    # daemon mode: returns once the mount answers
    daemon = subprocess.run([*nasfs, "mount", str(home), str(tmp_path / "mp")], capture_output=True, text=True, timeout=60)
    assert daemon.returncode == 0, daemon.stderr
    assert (tmp_path / "mp" / "README.txt").exists()
    subprocess.run([*nasfs, "umount", str(tmp_path / "mp")], check=True)
    assert mount_at(str(tmp_path / "mp")) is None


def test_core_bad_input_rows_through_the_mount_match_the_cli(mounted: Mount, home: Path) -> None:
    """Each row of the core's bad-input list, read with cat, answers as `nasfs read` does."""
    (home / "latin.txt").write_bytes(b"caf\xe9 au lait\nsecond\n")
    (home / "broken.json").write_text('{"a": 1,\n "b": \n')
    (home / "empty.md").write_bytes(b"")
    (home / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree")
    specs = ["latin.txt@outline", "latin.txt@L1", "broken.json@outline", "data/shipments.csv@outline",
             "empty.md@outline", "crlf.txt@L2-L3", "crlf.txt@outline@0", f"{ACME}@{10**12}",
             f"{ACME}@L1-L999999999", f"{ACME}@section=Nope", "notes@outline", f"{ACME}@since=nosuch"]
    for spec in specs:
        via_cat = subprocess.run(["cat", str(mounted.mountpoint / spec)], capture_output=True)
        via_cli = subprocess.run([sys.executable, "-m", "nasfs", "read", "--repo", str(home), "--node", "box",
                                  "--tree", "home", spec], capture_output=True)
        assert (via_cat.returncode == 0) == (via_cli.returncode == 0), spec
        assert via_cat.stdout == via_cli.stdout, spec


def test_large_file_through_the_mount_in_bounded_daemon_memory(mounted: Mount, home: Path) -> None:
    line = b"2026-11-30T05:00:00 worker-3 processed shipment batch with no errors\n"
    with open(home / "big.log", "wb") as fh:
        for _ in range(200):
            fh.write(line * 15000)
    outline = cat(mounted.mountpoint / "big.log@outline")
    assert b"text: 3000000 lines" in outline
    assert cat(mounted.mountpoint / "big.log@L2999999-L3000000") == line * 2
    status = Path(f"/proc/{mounted.proc.pid}/status").read_text()
    hwm_kb = int(status.split("VmHWM:")[1].split()[0])
    assert hwm_kb < 200 * 1024, f"daemon peak {hwm_kb} KiB"


def test_what_other_users_may_read_with_allow_other(home: Path) -> None:
    """Views read like their file; history and side files like .git; a search
    shows nobody a hit from a file they could not cat."""
    import shutil
    import tempfile

    (home / "secret.md").write_text("# Secret\n\nthe vault code is hunter2\n")
    os.chmod(home / "secret.md", 0o600)
    (home / "open.md").write_text("# Open\n\nhunter2 is a famous password\n")
    base = Path(tempfile.mkdtemp(prefix="nasfs-perm-", dir="/tmp"))
    os.chmod(base, 0o755)
    m = Mount(home, base / "mnt", "--allow-other")
    as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    def cat_as_nobody(rel: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*as_nobody, "cat", str(m.mountpoint / rel)], capture_output=True)

    try:
        assert cat_as_nobody("open.md@outline").returncode == 0
        assert cat_as_nobody("secret.md@L3").returncode != 0  # as unreadable as secret.md itself
        assert cat(m.mountpoint / "secret.md@L3") == b"the vault code is hunter2\n"  # root reads it
        theirs = cat_as_nobody(".nas/search/hunter2")
        assert theirs.returncode == 0 and b"open.md" in theirs.stdout and b"secret.md" not in theirs.stdout
        assert b"secret.md" in cat(m.mountpoint / ".nas" / "search" / "hunter2")
        assert cat_as_nobody(".at/v1/README.txt").returncode == 0  # .git is world-readable here
        os.chmod(home / ".git", 0o700)
        for rel in (".at/v1/README.txt", ".nas/errors", ".nas/search/hunter2"):
            assert cat_as_nobody(rel).returncode != 0, rel  # history is as private as .git
    finally:
        os.chmod(home / ".git", 0o755)
        assert m.stop() == 0
        shutil.rmtree(base, ignore_errors=True)


def test_git_commit_rsync_and_fsync_through_the_mount(mounted: Mount, home: Path, tmp_path: Path) -> None:
    mnt = mounted.mountpoint
    (mnt / "notes" / "log.md").write_text("# Log\n\n- renewal call booked\n")
    fd = os.open(mnt / "notes" / "log.md", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"- draft sent\n")
    os.fsync(fd)
    os.close(fd)
    env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="a@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="a@example.com")
    subprocess.run(["git", "add", "notes/log.md"], cwd=mnt, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "log through the mount"], cwd=mnt, check=True, env=env)
    assert git(home, "log", "-1", "--format=%s") == "log through the mount\n"
    assert git(home, "show", "HEAD:notes/log.md") == "# Log\n\n- renewal call booked\n- draft sent\n"
    assert git(home, "status", "--porcelain") == ""
    ptr = header(cat(mnt / "notes" / "log.md@outline"))["pointer"]
    assert git(home, "rev-parse", "HEAD").startswith(ptr.split("@")[1][:12])  # committed content: HEAD
    copy = tmp_path / "copy"
    subprocess.run(["rsync", "-a", "--exclude", ".git", f"{mnt}/", f"{copy}/"], check=True)
    assert sorted(p.name for p in copy.rglob("*")) == sorted(p.name for p in home.rglob("*") if ".git" not in p.parts)
    assert not any("@" in p.name for p in copy.rglob("*"))
    back = tmp_path / "back"
    back.mkdir()
    (back / "imported.md").write_text("# Imported\n")
    subprocess.run(["rsync", "-a", f"{back}/", f"{mnt}/notes/"], check=True)
    assert (home / "notes" / "imported.md").read_text() == "# Imported\n"
    imported = cat(mnt / "notes" / "imported.md@outline")  # cheaper whole than outlined
    assert header(imported)["view"] == "full" and imported.endswith(b"\n# Imported\n")


def test_sigint_unmounts_cleanly(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt5")
    m.proc.send_signal(signal.SIGINT)
    assert m.proc.wait(timeout=15) == 0 and mount_at(str(m.mountpoint)) is None


def test_since_a_branch_follows_the_branch(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    before = cat(mnt / f"{ACME}@since=main")
    assert b"files=0" in before
    git(home, "update-ref", "refs/heads/main", "v1")  # the branch moves; the file is not touched
    after = cat(mnt / f"{ACME}@since=main")
    assert b"files=1" in after and b"+- price held at the 2026 rate, then +3%" in after


def test_refused_names_do_not_pile_up_in_the_inode_table(home: Path) -> None:
    """Every refused lookup allocates nothing that lives on (tested in-process:
    the table is the daemon's own state)."""
    import pyfuse3
    import trio

    from nasfs.fuse.ops import NasOperations
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    ops = NasOperations(Nas(GitTree(home, node="box", tree="home")))

    async def refuse_many() -> None:
        for i in range(200):
            with pytest.raises(pyfuse3.FUSEError):
                await ops.lookup(pyfuse3.ROOT_INODE, f"README.txt@section=nope{i}".encode(), None)

    try:
        trio.run(refuse_many)
    finally:
        ops.close()
    assert ops.inodes._by_ino == {} and ops.inodes._lookups == {}  # a view is made before its inode


def test_listings_hold_dot_and_dotdot(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    names = subprocess.run(["ls", "-a", str(mnt / "notes")], capture_output=True, text=True, check=True).stdout.split()
    assert names[:2] == [".", ".."] and sorted(names[2:]) == sorted(os.listdir(home / "notes"))
    inodes = subprocess.run(["ls", "-ai", str(mnt / "notes")], capture_output=True, text=True, check=True).stdout.split()
    assert inodes[inodes.index("..") - 1] == str(os.stat(mnt).st_ino)
    assert inodes[inodes.index(".") - 1] == str(os.stat(mnt / "notes").st_ino)


def test_a_file_made_beside_the_mount_shows_within_the_attribute_timeout(mounted: Mount, home: Path) -> None:
    """Names that are nothing are cached by the kernel (as real ones are) for
    --attr-timeout (1 s): a file made beside the mount then shows."""
    mnt = mounted.mountpoint
    assert not (mnt / "later.txt").exists()
    (home / "later.txt").write_text("made beside\n")
    start = time.monotonic()
    while not (mnt / "later.txt").exists():
        assert time.monotonic() - start < 2.5, "a file made beside the mount did not show within 2.5 s"
        time.sleep(0.05)
    assert (mnt / "later.txt").read_text() == "made beside\n"
    assert (mnt / "later.txt@outline").read_bytes().startswith(b"nasfs view=")


def test_a_section_named_json_through_the_mount(mounted: Mount, home: Path) -> None:
    (home / "msg.py").write_text("class Message:\n    def json(self):\n        return '{}'\n")
    mnt = mounted.mountpoint
    method = cat(mnt / "msg.py@section=Message.json")
    assert method.split(b"\n", 1)[1] == b"    def json(self):\n        return '{}'\n"
    assert header(method)["section"] == "Message.json"
    envelope = json.loads(cat(mnt / "msg.py@section=Message~1.json"))
    assert envelope["section"] == "Message" and envelope["view"] == "section"
