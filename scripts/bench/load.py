"""Load benchmark of the mount: 64 concurrent readers of mixed views against 4 writers.

    .venv/bin/python scripts/bench/load.py [--seconds 600] [--readers 64] [--procs 4]
                                           [--timeout 60] [--seed 1] [--keep]

Not a test: it prints figures, and exits non-zero when the mount misbehaved.

Builds under /tmp a demo-like git repository (the bundled demo/, tag v1, then
a second commit that changes the renewal terms and adds the writers' files),
mounts it with ``python -P -m nasfs mount SRC MNT --foreground --node box
--tree t`` and runs, for --seconds:

- --readers reader threads spread over --procs worker processes (so the GIL
  of one process is not the limit), each reading, open+read+close, a target
  picked at random: @outline, @L-ranges, @N budgets, @section=, .json
  envelopes, plain reads of real files, files and views under .at/<commit>/,
  and .nas/search/<query>;
- 4 writer threads in one more process, one file each: an in-place rewrite
  (open with O_TRUNC, one write), write-a-temp-and-rename, append (a row at a
  time, then back to the base by rename), and create/delete.

Each writer cycles through a fixed set of versions of its file. Before the
load starts the benchmark writes each version (one at a time, through the
mount) and reads every target of that file, so it knows every version's
answer: a read under load that is none of them is a *torn view* (counted,
one example printed). The states a native file passes through count as
versions: the empty file between O_TRUNC and the write (in-place) or between
create and write, and no file at all between delete and create (ENOENT).

A view is read to its end, however many read() calls that takes (one open
of a view is one version). A real file is read with a single read(): on any
disk, read() calls after the first may see the file an in-place writer has
truncated since (Python's ``open().read()`` of a file rewritten in place
returned 507 torn results in 1.1 million on this machine's ext4, none with a
single read()), so only a single read() has one right answer.

Every operation is timed in its worker; an operation older than --timeout is
a hang: the FUSE connection is aborted (/sys/fs/fuse/connections/N/abort,
fusectl mounted there when empty), which frees every stuck process, and the
run fails. The daemon's VmRSS/VmHWM (/proc/PID/status) and the load average
are sampled every second.

Every pointer the answers hand out (headers, envelopes' evidence with its
sha256, search hits) is checked after the load against the repository as the
load left it: it must verify (``nasfs verify``'s check), and one made from a
version of a writer's file must name a commit holding exactly that version.
Since every answer read under load must be one of the setup's, that covers
every pointer handed out.

Prints: reads, errors, torn views per view kind with p50/p99 latency, the
writers' cycles, daemon memory (start, max, end), the load average and the
pointers checked. Exits 1 on any error, torn view, hang, daemon death,
internal error (EIO), traceback in the daemon's log or pointer that fails; 0
otherwise. Everything started is
ended and the mount removed at the end, also on error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import _hang as H  # noqa: E402

KINDS = ["outline", "lines", "budget", "section", "json", "plain", "at", "search"]
KIND_WEIGHTS = {"outline": 3, "lines": 3, "budget": 3, "section": 2, "json": 3, "plain": 3, "at": 2, "search": 1}
HEADER = re.compile(rb"nasfs view=\S+ tokens=\d+ generated=(true|false)( truncated=true)? pointer=\S+( \S+=\S*)*\n")
ABSENT = "e:ENOENT"
POINTER = re.compile(rb"nas://[^\s\"'<>()\[\]]+")
SINGLE_READ = 1 << 20  # larger than any file of the tree: one read() gets all of it
STOP = threading.Event()  # in a worker: SIGTERM from the parent, stop early and report what was done
STOPPED: list[float] = []  # when


# -- the tree and the writers' versions ------------------------------------------------
def doc(tag: str, sections: int) -> str:
    """Markdown of one version of notes/inplace.md; 'alpha' and 'delta' of the
    same shape are the same size (a rewrite that keeps the size)."""
    out = [f"# Notes {tag}\n\nIntro for {tag}.\n\n## Shared\n\nShared text of {tag}, the same heading in every version.\n"]
    for i in range(sections):
        out.append(f"\n## Part {tag} {i}\n\n" + f"Words of {tag} part {i}. " * (4 + 3 * i) + "\n")
    return "".join(out)


def module(tag: str, funcs: int) -> str:
    """Python of one version of code/replaced.py."""
    out = [f'"""Module {tag}."""\n\nimport os\n\n\ndef shared_entry(value):\n    return value + {len(tag)}\n']
    out.append(f"\n\nclass Store{tag.title()}:\n    def get(self, key):\n        return os.environ.get(key, {tag!r})\n")
    for i in range(funcs):
        out.append(f"\n\ndef step_{tag}_{i}(items):\n    total = 0\n    for item in items:\n        total += item * {i + 1}\n    return total\n")
    return "".join(out)


CSV_BASE = "id,kind,value\n1,start,0\n2,tick,10\n"
CSV_ROWS = [f"{i},tick,{i * 10}\n" for i in range(3, 9)]


def record(tag: str, n: int) -> str:
    obj = {"name": tag, "spec": {"size": n, "tags": [tag] * n}, "notes": f"transient {tag}"}
    return json.dumps(obj, indent=2) + "\n"


WRITERS = {
    # kind: (file, the states its content goes through, in order of the cycle)
    "inplace": ("notes/inplace.md", [doc("alpha", 3), doc("beta", 6), doc("gamma", 1), doc("delta", 3)]),
    "replace": ("code/replaced.py", [module("one", 2), module("three", 5), module("two", 1)]),
    "append": ("data/events.csv", [CSV_BASE + "".join(CSV_ROWS[:k]) for k in range(len(CSV_ROWS) + 1)]),
    "create": ("config/transient.json", [record("first", 2), record("second", 5)]),
}
# what else a native file is, at times, while its writer works: see states()
EXTRA_STATES = {"inplace": [""], "replace": [], "append": [], "create": ["", None]}  # None: no file


def states(kind: str) -> list[str | None]:
    """Every content the writer's file can have while it works (None: absent)."""
    return WRITERS[kind][1] + EXTRA_STATES[kind]


