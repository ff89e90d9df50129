"""The mount under concurrent writers, and as POSIX as the disk under it.

Each test here reproduces a defect found from outside (issue: trust) and
fails without its fix. Concurrency runs in a child process with a deadline,
so a hung daemon fails the test: the connection is then aborted.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from nasfs.fuse.mount import mount_at

from .conftest import git, header
from .mounts import Mount, run_on_mount

STRESS = Path(__file__).with_name("view_stress.py")
VIEWS = ["outline", "L1-L5", "200", "outline.json"]
SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's lies under /root, which other users cannot enter


def doc(tag: str, sections: int) -> str:
    body = [f"# Document {tag}\n\nIntro line for {tag}.\n"]
    for i in range(sections):
        body.append(f"\n## Section {tag}{i}\n\n" + f"Text of {tag} section {i}, " * 12 + "\n")
    return "".join(body)


VERSIONS = [doc("alpha", 3), doc("beta", 9), doc("gamma", 1)]


def stress(mnt: Path, spec: dict, seconds: float = 3.0) -> dict:
    spec = {"mountpoint": str(mnt), "file": "p.md", "views": VIEWS, "versions": VERSIONS,
            "readers": 8, "seconds": seconds, **spec}
    out = run_on_mount(mnt, [sys.executable, str(STRESS), json.dumps(spec)], seconds + 30,
                       "concurrent readers and writers")
    return json.loads(out)


def views_of_each_version(mnt: Path) -> dict[str, set[str]]:
    """What each view answers for each version, read one at a time."""
    expected: dict[str, set[str]] = {v: set() for v in VIEWS}
    for text in VERSIONS:
        (mnt / "p.md").write_text(text)
        for view in VIEWS:
            expected[view].add((mnt / f"p.md@{view}").read_bytes().decode("latin-1"))
    return expected


def test_views_under_an_in_place_writer_never_hang(mounted: Mount) -> None:
    """Readers of views and a writer rewriting the file in place: the daemon
    once invalidated a view's pages from inside flush while a read of that
    view held the page lock, and hung for good."""
    mnt = mounted.mountpoint
    (mnt / "p.md").write_text(VERSIONS[0])
    result = stress(mnt, {"writers": ["inplace"]})
    assert result["reads"] > 100
    assert not result["errors"], result["errors"]
    assert not result["torn"], result["torn"]
    for data in result["answers"]["outline"]:
        assert data.startswith("nasfs view=") or data == "", data[:200]
    assert mounted.alive()


def test_views_under_a_replacing_writer_are_always_one_versions_view(mounted: Mount) -> None:
    """Write a temp file, rename it over: every view read is exactly the view
    of one version (once 4.7% were cut, NUL-padded or mixed)."""
    mnt = mounted.mountpoint
    expected = views_of_each_version(mnt)
    result = stress(mnt, {"writers": ["replace"]})
    assert result["reads"] > 100 and not result["errors"] and not result["torn"], result
    for view, answers in result["answers"].items():
        wrong = set(answers) - expected[view]
        assert not wrong, f"{view}: {len(wrong)} answers that are no version's view, e.g. {sorted(wrong)[0][:300]!r}"
    assert all(len(expected[v]) == len(VERSIONS) for v in VIEWS if v != "L1-L5")


def test_opening_a_path_under_two_kinds_of_writer_opens_what_is_there(mounted: Mount) -> None:
    """One writer replaces the file, another rewrites it in place, readers
    open it for update: never ESTALE (an open opens what is at the path)."""
    mnt = mounted.mountpoint
    (mnt / "p.md").write_text(VERSIONS[0])
    result = stress(mnt, {"writers": ["replace", "inplace"], "views": [""], "open_mode": "r+b", "readers": 4})
    assert result["reads"] > 100
    assert not result["errors"], result["errors"]


@pytest.mark.parametrize("writer", ["through the mount", "beside the mount"])
def test_a_file_rewritten_in_place_reads_as_one_version_never_nuls(mounted: Mount, home: Path, writer: str) -> None:
    """Plain reads of a file an in-place writer rewrites (O_TRUNC, one write):
    a page-cache read that came back short while the watcher's invalidation
    bumped the kernel's attribute version was served as the page's zero fill
    up to the old size (hundreds of NUL reads in 15 s beside the mount). Every
    read is one version, or empty (between the truncation and the write), as natively."""
    mnt = mounted.mountpoint
    (mnt / "p.md").write_text(VERSIONS[0])
    spec: dict = {"writers": ["inplace"], "views": [""], "seconds": 6.0, "single_read": True}
    if writer == "beside the mount":
        spec["write_root"] = str(home)
    result = stress(mnt, spec)
    assert result["reads"] > 500 and not result["errors"], result
    wrong = set(result["answers"][""]) - set(VERSIONS) - {""}
    assert not wrong, f"{len(wrong)} reads that are no version, e.g. {sorted(wrong)[0][:120]!r}"


def test_paths_near_path_max_work_as_natively(mounted: Mount) -> None:
    """A path that fits PATH_MAX relative to the mount's root fits the mount:
    the daemon once opened root + relative path."""
    deep = "/".join(["d" * 203] * 20)
    script = (
        "import os; deep = %r; os.makedirs(deep); open(deep + '/f', 'w').write('x');"
        "os.rename(deep + '/f', deep + '/g'); print(open(deep + '/g').read(), os.stat(deep + '/g').st_size)" % deep
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=mounted.mountpoint, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["x", "1"]
    assert (mounted.source / deep / "g").read_text() == "x" if len(str(mounted.source / deep)) < 4096 else True


def test_hard_links_are_one_inode(mounted: Mount, home: Path) -> None:
    mnt = mounted.mountpoint
    (mnt / "h1").write_text("linked\n")
    os.link(mnt / "h1", mnt / "h2")
    a, b = os.stat(mnt / "h1"), os.stat(mnt / "h2")
    assert (a.st_ino, a.st_nlink) == (b.st_ino, b.st_nlink) and a.st_nlink == 2
    assert a.st_ino == os.stat(home / "h1").st_ino  # the source's own number: git's index agrees on both sides
    os.chmod(mnt / "h1", 0o600)
    assert stat.S_IMODE(os.stat(mnt / "h2").st_mode) == 0o600
    os.unlink(mnt / "h1")
    assert os.stat(mnt / "h2").st_nlink == 1


def test_new_entries_get_the_mode_asked_for(home: Path) -> None:
    """umask 0 gives 0666, not the daemon's umask on top; a set-id mode asked
    by another user survives the chown that gives them the file; a write by a
    user who is not root clears set-uid, as on a local disk."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-modes-", dir="/tmp"))  # a folder other users may enter
    os.chmod(base, 0o755)
    m = Mount(home, base / "mnt", "--allow-other")
    try:
        shared = m.mountpoint / "shared"
        shared.mkdir()
        os.chmod(shared, 0o777)
        script = (
            "import os, stat; os.umask(0); d = %r\n"
            "open(os.path.join(d, 'plain'), 'w').close()\n"
            "fd = os.open(os.path.join(d, 'setid'), os.O_CREAT | os.O_WRONLY, 0o6755); os.close(fd)\n"
            "os.mkdir(os.path.join(d, 'dir'), 0o777)\n"
            "print(*(oct(stat.S_IMODE(os.stat(os.path.join(d, n)).st_mode)) for n in ('plain', 'setid', 'dir')))\n"
            "print(os.stat(os.path.join(d, 'setid')).st_uid)"
        ) % str(shared)
        done = subprocess.run([SYSTEM_PYTHON, "-c", script], capture_output=True, text=True, timeout=30,
                              user=65534, group=65534, extra_groups=[])
        assert done.returncode == 0, done.stderr
        modes, uid = done.stdout.splitlines()
        assert modes.split() == ["0o666", "0o6755", "0o777"] and uid == "65534"
        victim = shared / "victim"
        victim.write_text("x")
        os.chmod(victim, 0o4777)
        write = subprocess.run([SYSTEM_PYTHON, "-c", f"open({str(victim)!r}, 'a').write('y')"],
                               capture_output=True, text=True, timeout=30, user=65534, group=65534, extra_groups=[])
        assert write.returncode == 0, write.stderr
        assert stat.S_IMODE(os.stat(home / "shared" / "victim").st_mode) == 0o777
    finally:
        assert m.stop() == 0
        shutil.rmtree(base)


