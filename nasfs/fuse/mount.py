"""Mount lifecycle: start, daemonize, answer signals, unmount cleanly.

Shaped after s3ql's mount: the filesystem runs in ``trio``; SIGTERM and
SIGINT call ``pyfuse3.terminate()``; ``pyfuse3.close(unmount=...)`` runs
whatever happened. ``nasfs mount`` without ``--foreground`` starts the same
command in the foreground in a new session and returns once the mount answers.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyfuse3
import trio

from ..errors import NasError

if TYPE_CHECKING:
    from ..summaries import SummarySettings
    from .ops import NasOperations
    from .read_socket import ReadSocket

log = logging.getLogger("nasfs.mount")
FSTYPE = "fuse.nasfs"


class MountError(NasError):
    """The mount could not be made; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class MountInfo:
    source: str
    mountpoint: str
    options: str


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def mounts() -> list[MountInfo]:
    """nasfs mounts from /proc/self/mountinfo, which still lists a mount whose
    daemon died (os.path.ismount then says False)."""
    found = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(rfields) >= 2 and rfields[0] == FSTYPE:
                found.append(MountInfo(_unescape(rfields[1]), _unescape(fields[4]), fields[5]))
    return found


def mount_at(mountpoint: str) -> MountInfo | None:
    target = os.path.abspath(mountpoint)
    for m in mounts():
        if m.mountpoint == target:
            return m
    return None


def check_mountpoint(mountpoint: str) -> None:
    if mount_at(mountpoint) is not None:
        state = probe(mountpoint).state
        if state != "answering":
            raise MountError(
                f"{mountpoint} holds a stale nasfs mount (its daemon died)" if state == "stale" else
                f"{mountpoint} holds a nasfs mount whose daemon does not answer",
                f"clear it with 'nasfs umount {mountpoint}' (or 'fusermount3 -u -z {mountpoint}'), then mount again",
            )
        raise MountError(f"{mountpoint} is already a nasfs mount", f"'nasfs umount {mountpoint}' first, or another folder")
    if os.path.ismount(mountpoint):
        raise MountError(f"{mountpoint} is already a mount point", "an empty folder that is not mounted")
    if not os.path.isdir(mountpoint):
        raise MountError(f"{mountpoint} is not a folder", "an existing empty folder")
    if os.listdir(mountpoint):
        raise MountError(f"{mountpoint} is not empty", "an empty folder (nothing in it would be visible while mounted)")


def run_foreground(source: str, mountpoint: str, *, node: str | None, tree: str | None, tokenizer: str,
                   autocommit: bool, allow_other: bool, attr_timeout: float, summarizer: SummarySettings | None = None,
                   faults: bool = False, warm: bool = True, publish: str | None = None, publish_private: bool = False) -> int:
    """Mount and serve until unmounted or signalled; returns an exit code.
    With ``warm``, a low-priority ``nasfs index`` warms the caches meanwhile;
    with ``publish``, a thread pushes the commits served pointers name there."""
    from ..cache import DiskCache
    from ..repo import GitTree
    from ..service import Nas
    from .ops import NasOperations
    from .read_socket import ReadSocket

    check_mountpoint(mountpoint)
    disk = DiskCache()
    git_tree = GitTree(source, node=node, tree=tree, hashes=disk)
    nas = Nas(git_tree, tokenizer=tokenizer, disk=disk, summarizer=summarizer)
    if publish:
        from ..evidence.nodes import check_url
        from ..evidence.publish import Publisher

        nas.publish_to(Publisher(git_tree.git_dir, check_url(publish, "--publish"), git_tree.node, publish_private))
    ops = NasOperations(nas, autocommit=autocommit, attr_timeout=attr_timeout, faults=faults)
    # the mountpoint's real path, taken before the mount: the socket maps a client's folder in
    # the mount to the tree by this string, and never resolves a path through its own mount
    reads = ReadSocket(ops, allow_other, summaries=summarizer is not None, mountpoint=os.path.realpath(mountpoint))
    options = set(pyfuse3.default_options)
    options |= {f"fsname={git_tree.root}", "subtype=nasfs"}
    if allow_other:
        options.add("allow_other")
    pyfuse3.init(ops, mountpoint, options)
    ops.watcher.start()
    if nas.summaries is not None:
        nas.summaries.start_background()  # --summaries background: worker threads, never the request loop
    warmer = _start_warm_up(git_tree, tokenizer) if warm else None
    clean = False
    try:
        trio.run(_serve, ops, reads)
        clean = True
    except* ConnectionAbortedError:
        if mount_at(mountpoint) is not None:
            log.error("the FUSE connection of %s was aborted (/sys/fs/fuse/connections/N/abort)", mountpoint)
            raise
        # unmounted while requests were still on their way (the kernel then ends the
        # connection as aborted, ECONNABORTED, not ENODEV): the end of a mount like any other
        log.info("the kernel ended the connection at the unmount, with requests of it still in flight")
        clean = True
    finally:
        if warmer is not None:
            _stop(warmer)
        if nas.publisher is not None:
            nas.publisher.stop()
        ops.close()
        pyfuse3.close(unmount=clean)
        if not clean:
            _lazy_unmount(mountpoint)
    log.info("unmounted %s", mountpoint)
    return 0


