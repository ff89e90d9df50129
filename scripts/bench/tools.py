"""Ordinary tools through the mount, against native and against a bare pyfuse3 pass-through.

    .venv/bin/python scripts/bench/tools.py [--tree DIR | --files 15000] [--runs 5] [--read-runs 3]
                                            [--big-mib 256] [--huge-mb 160] [--lines 5000] [--repeat 200]
                                            [--bare-timeout S] [--bare-flags='--passthrough --rw']
                                            [--nasfs-from DIR] [--requests]
                                            [--wait-load L] [--keep]

Builds under /tmp a scratch git repository SRC: tree/ (a copy of --tree DIR
without its .git folders, or --files generated small files), long.py (--lines
lines), all committed; big.bin (--big-mib MiB of random bytes) and huge.md
(--huge-mb MB of generated Markdown), both git-ignored. It mounts SRC twice:

- with nasfs: ``python -P -m nasfs mount SRC MNT --foreground --node box --tree t``;
- with scripts/bench/bare_passthrough.py, a standalone read-only pyfuse3 +
  trio pass-through (--bare-timeout entry and attribute timeouts, default
  3600 s as nasfs's while it watches its source; keep_cache; no flush
  handler): the floor of what any daemon on this binding can do. --bare-flags
  passes more of its flags: --passthrough (FUSE passthrough, as nasfs with
  the binding scripts/setup builds), --rw (mounted read-write, as nasfs),
  --cache-readdir.

Then it times, as the median of --runs paired runs (native, mount, bare in
turn, after one untimed warm-up run of each), ``rg -c LITERAL tree`` and
``grep -r LITERAL tree`` (no match), ``find tree -name PATTERN``,
``git status --porcelain`` (each run printed, with whether it rewrote
.git/index), a warm and a cold (``echo 3 > /proc/sys/vm/drop_caches`` before
each) sequential read of big.bin; repeated ``cat long.py@outline`` as a process
and open+read in process; and whether a slow view (the cold @outline of
huge.md) stalls a small file's @outline or a plain read while it is computed
(new files in other folders, new files in the slow file's own folder, and
files of that folder opened once before).
--nasfs-from DIR runs the nasfs daemon from another checkout's nasfs/ (e.g.
``git archive main | tar -x -C DIR``), with this venv's packages, to measure
a before and an after on one machine. --requests counts the FUSE requests
behind one run of each command on both
daemons (strace on the daemon; needs strace). --wait-load waits (up to
--wait-max seconds, polling every minute) for the 1-minute load average to
fall below L before measuring.

Every figure is printed with the load average at that moment; a final table
gives command, seconds on each side, ratios to native, target and MET/MISSED.
Both mounts are unmounted, the daemons ended and the folder removed at the end
(unless --keep), also on error or SIGTERM.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from mount import count_requests, open_read, seq_read  # noqa: E402  (shared with mount.py, unchanged)
import mount as _mount  # noqa: E402

for _op, _name in ((6, "SYMLINK"), (8, "MKNOD"), (9, "MKDIR"), (10, "UNLINK"), (11, "RMDIR"), (12, "RENAME"), (13, "LINK"), (26, "INIT"), (41, "INTERRUPT")):
    _mount.FUSE_OPS.setdefault(_op, _name)  # names for count_requests' table (it prints the number otherwise)

MiB = 1 << 20
NOMATCH = "qzxv_nasfs_never_7261"  # in no file
SIDES = ("native", "mount", "bare")
BARE = Path(__file__).resolve().parent / "bare_passthrough.py"


def load1() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def loads() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class BareMount(C.FuseDaemon):
    """bare_passthrough.py SRC MNT."""

    def __init__(self, source: Path, mountpoint: Path, log: Path, timeout: float, flags: list[str]) -> None:
        super().__init__([str(C.PY), "-P", str(BARE), str(source), str(mountpoint), str(timeout), *flags], mountpoint, log,
                         "long.py", "bare pass-through", stop_wait=10)


def huge_markdown(path: Path, mb: int, seed: int = 11) -> int:
    """``mb`` MB of Markdown: a heading every ~20 paragraphs, from 400 pre-made paragraphs."""
    rng = random.Random(seed)
    vocab = C._vocab()
    paras = [C._prose(rng, vocab, rng.randint(40, 90)) for _ in range(400)]
    target, n, i = mb * 1_000_000, 0, 0
    with open(path, "w") as fh:
        fh.write("# A very long document\n\n")
        while n < target:
            parts = [f"## {vocab[i % len(vocab)].title()} part {i}\n\n"]
            if i % 5 == 0:
                parts.append(f"### Details of part {i}\n\n")
            for _ in range(20):
                parts.append(paras[rng.randrange(len(paras))] + "\n")
            chunk = "".join(parts)
            fh.write(chunk)
            n += len(chunk)
            i += 1
    return n


def wait_for_load(limit: float, max_s: float) -> None:
    deadline = time.monotonic() + max_s
    while True:
        now = os.getloadavg()[0]
        print(f"load average {loads()} ({time.strftime('%H:%M:%S')}): ", end="")
        if now < limit:
            print(f"below {limit}, measuring")
            return
        if time.monotonic() >= deadline:
            print(f"still >= {limit} after {max_s:.0f} s: measuring anyway")
            return
        print(f">= {limit}, waiting a minute")
        sys.stdout.flush()
        time.sleep(min(60, max(1, deadline - time.monotonic())))


def index_stamp(src: Path) -> tuple[int, int]:
    st = os.stat(src / ".git" / "index")
    return st.st_mtime_ns, st.st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, help="a folder to copy into the scratch repository (default: a generated tree)")
    ap.add_argument("--files", type=int, default=15000, help="files of the generated tree")
    ap.add_argument("--runs", type=int, default=5, help="timed paired runs per command (median)")
    ap.add_argument("--read-runs", type=int, default=3, help="paired runs of each sequential read")
    ap.add_argument("--big-mib", type=int, default=256, help="size of big.bin (MiB)")
    ap.add_argument("--huge-mb", type=int, default=160, help="size of huge.md (MB), the slow view")
    ap.add_argument("--huge-timeout", type=float, default=300, help="give up on huge.md@outline after this (s)")
    ap.add_argument("--lines", type=int, default=5000, help="lines of long.py")
    ap.add_argument("--repeat", type=int, default=200, help="repeated reads of long.py@outline (cat runs: a quarter)")
    ap.add_argument("--bare-timeout", type=float, default=3600, help="entry and attribute timeout of the bare pass-through (s)")
    ap.add_argument("--bare-flags", default="", help="more flags of bare_passthrough.py, after an = sign: --bare-flags='--passthrough --rw' (also --cache-readdir)")
    ap.add_argument("--nasfs-from", type=Path, help="a checkout whose nasfs/ the mount daemon runs (default: this one)")
    ap.add_argument("--requests", action="store_true", help="count FUSE requests per command on both daemons (strace)")
    ap.add_argument("--wait-load", type=float, default=0, help="wait for the 1-min load average to fall below this first")
    ap.add_argument("--wait-max", type=float, default=1800, help="longest wait for --wait-load (s)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (the mounts are always removed)")
    args = ap.parse_args()

    start_load = loads()
    C.banner("ordinary tools through the mount vs native vs a bare pyfuse3 pass-through")
    rg = C.require("rg")
    for tool in ("grep", "find", "git", "cat", "fusermount3"):
        C.require(tool)
    if args.requests:
        C.require("strace")
    work = C.workdir("tools", args.keep)
    src, mnt, bmnt, cache = work / "src", work / "mnt", work / "bare", work / "cache"
    src.mkdir()
    git_env = C.child_env(**C.GIT_ENV)

    # -- the source
    t = time.perf_counter()
    if args.tree:
        shutil.copytree(args.tree, src / "tree", symlinks=True, ignore=shutil.ignore_patterns(".git"))
        what = f"a copy of {args.tree}"
    else:
        C.gen_tree(src / "tree", args.files)
        what = f"{args.files:,} generated files"
    (src / "long.py").write_text(C.long_python(args.lines))
    (src / ".gitignore").write_text("big.bin\nslow/huge.md\n")
    (src / "slow").mkdir()
    for i in range(16):  # small neighbours of the slow view's file, in its folder
        (src / "slow" / f"near{i:02d}.txt").write_text(f"neighbour {i}\n" * 20)
    C.make_repo(src, "tools bench")
    files = sorted(p for p in (src / "tree").rglob("*") if p.is_file() and not p.is_symlink())
    tree_bytes = sum(p.stat().st_size for p in files)
    t_tree = time.perf_counter() - t
    t = time.perf_counter()
    with open(src / "big.bin", "wb") as fh:
        for _ in range(args.big_mib):
            fh.write(os.urandom(MiB))
        os.fsync(fh.fileno())
    huge_bytes = huge_markdown(src / "slow" / "huge.md", args.huge_mb)
    print(f"source: {src}: tree/ = {what}: {len(files):,} files, {tree_bytes / 1e6:.1f} MB, and long.py ({args.lines:,} lines), "
          f"committed ({t_tree:.1f} s); big.bin {args.big_mib} MiB and slow/huge.md {huge_bytes / 1e6:.0f} MB, git-ignored "
          f"({time.perf_counter() - t:.1f} s)")
    exts = collections.Counter(p.suffix for p in files if p.suffix)
    pattern = "*.h" if exts.get(".h") else f"*{exts.most_common(1)[0][0]}" if exts else "*"
    C.drop_caches()

    daemon_env = C.child_env(NASFS_CACHE_DIR=str(cache))
    if args.nasfs_from:
        if not (args.nasfs_from / "nasfs" / "__init__.py").is_file():
            sys.exit(f"--nasfs-from {args.nasfs_from}: no nasfs/ package there (a checkout of this repository is wanted)")
        daemon_env["PYTHONPATH"] = str(args.nasfs_from.resolve())  # ahead of the venv's editable nasfs
        print(f"nasfs daemon from {args.nasfs_from.resolve()}")
    m = C.Mount(src, mnt, daemon_env, work / "mount.log", "--node", "box", "--tree", "t",
                launcher=[str(C.PY), "-P", "-m", "nasfs"])
    b = BareMount(src, bmnt, work / "bare.log", args.bare_timeout, args.bare_flags.split())
    bases = {"native": src, "mount": mnt, "bare": bmnt}
    print(f"mounts: nasfs {mnt} (pid {m.pid}), bare {bmnt} (pid {b.pid}, {args.bare_timeout:g} s timeouts"
          f"{', ' + args.bare_flags if args.bare_flags else ''})\n")
    if args.wait_load:
        wait_for_load(args.wait_load, args.wait_max)
        print()

    final: list[list[object]] = []
    pids = {"mount": m.pid, "bare": b.pid}
    cpu_rows: list[list[object]] = []

    def row(name, times: dict[str, float | None], target: str, ok: bool | None, ld: str) -> None:
        n = times.get("native")
        cells = [name]
        for side in SIDES:
            v = times.get(side)
            cells.append("-" if v is None else f"{v:.4f}" if v < 1 else f"{v:.2f}")
        for side in ("mount", "bare"):
            v = times.get(side)
            cells.append(C.ratio(v, n) if v is not None and n else "-")
        cells += [target, "-" if ok is None else C.verdict(ok), ld]
        final.append(cells)

    # -- 1. commands, paired runs
    commands = [
        (f"rg -c {NOMATCH} tree", [rg, "-c", NOMATCH, "tree"], None, 3.0),
        (f"grep -r {NOMATCH} tree", ["grep", "-r", NOMATCH, "tree"], None, 3.0),
        (f"find tree -name '{pattern}'", ["find", "tree", "-name", pattern], None, 2.0),
        ("git status --porcelain", ["git", "status", "--porcelain"], git_env, 1.5),
    ]
    for label, cmd, env, limit in commands:
        is_git = cmd[0] == "git"
        outs = {}
        first = {}
        for side in SIDES:  # warm-up, untimed (printed for git)
            before = index_stamp(src) if is_git else None
            first[side], done = C.run_timed(cmd, cwd=bases[side], env=env)
            outs[side] = done.stdout
            if is_git:
                print(f"  git status, warm-up {side}: {first[side]:.3f} s{', rewrote .git/index' if index_stamp(src) != before else ''} "
                      f"({len(done.stdout.splitlines())} lines of status)")
        times: dict[str, list[float]] = {s: [] for s in SIDES}
        cpu: dict[str, list[float]] = {s: [] for s in pids}
        ld = load1()
        for r in range(args.runs):
            line = []
            for side in SIDES:
                before = index_stamp(src) if is_git else None
                c0 = C.cpu_seconds(pids[side]) if side in pids else 0.0
                dt, done = C.run_timed(cmd, cwd=bases[side], env=env)
                times[side].append(dt)
                if side in pids:
                    cpu[side].append(C.cpu_seconds(pids[side]) - c0)
                if is_git:
                    line.append(f"{side} {dt:.3f} s{' (rewrote .git/index)' if index_stamp(src) != before else ''}")
            if is_git:
                print(f"  git status, run {r + 1}: " + ", ".join(line) + f"; load {load1()}")
        med = {s: C.median(times[s]) for s in SIDES}
        sorted_out = {k: sorted(v.splitlines()) for k, v in outs.items()}
        same = "identical (sorted)" if sorted_out["native"] == sorted_out["mount"] == sorted_out["bare"] else \
            "DIFFER: " + ", ".join(f"{s} {len(outs[s].splitlines())} lines" for s in SIDES)
        ratio_m = med["mount"] / med["native"]
        cmed = {s: C.median(cpu[s]) for s in pids}
        C.table(["side", "first (warm-up)", f"median of {args.runs}", "min..max", "vs native", "daemon CPU s (median)"],
                [[s, first[s], med[s], f"{min(times[s]):.4f}..{max(times[s]):.4f}", C.ratio(med[s], med["native"]),
                  f"{cmed[s]:.3f}" if s in cmed else "-"] for s in SIDES],
                title=f"{label}  (output {same}; load {ld} -> {load1()})")
        cpu_rows.append([label, cmed["mount"], cmed["bare"], C.ratio(cmed["mount"], cmed["bare"])])
        row(label, med, f"<= {limit}x", ratio_m <= limit, f"{ld}..{load1()}")

    # -- 2. sequential reads of big.bin
    size = args.big_mib * MiB
    ld = load1()
    warm: dict[str, list[float]] = {s: [] for s in SIDES}
    for side in SIDES:
        seq_read(bases[side] / "big.bin")  # fills the page cache (of that side)
    for _ in range(args.read_runs):
        for side in SIDES:
            dt, n = seq_read(bases[side] / "big.bin")
            assert n == size, f"{side}: read {n} of {size} bytes"
            warm[side].append(dt)
    cold: dict[str, list[float]] = {s: [] for s in SIDES}
    for _ in range(args.read_runs):
        for side in SIDES:
            C.drop_caches()
            dt, n = seq_read(bases[side] / "big.bin")
            assert n == size, f"{side}: read {n} of {size} bytes"
            cold[side].append(dt)
    mbps = lambda s: f"{size / MiB / s:,.0f} MiB/s"  # noqa: E731
    rows = []
    for kind, d in (("warm", warm), ("cold", cold)):
        for side in SIDES:
            med = C.median(d[side])
            rows.append([kind, side, med, mbps(med), f"{mbps(max(d[side]))}..{mbps(min(d[side]))}",
                         C.ratio(med, C.median(d["native"])), f"{C.median(d['native']) / med:.0%}"])
    C.table(["read", "side", f"median s of {args.read_runs}", "throughput", "slowest..fastest", "time vs native", "throughput vs native"],
            rows, title=f"sequential read of big.bin, {args.big_mib} MiB in 1 MiB reads (load {ld} -> {load1()})")
    wmed = {s: C.median(warm[s]) for s in SIDES}
    cmed = {s: C.median(cold[s]) for s in SIDES}
    row(f"read {args.big_mib} MiB, warm", wmed, "time <= 1.4x", wmed["mount"] / wmed["native"] <= 1.4, f"{ld}..{load1()}")
    row(f"read {args.big_mib} MiB, cold", cmed, "MiB/s >= 0.8x", cmed["native"] / cmed["mount"] >= 0.8, f"{ld}..{load1()}")

    # -- 3. repeated reads of long.py@outline
    ld = load1()
    view = mnt / "long.py@outline"
    first_view = open_read(view)
    header = open(view, "rb").readline().decode(errors="replace").strip()
    inproc = {s: [] for s in SIDES}
    for _ in range(args.repeat):
        inproc["native"].append(open_read(src / "long.py"))
        inproc["mount"].append(open_read(view))
        inproc["bare"].append(open_read(bmnt / "long.py"))
    cats = {s: [] for s in SIDES}
    targets = {"native": src / "long.py", "mount": view, "bare": bmnt / "long.py"}
    for _ in range(max(10, args.repeat // 4)):
        for side in SIDES:
            cats[side].append(C.run_timed(["cat", str(targets[side])])[0])
    C.table(["long.py", "side, what is read", "runs", "median", "p90", "vs native"],
            [["open+read in process", "native long.py", len(inproc["native"]), C.ms(C.median(inproc["native"])), C.ms(C.pct(inproc["native"], .9)), "1.00x"],
             ["", "mount long.py@outline", len(inproc["mount"]), C.ms(C.median(inproc["mount"])), C.ms(C.pct(inproc["mount"], .9)), C.ratio(C.median(inproc["mount"]), C.median(inproc["native"]))],
             ["", "bare long.py (plain file)", len(inproc["bare"]), C.ms(C.median(inproc["bare"])), C.ms(C.pct(inproc["bare"], .9)), C.ratio(C.median(inproc["bare"]), C.median(inproc["native"]))],
             ["cat as a process", "native long.py", len(cats["native"]), C.ms(C.median(cats["native"])), C.ms(C.pct(cats["native"], .9)), "1.00x"],
             ["", "mount long.py@outline", len(cats["mount"]), C.ms(C.median(cats["mount"])), C.ms(C.pct(cats["mount"], .9)), C.ratio(C.median(cats["mount"]), C.median(cats["native"]))],
             ["", "bare long.py (plain file)", len(cats["bare"]), C.ms(C.median(cats["bare"])), C.ms(C.pct(cats["bare"], .9)), C.ratio(C.median(cats["bare"]), C.median(cats["native"]))]],
            title=f"repeated long.py@outline (first read {C.ms(first_view)}; header {header[:120]}) (load {ld} -> {load1()})")
    cm = {s: C.median(cats[s]) for s in SIDES}
    im = {s: C.median(inproc[s]) for s in SIDES}
    row("cat long.py@outline (process; native/bare: cat long.py)", cm, "< 5 ms", cm["mount"] < 0.005, f"{ld}..{load1()}")
    row("open+read long.py@outline in process (native/bare: long.py)", im, "< 1 ms", im["mount"] < 0.001, f"{ld}..{load1()}")

    # -- 4. a slow view does not stall others
    probes_md = [p for p in files if p.suffix in (".md", ".py")] or files
    probes_plain = [p for p in files if p.suffix not in (".md", ".py")] or files
    random.Random(5).shuffle(probes_md)
    random.Random(6).shuffle(probes_plain)
    it_md, it_plain = iter(probes_md), iter(probes_plain)
    near_files = sorted((src / "slow").glob("near*.txt"))
    it_near = iter(near_files)
    n_probes = 8
    it_seen = itertools.cycle(near_files[:n_probes])  # the ones probe_near reads first
    folders = sorted({p.parent for p in files} | {src / "slow"})

    def probe_view() -> float:
        return open_read(mnt / f"{next(it_md).relative_to(src).as_posix()}@outline")

    def probe_plain() -> float:
        return open_read(mnt / next(it_plain).relative_to(src))

    def probe_near() -> float:
        return open_read(mnt / next(it_near).relative_to(src))

    def probe_seen() -> float:
        return open_read(mnt / next(it_seen).relative_to(src))

    def cold() -> None:
        """Page cache and dentries dropped, then the folders walked again: the
        probes' files are new to the kernel, their folders are not."""
        C.drop_caches()
        for d in folders:
            os.stat(mnt / d.relative_to(src))

    for warm_up in (probes_md[-1], probes_md[-2]):  # not probed: the core's first views load parsers and the tokenizer
        open_read(mnt / f"{warm_up.relative_to(src).as_posix()}@outline")
    cold()
    bp = [probe_plain() for _ in range(n_probes)]
    bn = [probe_near() for _ in range(n_probes)]
    bs = [probe_seen() for _ in range(n_probes)]  # opened a second time: their entries are cached
    bv = [probe_view() for _ in range(n_probes)]
    cold()
    for _ in range(n_probes):
        probe_seen()  # known to the kernel again before the slow view starts
    ld = load1()
    t0 = time.perf_counter()
    slow = subprocess.Popen(["cat", str(mnt / "slow" / "huge.md@outline")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    C.on_exit(lambda: slow.poll() is None and slow.kill())
    time.sleep(0.5)
    # plain reads and small views in two threads at once; a probe counts if it started while the slow view ran
    import threading

    dp: list[float] = []
    dn: list[float] = []
    ds: list[float] = []
    dv: list[float] = []
    view_ends: list[float] = []

    def prober(fn, out: list[float], ends: list[float] | None) -> None:
        while len(out) < n_probes and slow.poll() is None:
            out.append(fn())
            if ends is not None:
                ends.append(time.perf_counter() - t0)
            time.sleep(0.1)

    threads = [threading.Thread(target=prober, args=(probe_plain, dp, None), daemon=True),
               threading.Thread(target=prober, args=(probe_near, dn, None), daemon=True),
               threading.Thread(target=prober, args=(probe_seen, ds, None), daemon=True),
               threading.Thread(target=prober, args=(probe_view, dv, view_ends), daemon=True)]
    for th in threads:
        th.start()
    try:
        out, err = slow.communicate(timeout=max(1, args.huge_timeout - (time.perf_counter() - t0)))
        slow_s = time.perf_counter() - t0
        slow_note = f"slow/huge.md@outline (cold) took {slow_s:.1f} s, {len(out):,} bytes, exit {slow.returncode}" + \
            (f": {err.decode(errors='replace').strip()[:200]}" if slow.returncode else "") + f"; header {out.splitlines()[0][:160].decode(errors='replace') if out else ''}"
    except subprocess.TimeoutExpired:
        slow_s = float("nan")
        slow.kill()
        slow.communicate()
        slow_note = f"slow/huge.md@outline did not finish in {args.huge_timeout:.0f} s (cat killed)"
    for th in threads:
        th.join(timeout=60)
    print(f"slow view: {slow_note} (load {ld} -> {load1()})")
    if view_ends:
        print("  small-view probes ended at " + ", ".join(f"{e:.2f}" for e in view_ends) + " s after the slow view started"
              + (f" (it ended at {slow_s:.2f} s: a probe ending just after it waited for it)" if slow_s == slow_s else ""))
    if min(len(dp), len(dn), len(dv)) < n_probes:
        print(f"  probes started while it was computed: {len(dp)} tree/ reads, {len(dn)} slow/ reads, {len(dv)} views, of {n_probes} each "
              "(a probe that waits for the slow view ends with it, so no other of its kind starts)")
    C.table(["probe (each a file not read before; page cache and dentries dropped, folders walked again)", "runs", "median", "worst",
             "worst delay vs quiet worst", "worst vs quiet median"],
            [["small file @outline, quiet", len(bv), C.ms(C.median(bv)), C.ms(max(bv)), "", ""],
             ["small file @outline, during the slow view", len(dv), C.ms(C.median(dv)) if dv else "-", C.ms(max(dv)) if dv else "-",
              C.ms(max(dv) - max(bv)) if dv else "-", C.ms(max(dv) - C.median(bv)) if dv else "-"],
             ["real-file read in tree/, quiet", len(bp), C.ms(C.median(bp)), C.ms(max(bp)), "", ""],
             ["real-file read in tree/, during the slow view", len(dp), C.ms(C.median(dp)) if dp else "-", C.ms(max(dp)) if dp else "-",
              C.ms(max(dp) - max(bp)) if dp else "-", C.ms(max(dp) - C.median(bp)) if dp else "-"],
             ["real-file read in slow/ (the slow file's folder), quiet", len(bn), C.ms(C.median(bn)), C.ms(max(bn)), "", ""],
             ["real-file read in slow/, during the slow view", len(dn), C.ms(C.median(dn)) if dn else "-", C.ms(max(dn)) if dn else "-",
              C.ms(max(dn) - max(bn)) if dn else "-", C.ms(max(dn) - C.median(bn)) if dn else "-"],
             ["slow/ file opened before (entry cached), quiet", len(bs), C.ms(C.median(bs)), C.ms(max(bs)), "", ""],
             ["slow/ file opened before, during the slow view", len(ds), C.ms(C.median(ds)) if ds else "-", C.ms(max(ds)) if ds else "-",
              C.ms(max(ds) - max(bs)) if ds else "-", C.ms(max(ds) - C.median(bs)) if ds else "-"]],
            title="a slow view (slow/huge.md@outline, cold) does not stall others")
    if dv:
        row(f"small @outline while a slow view computes (worst; quiet median {C.ms(C.median(bv))})", {"mount": max(dv)},
            "worst - quiet median <= 50 ms", max(dv) - C.median(bv) <= 0.050, f"{ld}..{load1()}")
    else:
        row("small @outline while a slow view computes", {}, "no probe ran", None, ld)
    for label, d, q in (("tree/", dp, bp), ("slow/ (same folder)", dn, bn), ("slow/, opened before", ds, bs)):
        if d:
            row(f"real-file read in {label} while a slow view computes (worst)", {"mount": max(d)},
                f"<= quiet worst + 10 ms ({C.ms(max(q))})", max(d) <= max(q) + 0.010, f"{ld}..{load1()}")
        else:
            row(f"real-file read in {label} while a slow view computes", {}, "no probe ran", None, ld)

    # -- 5. FUSE requests behind the commands
    if args.requests:
        rows = []
        for label, cmd, env, _ in commands:
            for side, pid in (("mount", m.pid), ("bare", b.pid)):
                C.run_timed(cmd, cwd=bases[side], env=env)  # warm, as the timed runs were
                counts = count_requests(pid, lambda: C.run_timed(cmd, cwd=bases[side], env=env), work / "strace.txt")
                rows.append([label, side, sum(counts.values()), " ".join(f"{k}={v}" for k, v in counts.items())])
        for side, pid in (("mount", m.pid), ("bare", b.pid)):
            target = (bases[side] / "long.py@outline") if side == "mount" else (bases[side] / "long.py")
            counts = count_requests(pid, lambda: [open_read(target) for _ in range(100)], work / "strace.txt")
            rows.append([f"100 open+read of {target.name}", side, sum(counts.values()), " ".join(f"{k}={v}" for k, v in counts.items())])
        C.table(["command (one warm run)", "daemon", "FUSE requests", "by opcode"], rows,
                title=f"FUSE requests read by each daemon from /dev/fuse (strace; tree/ has {len(files):,} files)")

    b.stop()
    m.stop()
    C.table(["command", "native s", "mount s", "bare s", "mount/native", "bare/native", "target", "", "load 1-min"], final,
            title=f"summary ({len(files):,} files in tree/)")
    C.table(["command", "nasfs daemon CPU s", "bare daemon CPU s", "nasfs/bare"], cpu_rows,
            title="daemon CPU per run (median; user + system, all threads; less sensitive to load than wall time)")
    print(f"load average at start {start_load}, at end {loads()}")


if __name__ == "__main__":
    main()
    C.finish()
