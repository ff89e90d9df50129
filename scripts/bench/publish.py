"""Benchmark: what publishing costs a read (issue 26), as ratios to a mount that does not publish.

    .venv/bin/python scripts/bench/publish.py [--reads 40] [--rounds 3]

Builds a git repository under /tmp (the demo tree) and a bare repository
served by ``git daemon --enable=receive-pack`` on 127.0.0.1, then mounts the
tree three times (``python -m nasfs mount ... --foreground``): without
``--publish`` (the baseline), with ``--publish`` to the live daemon, and with
``--publish`` to a remote that accepts connections and never answers (a hung
server: the publisher's push waits on it). In each, --reads new files are
written beside the mount and their ``@L1-L3.json`` view read through it (a
new snapshot commit each, so each read hands the publisher a new commit), and
the read times are compared; the phases run in turn, --rounds times. Target: no read more than 100 ms slower than the
baseline's slowest. Everything made is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mount(src: Path, mnt: Path, *extra: str) -> subprocess.Popen:
    mnt.mkdir(exist_ok=True)
    proc = subprocess.Popen([str(C.PY), "-m", "nasfs", "mount", str(src), str(mnt), "--foreground", "--no-warm", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (mnt / ".nas" / "HELP").exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("mount did not come up")
        time.sleep(0.05)
    return proc


def unmount(mnt: Path, proc: subprocess.Popen) -> None:
    subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)


def start_daemon(served: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(["git", "daemon", "--enable=receive-pack", f"--base-path={served}", "--export-all",
                             "--reuseaddr", f"--port={port}", "--listen=127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc


def reads(src: Path, mnt: Path, tag: str, n: int) -> list[float]:
    took = []
    for i in range(n):
        (src / f"{tag}{i}.md").write_text(f"# {tag} {i}\n\nnew content {tag} {i}\n")
        took.append(C.timed(lambda: (mnt / f"{tag}{i}.md@L1-L3.json").read_bytes()))
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="each phase this many times, in turn")
    args = parser.parse_args()
    C.banner("publishing: read times with no remote, a live remote and a hung one")
    work = C.workdir("publish")
    src, served = work / "home", work / "served"
    shutil.copytree(C.REPO / "demo", src)
    env = dict(os.environ, **C.GIT_ENV)
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", *cmd], cwd=src, env=env, check=True)
    served.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(served / "home.git")], check=True)
    port = free_port()
    daemon = start_daemon(served, port)
    C.on_exit(lambda: daemon.poll() is None and (daemon.terminate(), daemon.wait()))
    url = f"git://127.0.0.1:{port}/home.git"
    phases = (("no --publish (baseline)", ()), ("--publish, remote up", ("--publish", url)),
              ("--publish, remote hung", ("--publish", url)))
    results: dict[str, list[float]] = {name: [] for name, _ in phases}
    pending: dict[str, str] = {}
    for round_ in range(args.rounds):  # the phases in turn, so load that drifts meets each alike
        for k, (name, extra) in enumerate(phases):
            hung = None
            if name.endswith("hung"):
                daemon.terminate()
                daemon.wait()
                hung = socket.socket()
                hung.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                hung.bind(("127.0.0.1", port))
                hung.listen(64)
            mnt = work / "mnt"
            proc = mount(src, mnt, *extra)
            try:
                reads(src, mnt, f"warm{round_}-{k}-", 3)
                results[name] += reads(src, mnt, f"r{round_}-{k}-", args.reads)
                stats = (mnt / ".nas" / "stats").read_text()
            finally:
                unmount(mnt, proc)
                if hung is not None:
                    hung.close()
                    daemon = start_daemon(served, port)
            pending[name] = next((l.split("=", 1)[1] for l in stats.splitlines() if l.startswith("publish_pending=")), "-")
    rows = [[name, C.ms(C.median(t)), C.ms(C.pct(t, 0.9)), C.ms(max(t)), pending[name]] for name, t in results.items()]
    base = results["no --publish (baseline)"]
    for row, took in zip(rows, results.values()):
        row += [C.ratio(C.median(took), C.median(base)), f"{(max(took) - max(base)) * 1000:+.0f} ms"]
    C.table(["mount", "median", "p90", "max", "pending at end", "median ratio", "max - baseline max"], rows,
            f"{args.reads} reads of a new file's @L1-L3.json per phase and round, {args.rounds} rounds")
    worst = max(max(t) for t in results.values()) - max(base)
    print(f"target: no read more than 100 ms slower than the baseline's slowest: {C.verdict(worst <= 0.1)}")
    C.finish()


if __name__ == "__main__":
    main()
