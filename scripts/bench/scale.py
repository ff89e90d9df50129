"""The tree a NAS holds (issue 20): N files mounted, searched, mapped, indexed.

Builds with ``git fast-import`` (outside the repository: ``--tree PATH`` or a
temp folder) a tree of N small Markdown, Python and JSON files in folders of
``--per-dir`` (default 1,000), plus a few deep chains, commits it once and
checks it out. A tree built before at PATH with the same N and seed is
reused. Then, against native where there is one:

- mount time to the first answer (``nasfs mount --no-warm``: the background
  warm-up would race every figure below; its own cost is ``nasfs index``);
- daemon RSS after the mount, after ``find``, after a whole-tree ``rg``,
  after each round of ``--views`` view reads (different files each round),
  and over ``--rounds`` repeats of the same reads (must stay flat);
- ``find -name`` and ``git status --porcelain``: paired alternating runs
  (mount, native, ...) after one warm-up pair, the median of the ratios;
- ``.@2000`` (the root's folder map) cold, with ``.nas/status`` polled while
  it runs, then warm;
- ``nasfs index`` of the whole tree against ``ctags -R`` in the same run;
- ``cat`` of a view of a file deep in the tree, whole process, warm;
- a writer changing ``--changes`` files beside the mount while readers read
  them through it: when each change shows, and whether any view mixes two
  versions of its file (torn).

Timing-free, the same code is tests/test_scale.py's (at 10^4 there): every
figure is kept in a :class:`Results` whose invariants the test asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

SEED = 20
DEEP_CHAINS = 3  # deep/cN/l00/l01/.../lNN/leaf.py
DEEP_LEVELS = 40
BUDGET = 2000  # the root map's budget (.@2000)
VERSION = re.compile(rb"\bv(\d+)v\b")  # the writer's version mark, on every line it writes


# -- the tree ----------------------------------------------------------------------------
def _templates(seed: int) -> dict[str, list[str]]:
    """A few hundred bodies per kind; every file gets its own head, so every blob differs."""
    rng = random.Random(seed)
    vocab = C._vocab()
    return {
        "py": [C.code_file(rng, vocab, rng.randint(2, 5)) for _ in range(200)],
        "md": [C.markdown_file(rng, vocab, rng.randint(1, 3)) for _ in range(200)],
        "json": [json.dumps({"name": rng.choice(vocab), "tags": C._words(rng, rng.randint(1, 5)),
                             "spec": {"size": rng.randint(1, 999), "notes": C._prose(rng, vocab, 12).strip()}}, indent=2)
                 for _ in range(200)],
    }


def tree_paths(n: int, per_dir: int) -> list[str]:
    """The N files' paths: ``dNNNN/fNNNNNNN.ext``, then the deep chains' leaves
    (counted in N). Kinds cycle Python, Markdown, JSON."""
    deep = [f"deep/c{c}/" + "/".join(f"l{k:02d}" for k in range(DEEP_LEVELS)) + "/leaf.py" for c in range(DEEP_CHAINS)]
    flat = max(0, n - len(deep))
    ext = ("py", "md", "json")
    return [f"d{i // per_dir:04d}/f{i:07d}.{ext[i % 3]}" for i in range(flat)] + deep


def file_text(path: str, i: int, per_dir: int, bodies: dict[str, list[str]]) -> bytes:
    """One file: a head naming it and a neighbour (mentions for the ranking), a shared body."""
    kind = path.rsplit(".", 1)[1]
    body = bodies[kind][i % len(bodies[kind])]
    peer = f"f{(i // per_dir) * per_dir + (i * 7 + 3) % per_dir:07d}"
    if kind == "py":
        head = f'"""{path}: number {i}."""\nfrom . import {peer}\n'
    elif kind == "md":
        head = f"<!-- {path}: number {i}; see {peer}.md -->\n"
    else:
        return (json.dumps({"path": path, "number": i, "see": f"{peer}.json"}) + "\n" + body + "\n").encode()
    return (head + body).encode()


def build_tree(root: Path, n: int, per_dir: int, seed: int = SEED) -> tuple[float, float]:
    """``root`` as a git work tree of ``n`` files in one commit (reused when a
    build with the same parameters finished there); (import s, checkout s)."""
    stamp = {"files": n, "per_dir": per_dir, "seed": seed, "deep": [DEEP_CHAINS, DEEP_LEVELS]}
    marker = root / ".git" / "nasfs-scale.json"
    if marker.exists() and json.loads(marker.read_text()) == stamp:
        subprocess.run(["git", "reset", "-q", "--hard"], cwd=root, check=True, env=dict(os.environ, **C.GIT_ENV))
        subprocess.run(["git", "clean", "-q", "-fdx"], cwd=root, check=True, env=dict(os.environ, **C.GIT_ENV))
        return 0.0, 0.0
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    C.git("init", "-q", "-b", "main", cwd=root)
    bodies = _templates(seed)
    t0 = time.perf_counter()
    importer = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=root, stdin=subprocess.PIPE,
                                env=dict(os.environ, **C.GIT_ENV))
    assert importer.stdin is not None
    out = importer.stdin
    message = f"scale tree: {n} files".encode()
    out.write(b"commit refs/heads/main\ncommitter bench <bench@localhost> 1767225600 +0000\n")
    out.write(b"data %d\n%s\n" % (len(message), message))
    for i, path in enumerate(tree_paths(n, per_dir)):
        data = file_text(path, i, per_dir, bodies)
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    out.write(b"\ndone\n")
    out.close()
    if importer.wait() != 0:
        raise RuntimeError("git fast-import failed")
    t1 = time.perf_counter()
    C.git("-c", "checkout.workers=0", "checkout", "-q", "-f", "main", cwd=root)
    t2 = time.perf_counter()
    marker.write_text(json.dumps(stamp))
    return t1 - t0, t2 - t1


# -- the daemon's memory -------------------------------------------------------------------
def rss_mb(pid: int) -> float:
    return C.proc_memory(pid)["VmRSS"] / 1024


def workers_rss_mb(pid: int) -> float:
    """The daemon's child processes (view workers), together."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                total += rss_mb(int(entry))
        except (OSError, KeyError, IndexError, ValueError):
            continue
    return total