# views read of each writer's file, and of files nobody writes
WRITER_VIEWS = {
    "inplace": ["@outline", "@L1-L5", "@L5", "@50", "@200", "@2000", "@section=Shared", "@section=shared@60",
                "@outline.json", "@L1-L3.json", "@300.json", ""],
    "replace": ["@outline", "@L1-L6", "@L6-L7", "@80", "@400", "@section=shared_entry", "@outline@60",
                "@outline.json", "@section=shared_entry.json", ""],
    "append": ["@outline", "@L1-L2", "@L3", "@60", "@1000", "@section=header", "@outline.json", "@L2-L3.json", ""],
    "create": ["@outline", "@L1-L4", "@100", "@section=spec", "@section=spec.size", "@outline.json", ""],
}
STATIC = {
    "notes/customer-acme.md": ["@outline", "@L11-L20", "@L1", "@100", "@1000000000000", "@section=Renewal",
                               "@section=Acme Corp.Contacts.Escalation", "@outline.json", "@section=Renewal@60.json", ""],
    "notes/meeting-2026-11-12.md": ["@outline", "@L1-L4", "@150", "@section=action-items", ""],
    "code/billing.py": ["@outline", "@L9-L14", "@200", "@section=Invoice.total", "@outline.json", "@200.json", ""],
    "code/client.ts": ["@outline", "@L1-L3", "@120", ""],
    "config/deploy.yaml": ["@outline", "@L1-L6", "@section=spec.template.spec.containers.0", "@90", "@outline.json", ""],
    "config/agent.json": ["@outline", "@L2-L4", "@section=model", "@60.json", ""],
    "data/shipments.csv": ["@outline", "@L1-L3", "@80", "@outline.json", ""],
    "README.txt": ["@outline", "@L1-L2", "@40", ""],
}
SEARCHES = ["renewal", "re:Invoice glob:*.py@300", "replicas.json", "notice period@120", "in:notes escalation"]