def _start_warm_up(git_tree, tokenizer: str) -> subprocess.Popen | None:
    """``nasfs index --jobs 1 --progress-log`` at low priority; its lines go to
    this daemon's log. The mount never waits for it; a failure only logs."""
    import threading

    argv = [sys.executable, "-P", "-m", "nasfs", "index", "--jobs", "1", "--progress-log", "--tokenizer", tokenizer,
            "--node", git_tree.node, "--tree", git_tree.tree, str(git_tree.root)]
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 cwd="/", preexec_fn=lambda: os.nice(10))
    except OSError as exc:
        log.warning("warm-up not started: %s", exc)
        return None

    def relay() -> None:
        assert child.stdout is not None
        for raw in child.stdout:
            log.info("%s", raw.decode(errors="replace").rstrip())
        if child.wait() not in (0, -signal.SIGTERM, 143):
            log.warning("warm-up failed (exit %s); views are computed on first read instead", child.returncode)

    threading.Thread(target=relay, name="nasfs-warm-up", daemon=True).start()
    log.info("warm-up started (pid %d): nasfs index of %s", child.pid, git_tree.root)
    return child


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


async def _serve(ops: NasOperations, reads: ReadSocket) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_on_signals, nursery.cancel_scope)
        nursery.start_soon(ops.watch_repository)
        nursery.start_soon(reads.serve)  # nasfs read from other processes (read_client.py); never raises
        _notify_systemd()
        await pyfuse3.main()
        nursery.cancel_scope.cancel()