# -- the runs ------------------------------------------------------------------------------
@dataclass
class Results:
    """Every figure of one run (seconds, MB); what the test asserts on."""

    files: int
    built: tuple[float, float] = (0.0, 0.0)
    mount_s: float = 0.0
    rss: list[tuple[str, float, float]] = field(default_factory=list)  # (after what, daemon MB, workers MB)
    repeat_rss: list[float] = field(default_factory=list)  # daemon MB after each repeat of the same reads
    peak_mb: float = 0.0  # the daemon's VmHWM at the end: its highest RSS along the run
    paired: dict[str, tuple[float, float, float, str]] = field(default_factory=dict)  # name: mount, native, ratio, same?
    views_read: int = 0
    view_errors: list[str] = field(default_factory=list)
    map_cold_s: float = 0.0
    map_warm_s: float = 0.0
    map_header: dict[str, str] = field(default_factory=dict)
    map_body_lines: int = 0
    status_lines: list[str] = field(default_factory=list)  # distinct .nas/status lines seen while the cold map ran
    deep_view_ms: tuple[float, float] = (0.0, 0.0)  # (view, native cat of the file), medians, whole process
    index_s: float = 0.0
    ctags_s: float = 0.0
    index_summary: str = ""
    changes: int = 0
    change_seen_s: list[float] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)
    reader_reads: int = 0
    loads: list[str] = field(default_factory=list)