def test_at_a_branch_follows_the_branch(mounted: Mount, home: Path) -> None:
    """.at/main and .at/HEAD name what the branch names now; a full commit id
    is the only name that never moves."""
    mnt = mounted.mountpoint
    first = git(home, "rev-parse", "HEAD").strip()
    assert (mnt / ".at" / "main" / "README.txt").read_text() == (home / "README.txt").read_text()
    (home / "README.txt").write_text("moved on\n")
    git(home, "commit", "-q", "-am", "move main")
    assert (mnt / ".at" / "main" / "README.txt").read_text() == "moved on\n"
    assert (mnt / ".at" / "HEAD" / "README.txt").read_text() == "moved on\n"
    assert (mnt / ".at" / first / "README.txt").read_text() != "moved on\n"


def test_errors_survive_a_name_that_is_not_utf8(mounted: Mount) -> None:
    mnt = mounted.mountpoint
    with pytest.raises(FileNotFoundError):
        os.stat(os.fsencode(mnt / "notes" / "customer-acme.md") + b"@\xe9")
    text = (mnt / ".nas" / "errors").read_text()
    assert "customer-acme.md@\\xe9" in text


def test_errors_stay_one_line_a_refusal_whatever_the_name(mounted: Mount) -> None:
    """A newline or a bidi override in a refused name is shown escaped, so it
    can neither split a line of .nas/errors nor forge one."""
    mnt = mounted.mountpoint
    names = ["customer-acme.md@sectoin=x\n2026-01-01T00:00:00Z forged: line",
             "customer-acme.md@outline\u202e", "odd\nname.md@outline"]
    for name in names:
        with pytest.raises(FileNotFoundError):
            os.stat(mnt / "notes" / name)
    lines = (mnt / ".nas" / "errors").read_text().splitlines()
    assert len(lines) == len(names), lines
    assert "did you mean @section=x\\n2026" in lines[0]
    assert "outline\\u202e" in lines[1] and "\u202e" not in lines[1]
    assert "odd\\nname.md" in lines[2]


