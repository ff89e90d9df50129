"""Benchmark of the core (issue 2): outlines, token counting, savings, latency.

    .venv/bin/python scripts/bench/core.py [TREE] [--cli-runs 20] [--profile] [--in-place] [--keep]

TREE (default: this Python's standard library, without site-packages) is
copied into a temp folder (without .git and __pycache__) and made a git
repository with one commit, so every pointer names a real commit. Then:

(a) every file's ``@outline`` through the core (``Nas.read_view``), cold (a
    fresh process and a fresh NASFS_CACHE_DIR) and warm (the same Nas, a
    second pass), plus a new process over the now warm disk cache; all as a
    ratio to ``ctags -R`` over the same tree in the same run. The outline-only
    cost (``nasfs.outline.outline_bytes`` over bytes already in memory) and
    the counting cost separate parsing from tokenizing and git.
(b) tokens per second of ``nasfs.tokens.count`` over the tree's text.
(c) whole-tree tokens of the full files against those of their ``@outline``.
(d) median in-process latency of a warm view of an unchanged file (< 2 ms).
(e) ``nasfs read 'P@outline'`` as a whole process, warm and cold, median of
    --cli-runs runs (< 250 ms warm); ``-X importtime``'s top offenders when
    it is slow.

Figures are ratios against baselines measured in the same run; nothing here
asserts on time. Everything made is removed at exit (--keep keeps the copy).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

TARGET_WARM_VIEW_MS = 2.0
TARGET_CLI_MS = 250.0
LARGE = 32 << 20


# ======================================================================== children
# Each child runs in a fresh process: a cold measure must not inherit loaded
# parsers, vocabularies or caches from another one.

def child_outline(root: str, files: list[str], out: str) -> None:
    """outline_bytes and tokens.count over bytes already in memory."""
    t0 = time.perf_counter()
    from nasfs import tokens
    from nasfs.outline import family_for, is_binary, outline_bytes
    t_import = time.perf_counter() - t0
    rows = []
    blobs = []
    for p in files:
        with open(os.path.join(root, p), "rb") as fh:
            data = fh.read()
        blobs.append(data)
    t_outline_total = 0.0
    first_call = None
    for p, data in zip(files, blobs):
        binary = is_binary(data)
        family = "binary" if binary else family_for(p)
        dt = 0.0
        if len(data) <= LARGE:
            t = time.perf_counter()
            outline_bytes(p, data)
            dt = time.perf_counter() - t
        if first_call is None:
            first_call = dt
        t_outline_total += dt
        rows.append({"path": p, "size": len(data), "family": family, "binary": binary, "outline_s": dt})
    # (b) counting: the vocabulary load is timed apart from the counting
    t = time.perf_counter()
    enc = tokens.encoding(tokens.DEFAULT_TOKENIZER)
    t_vocab = time.perf_counter() - t
    texts = []
    t_count = 0.0
    total_tokens = 0
    text_bytes = 0
    for row, data in zip(rows, blobs):
        if row["binary"] or len(data) > LARGE:
            row["tokens"] = None
            continue
        t = time.perf_counter()
        n = tokens.count(data)
        t_count += time.perf_counter() - t
        row["tokens"] = n
        total_tokens += n
        text_bytes += len(data)
        texts.append(data.decode("utf-8", errors="replace"))
    t = time.perf_counter()
    enc.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 1)
    t_batch = time.perf_counter() - t
    t = time.perf_counter()
    for s in texts:
        enc.encode_ordinary(s)
    t_raw = time.perf_counter() - t
    # the other cold costs, apart: git's blob hash of every file, and two
    # disk-cache writes per file (the full count and the response), as
    # Nas.read_view does them on a miss
    import hashlib

    import pygit2
    from nasfs.cache import DiskCache
    t = time.perf_counter()
    for data in blobs:
        pygit2.hash(data)
    t_hash = time.perf_counter() - t
    disk = DiskCache(Path(os.environ["NASFS_CACHE_DIR"]) / "puts")
    value = b"x" * 1500
    t = time.perf_counter()
    for p in files:
        k = hashlib.sha256(p.encode()).hexdigest()
        disk.put("tokens:" + k, b"123")
        disk.put("resp:" + k, value)
    t_put = time.perf_counter() - t
    json.dump({"hash_s": t_hash, "put_s": t_put,
        "import_s": t_import, "outline_s": t_outline_total, "first_outline_s": first_call, "vocab_s": t_vocab,
        "count_s": t_count, "raw_encode_s": t_raw, "batch_s": t_batch, "tokens": total_tokens, "text_bytes": text_bytes,
        "rows": rows,
    }, open(out, "w"))


def child_serve(root: str, files: list[str], out: str, probe: str, passes: str, profile: bool) -> None:
    """(a) cold and warm passes of read_view(outline), (d) warm latency."""
    t0 = time.perf_counter()
    from nasfs.cache import DiskCache
    from nasfs.errors import NasError
    from nasfs.grammar import View
    from nasfs.repo import GitTree
    from nasfs.service import Nas
    t_import = time.perf_counter() - t0
    view = View("outline")
    t = time.perf_counter()
    nas = Nas(GitTree(root), disk=DiskCache())
    t_open = time.perf_counter() - t
    result: dict = {"import_s": t_import, "open_s": t_open, "passes": {}}

    def one_pass() -> dict:
        per = {}
        errors = []
        t_all = time.perf_counter()
        for p in files:
            t = time.perf_counter()
            try:
                r = nas.read_view(p, view)
            except NasError as exc:
                errors.append(f"{p}: {exc}")
                per[p] = {"s": time.perf_counter() - t, "tokens": None, "full": None}
                continue
            per[p] = {"s": time.perf_counter() - t, "tokens": r.tokens, "full": r.full_tokens}
        return {"total_s": time.perf_counter() - t_all, "files": per, "errors": errors}

    if profile:
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        one_pass()
        prof.disable()
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("tottime").print_stats(22)
        st.sort_stats("cumulative").print_stats(28)
        result["profile"] = buf.getvalue()
        json.dump(result, open(out, "w"))
        return
    for name in passes.split(","):
        result["passes"][name] = one_pass()
    if probe:
        # (d) a warm view of an unchanged file: read_view, and read(spec) which also parses the name
        lat_view, lat_spec = [], []
        for _ in range(20):  # warm-up
            nas.read_view(probe, view)
        for _ in range(500):
            t = time.perf_counter()
            nas.read_view(probe, view)
            lat_view.append(time.perf_counter() - t)
        for _ in range(500):
            t = time.perf_counter()
            nas.read(probe + "@outline")
            lat_spec.append(time.perf_counter() - t)
        result["latency_view"] = lat_view
        result["latency_spec"] = lat_spec
        prof_text = C.profile_top(lambda: [nas.read(probe + "@outline") for _ in range(300)], 15)
        result["latency_profile"] = prof_text
    json.dump(result, open(out, "w"))


def child_cli_profile(root: str, spec: str) -> None:
    """cProfile of one whole `nasfs read` in-process (imports included)."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    devnull = open(os.devnull, "wb")
    real = sys.stdout
    prof.enable()
    from nasfs.cli import main
    sys.stdout = io.TextIOWrapper(devnull)
    try:
        main(["read", "--repo", root, spec])
    finally:
        sys.stdout = real
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
    print(buf.getvalue())


