"""Benchmark of the bulk warm-up (issue 9): cold `nasfs index --jobs N` against `ctags -R`.

    .venv/bin/python scripts/bench/index.py [TREE] [--jobs 1,2] [--runs 2] [--before CHECKOUT] [--in-place] [--keep]

TREE (default: this Python's standard library, without site-packages) is
copied and committed as core.py does. Each round times ``ctags -R -f - .``
over it (its tags to a temp file), then every ``nasfs index --jobs N TREE``
asked for, each a new process over an empty NASFS_CACHE_DIR (cold), with a
second checkout's nasfs (--before: a folder holding ``nasfs/``, e.g. ``git
archive main | tar -x -C /tmp/nasfs-main``, imported through PYTHONPATH with this venv's
packages) run in turn with this one, so both meet the same load. Printed per
case: the median wall time and the least CPU (user + system of the process
and its workers), each against ctags' in the same rounds, with the load
average of each round; and the workers seen running with the CPU each
burnt (a check that N jobs are N processes at work). A last run over the
now warm cache shows what a repeated warm-up costs. Both sides must print
the same summary (files, outline tokens, skipped): the answers' counts agree.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from core import default_tree, prepare  # noqa: E402


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[float, float, dict[int, float], str]:
    """(wall s, CPU s of the process and everything it waited for, CPU s of
    each pool worker seen while it ran, stdout). Workers are sampled from
    /proc every 50 ms, so a worker's last 50 ms may be missing from its figure;
    multiprocessing's resource tracker is not a worker and is not shown."""
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # not pipes: nothing reads them while it runs
    cpu0 = children_cpu()
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
    workers: dict[int, float] = {}
    while proc.poll() is None:
        try:
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        except OSError:
            kids = []
        for kid in map(int, kids):
            try:
                if kid in workers or b"spawn_main" in Path(f"/proc/{kid}/cmdline").read_bytes():  # a pool worker
                    workers[kid] = C.cpu_seconds(kid)
            except (OSError, IndexError):
                pass
        time.sleep(0.05)
    wall = time.perf_counter() - t
    cpu = children_cpu() - cpu0
    out.seek(0)
    err.seek(0)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.read().decode(errors='replace')[-2000:]}")
    return wall, cpu, workers, out.read().decode(errors="replace")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", nargs="?", default=default_tree(), help="a tree of files (default: Python's stdlib)")
    ap.add_argument("--jobs", default="1,2", help="comma-separated --jobs values to time")
    ap.add_argument("--runs", type=int, default=2, help="rounds (each: ctags, then every case once)")
    ap.add_argument("--before", type=Path, help="a checkout holding nasfs/ to time against this one")
    ap.add_argument("--in-place", action="store_true", help="use TREE as it is (a git work tree) instead of a copy")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    args = ap.parse_args()
    if args.before is not None and not (args.before / "nasfs" / "__init__.py").is_file():
        sys.exit(f"{args.before}: no nasfs/ package there (export a commit of this repository there first)")
    try:
        jobs = [int(j) for j in args.jobs.split(",")]
    except ValueError:
        sys.exit(f"--jobs {args.jobs!r}: give comma-separated whole numbers, e.g. 1,2")
    C.banner("nasfs index, cold, against ctags -R (issue 9)")
    ctags = C.require("ctags")
    work = C.workdir("index", args.keep)
    tree, how = prepare(args, work)
    print(f"tree: {tree} ({how})")
    sides = {"after": {}} if args.before is None else {"before": {"PYTHONPATH": str(args.before.resolve())}, "after": {}}
    print("sides: " + ", ".join(f"{s} = nasfs from {e['PYTHONPATH'] if e else C.REPO}" for s, e in sides.items()) + "\n")

    ctags_runs: list[tuple[float, float]] = []
    cases: dict[tuple[str, int], list[tuple[float, float, dict[int, float]]]] = {}
    summaries: dict[str, set[str]] = {}
    n = 0
    for r in range(args.runs):
        print(f"round {r + 1}: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        for _ in range(3):
            wall, cpu, _, _ = run([ctags, "-R", "-f", "-", "."], cwd=tree)
            ctags_runs.append((wall, cpu))
        for j in jobs:
            for side, extra in sides.items():
                n += 1
                env = C.child_env(NASFS_CACHE_DIR=str(work / f"cache-{n}"), **extra)
                wall, cpu, workers, out = run([str(C.PY), "-P", "-m", "nasfs", "index", "--jobs", str(j), str(tree)], env=env)
                cases.setdefault((side, j), []).append((wall, cpu, workers))
                summaries.setdefault(side, set()).add(out.strip().split(")", 1)[0] + ")")  # files, tokens, skipped
                print(f"  {side} --jobs {j}: {wall:.2f} s wall, {cpu:.2f} s CPU; {out.strip()}", flush=True)
    ctags_wall = C.median([w for w, _ in ctags_runs])
    ctags_cpu = min(c for _, c in ctags_runs)
    print(f"\nbaseline: `ctags -R -f - .` median of {len(ctags_runs)} = {ctags_wall:.3f} s wall, least CPU {ctags_cpu:.3f} s")
    rows = []
    for (side, j), got in cases.items():
        wall = C.median([w for w, _, _ in got])
        cpu = min(c for _, c, _ in got)
        busy = max(got, key=lambda g: len(g[2]))[2]
        seen = ", ".join(f"{c:.1f}" for c in sorted(busy.values(), reverse=True))
        rows.append([side, j, wall, C.ratio(wall, ctags_wall), cpu, C.ratio(cpu, ctags_cpu), f"{len(busy)}: {seen or '-'}"])
    C.table(["nasfs", "--jobs", "wall s (median)", "vs ctags wall", "CPU s (least)", "vs ctags CPU", "worker processes: CPU s each"], rows,
            title="cold: a new process, an empty cache")
    agree = len({s for ss in summaries.values() for s in ss}) == 1
    print("summaries " + ("agree: " if agree else "DIFFER: ") + "; ".join(f"{k}: {' | '.join(sorted(v))}" for k, v in summaries.items()))
    env = C.child_env(NASFS_CACHE_DIR=str(work / f"cache-{n}"))
    wall, cpu, _, out = run([str(C.PY), "-P", "-m", "nasfs", "index", "--jobs", str(max(jobs)), str(tree)], env=env)
    print(f"warm (after, the last run's cache): --jobs {max(jobs)} {wall:.2f} s wall ({C.ratio(wall, ctags_wall)} ctags), {cpu:.2f} s CPU; {out.strip()}")


if __name__ == "__main__":
    main()
    C.finish()