def kind_of(spec: str) -> str:
    """The latency row of a target: '.at/...' and '.nas/search/...' by place, else by view."""
    if spec.startswith(".at/"):
        return "at"
    if spec.startswith(".nas/search/"):
        return "search"
    view = spec.partition("@")[2] if "@" in spec.rsplit("/", 1)[-1] else ""
    if not view:
        return "plain"
    if view.endswith(".json"):
        return "json"
    first = view.split("@")[0]
    if first == "outline":
        return "outline"
    if re.fullmatch(r"L\d+(-L\d+)?", first):
        return "lines" if "@" not in view else "budget"
    if first.startswith("section="):
        return "section"
    return "budget"


def form_of(spec: str) -> str:
    """How an answer must look: 'json' (an envelope), 'text' (header line
    first), or 'raw' (bytes of a file or of an exact line range)."""
    leaf = spec.rsplit("/", 1)[-1]
    if spec.startswith(".nas/search/"):
        return "json" if leaf.endswith(".json") else "text"
    if "@" not in leaf:
        return "raw"
    view = leaf.split("@", 1)[1]
    if view.endswith(".json"):
        return "json"
    return "raw" if re.fullmatch(r"L\d+(-L\d+)?", view) else "text"


def well_formed(data: bytes, form: str) -> str | None:
    """None when ``data`` is a well-formed answer of its form, else why not."""
    if form == "raw":
        return None
    if form == "json":
        try:
            env = json.loads(data)
        except ValueError as exc:
            return f"not JSON ({exc})"
        missing = [k for k in ("view", "tokens", "generated", "truncated", "content", "evidence", "tokenizer") if k not in env]
        return f"envelope without {missing}" if missing else None
    line, nl, _ = data.partition(b"\n")
    if not HEADER.fullmatch(line + nl):
        return f"no header line (starts {data[:80]!r})"
    return None


def pointers_of(data: bytes, form: str) -> list[tuple[str, str | None]]:
    """The pointers an answer hands out, with the sha256 it declares for
    their lines when it does (a JSON envelope's evidence)."""
    if form == "json":
        env = json.loads(data)
        found = [(e["pointer"], e.get("sha256")) for e in env.get("evidence") or []]
        return found + [(p.decode(), None) for p in POINTER.findall(env["content"].encode())]
    return [(p.decode(), None) for p in POINTER.findall(data)] if form == "text" else []


def verify_pointers(src: Path, made: dict[tuple[str, str | None], bytes | None], cache: Path) -> tuple[int, int, list[str]]:
    """Check every pointer handed out, after the load, against the repository
    as the load left it: it verifies (``nasfs verify``'s check, with the
    declared sha256), and a pointer made from a known version of a writer's
    file names a commit holding exactly that version. Returns (verified,
    holding their version, failures)."""
    os.environ["NASFS_CACHE_DIR"] = str(cache)
    sys.path.insert(0, str(C.REPO))
    from nasfs.pointers import parse_pointer
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    nas = Nas(GitTree(src, node="box", tree="t"))
    verified, holding, failures = 0, 0, []
    for (pointer, sha), version in sorted(made.items(), key=lambda kv: kv[0][0]):
        answer = nas.check(pointer, sha)
        if answer["verified"]:
            verified += 1
        else:
            failures.append(f"{pointer}: {answer['detail']}")
        if version is not None:
            p = parse_pointer(pointer, "box", "t")
            if nas.tree.raw_at(p.commit, p.path) == version:
                holding += 1
            else:
                failures.append(f"{pointer}: its commit does not hold the version of {p.path} it was made from")
    return verified, holding, failures


def mb(kb: int) -> str:
    return f"{kb / 1024:.1f} MB"


def build_tree(src: Path) -> tuple[str, str]:
    """The demo tree, tag v1; then the renewal change and the writers' files
    (at their first version); returns the two commits."""
    shutil.copytree(C.REPO / "demo", src)
    first = C.make_repo(src, "demo tree")
    C.git("tag", "v1", cwd=src)
    acme = src / "notes" / "customer-acme.md"
    acme.write_text(acme.read_text().replace("price held at the 2026 rate", "price held at the 2026 rate, then +3%"))
    for kind, (rel, versions) in WRITERS.items():
        if kind != "create":
            (src / rel).write_text(versions[0])
    second = C.commit_all(src, "renewal terms; writers' files")
    return first, second


