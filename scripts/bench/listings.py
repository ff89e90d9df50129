"""Directory listings through the mount: kernel-cached listings against uncached ones.

    .venv/bin/python scripts/bench/listings.py [--tree DIR | --files 15000] [--runs 5]
                                               [--bare-python PY] [--nasfs-from DIR] [--requests] [--keep]

Builds under /tmp a scratch git repository SRC with tree/ (a copy of --tree DIR
without its .git folders, or --files generated small files), committed, and
mounts it with nasfs and three times with scripts/bench/bare_passthrough.py
(3600 s timeouts, as nasfs's):

- ``bare``: listings uncached, mounted read-only (the floor of tools.py);
- ``bare-cached``: ``--cache-readdir`` (opendir asks the kernel to cache the
  listing and keep it: needs the binding patched by scripts/pyfuse3-patches/),
  read-only;
- ``bare-cached-rw``: the same, mounted read-write as nasfs is (a read-write
  FUSE mount drops a folder's atime after a listing it did not cache).

--bare-python runs the bare daemons with another interpreter (one whose
pyfuse3 is patched; default this venv's). --nasfs-from DIR adds a side
``mount-from`` whose daemon runs DIR's nasfs/ (e.g. main's, from
``git archive main | tar -x -C DIR``). Then it times ``find tree -name '*.py'``,
``git status --porcelain`` and ``rg -c LITERAL tree`` as the median of --runs
paired runs (every side in turn, after one untimed warm-up run of each), with
each daemon's CPU per run and the load average, and (--requests) counts the
FUSE requests each daemon reads behind one warm run (strace).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from mount import count_requests  # noqa: E402
from tools import NOMATCH, load1, loads  # noqa: E402

BARE = Path(__file__).resolve().parent / "bare_passthrough.py"
BARES = {"bare": [], "bare-cached": ["--cache-readdir"], "bare-cached-rw": ["--cache-readdir", "--rw"]}


class Bare(C.FuseDaemon):
    def __init__(self, python: Path, source: Path, mountpoint: Path, log: Path, flags: list[str]) -> None:
        super().__init__([str(python), "-P", str(BARE), str(source), str(mountpoint), "3600", *flags], mountpoint, log,
                         "tree", "bare pass-through " + " ".join(flags), stop_wait=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, help="a folder to copy into the scratch repository (default: a generated tree)")
    ap.add_argument("--files", type=int, default=15000, help="files of the generated tree")
    ap.add_argument("--runs", type=int, default=5, help="timed paired runs per command (median)")
    ap.add_argument("--bare-python", type=Path, default=C.PY, help="the interpreter of the bare daemons (a patched pyfuse3)")
    ap.add_argument("--nasfs-from", type=Path, help="also mount with the nasfs/ of this checkout (side mount-from)")
    ap.add_argument("--requests", action="store_true", help="count FUSE requests per command on every daemon (strace)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (the mounts are always removed)")
    args = ap.parse_args()

    start_load = loads()
    C.banner("directory listings: nasfs vs native vs bare pass-throughs with and without kernel-cached listings")
    rg = C.require("rg")
    for tool in ("find", "git", "fusermount3"):
        C.require(tool)
    if args.requests:
        C.require("strace")
    work = C.workdir("listings", args.keep)
    src = work / "src"
    src.mkdir()
    if args.tree:
        shutil.copytree(args.tree, src / "tree", symlinks=True, ignore=shutil.ignore_patterns(".git"))
    else:
        C.gen_tree(src / "tree", args.files)
    C.make_repo(src, "listings bench")
    n_files = sum(len(f) for _, _, f in os.walk(src / "tree"))
    n_dirs = sum(1 for _ in os.walk(src / "tree"))
    print(f"source: {src}: tree/ has {n_files:,} files in {n_dirs:,} folders")

    daemons: dict[str, C.FuseDaemon] = {}
    env = C.child_env(NASFS_CACHE_DIR=str(work / "cache"))
    daemons["mount"] = C.Mount(src, work / "mnt", env, work / "mount.log", "--node", "box", "--tree", "t",
                               launcher=[str(C.PY), "-P", "-m", "nasfs"])
    if args.nasfs_from:
        if not (args.nasfs_from / "nasfs" / "__init__.py").is_file():
            sys.exit(f"--nasfs-from {args.nasfs_from}: no nasfs/ package there (a checkout of this repository is wanted)")
        env_from = C.child_env(NASFS_CACHE_DIR=str(work / "cache-from"), PYTHONPATH=str(args.nasfs_from.resolve()))
        daemons["mount-from"] = C.Mount(src, work / "mnt-from", env_from, work / "mount-from.log", "--node", "box", "--tree", "t",
                                        launcher=[str(C.PY), "-P", "-m", "nasfs"])
    for side, flags in BARES.items():
        daemons[side] = Bare(args.bare_python, src, work / side, work / f"{side}.log", flags)
    bases = {"native": src, **{side: d.mountpoint for side, d in daemons.items()}}
    sides = list(bases)
    print("mounts: " + ", ".join(f"{s} {d.mountpoint} (pid {d.pid})" for s, d in daemons.items()) + f"; bare python {args.bare_python}\n")

    git_env = C.child_env(**C.GIT_ENV)
    commands = [
        ("find tree -name '*.py'", ["find", "tree", "-name", "*.py"], None),
        ("git status --porcelain", ["git", "status", "--porcelain"], git_env),
        (f"rg -c {NOMATCH} tree", [rg, "-c", NOMATCH, "tree"], None),
    ]
    summary = []
    for label, cmd, cenv in commands:
        outs = {s: sorted(C.run_timed(cmd, cwd=bases[s], env=cenv)[1].stdout.splitlines()) for s in sides}  # warm-up
        same = "identical (sorted)" if all(outs[s] == outs["native"] for s in sides) else \
            "DIFFER: " + ", ".join(f"{s} {len(outs[s])} lines" for s in sides)
        times: dict[str, list[float]] = {s: [] for s in sides}
        cpu: dict[str, list[float]] = {s: [] for s in daemons}
        ld = load1()
        for _ in range(args.runs):
            for s in sides:
                c0 = C.cpu_seconds(daemons[s].pid) if s in daemons else 0.0
                times[s].append(C.run_timed(cmd, cwd=bases[s], env=cenv)[0])
                if s in daemons:
                    cpu[s].append(C.cpu_seconds(daemons[s].pid) - c0)
        med = {s: C.median(times[s]) for s in sides}
        C.table(["side", f"median s of {args.runs}", "min..max", "vs native", "daemon CPU s (median)"],
                [[s, med[s], f"{min(times[s]):.4f}..{max(times[s]):.4f}", C.ratio(med[s], med["native"]),
                  f"{C.median(cpu[s]):.3f}" if s in cpu else "-"] for s in sides],
                title=f"{label}  (output {same}; load {ld} -> {load1()})")
        summary.append([label] + [C.ratio(med[s], med["native"]) for s in sides[1:]] + [f"{ld}..{load1()}"])

    if args.requests:
        rows = []
        for label, cmd, cenv in commands:
            for s, d in daemons.items():
                C.run_timed(cmd, cwd=bases[s], env=cenv)  # warm, as the timed runs were
                counts = count_requests(d.pid, lambda: C.run_timed(cmd, cwd=bases[s], env=cenv), work / "strace.txt")
                rows.append([label, s, sum(counts.values()), " ".join(f"{k}={v}" for k, v in counts.items())])
        C.table(["command (one warm run)", "daemon", "FUSE requests", "by opcode"], rows,
                title=f"FUSE requests read by each daemon from /dev/fuse (strace; {n_files:,} files, {n_dirs:,} folders)")

    for d in daemons.values():
        d.stop()
    C.table(["command"] + [f"{s}/native" for s in sides[1:]] + ["load 1-min"], summary,
            title=f"summary: time through each side / native time, same run ({n_files:,} files)")
    print(f"load average at start {start_load}, at end {loads()}")


if __name__ == "__main__":
    main()
    C.finish()