def test_deref_of_a_path_with_at_in_a_folder_name(mounted: Mount, home: Path) -> None:
    pkg = home / "js" / "node_modules" / "@npmcli" / "fs"
    pkg.mkdir(parents=True)
    (pkg / "errors.js").write_text("line one\nline two\nline three\n")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "npm scope")
    commit = git(home, "rev-parse", "HEAD").strip()
    deref = mounted.mountpoint / ".nas" / "deref" / "js" / "node_modules" / "@npmcli" / "fs" / f"errors.js@{commit[:12]}#L1-L2"
    assert deref.read_text() == "line one\nline two\n"


def test_mount_from_a_folder_holding_a_folder_named_nasfs(home: Path, tmp_path: Path) -> None:
    """The daemon imports the installed nasfs, not ./nasfs of the caller."""
    (tmp_path / "nasfs").mkdir()
    (tmp_path / "nasfs" / "__init__.py").write_text("raise ImportError('the wrong nasfs')\n")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    nasfs = Path(sys.executable).with_name("nasfs")
    done = subprocess.run([str(nasfs), "mount", str(home), "mnt"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    try:
        assert done.returncode == 0, done.stderr
        assert (mnt / "README.txt").exists()
    finally:
        subprocess.run([str(nasfs), "umount", str(mnt)], capture_output=True)


def test_status_fails_on_a_stale_mount(home: Path, tmp_path: Path) -> None:
    m = Mount(home, tmp_path / "mnt")
    m.proc.kill()
    m.proc.wait()
    try:
        done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "status", str(m.mountpoint)], capture_output=True, text=True)
        assert done.returncode == 1 and "stale" in done.stdout
        everything = subprocess.run([sys.executable, "-P", "-m", "nasfs", "status"], capture_output=True, text=True)
        assert everything.returncode == 1
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(m.mountpoint)], capture_output=True)