# -- reading, as every worker does it ------------------------------------------------------
def outcome(path: str, single: bool = False) -> tuple[str, bytes | None]:
    """('b:<digest>', bytes) for an answer, ('e:ERRNO', None) for a refusal.

    A view is read to its end (several read() calls: a view's handle holds one
    version, whatever happens meanwhile). A real file is read by one read()
    (``single``): as on any disk, the read() calls after the first may see the
    file that an in-place writer has since truncated, so only one is one
    moment of the file."""
    try:
        if single:
            fd = os.open(path, os.O_RDONLY)
            try:
                data = os.read(fd, SINGLE_READ)
            finally:
                os.close(fd)
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        return "e:" + errno.errorcode.get(exc.errno or 0, str(exc.errno)), None
    return "b:" + hashlib.blake2b(data, digest_size=16).hexdigest(), data


def read_with_deadline(path: str, seconds: float, single: bool) -> tuple[str, bytes | None]:
    """``outcome`` in a thread, so a hung mount fails the setup instead of hanging it."""
    box: list[tuple[str, bytes | None]] = []
    t = threading.Thread(target=lambda: box.append(outcome(path, single)), daemon=True)
    t.start()
    t.join(seconds)
    if not box:
        raise TimeoutError(f"reading {path} took over {seconds:.0f} s")
    return box[0]


def write_state(path: Path, content: str | None) -> None:
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(content)


# -- workers (child processes) -------------------------------------------------------------------
def reader_worker(spec: dict, index: int) -> None:
    mnt = spec["mountpoint"]
    targets = spec["targets"]
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for t in targets:
        by_kind[t["kind"]].append(t)
    kinds = [k for k in KINDS if by_kind[k]]
    weights = [KIND_WEIGHTS[k] for k in kinds]
    flight = H.InFlight()
    lock = threading.Lock()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    lat: dict[str, list[float]] = defaultdict(list)
    examples: dict[str, list[dict]] = defaultdict(list)
    stop_at = spec["stop_at"]

    def run(n: int) -> None:
        rng = random.Random(spec["seed"] * 1_000_003 + index * 1000 + n)
        while time.time() < spec["start_at"]:
            time.sleep(0.01)
        while time.time() < stop_at and not STOP.is_set():
            t = rng.choice(by_kind[rng.choices(kinds, weights)[0]])
            path = os.path.join(mnt, t["path"])
            with flight.op(f"read {t['path']}"):
                t0 = time.perf_counter()
                got, data = outcome(path, t["kind"] == "plain")
                dt = time.perf_counter() - t0
            with lock:
                c = counts[t["kind"]]
                c["reads"] += 1
                lat[t["kind"]].append(round(dt, 5))
                if got in t["expected"]:
                    c["ok"] += 1
                    if got.startswith("e:"):
                        c["refused"] += 1  # a state of the file where this view does not exist
                    continue
                if data is None:
                    c["errors"] += 1
                    key = "errors"
                else:
                    c["torn"] += 1
                    key = "torn"
                    bad = well_formed(data, t["form"])
                    if bad:
                        c["malformed"] += 1
                if len(examples[key]) < 3:
                    examples[key].append({"path": t["path"], "got": got, "bytes": data[:600].decode("latin-1") if data else None,
                                          "why": well_formed(data, t["form"]) if data else None, "expected": len(t["expected"])})

    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(spec["threads"][index])]
    for th in threads:
        th.start()
    beat(flight, threads, lambda: sum(c["reads"] for c in counts.values()), stop_at)
    with lock:
        print(json.dumps({"t": "done", "counts": counts, "lat": lat, "examples": examples}), flush=True)


