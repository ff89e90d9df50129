"""Ordinary tools through the mount against native, measured as from outside.

    .venv/bin/python scripts/bench/tools.py [--source SRC | --tree DIR | --files N] [--runs 7]
                                            [--read-runs 5] [--cats 40] [--big-mib 256] [--lines 5000]
                                            [--bare [--bare-flags='--passthrough --rw']] [--nasfs-from DIR]
                                            [--during-warm-up] [--requests] [--slow-view] [--keep]

The tree (default, ``--corpus``): the machine's own files, copied under /tmp
and committed once, as an agent's NAS holds them: this Python's standard
library (without site-packages and __pycache__) as tree/python, /usr/include as
tree/include, /usr/share/doc as tree/doc and /usr/share/perl as tree/perl
(symlinks kept as symlinks; about 14,500-16,000 files, 340-370 MB here);
``--tree DIR`` copies DIR instead, ``--files N`` generates N small files;
``--source SRC`` reuses a scratch repository an earlier ``--keep`` run left.
Beside tree/: big.py (``--lines`` lines of generated Python), committed;
big.bin (``--big-mib`` MiB of random bytes), git-ignored.

The mount is the project's default one: ``nasfs mount SRC MNT`` with no other
option (``--foreground`` only, so that the benchmark holds the daemon; its
background warm-up, ``nasfs index`` at nice 10, runs as it does for anyone).
The benchmark waits for that warm-up to end before measuring, unless
``--during-warm-up``. ``--bare`` also mounts scripts/bench/bare_passthrough.py,
a standalone read-only pyfuse3 + trio pass-through (the floor of any daemon on
this binding; ``--bare-flags`` passes it --passthrough, --rw, --cache-readdir).

Every ratio is the median of paired ratios: one untimed warm-up pair, then
``--runs`` rounds of mount, native (and bare) in turn, each round's mount time
divided by its own native time. Timed: ``rg -c LITERAL tree`` (whole tree),
``find tree -name '*.h'``, ``git status --porcelain``, ``grep -r -c LITERAL
tree/python``, a warm and a cold (``echo 3 > /proc/sys/vm/drop_caches``)
sequential read of big.bin, and ``cat big.py@outline`` as a whole process
(against ``cat big.py`` natively). The daemon's CPU per run is printed beside
(user + system, all threads; it moves less with load than wall time).
``--requests`` counts the FUSE requests behind one warm run of each command
(strace on the daemon). ``--slow-view`` adds issue 9's probe: whether a slow
view (the cold @outline of a 160 MB Markdown file) stalls other reads.
``--nasfs-from DIR`` runs the daemon from another checkout's nasfs/ (e.g.
``git archive main | tar -x -C DIR``) with this venv's packages: a before and
an after on one machine.

Mounts are unmounted, daemons ended and the scratch folder removed at the end
(unless --keep), also on error or SIGTERM.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import threading
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
BARE = Path(__file__).resolve().parent / "bare_passthrough.py"
# The tree of issue 20's outside measurement: where each part comes from on this machine.
CORPUS = {"python": Path(sysconfig.get_paths()["stdlib"]), "include": Path("/usr/include"),
          "doc": Path("/usr/share/doc"), "perl": Path("/usr/share/perl")}


def load1() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def loads() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class NasMount(C.FuseDaemon):
    """``nasfs mount SRC MNT --foreground`` and nothing else: the defaults."""

    def __init__(self, source: Path, mountpoint: Path, env: dict[str, str], log: Path) -> None:
        super().__init__([str(C.PY), "-P", "-m", "nasfs", "mount", str(source), str(mountpoint), "--foreground"],
                         mountpoint, log, ".nas/HELP", "mount daemon", env=env)

    def warming(self) -> bool:
        """Whether the background warm-up (a child ``nasfs index``) still runs."""
        try:
            kids = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            return False
        for kid in kids:
            try:
                if b"index" in Path(f"/proc/{kid}/cmdline").read_bytes().split(b"\0"):
                    return True
            except OSError:
                pass
        return False


class BareMount(C.FuseDaemon):
    """bare_passthrough.py SRC MNT."""

    def __init__(self, source: Path, mountpoint: Path, log: Path, timeout: float, flags: list[str]) -> None:
        super().__init__([str(C.PY), "-P", str(BARE), str(source), str(mountpoint), str(timeout), *flags], mountpoint, log,
                         "big.py", "bare pass-through", stop_wait=10)


def machine_corpus(dest: Path) -> str:
    """Issue 20's tree, copied from this machine's own folders into ``dest``."""
    for name, path in CORPUS.items():
        if not path.is_dir():
            sys.exit(f"--corpus: {path} is not a folder on this machine (give --tree DIR or --files N instead)")
        shutil.copytree(path, dest / name, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "site-packages"))
    return "this machine's " + ", ".join(f"{p} (as tree/{n})" for n, p in CORPUS.items())


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


def index_stamp(src: Path) -> tuple[int, int]:
    st = os.stat(src / ".git" / "index")
    return st.st_mtime_ns, st.st_size


def paired(sides: dict[str, object], runs: int, fn, cpu_pids: dict[str, int]) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, float]]:
    """One untimed warm-up round, then ``runs`` rounds of ``fn(side)`` over
    ``sides`` in turn (mount first). Returns each side's times, each mount-like
    side's per-round ratio to native, and the daemons' median CPU per run."""
    for side in sides:
        fn(side)
    times: dict[str, list[float]] = {s: [] for s in sides}
    cpu: dict[str, list[float]] = {s: [] for s in cpu_pids}
    for _ in range(runs):
        for side in sides:
            c0 = C.cpu_seconds(cpu_pids[side]) if side in cpu_pids else 0.0
            times[side].append(fn(side))
            if side in cpu_pids:
                cpu[side].append(C.cpu_seconds(cpu_pids[side]) - c0)
    ratios = {s: [m / n for m, n in zip(times[s], times["native"])] for s in sides if s != "native"}
    return times, ratios, {s: C.median(v) for s, v in cpu.items()}


def slow_view(args: argparse.Namespace, src: Path, mnt: Path, files: list[Path], row) -> None:
    """Whether a slow view (the cold @outline of slow/huge.md) stalls a small
    file's @outline or a plain read while it is computed (issue 9)."""
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
        row(f"small @outline while a slow view computes (worst; quiet median {C.ms(C.median(bv))})", max(dv), None, None,
            "worst - quiet median <= 50 ms", max(dv) - C.median(bv) <= 0.050, f"{ld}..{load1()}")
    else:
        row("small @outline while a slow view computes", None, None, None, "no probe ran", None, ld)
    for label, d, q in (("tree/", dp, bp), ("slow/ (same folder)", dn, bn), ("slow/, opened before", ds, bs)):
        if d:
            row(f"real-file read in {label} while a slow view computes (worst)", max(d), None, None,
                f"<= quiet worst + 10 ms ({C.ms(max(q))})", max(d) <= max(q) + 0.010, f"{ld}..{load1()}")
        else:
            row(f"real-file read in {label} while a slow view computes", None, None, None, "no probe ran", None, ld)



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--source", type=Path, help="a scratch repository an earlier --keep run made (reused as it is)")
    what.add_argument("--tree", type=Path, help="a folder to copy into tree/ instead of this machine's corpus")
    what.add_argument("--files", type=int, help="generate this many small files into tree/ instead")
    ap.add_argument("--runs", type=int, default=7, help="timed rounds per command after the warm-up round (median of paired ratios)")
    ap.add_argument("--read-runs", type=int, default=5, help="timed rounds of each sequential read")
    ap.add_argument("--cats", type=int, default=40, help="rounds of cat big.py@outline / cat big.py")
    ap.add_argument("--big-mib", type=int, default=256, help="size of big.bin (MiB)")
    ap.add_argument("--lines", type=int, default=5000, help="lines of big.py")
    ap.add_argument("--bare", action="store_true", help="also mount bare_passthrough.py and time it in each round")
    ap.add_argument("--bare-timeout", type=float, default=3600, help="entry and attribute timeout of the bare pass-through (s)")
    ap.add_argument("--bare-flags", default="", help="more flags of bare_passthrough.py, after an = sign: --bare-flags='--passthrough --rw'")
    ap.add_argument("--nasfs-from", type=Path, help="a checkout whose nasfs/ the mount daemon runs (default: this one)")
    ap.add_argument("--during-warm-up", action="store_true", help="measure at once, while the mount's warm-up (nasfs index) may still run")
    ap.add_argument("--requests", action="store_true", help="count FUSE requests per command (strace)")
    ap.add_argument("--slow-view", action="store_true", help="also probe reads while a slow view (a 160 MB file's @outline) is made")
    ap.add_argument("--huge-mb", type=int, default=160, help="size of the slow view's file (MB), with --slow-view")
    ap.add_argument("--huge-timeout", type=float, default=300, help="give up on the slow view after this (s)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (reuse it with --source); mounts are always removed")
    args = ap.parse_args()

    start_load = loads()
    C.banner("ordinary tools through the default mount vs native, paired rounds")
    rg = C.require("rg")
    for tool in ("grep", "find", "git", "cat", "fusermount3"):
        C.require(tool)
    if args.requests:
        C.require("strace")
    work = C.workdir("tools", args.keep)
    mnt, bmnt = work / "mnt", work / "bare"
    git_env = C.child_env(**C.GIT_ENV)

    # -- the source
    t = time.perf_counter()
    if args.source:
        src = args.source.resolve()
        cache = src.parent / "cache"  # a kept run's cache: the warm-up finds it warm
        if not (src / ".git").is_dir() or not (src / "big.py").is_file():
            sys.exit(f"--source {src}: not a repository an earlier tools.py --keep run made (no .git or big.py)")
        what = f"reused {src}"
    else:
        src, cache = work / "src", work / "cache"
        src.mkdir()
        (src / "tree").mkdir()
        if args.tree:
            shutil.copytree(args.tree, src / "tree" / args.tree.name, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            what = f"a copy of {args.tree}"
        elif args.files:
            C.gen_tree(src / "tree", args.files)
            what = f"{args.files:,} generated files"
        else:
            what = machine_corpus(src / "tree")
        (src / "big.py").write_text(C.long_python(args.lines))
        (src / ".gitignore").write_text("big.bin\nslow/huge.md\n")
        (src / "slow").mkdir()
        for i in range(16):  # small neighbours of the slow view's file, in its folder
            (src / "slow" / f"near{i:02d}.txt").write_text(f"neighbour {i}\n" * 20)
        C.make_repo(src, "tools bench")
    if not (src / "big.bin").exists() or (src / "big.bin").stat().st_size != args.big_mib * MiB:
        with open(src / "big.bin", "wb") as fh:
            for _ in range(args.big_mib):
                fh.write(os.urandom(MiB))
            os.fsync(fh.fileno())
    if args.slow_view and not (src / "slow" / "huge.md").exists():
        huge_markdown(src / "slow" / "huge.md", args.huge_mb)
    files = sorted(p for p in (src / "tree").rglob("*") if p.is_file() and not p.is_symlink())
    folders = sum(1 for p in (src / "tree").rglob("*") if p.is_dir() and not p.is_symlink())
    links = sum(1 for p in (src / "tree").rglob("*") if p.is_symlink())
    tree_bytes = sum(p.stat().st_size for p in files)
    py_part = next((p for p in (src / "tree" / "python", src / "tree") if p.is_dir()))
    print(f"source: {src}: tree/ = {what}: {len(files):,} files, {folders:,} folders, {links:,} symlinks, "
          f"{tree_bytes / 1e6:.0f} MB; big.py ({args.lines:,} lines) committed; big.bin {args.big_mib} MiB git-ignored "
          f"({time.perf_counter() - t:.1f} s)")
    C.drop_caches()

    daemon_env = C.child_env(NASFS_CACHE_DIR=str(cache))
    if args.nasfs_from:
        if not (args.nasfs_from / "nasfs" / "__init__.py").is_file():
            sys.exit(f"--nasfs-from {args.nasfs_from}: no nasfs/ package there (a checkout of this repository is wanted)")
        daemon_env["PYTHONPATH"] = str(args.nasfs_from.resolve())  # ahead of the venv's editable nasfs
        print(f"nasfs daemon from {args.nasfs_from.resolve()}")
    t = time.perf_counter()
    m = NasMount(src, mnt, daemon_env, work / "mount.log")
    print(f"mount: nasfs mount {src} {mnt} (pid {m.pid}), up in {time.perf_counter() - t:.2f} s")
    bases: dict[str, Path] = {"mount": mnt, "native": src}
    pids = {"mount": m.pid}
    if args.bare:
        b = BareMount(src, bmnt, work / "bare.log", args.bare_timeout, args.bare_flags.split())
        bases["bare"] = bmnt
        pids["bare"] = b.pid
        print(f"bare pass-through: {bmnt} (pid {b.pid}, {args.bare_timeout:g} s timeouts{', ' + args.bare_flags if args.bare_flags else ''})")
    if not args.during_warm_up:
        t = time.perf_counter()
        while m.warming():
            time.sleep(1)
        print(f"the mount's warm-up (nasfs index at nice 10) ended {time.perf_counter() - t:.0f} s after the mount answered")
    else:
        print(f"measuring at once; warm-up running: {m.warming()}")
    print(f"load {loads()}\n")

    final: list[list[object]] = []
    cpu_rows: list[list[object]] = []

    def row(name: str, mount_s: float | None, native_s: float | None, ratios: list[float] | None, target: str,
            ok: bool | None, ld: str, bare: str = "-") -> None:
        final.append([name, "-" if mount_s is None else C.ms(mount_s), "-" if native_s is None else C.ms(native_s),
                      f"{C.median(ratios):.2f}x" if ratios else "-", f"{min(ratios):.2f}..{max(ratios):.2f}" if ratios else "-",
                      bare, target, "-" if ok is None else C.verdict(ok), ld])

    # -- 1. commands
    commands = [
        (f"rg -c {NOMATCH} tree", [rg, "-c", NOMATCH, "tree"], None, 2.0),
        ("find tree -name '*.h'", ["find", "tree", "-name", "*.h"], None, 1.3),
        ("git status --porcelain", ["git", "status", "--porcelain"], git_env, 1.3),
        (f"grep -r -c {NOMATCH} {py_part.relative_to(src)}", ["grep", "-r", "-c", NOMATCH, str(py_part.relative_to(src))], None, 2.0),
    ]
    for label, cmd, env, limit in commands:
        outs: dict[str, bytes] = {}
        rewrote: list[str] = []

        def run(side: str) -> float:
            before = index_stamp(src) if cmd[0] == "git" else None
            dt, done = C.run_timed(cmd, cwd=bases[side], env=env)
            outs[side] = done.stdout
            if before is not None and index_stamp(src) != before:
                rewrote.append(side)
            return dt

        ld = load1()
        times, ratios, cpu = paired(bases, args.runs, run, pids)
        same = "same output" if len({b"\n".join(sorted(o.splitlines())) for o in outs.values()}) == 1 \
            else "OUTPUT DIFFERS: " + ", ".join(f"{s} {len(o.splitlines())} lines" for s, o in outs.items())
        C.table(["side", f"median of {args.runs}", "min..max", "paired ratio to native (median)", "ratios", "daemon CPU s"],
                [[s, C.median(times[s]), f"{min(times[s]):.4f}..{max(times[s]):.4f}",
                  f"{C.median(ratios[s]):.2f}x" if s in ratios else "1", " ".join(f"{r:.2f}" for r in ratios.get(s, [])),
                  f"{cpu[s]:.3f}" if s in cpu else "-"] for s in bases],
                title=f"{label}  ({same}{'; .git/index rewritten by ' + ', '.join(rewrote) if rewrote else ''}; load {ld} -> {load1()})")
        cpu_rows.append([label, cpu["mount"], cpu.get("bare", "-")])
        r = ratios["mount"]
        row(label, C.median(times["mount"]), C.median(times["native"]), r, f"<= {limit}x", C.median(r) <= limit, f"{ld}..{load1()}",
            f"{C.median(ratios['bare']):.2f}x" if "bare" in ratios else "-")

    # -- 2. sequential reads of big.bin
    size = args.big_mib * MiB

    def read(side: str) -> float:
        dt, n = seq_read(bases[side] / "big.bin")
        assert n == size, f"{side}: read {n} of {size} bytes"
        return dt

    def read_cold(side: str) -> float:
        C.drop_caches()
        return read(side)

    for kind, fn, target, limit in (("warm", read, "time <= 1.1x (keep)", 1.1), ("cold", read_cold, "time <= 1.25x", 1.25)):
        ld = load1()
        times, ratios, _ = paired(bases, args.read_runs, fn, {})
        C.table(["side", f"median s of {args.read_runs}", "throughput", "paired ratio (time)", "ratios"],
                [[s, C.median(times[s]), f"{size / MiB / C.median(times[s]):,.0f} MiB/s",
                  f"{C.median(ratios[s]):.2f}x" if s in ratios else "1", " ".join(f"{x:.2f}" for x in ratios.get(s, []))] for s in bases],
                title=f"sequential read of big.bin, {args.big_mib} MiB in 1 MiB reads, {kind} (load {ld} -> {load1()})")
        row(f"read {args.big_mib} MiB, {kind}", C.median(times["mount"]), C.median(times["native"]), ratios["mount"], target,
            C.median(ratios["mount"]) <= limit, f"{ld}..{load1()}", f"{C.median(ratios['bare']):.2f}x" if "bare" in ratios else "-")

    # -- 3. cat big.py@outline as a whole process
    ld = load1()
    header = open(mnt / "big.py@outline", "rb").readline().decode(errors="replace").strip()
    targets = {"mount": mnt / "big.py@outline", "native": src / "big.py", "bare": bmnt / "big.py"}
    times, ratios, _ = paired(bases, args.cats, lambda side: C.run_timed(["cat", str(targets[side])])[0], {})
    C.table(["side, what cat reads", f"median of {args.cats}", "p90", "paired ratio"],
            [[f"{s} {targets[s].name}", C.ms(C.median(times[s])), C.ms(C.pct(times[s], .9)),
              f"{C.median(ratios[s]):.2f}x" if s in ratios else "1"] for s in bases],
            title=f"cat big.py@outline as a process (header {header[:100]}) (load {ld} -> {load1()})")
    row("cat big.py@outline, whole process (native: cat big.py)", C.median(times["mount"]), C.median(times["native"]), ratios["mount"],
        "< 5 ms", C.median(times["mount"]) < 0.005, f"{ld}..{load1()}")

    if args.slow_view:
        slow_view(args, src, mnt, files, row)

    # -- FUSE requests behind the commands
    if args.requests:
        rows = []
        for label, cmd, env, _ in commands:
            for side, pid in pids.items():
                C.run_timed(cmd, cwd=bases[side], env=env)  # warm, as the timed runs were
                counts = count_requests(pid, lambda: C.run_timed(cmd, cwd=bases[side], env=env), work / "strace.txt")
                rows.append([label, side, sum(counts.values()), " ".join(f"{k}={v}" for k, v in counts.items())])
        for side, pid in pids.items():
            target = targets[side]
            counts = count_requests(pid, lambda: [C.run_timed(["cat", str(target)]) for _ in range(100)], work / "strace.txt")
            rows.append([f"100 x cat {target.name}", side, sum(counts.values()), " ".join(f"{k}={v}" for k, v in counts.items())])
        C.table(["command (one warm run)", "daemon", "FUSE requests", "by opcode"], rows,
                title=f"FUSE requests read by each daemon from /dev/fuse (strace; tree/ has {len(files):,} files, {folders:,} folders)")

    C.table(["command", "mount", "native", "mount/native (median of paired ratios)", "ratios min..max", "bare/native", "goal", "", "load 1-min"],
            final, title=f"summary ({len(files):,} files, {folders:,} folders, {tree_bytes / 1e6:.0f} MB in tree/; default mount)")
    C.table(["command", "nasfs daemon CPU s", "bare daemon CPU s"], cpu_rows, title="daemon CPU per run (median; user + system, all threads)")
    print(f"load average at start {start_load}, at end {loads()}")


if __name__ == "__main__":
    main()
    C.finish()
