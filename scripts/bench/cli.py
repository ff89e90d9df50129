"""``nasfs read P@outline`` as a whole process, with and without a mount daemon.

    .venv/bin/python scripts/bench/cli.py [--tree DIR] [--runs 30] [--spec PATH@outline] [--before DIR] [--keep]

Builds under /tmp a scratch git repository (a copy of --tree, default this
checkout's nasfs/ package, committed once), warms its disk cache with one
read, then times whole processes in paired rounds (one untimed round first,
then --runs rounds, each command once per round, in turn):

- ``python3 -c pass`` (the interpreter alone) and ``cat P`` (the file read
  natively): the baselines;
- ``nasfs read P@outline`` with no daemon: the CLI alone (imports, repository,
  disk cache);
- the same with ``nasfs mount SRC MNT`` running over the tree (its defaults):
  the CLI asks the daemon over the read socket (nasfs/read_client.py);
- with ``--before DIR`` (e.g. ``git archive main | tar -x -C DIR``), also the
  CLI alone as DIR's nasfs/ runs it, in the same rounds.

Both nasfs answers are compared byte for byte. Prints medians, p90 and the
median of paired ratios to ``python3 -c pass``; the goal is <= 100 ms for the
read with a daemon. The mount is removed and the folder deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from tools import NasMount  # noqa: E402

NASFS = [str(C.PY), "-P", "-m", "nasfs"]  # -P: the tree (a copy of nasfs/, holding http.py) must not shadow a module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=C.REPO / "nasfs", help="folder copied into the scratch repository")
    ap.add_argument("--spec", default="service.py@outline", help="what to read, relative to the tree")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--before", type=Path, help="a checkout whose nasfs/ also runs the read alone, in the same rounds")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    C.banner("nasfs read as a whole process: alone and through a mount daemon, against python -c pass and cat")
    work = C.workdir("cli", args.keep)
    src, mnt = work / "src", work / "mnt"
    shutil.copytree(args.tree, src, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    C.make_repo(src, "cli bench")
    env = C.child_env(NASFS_CACHE_DIR=str(work / "cache"))
    plain = args.spec.split("@", 1)[0]
    read = [*NASFS, "read", args.spec]
    C.run_timed(read, cwd=src, env=env)  # the disk cache holds the view from now on
    commands = {"python3 -c pass": [sys.executable, "-c", "pass"], f"cat {plain}": ["cat", plain],
                "nasfs read, alone": read}
    envs = {name: env for name in commands}
    if args.before:
        commands["nasfs read, alone, before"] = read
        envs["nasfs read, alone, before"] = dict(env, PYTHONPATH=str(args.before.resolve()))

    def rounds(names: list[str], with_daemon: bool) -> dict[str, list[float]]:
        times: dict[str, list[float]] = {n: [] for n in names}
        for r in range(args.runs + 1):
            for name in names:
                dt, _ = C.run_timed(commands[name], cwd=src, env=envs.get(name, env))
                if r:
                    times[name].append(dt)
        return times

    ld = f"{os.getloadavg()[0]:.2f}"
    alone_out = C.run_timed(read, cwd=src, env=env)[1].stdout
    if args.before:
        before = C.run_timed(read, cwd=src, env=envs["nasfs read, alone, before"])[1]
        if before.returncode != 0:
            sys.exit(f"--before {args.before}: its nasfs read failed: {before.stderr.decode(errors='replace')[-500:]}")
    times = rounds(list(commands), False)
    m = NasMount(src, mnt, env, work / "mount.log")
    try:
        t = time.perf_counter()
        while m.warming():
            time.sleep(0.5)
        waited = time.perf_counter() - t
        commands["nasfs read, daemon running"] = read
        via_out = C.run_timed(read, cwd=src, env=env)[1].stdout
        more = rounds(["python3 -c pass", "nasfs read, daemon running"], True)
        answered = dict(line.split("=", 1) for line in (mnt / ".nas" / "stats").read_text().splitlines())["socket_reads"]
    finally:
        m.stop()
    times["nasfs read, daemon running"] = more["nasfs read, daemon running"]
    base = {"": times["python3 -c pass"], "d": more["python3 -c pass"]}
    rows = []
    for name, ts in times.items():
        b = base["d"] if "daemon" in name else base[""]
        ratios = [x / y for x, y in zip(ts, b)]
        rows.append([name, C.ms(C.median(ts)), C.ms(C.pct(ts, .9)), f"{C.median(ratios):.2f}x",
                     ("<= 100 ms: " + C.verdict(C.median(ts) <= 0.1)) if name.startswith("nasfs") else ""])
    C.table(["command (whole process)", f"median of {args.runs}", "p90", "vs python3 -c pass (paired)", "goal"], rows,
            title=f"nasfs read {args.spec} (load {ld} -> {os.getloadavg()[0]:.2f}; the daemon answered {answered} reads; "
                  f"answers {'identical' if alone_out == via_out else 'DIFFER'}, {len(via_out):,} bytes; the mount's warm-up ended {waited:.1f} s after it answered)")


if __name__ == "__main__":
    main()
    C.finish()