def writer_worker(spec: dict) -> None:
    mnt = Path(spec["mountpoint"])
    flight = H.InFlight()
    lock = threading.Lock()
    cycles: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    stop_at = spec["stop_at"]

    def guarded(kind: str, what: str, fn) -> None:
        with flight.op(f"{kind} writer: {what}"):
            try:
                fn()
            except OSError as exc:
                with lock:
                    errors[f"{kind}: {what}: {exc}"] += 1

    def run(kind: str) -> None:
        rel, versions = WRITERS[kind]
        target = mnt / rel
        rng = random.Random(spec["seed"] + len(kind))
        i = 0
        while time.time() < spec["start_at"]:
            time.sleep(0.01)
        while time.time() < stop_at and not STOP.is_set():
            if kind == "inplace":
                data = versions[i % len(versions)]
                guarded(kind, "rewrite", lambda: target.write_text(data))  # O_TRUNC, then one write
            elif kind == "replace":
                data = versions[i % len(versions)]
                tmp = target.with_name(f".{target.name}.tmp")

                def replace() -> None:
                    tmp.write_text(data)
                    os.rename(tmp, target)
                guarded(kind, "write temp + rename", replace)
            elif kind == "append":
                k = i % len(versions)
                if k == len(versions) - 1:  # full: back to the base, atomically
                    tmp = target.with_name(f".{target.name}.tmp")

                    def reset() -> None:
                        tmp.write_text(versions[0])
                        os.rename(tmp, target)
                    guarded(kind, "reset by rename", reset)
                else:
                    row = versions[k + 1][len(versions[k]):]

                    def append() -> None:
                        with open(target, "a") as fh:
                            fh.write(row)
                    guarded(kind, "append", append)
            else:
                data = versions[i % len(versions)]

                def create() -> None:
                    with open(target, "x") as fh:
                        fh.write(data)
                guarded(kind, "create", create)
                time.sleep(rng.uniform(0, 0.004))
                guarded(kind, "delete", lambda: target.unlink())
            i += 1
            with lock:
                cycles[kind] += 1
            time.sleep(rng.uniform(0, 0.004))

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in spec["writers"]]
    for th in threads:
        th.start()
    beat(flight, threads, lambda: sum(cycles.values()), stop_at)
    with lock:
        print(json.dumps({"t": "done", "cycles": cycles, "errors": errors}), flush=True)


def beat(flight: H.InFlight, threads: list[threading.Thread], done, stop_at: float) -> None:
    """Every second, tell the parent the oldest operation in flight, until the threads end."""
    while any(th.is_alive() for th in threads) and not (STOPPED and time.monotonic() - STOPPED[0] > 20):
        age, what = flight.oldest()
        print(json.dumps({"t": "beat", "age": round(age, 2), "what": what, "ops": done()}), flush=True)
        for th in threads:
            th.join(timeout=1.0 / max(1, len(threads)))
    # a thread stuck in the kernel keeps is_alive() true: the parent's deadline handles that


def worker_main(argv: list[str]) -> None:
    def stop(*_: object) -> None:
        STOPPED.append(time.monotonic())
        STOP.set()
    signal.signal(signal.SIGTERM, stop)
    spec = json.loads(Path(argv[0]).read_text())
    role = argv[1]
    if role == "write":
        writer_worker(spec)
    else:
        reader_worker(spec, int(argv[2]))