# ======================================================================== parent
def prepare(args: argparse.Namespace, work: Path) -> tuple[Path, str]:
    source = Path(args.tree).resolve()
    if args.in_place:
        C.git("rev-parse", "HEAD", cwd=source)
        return source, "in place"
    default = args.tree == default_tree()
    skip = {".git", "__pycache__"} | ({"site-packages"} if default else set())
    tree = work / source.name
    t = time.perf_counter()
    shutil.copytree(source, tree, symlinks=True, ignore=lambda d, names: [n for n in names if n in skip])
    C.make_repo(tree, f"copy of {source}")
    return tree, f"copied from {source} and committed in {time.perf_counter() - t:.1f} s"


def default_tree() -> str:
    return sysconfig.get_paths()["stdlib"]


def list_files(tree: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=tree, capture_output=True, check=True).stdout
    files = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        p = os.fsdecode(raw)
        full = tree / p
        if full.is_file() and not full.is_symlink():
            files.append(p)
    return sorted(files)


def run_child(mode: str, *argv: str, env: dict[str, str], timeout: float = 900) -> None:
    cmd = [str(C.PY), str(Path(__file__).resolve()), "--child", mode, *argv]
    done = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"child {mode} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    if done.stdout.strip():
        print(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", nargs="?", default=default_tree(), help="a tree of files (default: Python's stdlib)")
    ap.add_argument("--cli-runs", type=int, default=20, help="runs of `nasfs read` per case (median)")
    ap.add_argument("--profile", action="store_true", help="also print cProfile of the cold pass and of one CLI read")
    ap.add_argument("--in-place", action="store_true", help="use TREE as it is (a git work tree) instead of a copy")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("child_args", nargs="*", help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.child:
        cargs = [args.tree, *args.child_args, *rest]
        if args.child == "outline":
            child_outline(cargs[0], json.load(open(cargs[1])), cargs[2])
        elif args.child == "serve":
            child_serve(cargs[0], json.load(open(cargs[1])), cargs[2], cargs[3], cargs[4], cargs[5] == "1")
        elif args.child == "cliprofile":
            child_cli_profile(cargs[0], cargs[1])
        return

    C.banner("nasfs core benchmark (issue 2)")
    ctags = C.require("ctags")
    work = C.workdir("core", args.keep)
    tree, how = prepare(args, work)
    files = list_files(tree)
    sizes = {p: (tree / p).stat().st_size for p in files}
    total_bytes = sum(sizes.values())
    print(f"tree: {tree} ({how}); {len(files):,} files, {total_bytes / 1e6:.1f} MB")
    if len(files) < 2000:
        print(f"note: {len(files)} files (< 2,000): fine for a second tree, too small for the main figure")
    flist = work / "files.json"
    json.dump(files, open(flist, "w"))

    # -- baseline: ctags over the same tree, page cache as warm as for nasfs
    ctags_runs = []
    for _ in range(3):
        dt, done = C.run_timed([ctags, "-R", "-f", "-", "."], cwd=tree)
        ctags_runs.append(dt)
    ctags_s = C.median(ctags_runs)
    ctags_tags = done.stdout.count(b"\n")
    print(f"baseline: `ctags -R -f - .` (stdout to a pipe; `-f /dev/null` fails to truncate /dev/null in ctags 5.9): "
          f"median of 3 = {ctags_s:.3f} s, {ctags_tags:,} tags, {total_bytes / 1e6 / ctags_s:.0f} MB/s\n")

    # -- outline-only and counting (fresh process)
    out_o = work / "outline.json"
    t = time.perf_counter()
    run_child("outline", str(tree), str(flist), str(out_o), env=C.child_env(NASFS_CACHE_DIR=str(work / "cache-o")))
    print(f"[outline/count child: {time.perf_counter() - t:.1f} s wall]")
    o = json.load(open(out_o))
    rows = {r["path"]: r for r in o["rows"]}

    # the probe file for (d) and (e): a code file of median size
    code = sorted((r for r in o["rows"] if r["family"] == "code" and r["size"] > 0), key=lambda r: r["size"])
    text = sorted((r for r in o["rows"] if not r["binary"] and r["size"] > 0), key=lambda r: r["size"])
    probe_row = (code or text)[len(code or text) // 2]
    probe = probe_row["path"]

    # -- (a) cold and warm through the core (fresh process, fresh cache dir)
    cache = work / "cache-a"
    out_a = work / "serve.json"
    t = time.perf_counter()
    run_child("serve", str(tree), str(flist), str(out_a), probe, "cold,warm", "0", env=C.child_env(NASFS_CACHE_DIR=str(cache)))
    print(f"[serve child: {time.perf_counter() - t:.1f} s wall]")
    a = json.load(open(out_a))
    cold, warm = a["passes"]["cold"], a["passes"]["warm"]
    # a new process over the warm disk cache: what one-shot CLI reads see
    out_d = work / "diskwarm.json"
    run_child("serve", str(tree), str(flist), str(out_d), "", "diskwarm", "0", env=C.child_env(NASFS_CACHE_DIR=str(cache)))
    dw = json.load(open(out_d))["passes"]["diskwarm"]

    n_err = len(cold["errors"])
    print(f"(a) outline every file ({len(files):,} files, {n_err} refused"
          + (f", e.g. {cold['errors'][0]}" if n_err else "") + ")")
    C.table(
        ["pass", "seconds", "per file", "vs ctags -R"],
        [
            ["ctags -R (baseline, whole process)", ctags_s, C.ms(ctags_s / len(files)), "1.00x"],
            ["nasfs cold: fresh process + empty cache (loop only)", cold["total_s"], C.ms(cold["total_s"] / len(files)), C.ratio(cold["total_s"], ctags_s)],
            ["  + imports and opening the repo", cold["total_s"] + a["import_s"] + a["open_s"], "", C.ratio(cold["total_s"] + a["import_s"] + a["open_s"], ctags_s)],
            ["nasfs warm: same Nas, second pass", warm["total_s"], C.ms(warm["total_s"] / len(files)), C.ratio(warm["total_s"], ctags_s)],
            ["nasfs new process, warm disk cache", dw["total_s"], C.ms(dw["total_s"] / len(files)), C.ratio(dw["total_s"], ctags_s)],
            ["outline_bytes only (bytes in memory)", o["outline_s"], C.ms(o["outline_s"] / len(files)), C.ratio(o["outline_s"], ctags_s)],
            ["tokens.count of every full file", o["count_s"], C.ms(o["count_s"] / len(files)), C.ratio(o["count_s"], ctags_s)],
        ],
    )
    rest_s = cold["total_s"] - o["outline_s"] - o["count_s"] - o["hash_s"] - o["put_s"]
    tot = cold["total_s"]
    C.table(
        ["part of the cold pass (each measured apart)", "seconds", "share of cold"],
        [
            ["outline_bytes (parsing, tree-sitter)", o["outline_s"], f"{o['outline_s'] / tot:.0%}"],
            ["tokens.count of the full files", o["count_s"], f"{o['count_s'] / tot:.0%}"],
            ["git blob hash of every file (pygit2.hash)", o["hash_s"], f"{o['hash_s'] / tot:.0%}"],
            ["2 disk-cache writes per file (DiskCache.put)", o["put_s"], f"{o['put_s'] / tot:.0%}"],
            ["the rest (HEAD lookup, line index, header count, JSON, large files)", rest_s, f"{rest_s / tot:.0%}"],
        ],
    )
    print(f"one-off: vocabulary load {o['vocab_s']:.2f} s, first outline call {o['first_outline_s']:.3f} s\n")

    fams: dict[str, dict[str, float]] = {}
    for p in files:
        r = rows[p]
        f = fams.setdefault(r["family"], {"files": 0, "bytes": 0, "outline_s": 0.0, "cold_s": 0.0, "warm_s": 0.0, "full": 0, "view": 0})
        f["files"] += 1
        f["bytes"] += r["size"]
        f["outline_s"] += r["outline_s"]
        f["cold_s"] += cold["files"][p]["s"]
        f["warm_s"] += warm["files"][p]["s"]
        c = cold["files"][p]
        if c["full"] is not None and c["tokens"] is not None:
            f["full"] += c["full"]
            f["view"] += c["tokens"]
    C.table(
        ["family", "files", "MB", "outline_bytes s", "cold read_view s", "warm s", "full tokens", "@outline tokens", "outline/full"],
        [[k, int(v["files"]), v["bytes"] / 1e6, v["outline_s"], v["cold_s"], v["warm_s"], int(v["full"]), int(v["view"]),
          f"{v['view'] / v['full']:.1%}" if v["full"] else "-"] for k, v in sorted(fams.items(), key=lambda kv: -kv[1]["cold_s"])],
        title="per outliner family",
    )
    slow = sorted(files, key=lambda p: -cold["files"][p]["s"])[:8]
    C.table(["slowest cold files", "KB", "cold", "outline_bytes"],
            [[p, sizes[p] / 1e3, C.ms(cold["files"][p]["s"]), C.ms(rows[p]["outline_s"])] for p in slow])

    # -- (b) counting throughput
    tps = o["tokens"] / o["count_s"]
    print("(b) token counting (cl100k_base), vocabulary already loaded")
    C.table(
        ["counter", "seconds", "tokens/s", "MB/s", "vs tokens.count"],
        [
            ["nasfs.tokens.count, one file at a time", o["count_s"], f"{tps:,.0f}", o["text_bytes"] / 1e6 / o["count_s"], "1.00x"],
            ["tiktoken encode_ordinary (no wrapper)", o["raw_encode_s"], f"{o['tokens'] / o['raw_encode_s']:,.0f}", o["text_bytes"] / 1e6 / o["raw_encode_s"], C.ratio(o["raw_encode_s"], o["count_s"])],
            [f"tiktoken encode_ordinary_batch, {os.cpu_count()} threads", o["batch_s"], f"{o['tokens'] / o['batch_s']:,.0f}", o["text_bytes"] / 1e6 / o["batch_s"], C.ratio(o["batch_s"], o["count_s"])],
            ["ctags -R (for scale: MB/s of the tree)", ctags_s, "-", total_bytes / 1e6 / ctags_s, C.ratio(ctags_s, o["count_s"])],
        ],
    )
    print(f"vocabulary load: {o['vocab_s']:.2f} s (once per process); {o['tokens']:,} tokens in {o['text_bytes'] / 1e6:.1f} MB of text\n")

    # -- (c) saving
    full_total = sum(c["full"] for c in cold["files"].values() if c["full"] is not None and c["tokens"] is not None)
    view_total = sum(c["tokens"] for c in cold["files"].values() if c["full"] is not None and c["tokens"] is not None)
    n_text = sum(1 for c in cold["files"].values() if c["full"] is not None and c["tokens"] is not None)
    bigger = sum(1 for c in cold["files"].values() if c["full"] is not None and c["tokens"] is not None and c["tokens"] > c["full"])
    print("(c) whole-tree tokens: full files against @outline views (header line included)")
    C.table(
        ["what", "files", "tokens", "share of full"],
        [
            ["full text files", n_text, full_total, "100%"],
            ["their @outline views", n_text, view_total, f"{view_total / full_total:.1%}"],
            ["saving", "", full_total - view_total, f"{1 - view_total / full_total:.1%}"],
        ],
    )
    print(f"{bigger:,} small files have an @outline larger than the file itself (the budget ladder @N would serve them full)\n")

    # -- (d) warm latency
    lv, ls = a["latency_view"], a["latency_spec"]
    warm_files = [warm["files"][p]["s"] for p in files]
    med = C.median(lv) * 1000
    print(f"(d) warm view of an unchanged file, in process: {probe} ({probe_row['size']:,} bytes)")
    C.table(
        ["call", "runs", "median", "p90", "target", ""],
        [
            ["nas.read_view(P, View('outline'))", len(lv), C.ms(C.median(lv)), C.ms(C.pct(lv, 0.9)), f"< {TARGET_WARM_VIEW_MS:g} ms", C.verdict(med < TARGET_WARM_VIEW_MS)],
            ["nas.read('P@outline')", len(ls), C.ms(C.median(ls)), C.ms(C.pct(ls, 0.9)), f"< {TARGET_WARM_VIEW_MS:g} ms", C.verdict(C.median(ls) * 1000 < TARGET_WARM_VIEW_MS)],
            ["warm pass, every file once", len(warm_files), C.ms(C.median(warm_files)), C.ms(C.pct(warm_files, 0.9)), f"< {TARGET_WARM_VIEW_MS:g} ms", C.verdict(C.median(warm_files) * 1000 < TARGET_WARM_VIEW_MS)],
        ],
    )
    print("profile of 300 warm nas.read('P@outline') calls (top by own time):")
    print(a["latency_profile"])

    # -- (e) whole process
    n = args.cli_runs
    cmd = [str(C.NASFS), "read", "--repo", str(tree), f"{probe}@outline"]
    env_warm = C.child_env(NASFS_CACHE_DIR=str(cache))
    C.run_timed(cmd, env=env_warm)  # make sure this exact response is on disk
    warm_runs = [C.run_timed(cmd, env=env_warm)[0] for _ in range(n)]
    cold_runs = []
    for i in range(n):
        fresh = work / f"cache-cold-{i}"
        cold_runs.append(C.run_timed(cmd, env=C.child_env(NASFS_CACHE_DIR=str(fresh)))[0])
        shutil.rmtree(fresh, ignore_errors=True)
    py_runs = [C.run_timed([str(C.PY), "-c", "pass"])[0] for _ in range(n)]
    imp_runs = [C.run_timed([str(C.PY), "-c", "import nasfs.cli, nasfs.service"])[0] for _ in range(n)]
    floor_runs = [C.run_timed([str(C.PY), "-c", "import argparse, sqlite3, hashlib, json"])[0] for _ in range(n)]
    git_runs = [C.run_timed(["git", "show", f"HEAD:{probe}"], cwd=tree)[0] for _ in range(n)]
    ctags1 = [C.run_timed([ctags, "-f", "-", probe], cwd=tree)[0] for _ in range(n)]
    base = C.median(py_runs)
    wmed = C.median(warm_runs)
    print(f"(e) `nasfs read 'P@outline'` as a whole process, P = {probe}, median of {n} runs")
    C.table(
        ["process", "median", "min", "p90", "vs python -c pass", "target", ""],
        [
            ["python -c pass (baseline)", C.ms(base), C.ms(min(py_runs)), C.ms(C.pct(py_runs, 0.9)), "1.00x", "", ""],
            ["python -c 'import nasfs.cli, nasfs.service'", C.ms(C.median(imp_runs)), C.ms(min(imp_runs)), C.ms(C.pct(imp_runs, 0.9)), C.ratio(C.median(imp_runs), base), "", ""],
            ["python -c 'import argparse, sqlite3, hashlib, json'", C.ms(C.median(floor_runs)), C.ms(min(floor_runs)), C.ms(C.pct(floor_runs, 0.9)), C.ratio(C.median(floor_runs), base), "", ""],
            ["git show HEAD:P", C.ms(C.median(git_runs)), C.ms(min(git_runs)), C.ms(C.pct(git_runs, 0.9)), C.ratio(C.median(git_runs), base), "", ""],
            ["ctags -f - P", C.ms(C.median(ctags1)), C.ms(min(ctags1)), C.ms(C.pct(ctags1, 0.9)), C.ratio(C.median(ctags1), base), "", ""],
            ["nasfs read P@outline, warm disk cache", C.ms(wmed), C.ms(min(warm_runs)), C.ms(C.pct(warm_runs, 0.9)), C.ratio(wmed, base), f"< {TARGET_CLI_MS:g} ms", C.verdict(wmed * 1000 < TARGET_CLI_MS)],
            ["nasfs read P@outline, fresh cache dir", C.ms(C.median(cold_runs)), C.ms(min(cold_runs)), C.ms(C.pct(cold_runs, 0.9)), C.ratio(C.median(cold_runs), base), "", ""],
        ],
    )
    if wmed * 1000 >= TARGET_CLI_MS * 0.6 or args.profile:
        importtime(cmd, env_warm)
    if args.profile:
        print("cProfile of one warm `nasfs read P@outline` in process, imports included (cumulative):")
        run_child("cliprofile", str(tree), f"{probe}@outline", env=env_warm)
        out_p = work / "profile.json"
        run_child("serve", str(tree), str(flist), str(out_p), "", "cold", "1", env=C.child_env(NASFS_CACHE_DIR=str(work / "cache-p")))
        print("cProfile of the cold pass (fresh process, fresh cache dir):")
        print(json.load(open(out_p))["profile"].replace(str(C.REPO) + "/", ""))

    print("summary")
    C.table(
        ["figure", "value", "baseline", "ratio", "target", ""],
        [
            ["(a) cold outline of the tree", f"{cold['total_s']:.2f} s", f"ctags {ctags_s:.2f} s", C.ratio(cold["total_s"], ctags_s), "-", ""],
            ["(a) warm outline of the tree", f"{warm['total_s']:.2f} s", f"ctags {ctags_s:.2f} s", C.ratio(warm["total_s"], ctags_s), "-", ""],
            ["(b) counting", f"{tps / 1e6:.2f} M tokens/s", f"batch {o['tokens'] / o['batch_s'] / 1e6:.2f} M/s", C.ratio(o["count_s"], o["batch_s"]), "-", ""],
            ["(c) @outline tokens / full tokens", f"{view_total / full_total:.1%}", f"{full_total:,} tokens", f"saving {1 - view_total / full_total:.1%}", "-", ""],
            ["(d) warm view, in process", C.ms(C.median(ls)), "", "", f"< {TARGET_WARM_VIEW_MS:g} ms", C.verdict(C.median(ls) * 1000 < TARGET_WARM_VIEW_MS)],
            ["(e) nasfs read, warm", C.ms(wmed), f"python {C.ms(base)}", C.ratio(wmed, base), f"< {TARGET_CLI_MS:g} ms", C.verdict(wmed * 1000 < TARGET_CLI_MS)],
            ["(e) nasfs read, cold", C.ms(C.median(cold_runs)), f"python {C.ms(base)}", C.ratio(C.median(cold_runs), base), "-", ""],
        ],
    )


def importtime(cmd: list[str], env: dict[str, str]) -> None:
    done = subprocess.run([str(C.PY), "-X", "importtime", *cmd], env=env, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line[len("import time:"):].split("|")
        self_us, cum_us, name = int(parts[0]), int(parts[1]), parts[2][1:].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append([cum_us, self_us, depth, name.strip(), ""])
    for i, r in enumerate(rows):  # importtime prints a module after what it imported
        for later in rows[i + 1:]:
            if later[2] == r[2] - 1:
                r[4] = later[3]
                break
    total = sum(r[0] for r in rows if r[2] == 0)
    top = sorted((r for r in rows if r[2] <= 2), key=lambda r: -r[0])[:14]
    print(f"`python -X importtime` of the warm read: {total / 1000:.0f} ms in imports; biggest by cumulative time:")
    C.table(["module", "imported by", "cumulative", "self"], [[n, p or "(top)", f"{c / 1000:.1f} ms", f"{s / 1000:.1f} ms"] for c, s, d, n, p in top])


if __name__ == "__main__":
    main()
    if "--child" not in sys.argv:
        C.finish()
