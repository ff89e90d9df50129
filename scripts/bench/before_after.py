"""Two nasfs daemons over one tree, runs alternating: an earlier checkout against this one.

    git archive main | tar -x -C /tmp/nasfs-main     # or any commit
    .venv/bin/python scripts/bench/before_after.py /tmp/nasfs-main [--files 6000] [--runs 5]

On a shared machine two separate benchmark runs meet different loads; here
both daemons serve the same generated tree (tree/ with --files small files,
committed) at the same time, with warm-up off (``--no-warm``), and every
command runs on each in turn, native first: ``rg -c LITERAL tree`` and
``grep -r LITERAL tree`` (no match), ``find tree -name '*.py'``,
``git status --porcelain``, --views opens of a small file's ``@outline``,
and a sequential read of big.bin (--big-mib MiB, git-ignored) in 1 MiB
reads, warm and cold (``echo 3 > /proc/sys/vm/drop_caches`` before each, untimed). It prints the median wall time of --runs runs per
side, each against native, and the daemon's CPU per run (user + system, all
threads), which load disturbs less. Then the repeated view of issue 9, as
tools.py measures it: --repeat open+read of ``long.py@outline`` (--lines
lines, committed) in this process, native ``long.py``, before and after in
turn (the order reversed every other round), and a quarter as many ``cat``
processes, each as median and p90. The "before" daemon imports nasfs from
BEFORE (PYTHONPATH) with this venv's packages. Both mounts, the daemons and
the scratch folder are removed at the end, also on error or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from mount import open_read, seq_read  # noqa: E402  (tools.py's open+read and sequential read)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout (or an exported commit) holding nasfs/")
    ap.add_argument("--files", type=int, default=6000, help="files of the generated tree")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command and side (median)")
    ap.add_argument("--views", type=int, default=100, help="repeated opens of a small file's @outline")
    ap.add_argument("--lines", type=int, default=5000, help="lines of long.py")
    ap.add_argument("--repeat", type=int, default=400, help="open+read of long.py@outline per side (cat runs: a quarter)")
    ap.add_argument("--big-mib", type=int, default=256, help="size of big.bin (MiB), read warm and cold")
    args = ap.parse_args()
    if not (args.before / "nasfs" / "__init__.py").is_file():
        sys.exit(f"{args.before}: no nasfs/ package there (export a commit of this repository there first)")
    C.banner("nasfs before vs after, one tree, runs alternating")
    rg = C.require("rg")
    work = C.workdir("before-after")
    src = work / "src"
    src.mkdir()
    C.gen_tree(src / "tree", args.files)
    (src / "long.py").write_text(C.long_python(args.lines))
    (src / ".gitignore").write_text("big.bin\n")
    with open(src / "big.bin", "wb") as fh:
        for _ in range(args.big_mib):
            fh.write(os.urandom(1 << 20))
    C.make_repo(src, "before/after bench")
    small = sorted((src / "tree").rglob("*.md"))[0].relative_to(src)
    sides = {}
    for side, extra in (("before", {"PYTHONPATH": str(args.before.resolve())}), ("after", {})):
        env = C.child_env(NASFS_CACHE_DIR=str(work / f"cache-{side}"), **extra)
        sides[side] = C.Mount(src, work / side, env, work / f"{side}.log", "--node", "box", "--tree", "t", "--no-warm",
                              launcher=[str(C.PY), "-P", "-m", "nasfs"])
    print(f"tree: {args.files:,} files; before: nasfs from {args.before.resolve()}; after: this checkout\n")
    git_env = C.child_env(**C.GIT_ENV)

    def view_opens(base: Path) -> None:
        for _ in range(args.views):
            with open(base / f"{small}@outline", "rb") as fh:
                fh.read()

    def plain_opens(base: Path) -> None:
        for _ in range(args.views):
            with open(base / small, "rb") as fh:
                fh.read()

    def nothing() -> None:
        pass

    work_items = [("rg -c LITERAL tree", lambda base: C.run_timed([rg, "-c", "qzxv_nasfs_never_7261", "tree"], cwd=base), nothing),
                  ("grep -r LITERAL tree", lambda base: C.run_timed(["grep", "-r", "qzxv_nasfs_never_7261", "tree"], cwd=base), nothing),
                  ("find tree -name '*.py'", lambda base: C.run_timed(["find", "tree", "-name", "*.py"], cwd=base), nothing),
                  ("git status --porcelain", lambda base: C.run_timed(["git", "status", "--porcelain"], cwd=base, env=git_env), nothing),
                  (f"{args.views} opens of {small}@outline (native: of the file)", None, nothing),
                  (f"read big.bin ({args.big_mib} MiB), warm", lambda base: seq_read(base / "big.bin"), nothing),
                  (f"read big.bin ({args.big_mib} MiB), cold", lambda base: seq_read(base / "big.bin"), C.drop_caches)]
    rows = []
    for label, fn, prepare in work_items:
        def once(base: Path, native: bool = False) -> None:
            if fn is not None:
                fn(base)
            elif native:
                plain_opens(base)
            else:
                view_opens(base)

        for base in (src, *(m.mountpoint for m in sides.values())):
            once(base, base == src)  # warm-up, untimed
        wall: dict[str, list[float]] = {"native": [], **{s: [] for s in sides}}
        cpu: dict[str, list[float]] = {s: [] for s in sides}
        ld = f"{os.getloadavg()[0]:.2f}"
        for _ in range(args.runs):
            prepare()
            wall["native"].append(C.timed(lambda: once(src, True)))
            for side, m in sides.items():
                prepare()
                c0 = C.cpu_seconds(m.pid)
                wall[side].append(C.timed(lambda: once(m.mountpoint)))
                cpu[side].append(C.cpu_seconds(m.pid) - c0)
        native = C.median(wall["native"])
        med = {s: C.median(wall[s]) for s in sides}
        cmed = {s: C.median(cpu[s]) for s in sides}
        rows.append([label, native, med["before"], C.ratio(med["before"], native), med["after"], C.ratio(med["after"], native),
                     cmed["before"], cmed["after"], C.ratio(cmed["after"], cmed["before"]) if cmed["before"] else "-",
                     f"{ld}..{os.getloadavg()[0]:.2f}"])
        time.sleep(0.1)
    C.table(["command", "native s", "before s", "before/native", "after s", "after/native", "before CPU s", "after CPU s",
             "after/before CPU", "load"], rows, title=f"median of {args.runs} alternating runs; CPU: the daemon's, per run")
    repeated_view(src, sides, args.repeat)
    for m in sides.values():
        m.stop()


def wait_settled(path: Path) -> None:
    """Views of a file changed in the last 2 s are made again at each read
    (nasfs.repo.SETTLED_NS, git's racily clean entries); wait that out, as
    any file read minutes after its last change is."""
    st = os.stat(path)
    left = max(st.st_mtime, st.st_ctime) + 2.1 - time.time()
    if left > 0:
        print(f"waiting {left:.1f} s for {path.name} to settle")
        time.sleep(left)


def repeated_view(src: Path, sides: dict[str, C.Mount], repeat: int) -> None:
    """Issue 9's repeated view: open+read of long.py@outline in this process
    and ``cat`` of it, per open, every side in turn (native: long.py)."""
    wait_settled(src / "long.py")
    targets = {"native": src / "long.py", **{s: m.mountpoint / "long.py@outline" for s, m in sides.items()}}
    for target in targets.values():
        open_read(target)  # the first read makes the view
    ld = f"{os.getloadavg()[0]:.2f}"
    # the order turns round every time: a read just after another daemon's
    # read pays for that daemon's late RELEASE on the shared cores (up to 0.8 ms a cat here)
    orders = (list(targets.items()), list(targets.items())[::-1])
    inproc: dict[str, list[float]] = {s: [] for s in targets}
    for i in range(repeat):
        for side, target in orders[i % 2]:
            inproc[side].append(open_read(target))
    cats: dict[str, list[float]] = {s: [] for s in targets}
    for i in range(max(10, repeat // 4)):
        for side, target in orders[i % 2]:
            cats[side].append(C.run_timed(["cat", str(target)])[0])
    rows = []
    for label, runs in (("open+read in process", inproc), ("cat as a process", cats)):
        for side, xs in runs.items():
            rows.append([label if side == "native" else "", side, len(xs), C.ms(C.median(xs)), C.ms(C.pct(xs, .9)),
                         C.ratio(C.median(xs), C.median(runs["native"])),
                         C.ratio(C.median(xs), C.median(runs["before"])) if side != "native" else "-"])
    after = (sides["after"].mountpoint / ".nas" / "stats").read_text().split()
    C.table(["long.py", "side (native: long.py itself)", "runs", "median", "p90", "vs native", "vs before"], rows,
            title=f"repeated long.py@outline, sides in turn (load {ld} -> {os.getloadavg()[0]:.2f}; after's "
                  f"{next((x for x in after if x.startswith('view_lookups_remembered=')), 'no memo count')})")


if __name__ == "__main__":
    main()
    C.finish()