def test_status_and_umount_say_a_wedged_mount_instead_of_hanging(home: Path, tmp_path: Path) -> None:
    """A daemon alive but not answering (stopped here; deadlocked alike)
    made nasfs status, with or without its mountpoint, wait with it for good:
    the statvfs that asks it never returned. Now each says 'not answering'
    within its probe's 5 s, and umount detaches it."""
    m = Mount(home, tmp_path / "mnt")
    nasfs = [sys.executable, "-P", "-m", "nasfs"]
    os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        one = subprocess.run([*nasfs, "status", str(m.mountpoint)], capture_output=True, text=True, timeout=60)
        assert one.returncode == 1 and "not answering" in one.stdout, one.stdout + one.stderr
        everything = subprocess.run([*nasfs, "status"], capture_output=True, text=True, timeout=60)
        assert everything.returncode == 1 and f"{m.mountpoint}: nasfs over" in everything.stdout
        assert time.monotonic() - started < 40
        again = subprocess.run([*nasfs, "mount", str(home), str(m.mountpoint)], capture_output=True, text=True, timeout=60)
        assert again.returncode != 0 and "does not answer" in again.stderr, again.stderr
        off = subprocess.run([*nasfs, "umount", str(m.mountpoint)], capture_output=True, text=True, timeout=60)
        assert off.returncode == 0, off.stderr
        assert not os.path.ismount(m.mountpoint)
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        m.stop()


def test_a_mount_point_named_relative_is_asked_where_it_is(home: Path, tmp_path: Path) -> None:
    """The probe's child runs in /, and was given the mount point as the
    caller wrote it: 'nasfs mount SRC mnt' from the folder holding a stopped
    or a dead mount at mnt asked /mnt, got ENOENT and called the mount
    answering ('already a nasfs mount'); 'nasfs umount mnt' unmounted a
    wedged or stale mount without -z."""
    nasfs = [sys.executable, "-P", "-m", "nasfs"]
    m = Mount(home, tmp_path / "mnt")
    os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        again = subprocess.run([*nasfs, "mount", str(home), "mnt"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert again.returncode != 0 and "does not answer" in again.stderr, again.stderr
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        assert m.stop() == 0
    m = Mount(home, tmp_path / "mnt")
    m.proc.kill()
    m.proc.wait()
    try:
        again = subprocess.run([*nasfs, "mount", str(home), "mnt"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert again.returncode != 0 and "stale" in again.stderr, again.stderr
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(m.mountpoint)], capture_output=True)


def test_mount_waiting_for_its_daemon_never_hangs_on_a_mount_that_does_not_answer(home: Path, tmp_path: Path) -> None:
    """nasfs mount waits for its daemon's mount to answer, with a deadline;
    it asked with statvfs in the caller itself, so a mount there that does
    not answer (its own daemon stopping while it starts, or, as here, a
    stopped one that turned up there) hung nasfs mount past any deadline.
    Now it asks from a child too, and says why the daemon failed."""
    m = Mount(home, tmp_path / "mnt")
    os.kill(m.proc.pid, signal.SIGSTOP)
    script = ("import sys\nfrom nasfs.fuse.mount import MountError, start_daemon\n"
              "try:\n    start_daemon(['mount', sys.argv[1], sys.argv[2], '--node', 'box', '--tree', 'home'], sys.argv[2], None, 20)\n"
              "except MountError as exc:\n    sys.exit(str(exc))\n")
    try:
        done = subprocess.run([sys.executable, "-P", "-c", script, str(home), str(m.mountpoint)], capture_output=True,
                              text=True, timeout=40, cwd="/")
        assert done.returncode == 1 and "does not answer" in done.stderr, done.stderr
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        assert m.stop() == 0


def test_clearing_stale_test_mounts_never_hangs_on_a_stopped_one(home: Path, tmp_path: Path) -> None:
    """Each test session first clears the stale mounts earlier ones left
    under pytest's folders, another session's too (tests/mounts.py). It
    asked each with statvfs in the session itself: a session started while
    another had its daemon stopped (the wedged-mount tests here) hung until
    that one went on, for good if it was killed meanwhile. Now it asks from
    a child, and leaves the stopped mount alone: it is not stale."""
    m = Mount(home, tmp_path / "mnt")
    os.kill(m.proc.pid, signal.SIGSTOP)
    script = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom tests.mounts import clear_stale_mounts\n"
              "clear_stale_mounts(sys.argv[2])\n")
    try:
        done = subprocess.run([sys.executable, "-P", "-c", script, str(Path(__file__).parents[1]), str(tmp_path)],
                              capture_output=True, text=True, timeout=30, cwd="/")
        assert done.returncode == 0, done.stderr
        assert mount_at(str(m.mountpoint)) is not None
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        assert m.stop() == 0


def test_status_asks_wedged_mounts_at_once(home: Path, tmp_path: Path) -> None:
    """nasfs status waited its 5 s for each wedged mount in turn: a box
    whose daemons all hit the same deadlock made it take 5 s per mount.
    Now it asks them all at once and waits 5 s in all."""
    stopped = [Mount(home, tmp_path / f"mnt{i}") for i in range(3)]
    for m in stopped:
        os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "status"], capture_output=True, text=True, timeout=60)
        took = time.monotonic() - started
        assert done.returncode == 1 and all(f"{m.mountpoint}: nasfs over" in done.stdout for m in stopped), done.stdout
        assert done.stdout.count("not answering") >= 3 and took < 9, (took, done.stdout)
    finally:
        for m in stopped:
            os.kill(m.proc.pid, signal.SIGCONT)
            assert m.stop() == 0


