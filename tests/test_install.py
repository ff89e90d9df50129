"""Installing nasfs the ways an admin does, each through the real component:
an fstab line mounted by mount(8) (mount.fuse3 running ``nasfs SOURCE
MOUNTPOINT -o OPTIONS``), the systemd unit written by ``nasfs install-unit``
and checked by ``systemd-analyze verify``, and a wheel pip-installed into a
fresh venv.

Some tests touch the real system and put it back as they found it, under one
lock: /usr/local/sbin/nasfs (mount(8) runs helpers without PATH, so the shell's
default PATH must find nasfs there) and /etc/systemd/system/nasfs@.service.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import mmap
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasfs.fstab import MountOptionError, is_helper_form, parse
from nasfs.fuse.mount import mount_at

from .processes import end

ROOT = Path(__file__).resolve().parent.parent
NASFS = Path(sys.executable).parent / "nasfs"  # this checkout's installed script
ACME = "notes/customer-acme.md"
LOCK = Path("/run/lock/nasfs-tests-install.lock")
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def need_root_and_fuse() -> None:
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        pytest.fail("these tests mount: they need root and /dev/fuse (run scripts/test as root)")


def need(tool: str, package: str) -> str:
    found = shutil.which(tool, path=os.environ.get("PATH", "") + ":" + SYSTEM_PATH)
    if found is None:
        pytest.fail(f"{tool} is missing (Debian package {package}; scripts/setup installs it)")
    return found


@contextlib.contextmanager
def system_lock() -> Iterator[None]:
    """One test session at a time changes the shared system folders."""
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def restored(*paths: Path) -> Iterator[None]:
    """Put each path back as it was (absent, a symlink, or a file or folder)."""
    saved: dict[Path, tuple[str, object]] = {}
    for path in paths:
        if path.is_symlink():
            saved[path] = ("link", os.readlink(path))
        elif path.is_file():
            saved[path] = ("file", path.read_bytes())
        elif path.is_dir():
            pytest.fail(f"{path} is a folder; this test only restores files and links")
        else:
            saved[path] = ("absent", None)
    try:
        yield
    finally:
        for path, (kind, value) in saved.items():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            if kind == "link":
                path.symlink_to(str(value))
            elif kind == "file":
                path.write_bytes(value)  # type: ignore[arg-type]


def wait_unmounted(mountpoint: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while mount_at(str(mountpoint)) is not None:
        assert time.monotonic() < deadline, f"{mountpoint} is still mounted"
        time.sleep(0.05)


def daemons_of(mountpoint: Path) -> list[int]:
    """nasfs daemons whose command line names this mount point."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"nasfs.cli" in argv and os.fsencode(mountpoint) in argv:
            pids.append(int(proc.name))
    return pids


def wait_no_daemon(mountpoint: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while daemons_of(mountpoint):
        assert time.monotonic() < deadline, f"the daemon of {mountpoint} is still running: {daemons_of(mountpoint)}"
        time.sleep(0.1)


@contextlib.contextmanager
def cleanup_mount(mountpoint: Path) -> Iterator[None]:
    """Whatever the test did, nothing stays mounted and no daemon of ours runs."""
    try:
        yield
    finally:
        if mount_at(str(mountpoint)) is not None:
            subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], capture_output=True)
        for pid in daemons_of(mountpoint):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


