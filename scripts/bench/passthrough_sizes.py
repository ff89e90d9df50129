"""Where FUSE passthrough pays: grep -r and rg over files of one size, page cache against passthrough.

    .venv/bin/python scripts/bench/passthrough_sizes.py [--sizes 4K,16K,64K,256K,1M,4M,16M] [--mib 32]
                                                        [--runs 5] [--cold-runs 3] [--writes 1000]
                                                        [--requests] [--keep]

Builds under /tmp a scratch git repository with one git-ignored folder per
size (--sizes), holding files of exactly that size (text that never
matches), --mib MiB a folder (at least 4 and at most 2,000 files). It mounts
it twice with this checkout's nasfs (--no-warm), each with the choice of
``nasfs.fuse.passthrough.passed_through`` for a settled file replaced:

- page: only files changed in the last 2 s are passed through, never by
  size or for writing (the page cache, as before passthrough);
- pass: every open is passed through (as main did before the size rule).

Once the files have settled, for each size it times ``grep -r LITERAL`` and
``rg -c LITERAL`` over the folder, warm (median of --runs after two untimed
runs) and cold (``echo 3 > /proc/sys/vm/drop_caches`` before each, median of
--cold-runs), on native, page and pass in turn, and prints each as a ratio
to native with the load average, and the CPU time of the tool and the
daemon per file (rusage of the tool, schedstat of the daemon's threads),
which a loaded machine moves less than wall time. --requests counts the FUSE requests of one
warm grep run per size on each mount (strace), after two untimed runs: the
kernel drops a file's cached atime after every READ the daemon served as well
as after every passed-through read, so the run after one that filled the page
cache still pays a GETATTR per file. Last, writers: a shell
loop that appends a line to each of --writes settled 4 KiB files (``>>``: an
open for writing that does not truncate; an O_TRUNC open changes the file
at once, so it is passed through on any rule), native, page (a writer's
open served by the daemon: WRITE requests) and pass (a writer's open passed
through), waiting for the files to settle again between runs (with
--requests, then the FUSE requests of one more run on each mount).

Both mounts are unmounted and the folder removed at the end (unless --keep),
also on error or SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from mount import count_requests  # noqa: E402

MiB = 1 << 20
NOMATCH = "qzxv_nasfs_never_7261"
SIDES = ("native", "page", "pass")
HOT_S = 2.1  # nasfs.fuse.fast.HOT_NS, and a little
LAUNCH = """import sys
import nasfs.fuse.passthrough as p
choice = sys.argv.pop(1)
p.passed_through = {"page": lambda size, hot, writer: hot, "pass": lambda size, hot, writer: True}[choice]
from nasfs.cli import run
run()
"""


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": MiB, "G": 1 << 30}
    if text[-1:].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def label(size: int) -> str:
    return f"{size // MiB} MiB" if size % MiB == 0 else f"{size >> 10} KiB" if size % 1024 == 0 else f"{size} B"


def fill(folder: Path, size: int, count: int) -> None:
    """``count`` text files of exactly ``size`` bytes."""
    folder.mkdir(parents=True)
    line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
    body = (line * (size // len(line) + 1))[:size - 1] + b"\n"
    for i in range(count):
        (folder / f"f{i:05d}.txt").write_bytes(body)


def append(folder: Path) -> list[str]:
    """A shell appending a line to every file of ``folder``."""
    return ["sh", "-c", 'for f in "$1"/*; do echo "one more line" >> "$f"; done', "sh", str(folder)]


def children_cpu() -> float:
    """User + system CPU of this process's ended children (the tools)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def daemon_cpu(pid: int | None) -> float:
    """CPU time of all a daemon's threads, in ns precision (schedstat)."""
    if pid is None:
        return 0.0
    return sum(int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9


def settle() -> None:
    time.sleep(HOT_S)


def loads() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4K,16K,64K,256K,1M,4M,16M", help="file sizes, comma-separated (K, M suffixes)")
    ap.add_argument("--mib", type=int, default=32, help="MiB of files per size (4 to 2,000 files)")
    ap.add_argument("--runs", type=int, default=5, help="warm runs per side (median)")
    ap.add_argument("--cold-runs", type=int, default=3, help="cold runs per side (median)")
    ap.add_argument("--writes", type=int, default=1000, help="4 KiB files appended to per run (0: no writers part)")
    ap.add_argument("--requests", action="store_true", help="count the FUSE requests of one warm grep per size (strace)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (the mounts are always removed)")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]

    C.banner("page cache against FUSE passthrough, by file size")
    rg = C.require("rg")
    for tool in ("grep", "sh", "fusermount3"):
        C.require(tool)
    if args.requests:
        C.require("strace")
    work = C.workdir("ptsizes", args.keep)
    src = work / "src"
    src.mkdir()
    (src / "README.txt").write_text("passthrough by size\n")
    (src / ".gitignore").write_text("s*/\nw*/\n")
    C.make_repo(src, "sizes bench")
    counts = {}
    for size in sizes:
        counts[size] = max(4, min(2000, args.mib * MiB // size))
        fill(src / f"s{size}", size, counts[size])
    if args.writes:
        for name in ("w-native", "w-page", "w-pass"):
            fill(src / name, 4096, args.writes)
    print(f"source: {src}: " + ", ".join(f"{counts[s]} x {label(s)}" for s in sizes))
    mounts = {}
    for choice in ("page", "pass"):
        mounts[choice] = C.Mount(src, work / f"mnt-{choice}", C.child_env(NASFS_CACHE_DIR=str(work / f"cache-{choice}")),
                                 work / f"{choice}.log", "--node", "box", "--tree", "t", "--no-warm",
                                 launcher=[str(C.PY), "-P", "-c", LAUNCH, choice])
    bases = {"native": src, "page": mounts["page"].mountpoint, "pass": mounts["pass"].mountpoint}
    for choice, m in mounts.items():
        passthrough = dict(line.split("=", 1) for line in (m.mountpoint / ".nas" / "stats").read_text().splitlines())["passthrough"]
        if passthrough != "yes":
            sys.exit(f"the {choice} mount has no passthrough ({passthrough}): this benchmark needs the build of scripts/setup")
    settle()
    print(f"mounts: page {bases['page']}, pass {bases['pass']}; load {loads()}\n")

    pids = {"native": None, "page": mounts["page"].pid, "pass": mounts["pass"].pid}

    def run(cmd: list[str], side: str) -> tuple[float, float]:
        """Wall time, and CPU time of the tool and the daemon, of one run."""
        tool0, daemon0 = children_cpu(), daemon_cpu(pids[side])
        wall = C.run_timed(cmd, cwd=bases[side])[0]
        return wall, children_cpu() - tool0 + daemon_cpu(pids[side]) - daemon0

    rows = []
    for size in sizes:
        for tool, cmd in (("grep -r", ["grep", "-r", NOMATCH, f"s{size}"]), ("rg -c", [rg, "-c", NOMATCH, f"s{size}"])):
            ld = f"{os.getloadavg()[0]:.2f}"
            for side in SIDES:
                for _ in range(2):  # the run after one that filled the page cache pays a GETATTR per file (see --requests)
                    run(cmd, side)
            warm: dict[str, list[tuple[float, float]]] = {s: [] for s in SIDES}
            for _ in range(args.runs):
                for side in SIDES:
                    warm[side].append(run(cmd, side))
            cold: dict[str, list[tuple[float, float]]] = {s: [] for s in SIDES}
            for _ in range(args.cold_runs):
                for side in SIDES:
                    C.drop_caches()
                    cold[side].append(run(cmd, side))
            wall = {k: {s: C.median([w for w, _ in d[s]]) for s in SIDES} for k, d in (("warm", warm), ("cold", cold))}
            cpu = {k: {s: C.median([c for _, c in d[s]]) * 1e6 / counts[size] for s in SIDES} for k, d in (("warm", warm), ("cold", cold))}
            cells = [label(size), counts[size], tool]
            for k in ("warm", "cold"):
                cells += [f"{wall[k]['native']:.4f}", C.ratio(wall[k]["page"], wall[k]["native"]), C.ratio(wall[k]["pass"], wall[k]["native"]),
                          " / ".join(f"{cpu[k][s]:.0f}" for s in SIDES)]
            rows.append([*cells, f"{ld}..{os.getloadavg()[0]:.2f}"])
            print("  " + "  ".join(map(str, rows[-1])), flush=True)
    C.table(["size", "files", "tool", "warm native s", "warm page", "warm pass", "warm CPU us/file n/pg/ps",
             "cold native s", "cold page", "cold pass", "cold CPU us/file n/pg/ps", "load"],
            rows, title=f"time vs native (warm: median of {args.runs}, cold: of {args.cold_runs}); CPU of the tool and the daemon "
                        f"per file, native / page / pass (load {loads()})")

    if args.requests:
        req_rows = []
        for size in sizes:
            cmd = ["grep", "-r", NOMATCH, f"s{size}"]
            cells = [label(size)]
            for choice, m in mounts.items():
                for _ in range(2):  # a run after READs pays a GETATTR per file (the kernel drops the atime at each READ)
                    C.run_timed(cmd, cwd=bases[choice])
                got = count_requests(m.pid, lambda: C.run_timed(cmd, cwd=bases[choice]), work / f"strace-{choice}-{size}.txt")
                cells.append(f"{sum(got.values())}: " + ", ".join(f"{k} {v}" for k, v in got.items()))
            req_rows.append(cells)
        C.table(["size", "page: requests of one warm grep -r", "pass"], req_rows, title="FUSE requests (strace)")

    if args.writes:
        times = {s: [] for s in SIDES}
        ld = f"{os.getloadavg()[0]:.2f}"
        for _ in range(args.runs):
            for side in SIDES:
                times[side].append(C.run_timed(append(bases[side] / f"w-{side}"))[0])
            settle()
        med = {s: C.median(times[s]) for s in SIDES}
        asked = {s: "-" for s in SIDES}
        if args.requests:
            for choice, m in mounts.items():
                got = count_requests(m.pid, lambda: C.run_timed(append(bases[choice] / f"w-{choice}")),
                                     work / f"strace-{choice}-append.txt")
                asked[choice] = f"{sum(got.values())}: " + ", ".join(f"{k} {v}" for k, v in got.items())
                settle()
        C.table(["side", f"median s of {args.runs}", "min..max", "vs native", "FUSE requests of one run"],
                [[s, med[s], f"{min(times[s]):.3f}..{max(times[s]):.3f}", C.ratio(med[s], med["native"]), asked[s]] for s in SIDES],
                title=f"a line appended to each of {args.writes} settled 4 KiB files (sh, >>): page = a writer's open served "
                      f"by the daemon, pass = passed through (load {ld} -> {loads()})")
    C.finish()


if __name__ == "__main__":
    main()