def test_status_does_not_call_a_mount_it_may_not_ask_answering(home: Path) -> None:
    """A user the mount does not let in (mounted without allow_other by
    another user) gets the kernel's own statvfs answer, all zeros, without
    the daemon being asked: nasfs status called the mount 'answering' even
    with its daemon stopped. Now it says it was not asked, and fails for the
    mount it was asked about."""
    base = Path(tempfile.mkdtemp(prefix="nasfs-unasked-", dir="/tmp"))  # a folder other users may enter
    os.chmod(base, 0o755)
    m = Mount(home, base / "mnt")  # root's, without --allow-other
    import sysconfig

    path = os.pathsep.join([str(Path(__file__).parents[1]), sysconfig.get_paths()["platlib"], sysconfig.get_paths()["purelib"]])
    env = dict(os.environ, PYTHONPATH=path)
    os.kill(m.proc.pid, signal.SIGSTOP)
    try:
        done = subprocess.run([SYSTEM_PYTHON, "-P", "-m", "nasfs", "status", str(m.mountpoint)], capture_output=True,
                              text=True, timeout=60, env=env, cwd="/", user=65534, group=65534, extra_groups=[])
        assert "not asked" in done.stdout and "answering" not in done.stdout, done.stdout + done.stderr
        assert done.returncode == 1
    finally:
        os.kill(m.proc.pid, signal.SIGCONT)
        assert m.stop() == 0
        shutil.rmtree(base)


def test_enametoolong_and_erofs_stay_clear(mounted: Mount) -> None:
    mnt = mounted.mountpoint
    with pytest.raises(OSError) as err:
        (mnt / ("n" * 256)).write_text("x")
    assert err.value.errno == errno.ENAMETOOLONG
    with pytest.raises(OSError) as err:
        (mnt / "README.txt@outline").write_text("x")
    assert err.value.errno in (errno.EROFS, errno.EACCES)


def test_a_repository_deleted_under_the_mount_is_said(mounted: Mount, home: Path) -> None:
    """Deleting .git while mounted once made every view, .at/ and even
    .nas/HELP ENOENT with nothing in the log, and status said 'answering'."""
    mnt = mounted.mountpoint
    shutil.move(home / ".git", home.parent / "git-aside")
    deadline = time.monotonic() + 15
    while "is gone" not in (mnt / ".nas" / "errors").read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "is gone" in (mnt / ".nas" / "errors").read_text()
    assert (mnt / ".nas" / "HELP").read_text().startswith("nasfs")
    assert (mnt / "README.txt").exists()  # the real files are still served
    with pytest.raises(OSError):
        (mnt / "README.txt@outline").read_bytes()
    status = subprocess.run([sys.executable, "-P", "-m", "nasfs", "status", str(mnt)], capture_output=True, text=True)
    assert status.returncode == 1 and "is gone" in status.stdout
    assert "is gone" in mounted.log.read_text()
    shutil.move(home.parent / "git-aside", home / ".git")
    deadline = time.monotonic() + 15
    while subprocess.run([sys.executable, "-P", "-m", "nasfs", "status", str(mnt)], capture_output=True).returncode and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (mnt / "README.txt@outline").read_bytes().startswith(b"nasfs view=")