async def _on_signals(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            log.info("signal %s: unmounting", signal.Signals(signum).name)
            pyfuse3.terminate()
            return


def _notify_systemd() -> None:
    """READY=1 to systemd's notify socket, when started as Type=notify."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    import socket

    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"READY=1", address)


def _lazy_unmount(mountpoint: str) -> None:
    subprocess.run(["fusermount3", "-u", "-z", mountpoint], capture_output=True)


def start_daemon(argv: list[str], mountpoint: str, log_file: str | None, timeout: float = 30.0) -> int:
    """Run ``nasfs mount --foreground ...`` in a new session; wait until the
    mount answers or the child fails, and say which."""
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL
    # -P: the daemon imports the installed nasfs, never a folder named nasfs in
    # the caller's current folder; it runs in / so it holds no folder busy.
    child = subprocess.Popen([sys.executable, "-P", "-m", "nasfs.cli", *argv, "--foreground"],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE if not log_file else out,
                             start_new_session=True, cwd="/")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            err = child.stderr.read().decode(errors="replace").strip() if child.stderr else ""
            raise MountError(f"the mount daemon exited with {child.returncode}: {err or 'see ' + str(log_file)}")
        # asked from a child, as status does: a daemon that stops answering while it starts (or
        # another mount there that does not answer) must not hang this wait past its timeout
        if mount_at(mountpoint) is not None:
            found = probe(mountpoint, min(PROBE_SECONDS, max(deadline - time.monotonic(), 0.1)))
            if found.state == "answering" and found.stats:
                if child.stderr:
                    child.stderr.close()
                return child.pid
        time.sleep(0.05)
    child.terminate()
    raise MountError(f"the mount at {mountpoint} did not answer within {timeout:.0f} s")


def unmount(mountpoint: str) -> None:
    info = mount_at(mountpoint)
    if info is None:
        raise MountError(f"{mountpoint} is not a nasfs mount", "a folder listed by 'nasfs status'")
    lazy = probe(mountpoint).state != "answering"  # a stale or wedged daemon cannot take part in a clean unmount
    args = ["fusermount3", "-u"] + (["-z"] if lazy else []) + [os.path.abspath(mountpoint)]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise MountError(f"unmount failed: {done.stderr.strip()}", "close the files open under it, or 'fusermount3 -u -z'")
    for _ in range(100):  # wait for the daemon to let go
        if mount_at(mountpoint) is None:
            return
        time.sleep(0.05)


PROBE_SECONDS = 5.0  # how long a mount may take to answer nasfs status or umount before it is called wedged
# Run in a child process: a daemon that is alive but does not answer (deadlocked, stopped) leaves the
# caller of statvfs waiting in the kernel, uninterruptibly once the daemon has read the request; the
# child is left to wait instead of nasfs status or umount. It prints the errno or the daemon's .nas/stats.
_PROBE = """
import json, os, sys
mountpoint = sys.argv[1]
try:
    st = os.statvfs(mountpoint)  # always asks the daemon; stat may be answered from cache
except OSError as exc:
    print(json.dumps({"errno": exc.errno}))
    sys.exit()
if st.f_bsize == 0 and st.f_namemax == 0:  # the kernel's own answer to a caller the mount does not let in
    print(json.dumps({"unasked": True}))  # (mounted without allow_other): the daemon was not asked
    sys.exit()
try:
    with open(os.path.join(mountpoint, ".nas", "stats")) as fh:
        stats = dict(line.rstrip("\\n").split("=", 1) for line in fh if "=" in line)
except OSError:
    stats = {}
print(json.dumps({"stats": stats}))
"""


@dataclass(frozen=True)
class Probe:
    """How a mount answered: ``answering`` (with its ``.nas/stats``, empty
    when it could not be read), ``stale`` (its daemon is gone), ``wedged``
    (alive, but no answer within PROBE_SECONDS) or ``unasked``: this caller
    may not use the mount (one mounted without allow_other by another user,
    or a folder on its way closed to it), so the kernel answers for the
    daemon, alive or not, and nothing is known of it."""

    state: str
    stats: dict[str, str]


def probe(mountpoint: str, timeout: float = PROBE_SECONDS) -> Probe:
    """Ask a mount to answer, from a child process that is not waited for
    past ``timeout``: a wedged mount makes nasfs status and umount say so
    instead of hanging with it."""
    return probes([mountpoint], timeout)[0]


def probes(mountpoints: list[str], timeout: float = PROBE_SECONDS) -> list[Probe]:
    """``probe`` of each mount, all at once: several wedged mounts cost
    nasfs status ``timeout`` once, not once each."""
    # the child runs in /: a mount point named relative to this process's folder is made absolute
    children = [subprocess.Popen([sys.executable, "-P", "-c", _PROBE, os.path.abspath(m)], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)
                for m in mountpoints]
    deadline = time.monotonic() + timeout
    return [_answer(child, max(deadline - time.monotonic(), 0.05)) for child in children]


def _answer(child: subprocess.Popen, timeout: float) -> Probe:
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()  # ends it unless the daemon already read its request; then it ends when the mount does
        child.stdout.close()  # type: ignore[union-attr]
        child.returncode = -signal.SIGKILL  # not waited for: its wait may never end
        return Probe("wedged", {})
    try:
        said = json.loads(out)
    except ValueError:
        return Probe("answering", {})  # the child failed after statvfs answered
    if "unasked" in said or said.get("errno") in (errno.EACCES, errno.EPERM):
        return Probe("unasked", {})
    if "errno" in said:
        return Probe("stale" if said["errno"] in (errno.ENOTCONN, errno.ECONNABORTED) else "answering", {})
    return Probe("answering", said["stats"])


def repository_problem(stats: dict[str, str]) -> str | None:
    """What the daemon says is wrong with its repository (``.nas/stats``)."""
    return stats.get("repository_problem") or None


def summaries_line(stats: dict[str, str]) -> str:
    """``summaries: queued=.. running=.. done=.. failed=.. stale=..`` from ``.nas/stats``, or ""."""
    if "summaries_mode" not in stats:
        return ""
    counts = " ".join(f"{k}={stats.get('summaries_' + k, '?')}" for k in ("queued", "running", "done", "failed", "stale"))
    return f"\n  summaries ({stats['summaries_mode']}, {stats.get('summaries_model', '?')}): {counts}"


def publish_line(stats: dict[str, str]) -> str:
    """``publishing to URL: pushed=.. pending=.. failed=..`` and the oldest pending, from ``.nas/stats``, or ""."""
    if "publish_remote" not in stats:
        return ""
    counts = " ".join(f"{k}={stats.get('publish_' + k, '?')}" for k in ("pushed", "pending", "failed"))
    oldest = stats.get("publish_oldest_pending")
    return f"\n  publishing to {stats['publish_remote']}: {counts}" + (f"\n  oldest pending: {oldest}" if oldest else "")


def describe(path: Path | str | None = None) -> tuple[str, bool]:
    """One line per nasfs mount (or the one at ``path``), and whether all of
    them answer: a stale or wedged mount is a failure an admin's script must see;
    so is the mount at ``path`` when this caller may not ask it (another
    user's, without allow_other), which is no failure in the list of all."""
    rows = []
    healthy = True
    listed = [m for m in mounts() if path is None or m.mountpoint == os.path.abspath(path)]
    for m, found in zip(listed, probes([m.mountpoint for m in listed])):
        problem = repository_problem(found.stats)
        healthy &= (found.state == "answering" or found.state == "unasked" and path is None) and problem is None
        state = {"stale": "stale (daemon gone; clear it with 'nasfs umount')",
                 "unasked": "not asked (this user may not use it: mounted without allow_other by another user,"
                            " or a folder on its way is closed; ask as the user who mounted it)",
                 "wedged": f"not answering (its daemon is alive but did not answer within {PROBE_SECONDS:.0f} s;"
                           " 'nasfs umount' detaches it)"}.get(found.state, "answering")
        if problem:
            state += f", but {problem}"
        rows.append(f"{m.mountpoint}: nasfs over {m.source}, {state}, options {m.options}"
                    + summaries_line(found.stats) + publish_line(found.stats))
    return "\n".join(rows), healthy