# -- the parent --------------------------------------------------------------------------------
class Worker:
    def __init__(self, name: str, args: list[str], started: list["Worker"]) -> None:
        self.name = name
        self.proc = subprocess.Popen([str(C.PY), "-P", __file__, "--worker", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd="/")
        started.append(self)
        C.on_exit(lambda: H.kill(self.proc, grace=2))
        self.last_beat = time.monotonic()
        self.age, self.what, self.ops = 0.0, "", 0
        self.done: dict | None = None
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                self.lines.put({"t": "noise", "line": line.decode(errors="replace")})

    def poll(self) -> None:
        while True:
            try:
                msg = self.lines.get_nowait()
            except queue.Empty:
                return
            if msg["t"] == "beat":
                self.last_beat = time.monotonic()
                self.age, self.what, self.ops = msg["age"], msg["what"], msg["ops"]
            elif msg["t"] == "done":
                self.done = msg
                self.last_beat = time.monotonic()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600, help="how long readers and writers run")
    ap.add_argument("--readers", type=int, default=64, help="reader threads in all")
    ap.add_argument("--procs", type=int, default=4, help="worker processes the readers are spread over")
    ap.add_argument("--timeout", type=float, default=60, help="an operation older than this is a hang")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (the mount is always removed)")
    args = ap.parse_args()

    C.banner("nasfs load benchmark: concurrent readers of views against writers, through a mount")
    C.require("fusermount3")
    work = C.workdir("load", args.keep)
    src, mnt = work / "src", work / "mnt"
    first, second = build_tree(src)
    m = H.mount(src, mnt, work / "mount.log", work / "cache")
    pid = m.pid
    mem_mounted = C.proc_memory(pid)
    print(f"source: {src} (demo tree; commits {first[:12]} = v1, {second[:12]} = main); mount: {mnt} (daemon pid {pid}, "
          f"log {work / 'mount.log'})")
    failures: list[str] = []

    # -- every version's answer, one at a time ------------------------------------------------
    t = time.perf_counter()
    targets: list[dict] = []
    made: dict[tuple[str, str | None], bytes | None] = {}  # pointers handed out -> the writer's version they were made from
    for kind, views in WRITER_VIEWS.items():
        rel = WRITERS[kind][0]
        specs = [rel + v for v in views]
        expected: dict[str, set[str]] = {s: set() for s in specs}
        for content in states(kind):
            write_state(mnt / rel, content)
            for s in specs:
                got, data = read_with_deadline(str(mnt / s), args.timeout, kind_of(s) == "plain")
                if data is not None and (bad := well_formed(data, form_of(s))):
                    failures.append(f"setup: {s} for a version of {rel} is not well-formed: {bad}")
                if content and got.startswith("e:"):  # every view is chosen to exist in every version
                    failures.append(f"setup: {s} for a version of {rel}: {got[2:]}")
                expected[s].add(got)
                if data is not None and not well_formed(data, form_of(s)):
                    for pointer in pointers_of(data, form_of(s)):
                        made[pointer] = content.encode() if content and f"/t/{rel}@" in pointer[0] else None
        write_state(mnt / rel, None if kind == "create" else states(kind)[0])  # where each writer starts
        targets += [{"path": s, "kind": kind_of(s), "form": form_of(s), "expected": sorted(expected[s]), "writer": kind} for s in specs]
    statics = [rel + v for rel, views in STATIC.items() for v in views]
    statics += [f".at/{first}/notes/customer-acme.md", f".at/{first}/notes/customer-acme.md@outline",
                ".at/v1/code/billing.py@L1-L10", f".at/{second[:12]}/notes/inplace.md@section=Shared",
                f".at/{second}/code/replaced.py@outline.json", ".at/main/config/deploy.yaml@200.json",
                f".at/{first[:7]}/data/shipments.csv"]
    statics += [".nas/search/" + q for q in SEARCHES]
    for s in statics:
        answers = {read_with_deadline(str(mnt / s), args.timeout, kind_of(s) == "plain") for _ in range(2)}
        got = {a for a, _ in answers}
        for a, data in answers:
            if data is None:
                failures.append(f"setup: {s}: {a[2:]}")
            elif bad := well_formed(data, form_of(s)):
                failures.append(f"setup: {s} is not well-formed: {bad}")
            else:
                made.update(dict.fromkeys(pointers_of(data, form_of(s))))
        if len(got) != 1:
            failures.append(f"setup: {s} answered differently twice in a row")
        targets.append({"path": s, "kind": kind_of(s), "form": form_of(s), "expected": sorted(got), "writer": None})
    per_kind = Counter(t["kind"] for t in targets)
    print(f"expected answers: {len(targets)} targets ({', '.join(f'{k} {per_kind[k]}' for k in KINDS)}), "
          f"{sum(len(t['expected']) for t in targets)} distinct answers, in {time.perf_counter() - t:.1f} s")
    if failures:
        for f in failures:
            print("FAIL " + f)
        return 1

    # -- the load ----------------------------------------------------------------------------------
    procs = max(1, min(args.procs, args.readers))
    threads = [args.readers // procs + (1 if i < args.readers % procs else 0) for i in range(procs)]
    start_at = time.time() + 3.0  # every worker starts at once, after its imports
    stop_at = start_at + args.seconds
    spec = {"mountpoint": str(mnt), "targets": targets, "threads": threads, "writers": list(WRITERS),
            "seed": args.seed, "start_at": start_at, "stop_at": stop_at}
    spec_file = work / "spec.json"
    spec_file.write_text(json.dumps(spec))
    print(f"load: {args.readers} reader threads in {procs} processes ({', '.join(map(str, threads))}), "
          f"{len(WRITERS)} writers ({', '.join(f'{k} {WRITERS[k][0]}' for k in WRITERS)}) in 1 process, "
          f"for {args.seconds:.0f} s; a hang is an operation older than {args.timeout:.0f} s\n")
    sys.stdout.flush()
    workers: list[Worker] = []
    for i in range(procs):
        Worker(f"readers {i}", [str(spec_file), "read", str(i)], workers)
    Worker("writers", [str(spec_file), "write"], workers)

    mem0 = C.proc_memory(pid)
    rss = [mem0["VmRSS"]]
    hwm = mem0["VmHWM"]
    loads = [os.getloadavg()[0]]
    hang: str | None = None
    died: str | None = None
    next_report = time.time() + 60
    while True:
        time.sleep(1.0)
        now = time.time()
        for w in workers:
            w.poll()
        if not H.alive(pid):
            died = f"the daemon (pid {pid}) died during the load: {m.log.read_text()[-1500:]}"
            break
        mem = C.proc_memory(pid)
        rss.append(mem["VmRSS"])
        hwm = max(hwm, mem["VmHWM"])
        loads.append(os.getloadavg()[0])
        for w in workers:
            if w.done is None and w.age > args.timeout:
                hang = f"{w.name}: '{w.what}' in flight for {w.age:.0f} s"
            elif w.done is None and now > start_at and time.monotonic() - w.last_beat > args.timeout:
                hang = f"{w.name}: no heartbeat for {time.monotonic() - w.last_beat:.0f} s (last in flight: {w.what!r})"
            elif w.done is None and w.proc.poll() is not None:
                w.poll()
                if w.done is None:
                    died = f"worker {w.name} exited {w.proc.returncode}: {w.proc.stderr.read().decode(errors='replace')[-1500:]}"
        if hang or died:
            break
        if all(w.done is not None for w in workers):
            break
        if now > stop_at + args.timeout + 30:
            hang = "workers did not finish " + ", ".join(f"{w.name} (in flight: {w.what!r} for {w.age:.0f} s)" for w in workers if w.done is None)
            break
        if now >= next_report and now < stop_at:
            ops = sum(w.ops for w in workers if not w.name.startswith("writers"))
            print(f"  {now - start_at:4.0f} s: {ops:,} reads; daemon VmRSS {rss[-1] / 1024:.1f} MB; load {loads[-1]:.2f}", flush=True)
            next_report = now + 60
    ran = max(1e-9, min(time.time(), stop_at) - start_at)
    if hang:
        print(f"HANG: {hang}")
        print("  " + H.abort_connection(mnt) + "; the reads it failed count as errors below (ENOTCONN, ECONNABORTED)")
        failures.append(f"hang: {hang}")
    if died:
        failures.append(died)
    if hang or died:  # stop early: each worker reports what it did before
        for w in workers:
            if w.proc.poll() is None:
                w.proc.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            H.kill(w.proc, grace=2)
        w.poll()

    # -- what the daemon says about itself ---------------------------------------------------------------
    stats = ""
    if not hang and H.alive(pid):
        try:
            stats = subprocess.run(["cat", str(mnt / ".nas" / "stats")], capture_output=True, timeout=args.timeout).stdout.decode()
        except subprocess.TimeoutExpired:
            failures.append("hang: reading .nas/stats after the load")
            print("  " + H.abort_connection(mnt))
    found = re.search(r"internal_errors=(\d+)", stats)
    internal = int(found.group(1)) if found else None
    mem_end = C.proc_memory(pid) if H.alive(pid) else {"VmRSS": rss[-1], "VmHWM": hwm}
    rss.append(mem_end["VmRSS"])
    hwm = max(hwm, mem_end["VmHWM"])
    m.stop()
    log_text = m.log.read_text(errors="replace")
    tracebacks = log_text.count("Traceback")
    verified, holding, bad_pointers = verify_pointers(src, made, work / "verify-cache")

    # -- tables -------------------------------------------------------------------------------------
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    lat: dict[str, list[float]] = defaultdict(list)
    examples: dict[str, list[dict]] = defaultdict(list)
    cycles: Counter[str] = Counter()
    write_errors: Counter[str] = Counter()
    for w in workers:
        if w.done is None:
            continue
        if "cycles" in w.done:
            cycles.update(w.done["cycles"])
            write_errors.update(w.done["errors"])
            continue
        for k, c in w.done["counts"].items():
            counts[k].update(c)
        for k, xs in w.done["lat"].items():
            lat[k] += xs
        for k, xs in w.done["examples"].items():
            examples[k] += xs
    missing = [w.name for w in workers if w.done is None]
    if missing:
        failures.append("no result from " + ", ".join(missing))
    rows = []
    for k in KINDS + ["all"]:
        c = counts[k] if k != "all" else sum(counts.values(), Counter())
        xs = lat[k] if k != "all" else [x for v in lat.values() for x in v]
        n_targets = per_kind[k] if k != "all" else len(targets)
        rows.append([k, n_targets, c["reads"], c["ok"] - c["refused"], c["refused"], c["errors"], c["torn"],
                     C.ms(C.pct(xs, 0.5)) if xs else "-", C.ms(C.pct(xs, 0.99)) if xs else "-", C.ms(max(xs)) if xs else "-"])
    print()
    total = sum(counts.values(), Counter())
    C.table(["view kind", "targets", "reads", "answers", "ENOENT of an absent/empty state", "errors", "torn", "p50", "p99", "max"], rows,
            title=f"reads, {args.readers} readers for {ran:.0f} s ({total['reads'] / ran:,.0f} reads/s)")
    C.table(["writer", "file", "versions (+ native states)", "cycles", "errors"],
            [[k, WRITERS[k][0], f"{len(WRITERS[k][1])} (+{len(EXTRA_STATES[k])})", cycles[k],
              sum(n for e, n in write_errors.items() if e.startswith(k + ":"))] for k in WRITERS],
            title="writers")
    quarter = [rss[min(len(rss) - 1, len(rss) * q // 4)] for q in (1, 2, 3)]  # a leak shows as a rise from quarter to quarter
    C.table(["daemon memory (/proc/PID/status, every second)", "mounted", "load start", "1/4", "1/2", "3/4", "end", "max"],
            [["VmRSS", mb(mem_mounted["VmRSS"]), mb(rss[0]), *map(mb, quarter), mb(rss[-1]), mb(max(rss))],
             ["VmHWM", mb(mem_mounted["VmHWM"]), mb(mem0["VmHWM"]), "", "", "", mb(hwm), ""]])
    C.table(["load average (1 min, every second)", "start", "max", "end"], [["", loads[0], max(loads), loads[-1]]])
    print(f"daemon: internal_errors={internal if internal is not None else 'unknown'}, tracebacks in its log: {tracebacks}; "
          f"samples: {len(rss)}")
    print(f"pointers handed out (every answer read under load is one of the setup's): {len(made)}; verified after the load: "
          f"{verified}; made from a writer's version: {sum(v is not None for v in made.values())}, naming a commit that "
          f"holds that version: {holding}")
    for bad in bad_pointers[:3]:
        print(f"pointer failure: {bad}")
    for key in ("torn", "errors"):
        for ex in examples[key][:2]:
            print(f"example of {key}: {ex['path']}: {ex['got']} ({ex['expected']} expected answers)"
                  + (f"; not well-formed: {ex['why']}" if ex.get("why") else "")
                  + (f"\n    {ex['bytes'][:400]!r}" if ex.get("bytes") is not None else ""))
    for e, n in write_errors.most_common(5):
        print(f"writer error x{n}: {e}")

    if total["errors"]:
        failures.append(f"{total['errors']} read errors")
    if total["torn"]:
        failures.append(f"{total['torn']} torn views ({total['malformed']} of them not well-formed)")
    if write_errors:
        failures.append(f"{sum(write_errors.values())} write errors")
    if internal:
        failures.append(f"{internal} internal errors (EIO) in the daemon")
    if tracebacks:
        failures.append(f"{tracebacks} tracebacks in the daemon's log")
    if bad_pointers:
        failures.append(f"{len(bad_pointers)} pointer failures")
    print()
    print("verdict: " + ("PASS: no error, no torn view, no hang" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
        sys.exit(0)
    code = main()
    C.finish()
    sys.exit(code)