def load1() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def header_of(text: bytes) -> dict[str, str]:
    first = text.split(b"\n", 1)[0].decode("utf-8", "replace")
    if not first.startswith("nasfs "):
        return {}
    return dict(pair.split("=", 1) for pair in first.split(" ")[1:] if "=" in pair)


def paired(name: str, cmd: list[str], mnt: Path, src: Path, runs: int, env: dict[str, str] | None,
           res: Results) -> None:
    """Median of the ratios of paired alternating runs (mount, native), after
    one untimed warm-up pair; whether both sides said the same (sorted lines)."""
    outs = {}
    for side, cwd in (("mount", mnt), ("native", src)):
        outs[side] = sorted(C.run_timed(cmd, cwd=cwd, env=env)[1].stdout.splitlines())
    same = "same output" if outs["mount"] == outs["native"] else \
        f"OUTPUT DIFFERS: mount {len(outs['mount'])} lines, native {len(outs['native'])}"
    pairs = []
    for _ in range(runs):
        m = C.run_timed(cmd, cwd=mnt, env=env)[0]
        n = C.run_timed(cmd, cwd=src, env=env)[0]
        pairs.append((m, n))
    ratios = [m / n for m, n in pairs]
    res.paired[name] = (C.median([m for m, _ in pairs]), C.median([n for _, n in pairs]), C.median(ratios), same)


def read_views(mnt: Path, paths: list[str], res: Results) -> None:
    """Open and read a view of each file (kinds rotate: outline, a budget, lines)."""
    kinds = ("@outline", "@400", "@L1-L5")
    for k, path in enumerate(paths):
        try:
            data = (mnt / f"{path}{kinds[k % 3]}").read_bytes()
            if k % 3 < 2 and not data.startswith(b"nasfs "):  # a line range is served bare
                res.view_errors.append(f"{path}{kinds[k % 3]}: no header")
        except OSError as exc:
            res.view_errors.append(f"{path}{kinds[k % 3]}: {exc}")
        res.views_read += 1