@pytest.fixture
def nasfs_on_system_path() -> Iterator[Path]:
    """``nasfs install`` for real: /usr/local/sbin/nasfs links to this
    checkout's nasfs for the test, and is put back as it was after it."""
    link = Path("/usr/local/sbin/nasfs")
    with system_lock(), restored(link):
        if link.exists() or link.is_symlink():
            link.unlink()  # another installation's link: ours for the length of the test
        done = subprocess.run([str(NASFS), "install"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"linked {link} -> {NASFS}"), done.stdout
        assert os.readlink(link) == str(NASFS)
        yield link


@contextlib.contextmanager
def fstab_mount(tmp_path: Path, source: Path, options: str) -> Iterator[tuple[Path, subprocess.CompletedProcess[str]]]:
    """``mount --fstab`` of a test's own fstab line for ``source`` on
    ``tmp_path/mnt``: the mount point and what mount(8) said; nothing stays mounted."""
    need_root_and_fuse()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    table = tmp_path / "fstab"
    table.write_text(f"# a test's own fstab\n{source} {mnt} fuse.nasfs {options} 0 0\n")
    with cleanup_mount(mnt):
        yield mnt, subprocess.run(["mount", "--fstab", str(table), str(mnt)], capture_output=True, text=True, timeout=60)


# -- 1. mount -t fuse.nasfs and fstab ------------------------------------------------

def test_an_fstab_line_mounts_with_mount_and_unmounts_with_umount(
        home: Path, tmp_path: Path, nasfs_on_system_path: Path) -> None:
    need("mount.fuse3", "fuse3")
    log = tmp_path / "daemon.log"
    options = f"allow_other,node=box,tree=home,_netdev,nofail,noatime,x-systemd.automount,log_file={log}"
    with fstab_mount(tmp_path, home, options) as (mnt, done):
        assert done.returncode == 0, done.stderr + (log.read_text() if log.exists() else "")
        assert done.stdout == done.stderr == ""  # a mount helper is silent when it succeeds
        info = mount_at(str(mnt))
        assert info is not None and info.source == str(home)
        assert "allow_other" in Path("/proc/self/mountinfo").read_text().split(str(mnt), 1)[1].splitlines()[0]
        outline = (mnt / f"{ACME}@outline").read_text()
        assert outline.startswith("nasfs view=outline ")
        assert f"pointer=nas://box/home/{ACME}@" in outline.splitlines()[0]
        assert (mnt / f"{ACME}@L1").read_text() == (home / ACME).read_text().splitlines(keepends=True)[0]
        assert daemons_of(mnt), "no daemon runs for the mount"
        done = subprocess.run(["umount", str(mnt)], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        wait_unmounted(mnt)
        wait_no_daemon(mnt)
    assert "unmounted" in log.read_text()


def test_ro_and_noexec_from_fstab_hold_on_the_mount_point(
        home: Path, tmp_path: Path, nasfs_on_system_path: Path) -> None:
    with fstab_mount(tmp_path, home, "ro,noexec,node=box") as (mnt, done):
        assert done.returncode == 0, done.stderr
        row = next(r for r in Path("/proc/self/mountinfo").read_text().splitlines() if r.split()[4] == str(mnt))
        assert {"ro", "noexec", "nosuid", "nodev"} <= set(row.split()[5].split(","))
        with pytest.raises(OSError) as refused:
            (mnt / "new.md").write_text("x")
        assert refused.value.errno == 30  # EROFS
        assert (mnt / f"{ACME}@outline").read_text().startswith("nasfs view=outline ")
        subprocess.run(["umount", str(mnt)], check=True, timeout=30)
        wait_unmounted(mnt)


def test_an_unknown_fstab_option_is_refused_in_one_line(
        home: Path, tmp_path: Path, nasfs_on_system_path: Path) -> None:
    with fstab_mount(tmp_path, home, "node=box,colour=blue,_netdev") as (mnt, done):
        assert done.returncode != 0
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("nasfs: unknown mount option 'colour=blue'; valid: node=NAME"), lines
        assert mount_at(str(mnt)) is None


def test_mount_fuse3_runs_nasfs_from_the_callers_path(home: Path, tmp_path: Path) -> None:
    """The other form: ``mount.fuse3 'nasfs#SOURCE' MOUNTPOINT -o ...``, with
    the link ``nasfs install --root`` makes below a scratch root."""
    need_root_and_fuse()
    fuse3 = need("mount.fuse3", "fuse3")
    root = tmp_path / "root"
    done = subprocess.run([str(NASFS), "install", "--root", str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    bin_dir = root / "usr/local/sbin"
    assert os.readlink(bin_dir / "nasfs") == str(NASFS)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    env = dict(os.environ, PATH=f"{bin_dir}:{SYSTEM_PATH}")
    with cleanup_mount(mnt):
        done = subprocess.run([fuse3, f"nasfs#{home}", str(mnt), "-o", "node=box,tree=home,rw,nofail"],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        head = (mnt / f"{ACME}@section=Renewal").read_text().splitlines()[0]
        assert f"pointer=nas://box/home/{ACME}@" in head
        subprocess.run([str(NASFS), "umount", str(mnt)], check=True, timeout=30)
        wait_unmounted(mnt)
        wait_no_daemon(mnt)


def test_helper_options_become_nasfs_mount_flags() -> None:
    call = parse(["/srv/tree", "/mnt/tree", "-o",
                  "rw,noatime,nosuid,nodev,allow_other,node=box,dev,suid,exec,auto,defaults,x-systemd.automount,"
                  'tree=t,tokenizer=o200k_base,autocommit,log_file=/var/log/n.log,log_level=debug,attr_timeout=0.5,'
                  'summarizer="fold -w 80,x",ro,noexec', "-onode=box"])
    assert call.mount_argv == [
        "mount", "/srv/tree", "/mnt/tree", "--allow-other", "--node", "box", "--tree", "t", "--tokenizer", "o200k_base",
        "--autocommit", "--log-file", "/var/log/n.log", "--log-level", "debug", "--attr-timeout", "0.5",
        "--summarizer", "fold -w 80,x"]
    assert call.flags == ["ro", "noexec"]
    assert parse(["/srv/tree", "/mnt/tree"]).mount_argv == ["mount", "/srv/tree", "/mnt/tree"]
    for argv, said in [
        (["/s", "/m", "-o", "bogus"], "unknown mount option 'bogus'"),
        (["/s", "/m", "-o", "node"], "mount option node needs a value"),
        (["/s", "/m", "-o", "autocommit=yes"], "mount option autocommit takes no value"),
        (["/s", "/m", "-o", "attr_timeout=soon"], "attr_timeout=soon is not a number"),
        (["/s", "/m", "-o", "log_level=loud"], "log_level=loud is not a log level"),
        (["/s", "/m", "-o", "node=a,node=b"], "mount option node is given twice"),
        (["/s", "/m", "-o", "remount"], "remount is not supported"),
        (["/s", "/m", "-o", 'summarizer="x'], "unbalanced double quote"),
        (["/s", "/m", "-f"], "unknown argument '-f'"),
        (["/s", "/m", "/x"], "the mount-helper form takes SOURCE and MOUNTPOINT, got 3"),
    ]:
        with pytest.raises(MountOptionError) as refused:
            parse(argv)
        assert str(refused.value).startswith(said), (argv, str(refused.value))
        assert "\n" not in str(refused.value)


def test_the_helper_form_leaves_commands_and_typos_alone(tmp_path: Path) -> None:
    commands = ["read", "mount"]
    assert is_helper_form(["/srv/tree", "/mnt/tree", "-o", "x"], commands)
    assert is_helper_form([str(tmp_path.name), "mnt"], commands) is False  # not a folder here
    assert not is_helper_form(["read", "x"], commands)
    assert not is_helper_form(["--help"], commands)
    typo = subprocess.run([str(NASFS), "raed", "notes.md"], capture_output=True, text=True, cwd=tmp_path)
    assert typo.returncode == 2 and "invalid choice: 'raed'" in typo.stderr


# -- 2. the systemd unit, installed --------------------------------------------------

def unit_settings(text: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def verify(unit: str) -> list[str]:
    """systemd-analyze verify's complaints about nasfs units (it also speaks
    of the host's own units, which are not ours to judge)."""
    need("systemd-analyze", "systemd")
    done = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True, timeout=120)
    return [row for row in (done.stdout + done.stderr).splitlines() if "nasfs" in row]


def test_install_unit_writes_the_unit_its_settings_and_its_mount_needs(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    mnt = tmp_path / "views" / "home"
    done = subprocess.run([str(NASFS), "install-unit", "home", "--source", str(home), "--mountpoint", str(mnt),
                           "--options=--node nas1 --allow-other", "--root", str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "next: systemctl daemon-reload && systemctl enable --now nasfs@home"
    unit = (root / "etc/systemd/system/nasfs@.service").read_text()
    settings = unit_settings(unit)
    assert settings["ExecStart"] == [f"{NASFS} mount ${{NASFS_SOURCE}} ${{NASFS_MOUNTPOINT}} --foreground --tree %i $NASFS_OPTIONS"]
    assert settings["ExecStartPre"] == ["/bin/mkdir -p ${NASFS_MOUNTPOINT}"]
    assert settings["Documentation"] == [f"file://{ROOT}/docs/mount.md"]
    assert "open_by_handle_at" in settings["SystemCallFilter"][0].split()
    assert "CAP_DAC_READ_SEARCH" in settings["CapabilityBoundingSet"][0].split()
    shipped = unit_settings((ROOT / "systemd" / "nasfs@.service").read_text())
    assert {k: v for k, v in settings.items() if k not in ("ExecStart", "Documentation")} == \
        {k: v for k, v in shipped.items() if k not in ("ExecStart", "Documentation")}
    assert (root / "etc/nasfs/home.env").read_text().splitlines()[1:] == [
        f'NASFS_SOURCE="{home}"', f'NASFS_MOUNTPOINT="{mnt}"', 'NASFS_OPTIONS="--node nas1 --allow-other"']
    dropin = (root / "etc/systemd/system/nasfs@home.service.d/mounts.conf").read_text()
    assert unit_settings(dropin) == {"RequiresMountsFor": [f"{home} {mnt.parent}"]}
    # the same again is fine; other settings need --force
    again = [str(NASFS), "install-unit", "home", "--source", str(home), "--mountpoint", str(mnt),
             "--options=--node nas1 --allow-other", "--root", str(root)]
    assert subprocess.run(again, capture_output=True).returncode == 0
    other = subprocess.run([*again[:-3], "--root", str(root)], capture_output=True, text=True)
    assert other.returncode == 2 and "exists with other settings" in other.stderr
    assert subprocess.run([*again[:-3], "--root", str(root), "--force"], capture_output=True).returncode == 0
    assert 'NASFS_OPTIONS=""' in (root / "etc/nasfs/home.env").read_text()
    # the file as written verifies (systemd-analyze --root would look for ExecStart below the root)
    assert verify(str(root / "etc/systemd/system/nasfs@.service")) == []


def test_the_unit_installed_in_etc_verifies(home: Path, tmp_path: Path) -> None:
    """Into the real /etc/systemd/system, as an admin installs it; verified by
    name, so systemd loads it from there with its drop-in; then removed."""
    if os.geteuid() != 0:
        pytest.fail("installing the unit into /etc/systemd/system needs root")
    instance = f"test{os.getpid()}"
    units, env_dir = Path("/etc/systemd/system"), Path("/etc/nasfs")
    template, env, dropin = units / "nasfs@.service", env_dir / f"{instance}.env", units / f"nasfs@{instance}.service.d"
    made_env_dir = not env_dir.exists()
    with system_lock(), restored(template, env):
        try:
            done = subprocess.run([str(NASFS), "install-unit", instance, "--source", str(home),
                                   "--mountpoint", str(tmp_path / "mnt")], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            assert done.stdout.splitlines()[:3] == [f"wrote {template}", f"wrote {env}", f"wrote {dropin}/mounts.conf"]
            assert verify(f"nasfs@{instance}.service") == []
            # verify reads the drop-in: a wrong setting there is reported
            (dropin / "zz-check.conf").write_text("[Unit]\nRequiresMountsFor=not-absolute\n")
            assert any("not-absolute" in row or "zz-check.conf" in row for row in verify(f"nasfs@{instance}.service"))
        finally:
            shutil.rmtree(dropin, ignore_errors=True)
    if made_env_dir:
        env_dir.rmdir()
    assert not dropin.exists() and not env.exists()


def expand(command: str, env: dict[str, str], instance: str) -> list[str]:
    """A unit's command line as systemd expands it: %i, ${X} as one word,
    $X split on whitespace."""
    words = []
    for word in shlex.split(command.replace("%i", instance)):
        if word.startswith("$") and not word.startswith("${"):
            words += env.get(word[1:], "").split()
        else:
            for key, value in env.items():
                word = word.replace("${" + key + "}", value)
            words.append(word)
    return words


def test_the_installed_units_commands_mount_notify_and_stop(home: Path, tmp_path: Path) -> None:
    """No systemd runs as PID 1 here, so the installed unit's own ExecStartPre
    and ExecStart lines are run as systemd would: the mount point is made, the
    mount comes up, READY=1 reaches NOTIFY_SOCKET, SIGTERM unmounts it."""
    need_root_and_fuse()
    root = tmp_path / "root"
    mnt = tmp_path / "views" / "home"
    subprocess.run([str(NASFS), "install-unit", "home", "--source", str(home), "--mountpoint", str(mnt),
                    "--options=--node box --log-level info", "--root", str(root)], check=True, capture_output=True)
    settings = unit_settings((root / "etc/systemd/system/nasfs@.service").read_text())
    env = {}
    for line in (root / "etc/nasfs/home.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = json.loads(value)
    subprocess.run(expand(settings["ExecStartPre"][0], env, "home"), check=True)
    assert mnt.is_dir()
    notify = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock, cleanup_mount(mnt):
        sock.bind(str(notify))
        sock.settimeout(60)
        log = tmp_path / "unit.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(expand(settings["ExecStart"][0], env, "home"), stdout=out, stderr=subprocess.STDOUT,
                                    env=dict(os.environ, NOTIFY_SOCKET=str(notify)))
        try:
            assert sock.recv(100) == b"READY=1", log.read_text()
            head = (mnt / f"{ACME}@outline").read_text().splitlines()[0]
            assert f"pointer=nas://box/home/{ACME}@" in head  # --tree %i, --node from NASFS_OPTIONS
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, log.read_text()
            assert mount_at(str(mnt)) is None
        finally:
            end(proc)


# -- 3. pip install alone ------------------------------------------------------------

WHEELHOUSE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nasfs-tests" / "wheelhouse"


def pip(python: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=timeout)


def build_wheel(out: Path, tmp_path: Path) -> Path:
    """``pip wheel --no-deps`` of the project's files (tracked and new, as
    the work tree has them) copied to a scratch folder, so no build/ folder
    left in the checkout can leak into the wheel. Offline from the wheelhouse
    (setuptools for the isolated build) once it holds what is needed."""
    tree = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file() and not src.is_symlink():
            (tree / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tree / os.fsdecode(name))
    offline = pip(Path(sys.executable), "wheel", "-q", "--no-deps", "--no-index", "--find-links", str(WHEELHOUSE),
                  "-w", str(out), str(tree))
    if offline.returncode != 0:
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        got = pip(Path(sys.executable), "download", "-q", "-d", str(WHEELHOUSE), "setuptools>=77")
        assert got.returncode == 0, got.stderr
        again = pip(Path(sys.executable), "wheel", "-q", "--no-deps", "-w", str(out), str(tree))
        assert again.returncode == 0, again.stderr
    [wheel] = out.glob("nasfs-*.whl")
    return wheel


def install_wheel(venv: Path, wheel: Path) -> None:
    """The wheel into ``venv`` by ``pip --python``, from the wheelhouse of the
    dependencies' wheels; the wheelhouse is filled (pip wheel, from the
    indexes, building pyfuse3 from its sdist) only when it lacks something."""
    python = str(venv / "bin" / "python")
    done = pip(Path(sys.executable), "--python", python, "install", "-q", "--no-index", "--find-links", str(WHEELHOUSE), str(wheel))
    if done.returncode != 0:
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        filled = pip(Path(sys.executable), "wheel", "-q", "-w", str(WHEELHOUSE), "--find-links", str(WHEELHOUSE), str(wheel))
        assert filled.returncode == 0, filled.stderr
        for own in WHEELHOUSE.glob("nasfs-*.whl"):
            own.unlink()
        done = pip(Path(sys.executable), "--python", python, "install", "-q", "--no-index", "--find-links", str(WHEELHOUSE), str(wheel))
    assert done.returncode == 0, done.stderr


def test_pip_install_of_the_wheel_alone_gives_a_working_nasfs(home: Path, tmp_path: Path) -> None:
    need_root_and_fuse()
    need("git", "git")  # the home fixture makes its repository with git (nasfs itself needs no git)
    wheel = build_wheel(tmp_path / "dist", tmp_path)
    venv = tmp_path / "venv"
    # a fresh venv; this checkout's pip installs into it (--python), which spares ensurepip's minute under load
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    install_wheel(venv, wheel)
    nasfs = venv / "bin" / "nasfs"
    # the wheel's nasfs runs, never this checkout's (nor one a PYTHONPATH names)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PATH": f"{venv / 'bin'}:{SYSTEM_PATH}"}
    where = subprocess.run([str(venv / "bin/python"), "-P", "-c", "import nasfs; print(nasfs.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True).stdout.strip()
    assert where.startswith(str(venv)), where

    def run(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(nasfs), *args], capture_output=True, text=True, env=kwargs.pop("env", env),
                              cwd=tmp_path, timeout=120, **kwargs)

    helped = run("--help")
    assert helped.returncode == 0 and "install-unit" in helped.stdout
    read = run("read", f"{ACME}@outline", "--repo", str(home), "--node", "box", "--tree", "home")
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith("nasfs view=outline ") and f"nas://box/home/{ACME}@" in read.stdout

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with cleanup_mount(mnt):
        mounted = run("mount", str(home), str(mnt), "--node", "box", "--tree", "home")
        assert mounted.returncode == 0, mounted.stderr
        assert (mnt / f"{ACME}@section=Renewal").read_text().startswith("nasfs view=section ")
        # the wheel brings stock pyfuse3: listings are not cached by the kernel, and still right
        stats = (mnt / ".nas" / "stats").read_text()
        assert "kernel_cached_listings=no" in stats and "passthrough=no (stock pyfuse3)" in stats
        # nor fallocate: the kernel answers EOPNOTSUPP, as before the patch (tests/test_fallocate.py)
        assert "fallocate=no (stock pyfuse3)" in stats
        (mnt / "grown.bin").write_bytes(b"x" * 100)
        refused = subprocess.run(["fallocate", "-l", "8192", str(mnt / "grown.bin")], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "Operation not supported" in refused.stderr, refused.stderr
        assert (home / "grown.bin").stat().st_size == 100
        assert sorted(os.listdir(mnt / "notes")) == sorted(os.listdir(home / "notes"))
        (home / "notes" / "later.md").write_text("# Later\n")
        assert "later.md" in os.listdir(mnt / "notes")
        # no passthrough: a file changed in the last 2 s is read direct_io, so it maps
        # privately (git's mmap) and shared only once settled (docs/mount.md)
        (mnt / "fresh.bin").write_bytes(b"fresh bytes\n" * 1000)
        with open(mnt / "fresh.bin", "rb") as fh:
            with mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as m:
                assert m[:12] == b"fresh bytes\n" and len(m) == 12000
            with pytest.raises(OSError) as refused:
                mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            assert refused.value.errno == errno.ENODEV
        time.sleep(2.2)
        with open(mnt / "fresh.bin", "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert m[-12:] == b"fresh bytes\n"
        assert run("umount", str(mnt)).returncode == 0
        wait_unmounted(mnt)

    # serve: the HTTP API answers on loopback
    port = free_port()
    with open(tmp_path / "serve.log", "wb") as out:
        server = subprocess.Popen([str(nasfs), "serve", "--repo", str(home), "--listen", f"127.0.0.1:{port}"],
                                  stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        health = poll_json(f"http://127.0.0.1:{port}/v1/health", server, tmp_path / "serve.log")
        assert health["status"] == "ok"
    finally:
        end(server)

    # mcp: the MCP server answers initialize on stdio
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    with subprocess.Popen([str(nasfs), "mcp", "--repo", str(home)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, env=env) as mcp:
        try:
            assert mcp.stdin is not None and mcp.stdout is not None
            mcp.stdin.write((json.dumps(hello) + "\n").encode())
            mcp.stdin.flush()
            answer = json.loads(mcp.stdout.readline())
            assert answer["id"] == 1 and "serverInfo" in answer["result"], answer
        finally:
            end(mcp)

    # the unit template ships in the wheel: install-unit from it points at its nasfs, without the docs of a clone
    unit = run("install-unit", "--root", str(tmp_path / "root"))
    assert unit.returncode == 0, unit.stderr
    text = (tmp_path / "root/etc/systemd/system/nasfs@.service").read_text()
    assert f"ExecStart={nasfs} mount " in text and "Documentation=" not in text

    # what needs a system package says so in one line when it is missing: ripgrep for search
    no_rg = run("search", "renewal", "--repo", str(home), env=dict(env, PATH=str(venv / "bin")))
    assert no_rg.returncode == 2
    assert no_rg.stderr.strip().splitlines() == [
        "nasfs search: search needs ripgrep (Debian package 'ripgrep'), which is not installed"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def poll_json(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"exited {proc.returncode}: {log.read_text()}"
        try:
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=2) as answer:
                return json.loads(answer.read())
        except OSError:
            assert time.monotonic() < deadline, f"{url} did not answer: {log.read_text()}"
            time.sleep(0.1)
