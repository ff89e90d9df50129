"""Benchmark of the FUSE mount (issue 3), as ratios to the same work on the source folder.

    .venv/bin/python scripts/bench/mount.py [--big-mib 1024] [--files 20000] [--lines 5000]
                                            [--repeat 50] [--read-runs 4] [--views 2000] [--keep]
                                            [--trace] [--profile]

--trace counts the FUSE requests behind a view read, a pass-through read and
rg (strace); --profile samples the daemon with py-spy in each phase (install it
outside the venv: .venv/bin/python -m pip install --target /tmp/pyspy py-spy,
then PYSPY=/tmp/pyspy/bin/py-spy).

Builds under /tmp a source git repository: big.bin (--big-mib MiB of random
bytes, git-ignored), tree/ (--files small files: code, markdown, text, JSON)
and long.py (--lines lines); mounts it with
``.venv/bin/python -m nasfs mount SRC MNT --foreground`` (as tests/mounts.py
does) and measures, natively and through the mount, in one run:

- sequential read of big.bin, cold (page cache dropped before each read
  with ``echo 3 > /proc/sys/vm/drop_caches``) and warm (a second read);
- ``rg`` over tree/; ``git status`` of the repository;
- the first and the repeated ``cat long.py@outline`` (open+read+close in
  process, and ``cat`` as a process);
- the daemon's VmHWM/VmRSS from /proc after serving all that, and after
  reading --views files' @outline.

Targets printed beside the figures: cold reads >= 80% of native, warm >=
60%, rg within 3x, repeated view reads < 1 ms median, daemon < 200 MB.
The mount is unmounted and the folder removed at the end, also on error.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

MiB = 1 << 20


def seq_read(path: Path, block: int = MiB) -> tuple[float, int]:
    """Seconds to read a file front to back in ``block`` reads; bytes read."""
    buf = bytearray(block)
    view = memoryview(buf)
    n = 0
    t = time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        while True:
            got = fh.readinto(view)
            if not got:
                break
            n += got
    return time.perf_counter() - t, n


def open_read(path: Path) -> float:
    t = time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        while fh.read(1 << 16):
            pass
    return time.perf_counter() - t


FUSE_OPS = {1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 5: "READLINK", 14: "OPEN", 15: "READ", 16: "WRITE",
            17: "STATFS", 18: "RELEASE", 20: "FSYNC", 22: "GETXATTR", 23: "LISTXATTR", 25: "FLUSH", 27: "OPENDIR",
            28: "READDIR", 29: "RELEASEDIR", 34: "ACCESS", 35: "CREATE", 39: "IOCTL", 40: "POLL", 42: "BATCH_FORGET",
            44: "READDIRPLUS", 46: "LSEEK", 52: "STATX"}


def count_requests(pid: int, fn, out: Path) -> dict[str, int]:
    """FUSE requests the daemon read from /dev/fuse while ``fn`` ran (strace)."""
    import collections
    import re
    import struct

    fuse_fd = next(int(fd) for fd in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/fuse")
    st = subprocess.Popen(["strace", "-f", "-p", str(pid), "-e", "trace=read", "-e", f"read={fuse_fd}", "-x", "-s", "16", "-o", str(out)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    C.on_exit(lambda: st.poll() is None and st.kill())
    time.sleep(1.0)
    fn()
    time.sleep(0.5)
    st.terminate()
    st.wait()
    counts: collections.Counter[str] = collections.Counter()
    pattern = re.compile(r'read\(%d, "((?:\\x[0-9a-f]{2}){8})' % fuse_fd)
    for line in open(out):
        m = pattern.search(line)
        if m:
            raw = bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-f]{2})", m.group(1)))
            op = struct.unpack("<II", raw)[1]
            counts[FUSE_OPS.get(op, str(op))] += 1
    return dict(counts.most_common())


def mem_row(stage: str, pid: int) -> list[object]:
    m = C.proc_memory(pid)
    return [stage, f"{m['VmRSS'] / 1024:.1f} MB", f"{m['VmHWM'] / 1024:.1f} MB"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big-mib", type=int, default=1024, help="size of the big file (MiB)")
    ap.add_argument("--files", type=int, default=20000, help="small files in tree/")
    ap.add_argument("--lines", type=int, default=5000, help="lines of long.py")
    ap.add_argument("--repeat", type=int, default=50, help="repeated reads of long.py@outline (>= 50)")
    ap.add_argument("--read-runs", type=int, default=4, help="cold and warm reads of big.bin per side (median; the virtual disk is noisy)")
    ap.add_argument("--views", type=int, default=2000, help="@outline views of tree/ files read before the last memory reading")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (the mount is always removed)")
    ap.add_argument("--trace", action="store_true", help="count the FUSE requests behind a view read, a pass-through read and rg (needs strace)")
    ap.add_argument("--profile", action="store_true", help="sample the daemon with py-spy in each phase (needs py-spy; see _common.pyspy)")
    args = ap.parse_args()

    C.banner("nasfs mount benchmark (issue 3)")
    rg = C.require("rg")
    C.require("fusermount3")
    work = C.workdir("mount", args.keep)
    src, mnt, cache = work / "src", work / "mnt", work / "cache"
    src.mkdir()
    git_env = C.child_env(**C.GIT_ENV)

    # -- the source tree
    t = time.perf_counter()
    (src / ".gitignore").write_text("big.bin\n")
    planted = C.gen_tree(src / "tree", args.files)
    (src / "long.py").write_text(C.long_python(args.lines))
    C.make_repo(src, "bench source")
    t_tree = time.perf_counter() - t
    t = time.perf_counter()
    with open(src / "big.bin", "wb") as fh:
        for _ in range(args.big_mib):
            fh.write(os.urandom(MiB))
        fh.flush()
        os.fsync(fh.fileno())
    print(f"source: {src}: tree/ {args.files:,} files ({planted['bytes'] / 1e6:.1f} MB) and long.py "
          f"({args.lines:,} lines) in a git repo ({t_tree:.1f} s); big.bin {args.big_mib} MiB, ignored by git "
          f"({time.perf_counter() - t:.1f} s)")

    can_drop = C.drop_caches()
    if not can_drop:
        print("note: cannot write /proc/sys/vm/drop_caches (not root?): 'cold' reads are not cold")

    m = C.Mount(src, mnt, C.child_env(NASFS_CACHE_DIR=str(cache)), work / "mount.log")
    print(f"mount: {mnt} (daemon pid {m.pid}, log {work / 'mount.log'})\n")
    memory = [mem_row("mounted, nothing served", m.pid)]
    profiles: list[tuple[str, str]] = []
    spy: C.Spy | None = None

    def phase(name: str | None) -> None:
        """Stop the running sample (keeping its summary) and start one for ``name``."""
        nonlocal spy
        if not args.profile:
            return
        if spy is not None:
            profiles.append((spy.name, spy.stop()))  # type: ignore[attr-defined]
            spy = None
        if name is not None:
            spy = C.Spy(m.pid, work / f"spy-{len(profiles)}.txt")
            spy.name = name  # type: ignore[attr-defined]
    results: list[list[object]] = []

    # -- 1. sequential read of the big file
    phase("sequential reads of big.bin (cold and warm)")
    size = args.big_mib * MiB
    cold = {"native": [], "mount": []}
    for _ in range(args.read_runs):
        for where, base in (("native", src), ("mount", mnt)):
            C.drop_caches()
            dt, n = seq_read(base / "big.bin")
            assert n == size, f"read {n} bytes of {size} through {where}"
            cold[where].append(dt)
    warm = {"native": [], "mount": []}
    for where, base in (("native", src), ("mount", mnt)):
        seq_read(base / "big.bin")  # the first read fills the cache
        warm[where] = [seq_read(base / "big.bin")[0] for _ in range(args.read_runs)]
    memory.append(mem_row(f"after reading big.bin {2 * args.read_runs + 1} times", m.pid))
    mbps = lambda s: size / MiB / s  # noqa: E731
    cn, cm = C.median(cold["native"]), C.median(cold["mount"])
    wn, wm = C.median(warm["native"]), C.median(warm["mount"])
    C.table(
        ["sequential read of big.bin (1 MiB reads)", "native", "through mount", "mount/native throughput", "target", ""],
        [
            [f"cold, median of {args.read_runs} (page cache dropped{'' if can_drop else ': NOT'})", f"{mbps(cn):,.0f} MiB/s", f"{mbps(cm):,.0f} MiB/s", f"{cn / cm:.0%}", ">= 80%", C.verdict(cn / cm >= 0.8)],
            ["  cold, slowest..fastest", f"{mbps(max(cold['native'])):,.0f}..{mbps(min(cold['native'])):,.0f}", f"{mbps(max(cold['mount'])):,.0f}..{mbps(min(cold['mount'])):,.0f}", "", "", ""],
            [f"warm, median of {args.read_runs} (after a first read)", f"{mbps(wn):,.0f} MiB/s", f"{mbps(wm):,.0f} MiB/s", f"{wn / wm:.0%}", ">= 60%", C.verdict(wn / wm >= 0.6)],
            ["  warm, slowest..fastest", f"{mbps(max(warm['native'])):,.0f}..{mbps(min(warm['native'])):,.0f}", f"{mbps(max(warm['mount'])):,.0f}..{mbps(min(warm['mount'])):,.0f}", "", "", ""],
        ],
        title=f"1. sequential read, {args.big_mib} MiB",
    )
    results += [["cold sequential read", f"{cn / cm:.0%} of native", ">= 80%", C.verdict(cn / cm >= 0.8)],
                ["warm sequential read", f"{wn / wm:.0%} of native", ">= 60%", C.verdict(wn / wm >= 0.6)]]

    # -- 2. rg over the small files
    phase("rg over tree/")
    rg_cmd = [rg, "--no-messages", "--count", C.MID, "tree"]
    first_mount, done = C.run_timed(rg_cmd, cwd=mnt)
    hits_mount = done.stdout.count(b"\n")
    rg_t = {"native": [], "mount": []}
    for _ in range(3):
        for where, base in (("native", src), ("mount", mnt)):
            dt, done = C.run_timed(rg_cmd, cwd=base)
            rg_t[where].append(dt)
            if where == "native":
                hits_native = done.stdout.count(b"\n")
    memory.append(mem_row(f"after rg over {args.files:,} files, 4 times", m.pid))
    rn, rm = C.median(rg_t["native"]), C.median(rg_t["mount"])
    C.table(
        ["rg --count MID tree/", "seconds", "vs native", "target", ""],
        [
            ["native, median of 3", rn, "1.00x", "", ""],
            ["mount, first (kernel caches empty)", first_mount, C.ratio(first_mount, rn), "", ""],
            ["mount, median of 3 after", rm, C.ratio(rm, rn), "<= 3x", C.verdict(rm / rn <= 3)],
        ],
        title=f"2. rg over {args.files:,} small files ({hits_native} files match natively, {hits_mount} through the mount)",
    )
    results.append(["rg over the tree", f"{rm / rn:.2f}x native", "<= 3x", C.verdict(rm / rn <= 3)])

    # -- 3. git status
    phase("git status")
    gs = ["git", "status", "--porcelain"]
    native_gs = [C.run_timed(gs, cwd=src, env=git_env)[0] for _ in range(3)]
    first_gs, done = C.run_timed(gs, cwd=mnt, env=git_env)
    status_lines = done.stdout.decode(errors="replace").splitlines()
    mount_gs = [C.run_timed(gs, cwd=mnt, env=git_env)[0] for _ in range(3)]
    after_gs, _ = C.run_timed(gs, cwd=src, env=git_env)
    memory.append(mem_row("after git status through the mount, 4 times", m.pid))
    gn = C.median(native_gs)
    C.table(
        ["git status --porcelain", "seconds", "vs native"],
        [
            ["native, median of 3", gn, "1.00x"],
            ["mount, first", first_gs, C.ratio(first_gs, gn)],
            ["mount, median of 3 after", C.median(mount_gs), C.ratio(C.median(mount_gs), gn)],
            ["native again, once (after the mount's runs)", after_gs, C.ratio(after_gs, gn)],
        ],
        title=f"3. git status of {args.files + 2:,} tracked files ({len(status_lines)} lines of status through the mount"
              + (f", e.g. {status_lines[0]!r}" if status_lines else "") + ")",
    )
    results.append(["git status", f"{C.median(mount_gs) / gn:.2f}x native", "-", ""])

    # -- 4. long.py@outline
    phase("long.py@outline: the first read")
    view = mnt / "long.py@outline"
    first_view = open_read(view)
    header = open(view, "rb").readline().decode(errors="replace").strip()
    phase("long.py@outline: repeated open+read+close, then the same for long.py and with cat")
    reps = max(args.repeat, 50)
    view_t = [open_read(view) for _ in range(reps * 4)]
    native_t = [open_read(src / "long.py") for _ in range(reps * 4)]
    passthrough_t = [open_read(mnt / "long.py") for _ in range(reps * 4)]
    cat_view = [C.run_timed(["cat", str(view)])[0] for _ in range(reps)]
    cat_native = [C.run_timed(["cat", str(src / "long.py")])[0] for _ in range(reps)]
    first_cat_other = C.run_timed(["cat", str(mnt / "tree" / "d0000" / "f00000.py@outline")])[0]
    vm = C.median(view_t)
    C.table(
        ["read of long.py", "runs", "median", "p90", "vs native file", "target", ""],
        [
            ["native long.py: open+read+close in process", len(native_t), C.ms(C.median(native_t)), C.ms(C.pct(native_t, 0.9)), "1.00x", "", ""],
            ["mount long.py (pass-through)", len(passthrough_t), C.ms(C.median(passthrough_t)), C.ms(C.pct(passthrough_t, 0.9)), C.ratio(C.median(passthrough_t), C.median(native_t)), "", ""],
            ["mount long.py@outline, first read", 1, C.ms(first_view), "", C.ratio(first_view, C.median(native_t)), "", ""],
            ["mount long.py@outline, repeated", len(view_t), C.ms(vm), C.ms(C.pct(view_t, 0.9)), C.ratio(vm, C.median(native_t)), "< 1 ms", C.verdict(vm < 0.001)],
            ["`cat` long.py (process)", len(cat_native), C.ms(C.median(cat_native)), C.ms(C.pct(cat_native, 0.9)), "1.00x (of cat)", "", ""],
            ["`cat` long.py@outline (process), repeated", len(cat_view), C.ms(C.median(cat_view)), C.ms(C.pct(cat_view, 0.9)), C.ratio(C.median(cat_view), C.median(cat_native)), "", ""],
            ["`cat` tree/d0000/f00000.py@outline, first", 1, C.ms(first_cat_other), "", C.ratio(first_cat_other, C.median(cat_native)), "", ""],
        ],
        title=f"4. views of long.py ({args.lines:,} lines); header: {header[:150]}",
    )
    results.append(["repeated long.py@outline read", f"{vm * 1000:.3f} ms median", "< 1 ms", C.verdict(vm < 0.001)])

    # -- 5. memory after serving views of the tree
    phase(f"first @outline reads of {args.views} tree/ files")
    files = sorted(p.relative_to(src).as_posix() for p in (src / "tree").rglob("*") if p.is_file())
    step = max(1, len(files) // max(1, args.views))
    chosen = files[::step][: args.views]
    t = time.perf_counter()
    per = [open_read(mnt / f"{p}@outline") for p in chosen]
    sweep = time.perf_counter() - t
    memory.append(mem_row(f"after {len(chosen):,} @outline views of tree/ files", m.pid))
    second = [open_read(mnt / f"{p}@outline") for p in chosen[:500]]
    memory.append(mem_row("after re-reading 500 of them", m.pid))
    print(f"{len(chosen):,} first @outline reads of tree/ files: {sweep:.1f} s, median {C.ms(C.median(per))}, p90 {C.ms(C.pct(per, 0.9))}; "
          f"repeated: median {C.ms(C.median(second))}\n")
    hwm = C.proc_memory(m.pid)["VmHWM"] / 1024
    C.table(["daemon memory (from /proc/PID/status)", "VmRSS", "VmHWM"], memory, title="5. daemon memory")
    results.append(["daemon memory (VmHWM)", f"{hwm:.0f} MB", "< 200 MB", C.verdict(hwm < 200)])
    stats = (mnt / ".nas" / "stats").read_text().split()
    print("daemon .nas/stats: " + " ".join(s for s in stats if s.startswith(("views_served", "cache_"))) + "\n")

    phase(None)
    if args.trace:
        C.require("strace")
        view_file, plain = mnt / "long.py@outline", mnt / "long.py"
        some = sorted((mnt / "tree").iterdir())[0]
        cases = [
            ("100 opens+reads of long.py@outline (warm)", lambda: [open_read(view_file) for _ in range(100)], 100),
            ("100 opens+reads of long.py (pass-through, warm)", lambda: [open_read(plain) for _ in range(100)], 100),
            (f"rg over {some.name}/ ({len(list(some.iterdir()))} files), second run",
             lambda: subprocess.run([rg, "-c", C.MID, str(some)], capture_output=True), len(list(some.iterdir()))),
        ]
        subprocess.run([rg, "-c", C.MID, str(some)], capture_output=True)
        rows = []
        for label, fn, per in cases:
            counts = count_requests(m.pid, fn, work / "strace.txt")
            total = sum(counts.values())
            rows.append([label, total, f"{total / per:.1f}", " ".join(f"{k}={v}" for k, v in counts.items())])
        C.table(["FUSE requests (strace of the daemon's reads of /dev/fuse)", "requests", "per file", "by opcode"], rows,
                title="6. requests behind the figures")
    m.stop()
    for name, text in profiles:
        print(f"py-spy of the daemon during: {name}")
        print(text)
    print("summary")
    C.table(["figure", "value", "target", ""], results)


if __name__ == "__main__":
    main()
    C.finish()