def cold_map(mnt: Path, res: Results, timeout: float) -> None:
    """``.@2000`` of the root, cold, with ``.nas/status`` read every 0.2 s meanwhile."""
    done = threading.Event()
    seen: list[str] = []

    def poll() -> None:
        while not done.is_set():
            try:
                text = (mnt / ".nas" / "status").read_text()
            except OSError as exc:
                text = f"(unreadable: {exc})"
            for line in text.splitlines():
                if line and line not in seen:
                    seen.append(line)
            done.wait(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    t = time.perf_counter()
    poller.start()
    try:
        out = subprocess.run(["cat", str(mnt / f".@{BUDGET}")], capture_output=True, timeout=timeout, check=True).stdout
    finally:
        done.set()
        poller.join()
    res.map_cold_s = time.perf_counter() - t
    res.status_lines = seen
    res.map_header = header_of(out)
    res.map_body_lines = out.count(b"\n") - 1
    res.map_warm_s = C.median([C.run_timed(["cat", str(mnt / f".@{BUDGET}")])[0] for _ in range(5)])


def deep_view(mnt: Path, src: Path, path: str, runs: int) -> tuple[float, float]:
    """Whole ``cat`` of a deep file's outline (warm) and of the file natively: medians, ms."""
    view, native = [], []
    C.run_timed(["cat", str(mnt / f"{path}@outline")])
    for _ in range(runs):
        view.append(C.run_timed(["cat", str(mnt / f"{path}@outline")])[0])
        native.append(C.run_timed(["cat", str(src / path)])[0])
    return C.median(view) * 1000, C.median(native) * 1000


def versioned(path: str, version: int) -> bytes:
    """A Markdown file whose every line carries ``vNv``: a view mixing two versions shows two marks."""
    lines = [f"# Title v{version}v", "", f"intro v{version}v of {path}", ""]
    for s in range(4):
        lines += [f"## Section {s} v{version}v", "", f"text {s} v{version}v", ""]
    return ("\n".join(lines) + "\n").encode()


def writer_and_readers(mnt: Path, src: Path, targets: list[str], res: Results, readers: int = 2,
                       batch: int = 50, deadline_s: float = 2.0, give_up_s: float = 10.0) -> None:
    """Rewrite every target beside the mount (atomically, by rename) in batches,
    wait until each change shows through the mount (raw and ``@L1-L4``), while
    ``readers`` threads read the targets' views and look for mixed versions."""
    stop = threading.Event()
    scratch = src.parent / f".{src.name}-writer"
    scratch.mkdir(exist_ok=True)
    lock = threading.Lock()

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        views = ("@outline", "@L1-L4", "", "@200")
        while not stop.is_set():
            path = rng.choice(targets)
            view = rng.choice(views)
            try:
                data = (mnt / f"{path}{view}").read_bytes()
            except OSError:
                continue  # a view whose file was replaced between lookup and open: ESTALE is allowed
            body = data.split(b"\n", 1)[-1] if view in ("@outline", "@200") else data
            marks = set(VERSION.findall(body))
            with lock:
                res.reader_reads += 1
                if len(marks) > 1:
                    res.torn.append(f"{path}{view}: versions {sorted(int(m) for m in marks)}")

    threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(readers)]
    for th in threads:
        th.start()
    try:
        for start in range(0, len(targets), batch):
            chunk = targets[start:start + batch]
            version = start // batch + 1
            written = {}
            for path in chunk:
                tmp = scratch / "next"
                tmp.write_bytes(versioned(path, version))
                os.replace(tmp, src / path)
                written[path] = time.perf_counter()
            want = f"v{version}v".encode()
            pending = dict(written)
            while pending:
                for path in list(pending):
                    try:
                        raw = (mnt / path).read_bytes()
                        view = (mnt / f"{path}@L1-L4").read_bytes()
                    except OSError:
                        continue
                    if want in raw and want in view:
                        res.change_seen_s.append(time.perf_counter() - pending.pop(path))
                for path, t in list(pending.items()):
                    if time.perf_counter() - t > give_up_s:
                        res.unseen.append(path)
                        del pending[path]
                time.sleep(0.005)
            res.changes += len(chunk)
    finally:
        stop.set()
        for th in threads:
            th.join(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


def run(tree: Path, n: int, *, per_dir: int = 1000, views: int = 100_000, rounds: int = 3, repeat: int = 3,
        runs: int = 5, rg_runs: int = 2, changes: int = 1000, index: bool = True, cache: Path | None = None, out=print,
        map_timeout: float = 1800) -> Results:
    """Everything above on a tree of ``n`` files at ``tree`` (built or reused)."""
    res = Results(n)
    out(f"building {n} files at {tree} ...")
    res.built = build_tree(tree, n, per_dir)
    out(f"  fast-import {res.built[0]:.1f} s, checkout {res.built[1]:.1f} s (0 = reused)")
    paths = tree_paths(n, per_dir)
    work = Path(C.workdir("scale"))
    cache = cache or work / "cache"
    env = C.child_env(NASFS_CACHE_DIR=str(cache))
    mnt = work / "mnt"
    res.loads.append(load1())
    t = time.perf_counter()
    mount = C.Mount(tree, mnt, env, work / "mount.log", "--no-warm")
    res.mount_s = time.perf_counter() - t
    try:
        os.listdir(mnt)
        res.rss.append(("mount", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        out(f"mounted in {res.mount_s:.2f} s; RSS {res.rss[-1][1]:.0f} MB")
        git_env = C.child_env(**C.GIT_ENV)
        paired("find -name '*.json'", ["find", ".", "-name", "*.json"], mnt, tree, runs, None, res)
        res.rss.append(("find", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        paired("git status --porcelain", ["git", "status", "--porcelain"], mnt, tree, runs, git_env, res)
        res.rss.append(("git status", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        out(f"  find / git status done; load {load1()}")
        rg = shutil.which("rg")
        if rg and rg_runs:
            paired("rg -c (no match)", [rg, "-c", "qzxv_nasfs_never_7261", "."], mnt, tree, rg_runs, None, res)
            res.rss.append(("rg", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        res.loads.append(load1())
        cold_map(mnt, res, map_timeout)
        res.rss.append(("root map", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        out(f"  root map cold {res.map_cold_s:.1f} s, warm {res.map_warm_s * 1000:.0f} ms; load {load1()}")
        rng = random.Random(SEED)
        order = rng.sample(range(len(paths)), min(views, len(paths)))
        per_round = max(1, len(order) // rounds)
        for r in range(rounds):
            read_views(mnt, [paths[i] for i in order[r * per_round:(r + 1) * per_round]], res)
            res.rss.append((f"views {(r + 1) * per_round}", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
            out(f"  {res.views_read} views read; RSS {res.rss[-1][1]:.0f} MB; load {load1()}")
        same = [paths[i] for i in order[:per_round]]
        for _ in range(repeat):
            read_views(mnt, same, res)
            res.repeat_rss.append(rss_mb(mount.pid))
        res.deep_view_ms = deep_view(mnt, tree, paths[-1], max(runs, 10))
        res.loads.append(load1())
        targets = [p for p in paths if p.endswith(".md")][:changes]
        writer_and_readers(mnt, tree, targets, res)
        res.rss.append(("writer", rss_mb(mount.pid), workers_rss_mb(mount.pid)))
        out(f"  writer: {res.changes} changes, {len(res.torn)} torn, {len(res.unseen)} unseen; load {load1()}")
        res.peak_mb = C.proc_memory(mount.pid)["VmHWM"] / 1024
    except Exception:
        out(f"the daemon's log ends:\n{(work / 'mount.log').read_text(errors='replace')[-6000:]}")
        raise
    finally:
        mount.stop()
    subprocess.run(["git", "checkout", "-q", "-f", "--", "."], cwd=tree, check=True)  # undo the writer
    if index:
        res.loads.append(load1())
        ctags = shutil.which("ctags")
        if ctags:
            res.ctags_s = C.run_timed([ctags, "-R", "-f", "-", "."], cwd=tree, timeout=None)[0]
        index_env = C.child_env(NASFS_CACHE_DIR=str(work / "index-cache"))
        t = time.perf_counter()
        done = subprocess.run([str(C.PY), "-m", "nasfs", "index", str(tree)], env=index_env, capture_output=True,
                              text=True, cwd=C.REPO)
        res.index_s = time.perf_counter() - t
        res.index_summary = (done.stdout.strip() or done.stderr.strip()[-500:])
        out(f"  index {res.index_s:.1f} s, ctags {res.ctags_s:.1f} s; load {load1()}")
    res.loads.append(load1())
    return res


def report(res: Results) -> None:
    rows = [["mount to first answer", res.mount_s, "-", "-", "-"]]
    for name, (m, n, r, same) in res.paired.items():
        goal = "<= 1.3x" if not name.startswith("rg") else "<= 2x"
        ok = r <= (1.3 if goal == "<= 1.3x" else 2.0)
        rows.append([f"{name} ({same})", m, n, f"{r:.2f}x", f"{goal} {C.verdict(ok)}"])
    rows.append([f".@{BUDGET} root map, cold", res.map_cold_s, "-", "-", f"<= 60 s {C.verdict(res.map_cold_s <= 60)}"])
    rows.append([f".@{BUDGET} root map, warm (median of 5 cat)", res.map_warm_s, "-", "-",
                 f"<= 200 ms {C.verdict(res.map_warm_s <= 0.2)}"])
    view, native = res.deep_view_ms
    rows.append(["deep file @outline, whole cat (ms)", f"{view:.2f} ms", f"{native:.2f} ms", f"{view / native:.2f}x",
                 f"<= 5 ms {C.verdict(view <= 5)}"])
    if res.index_s:
        r = res.index_s / res.ctags_s if res.ctags_s else float("nan")
        rows.append(["nasfs index / ctags -R", res.index_s, res.ctags_s, f"{r:.2f}x", f"<= 3x {C.verdict(r <= 3)}"])
    C.table(["figure", "mount / nasfs (s)", "native (s)", "ratio", "goal"], rows, title=f"{res.files:,} files")
    C.table(["after", "daemon RSS MB", "view workers RSS MB"], [[a, f"{d:.0f}", f"{w:.0f}"] for a, d, w in res.rss],
            title="daemon memory (goal: <= 1.5 GB at 10^6 files, flat under repeated reads)")
    peak = max(res.peak_mb, *(d for _, d, _ in res.rss))
    print(f"peak daemon RSS (VmHWM) {peak:.0f} MB: {C.verdict(peak <= 1536)}; the same reads repeated: "
          + ", ".join(f"{x:.0f}" for x in res.repeat_rss) + " MB")
    print(f"views read: {res.views_read}, errors {len(res.view_errors)}" + (f" (first: {res.view_errors[0]})" if res.view_errors else ""))
    print(f"root map: {res.map_header.get('files', '?')} files, view={res.map_header.get('view', '?')}, "
          f"{res.map_body_lines} lines; .nas/status while it ran:")
    for line in res.status_lines[:8]:
        print(f"  {line}")
    if len(res.status_lines) > 8:
        print(f"  ... {len(res.status_lines) - 8} more distinct lines")
    seen = sorted(res.change_seen_s)
    worst = seen[-1] if seen else float("nan")
    print(f"writer: {res.changes} changes, seen through the mount after median {C.median(seen) * 1000:.0f} ms, "
          f"p99 {C.pct(seen, 0.99) * 1000:.0f} ms, worst {worst * 1000:.0f} ms (goal <= 2 s: {C.verdict(worst <= 2 and not res.unseen)}); "
          f"unseen {len(res.unseen)}; {res.reader_reads} reader reads, torn {len(res.torn)}")
    if res.index_summary:
        print(f"nasfs index: {res.index_summary}")
    print(f"load (1 min) along the run: {' -> '.join(res.loads)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1_000_000, help="N, the files of the tree (default 10^6)")
    ap.add_argument("--tree", type=Path, help="where to build the tree (kept; reused when built with the same N); default a temp folder")
    ap.add_argument("--per-dir", type=int, default=1000, help="files per folder (default 1,000)")
    ap.add_argument("--views", type=int, default=100_000, help="views read in all, in --rounds rounds of different files")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5, help="paired runs of find and git status")
    ap.add_argument("--rg-runs", type=int, default=2, help="paired runs of rg after its warm-up pair (0: no rg; "
                    "at 10^6 files one rg through the mount takes minutes)")
    ap.add_argument("--changes", type=int, default=1000, help="files the writer changes")
    ap.add_argument("--repeat", type=int, default=3, help="times the first round's views are read again (RSS must stay flat)")
    ap.add_argument("--no-index", action="store_true", help="skip nasfs index against ctags")
    ap.add_argument("--json", type=Path, help="also write every figure here (tests/test_scale.py reads it)")
    args = ap.parse_args()
    C.banner(f"scale: {args.files:,} files")
    tree = args.tree or C.workdir("scale-tree") / "tree"
    res = run(tree, args.files, per_dir=args.per_dir, views=args.views, rounds=args.rounds, repeat=args.repeat,
              runs=args.runs, rg_runs=args.rg_runs, changes=args.changes, index=not args.no_index)
    report(res)
    if args.json:
        args.json.write_text(json.dumps(asdict(res), indent=1))
    C.finish()


if __name__ == "__main__":
    main()