def test_mounting_a_subfolder_of_a_repository_is_refused(home: Path, tmp_path: Path) -> None:
    """It once said 'mounted' and served the parent's files."""
    (tmp_path / "mnt").mkdir()
    done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "mount", str(home / "notes"), str(tmp_path / "mnt")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "inside the git repository" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not os.listdir(tmp_path / "mnt")


def test_search_on_the_mount_never_looks_outside_the_tree(mounted: Mount, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("zanzibarword is outside\n")
    os.symlink(outside, home / "escdir")
    search = mounted.mountpoint / ".nas" / "search"
    with pytest.raises(OSError):
        (search / "zanzibarword in:escdir").read_bytes()
    everywhere = (search / "zanzibarword").read_bytes()
    assert b"matches=0" in everywhere.split(b"\n", 1)[0] and b"outside" not in everywhere


def test_a_header_pointer_to_an_odd_name_verifies_as_printed(mounted: Mount, home: Path) -> None:
    folder = mounted.mountpoint / "notes dir"
    folder.mkdir()
    (folder / "Résumé.md").write_text("# Résumé\n\nShort.\n")
    pointer = header((folder / "Résumé.md@outline").read_bytes())["pointer"]
    done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "verify", "--repo", str(home), "--node", "box",
                           "--tree", "home", pointer], capture_output=True, text=True)
    assert done.returncode == 0, (pointer, done.stderr)


DIROPS = Path(__file__).with_name("dirops_stress.py")


def test_names_made_and_renamed_in_one_folder_while_slow_views_are_made_there(mounted: Mount, home: Path) -> None:
    """Parallel lookups (libfuse 3.17): four processes make, rename, look up,
    read and remove names in notes/ while views of a 3 MB file there are made
    again and again (it grows beside the mount). Nothing hangs, no name is
    wrong: every read is what was written, under the source's inode, and the
    folder lists through the mount exactly what the source holds."""
    mnt = mounted.mountpoint
    with open(home / "notes" / "big.md", "w") as fh:
        fh.write("# Big\n\n")
        for i in range(3000):
            fh.write(f"## Part {i}\n\n" + "Words of a long part. " * 40 + "\n\n")
    spec = {"mountpoint": str(mnt), "source": str(home), "folder": "notes", "big": "big.md", "workers": 4, "seconds": 8}
    found = json.loads(run_on_mount(mnt, [sys.executable, str(DIROPS), json.dumps(spec)], spec["seconds"] + 120,
                                    "names made in one folder beside slow views"))
    assert all(r["ops"] > 0 for r in found["results"]), found["results"]
    wrong = [w for r in found["results"] for w in r["wrong"]]
    assert not wrong, wrong[:5]
    kept = sorted(n for r in found["results"] for n in r["kept"])
    assert found["mount"] == found["source"] == kept
    assert mounted.alive()


SCENARIOS = Path(__file__).with_name("file_scenarios.py")


def scenarios_in(folder: Path, mnt: Path) -> dict:
    return json.loads(run_on_mount(mnt, [sys.executable, str(SCENARIOS), str(folder)], 300, f"the scenarios in {folder}"))


def test_open_files_behave_as_on_the_disk(mounted: Mount, home: Path, tmp_path: Path) -> None:
    """What programs do to open files (tests/file_scenarios.py: truncation
    of a mapped file and its SIGBUS, O_TRUNC under a reader, unlinked and
    replaced files still open, O_DIRECT, copy_file_range, sendfile, splice,
    two appenders, ETXTBSY, a map written and grown) has exactly the outcome
    through the mount that it has in a folder of the disk under it."""
    native = tmp_path / "native"
    native.mkdir()
    (home / "scenarios").mkdir()
    assert scenarios_in(mounted.mountpoint / "scenarios", mounted.mountpoint) == scenarios_in(native, mounted.mountpoint)
    assert mounted.alive()
