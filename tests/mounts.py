"""Starting and stopping real nasfs mounts for tests (as root, /dev/fuse)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from nasfs.fuse.mount import mount_at, mounts, probe

from .processes import end


def clear_stale_mounts(under: str, quiet_for: float = 0) -> None:
    """Lazy-unmount the dead nasfs mounts a crashed earlier run left below
    ``under``, whose folder has not changed for ``quiet_for`` seconds. Live
    ones are left alone, and so are recent dead ones: another test session
    running now may have killed its daemon on purpose, to test a stale mount.
    Each is asked from a child (fuse.mount.probe), never by statvfs here: a
    session running now may have stopped its daemon, to test a wedged mount,
    and statvfs on it would hang this session until that one went on, or for
    good if it was killed meanwhile."""
    for m in mounts():
        if m.mountpoint.startswith(under) and time.time() - os.lstat(os.path.dirname(m.mountpoint)).st_mtime >= quiet_for:
            if probe(m.mountpoint).state == "stale":
                subprocess.run(["fusermount3", "-u", "-z", m.mountpoint], capture_output=True)


class Mount:
    """A daemon in the foreground, as s3ql's tests run theirs."""

    def __init__(self, source: Path, mountpoint: Path, *extra: str, prefix: tuple[str, ...] = ()) -> None:
        """``prefix``: a command the daemon runs under (e.g. setpriv)."""
        self.source, self.mountpoint = source, mountpoint
        mountpoint.mkdir(exist_ok=True)
        self.log = mountpoint.parent / f"{mountpoint.name}.log"
        env = dict(os.environ, NASFS_TEST_FAULTS="1")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*prefix, sys.executable, "-m", "nasfs", "mount", str(source), str(mountpoint), "--foreground",
                 "--node", "box", "--tree", "home", "--log-level", os.environ.get("NASFS_TEST_LOG_LEVEL", "info"), *extra],
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"daemon exited: {self.log.read_text()}"
            if mount_at(str(mountpoint)) is not None and (mountpoint / ".nas" / "HELP").exists():
                return
            time.sleep(0.05)
        raise AssertionError(f"mount did not come up: {self.log.read_text()}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int | None:
        """Unmount cleanly; always leaves no mount and no process behind."""
        if mount_at(str(self.mountpoint)) is not None:
            subprocess.run(["fusermount3", "-u", str(self.mountpoint)], capture_output=True)
        try:
            return self.proc.wait(timeout=15)  # the unmount ends it
        except subprocess.TimeoutExpired:
            return end(self.proc, grace=5)
        finally:
            if mount_at(str(self.mountpoint)) is not None:
                subprocess.run(["fusermount3", "-u", "-z", str(self.mountpoint)], capture_output=True)


def stats(mnt: Path) -> dict[str, str]:
    """The mount's ``.nas/stats``, by name."""
    return dict(line.split("=", 1) for line in (mnt / ".nas" / "stats").read_text().splitlines())


def communicate_on_mount(mountpoint: Path, args: list[str], timeout: float, what: str) -> tuple[int, str, str]:
    """Run a child process that works on the mount: its exit code, output and
    errors. If it is not done within ``timeout`` the mount hung: its
    connection is aborted (first: a process stuck on it cannot even be
    killed) and the test fails saying ``what`` hung."""
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        abort_connection(mountpoint)
        child.kill()
        child.communicate()
        raise AssertionError(f"the mount hung: {what} (connection aborted)") from None
    return child.returncode, out, err


def run_on_mount(mountpoint: Path, args: list[str], timeout: float, what: str) -> str:
    """Run a child process that works on the mount (communicate_on_mount) and return its output; it must succeed."""
    code, out, err = communicate_on_mount(mountpoint, args, timeout, what)
    assert code == 0, err
    return out


def abort_connection(mountpoint: Path) -> None:
    """Free every process stuck on a hung FUSE mount: abort its connection
    (what only an admin can do by hand), so a hang fails a test, not CI."""
    minor = -1  # from mountinfo: never stat the hung mount itself
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[4] == str(mountpoint):
            minor = int(fields[2].split(":")[1])
            break
    connections = Path("/sys/fs/fuse/connections")
    if not any(connections.iterdir()):
        subprocess.run(["mount", "-t", "fusectl", "fusectl", str(connections)], capture_output=True)
    abort = connections / str(minor) / "abort"
    if abort.exists():
        abort.write_text("1")
