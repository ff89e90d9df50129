"""Shared helpers of the benchmarks in scripts/bench/ (not a benchmark itself).

Every benchmark prints its command line and the machine first, measures a
baseline in the same run, prints ratios against it (never asserts on time),
and removes what it made (temp folders, mounts, processes) even on error or
Ctrl-C.
"""

from __future__ import annotations

import atexit
import cProfile
import io
import os
import platform
import pstats
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PY = REPO / ".venv" / "bin" / "python"
NASFS = REPO / ".venv" / "bin" / "nasfs"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
}


# -- printing -------------------------------------------------------------------
def banner(title: str) -> None:
    """The command that reproduces this run, and what it ran on."""
    rel = os.path.relpath(sys.argv[0], REPO) if os.path.isabs(sys.argv[0]) else sys.argv[0]
    print(f"== {title}")
    print("command: .venv/bin/python " + " ".join(shlex.quote(a) for a in [rel, *sys.argv[1:]]))
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores ({cpu}), Linux {platform.release()}, Python {platform.python_version()}, "
          f"load average at start {load}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print()
    global _started
    _started = time.monotonic()


_started = time.monotonic()


def finish() -> None:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"done in {time.monotonic() - _started:.0f} s; load average at end {load} "
          "(other work on this machine shows as load above ~1 and makes every figure noisier)")


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], title: str | None = None) -> None:
    rows = [[_cell(c) for c in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]
    if title:
        print(title)
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(r, widths)))
    print()
    sys.stdout.flush()


def _cell(c: object) -> str:
    if isinstance(c, float):
        if c == 0:
            return "0"
        if abs(c) >= 100:
            return f"{c:,.0f}"
        if abs(c) >= 1:
            return f"{c:.2f}"
        return f"{c:.3g}"
    if isinstance(c, int):
        return f"{c:,}"
    return str(c)


_NUMERIC = __import__("re").compile(r"^[-+]?[\d.,]+\s*[a-zA-Z/%]*$")


def _numeric(s: str) -> bool:
    return bool(_NUMERIC.match(s))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.2f} s"


def ratio(x: float, base: float) -> str:
    return f"{x / base:.2f}x" if base > 0 else "n/a"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


# -- timing ----------------------------------------------------------------------
def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs: Sequence[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * len(s)))] if s else float("nan")


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run_timed(cmd: Sequence[str], cwd: str | Path | None = None, env: dict[str, str] | None = None,
              check: bool = True, timeout: float | None = 600) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of a whole process, its output captured (as tools' output is read)."""
    t = time.perf_counter()
    done = subprocess.run(list(map(str, cmd)), cwd=cwd, env=env, capture_output=True, timeout=timeout)
    dt = time.perf_counter() - t
    if check and done.returncode not in (0, 1):  # rg and git grep say 1 for "no match"
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    return dt, done


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all its threads (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profile_top(fn: Callable[[], object], n: int = 20, sort: str | Sequence[str] = "tottime") -> str:
    """cProfile's top ``n`` functions of one call of ``fn``, by each of ``sort``."""
    prof = cProfile.Profile()
    prof.enable()
    try:
        fn()
    finally:
        prof.disable()
    parts = []
    for key in ([sort] if isinstance(sort, str) else list(sort)):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(key).print_stats(n)
        lines = [l for l in out.getvalue().splitlines() if l.strip()]
        keep = [l for l in lines if "function calls" in l or l.lstrip().startswith("ncalls") or l[:1] == " " and "(" in l]
        parts.append(f"by {key}:\n" + "\n".join(keep))
    return "\n".join(parts).replace(str(REPO) + "/", "").replace(sys.prefix + "/", "").replace(sys.base_prefix + "/lib/python3.11/", "") + "\n"


# -- places ------------------------------------------------------------------------
_cleanups: list[Callable[[], None]] = []


def on_exit(fn: Callable[[], None]) -> None:
    """Run ``fn`` at exit, newest first, also after SIGTERM/SIGINT/SIGHUP."""
    _cleanups.append(fn)


def _run_cleanups() -> None:
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as exc:  # cleanup goes on
            print(f"cleanup: {exc}", file=sys.stderr)


def _signalled(signum, frame):  # noqa: ANN001
    raise SystemExit(128 + signum)


atexit.register(_run_cleanups)
for _sig in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _signalled)


def workdir(prefix: str, keep: bool = False) -> Path:
    """A fresh folder under /tmp, removed at exit unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=f"nasfs-bench-{prefix}-", dir="/tmp"))
    if not keep:
        on_exit(lambda: shutil.rmtree(path, ignore_errors=True))
    return path


def git(*args: str, cwd: Path, quiet: bool = True, date: str | None = None) -> str:
    """``date``: the author and committer date (ISO 8601), so that the same
    tree gives the same commit id in every run."""
    env = dict(os.environ, **GIT_ENV)
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", "-c", "gc.auto=0", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
                          cwd=cwd, env=env, capture_output=True, check=True)
    return done.stdout.decode()


def make_repo(path: Path, message: str = "bench tree", date: str | None = None) -> str:
    """``path`` as a git repository with everything in one commit; its id.
    With ``date`` the commit id depends on the files alone (see :func:`git`)."""
    git("init", "-q", "-b", "main", cwd=path)
    commit_all(path, message, date)
    return git("rev-parse", "HEAD", cwd=path).strip()


def commit_all(path: Path, message: str, date: str | None = None) -> str:
    git("add", "-A", cwd=path)
    git("commit", "-q", "--no-verify", "-m", message, cwd=path, date=date)
    return git("rev-parse", "HEAD", cwd=path).strip()


def drop_caches() -> bool:
    """Empty the page cache (root only); False when not allowed."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


def proc_memory(pid: int) -> dict[str, int]:
    """VmHWM, VmRSS (kB) of a process from /proc."""
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "VmPeak", "VmSize"):
                out[key] = int(value.split()[0])
    return out


# -- mounts ---------------------------------------------------------------------------
def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _mounted(mountpoint: Path) -> bool:
    target = str(mountpoint.resolve())
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split(" - ")[0].split()
            if len(fields) > 4 and _unescape(fields[4]) == target:
                return True
    return False


class FuseDaemon:
    """A FUSE daemon in the foreground, up once ``ready`` exists under its
    mount point; stopped (unmounted, process gone) at exit whatever happens."""

    def __init__(self, argv: Sequence[str], mountpoint: Path, log: Path, ready: str, what: str,
                 env: dict[str, str] | None = None, cwd: str | Path = "/", stop_wait: float = 15) -> None:
        self.mountpoint, self.log, self.stop_wait = mountpoint, log, stop_wait
        mountpoint.mkdir(exist_ok=True)
        with open(log, "ab") as fh:
            self.proc = subprocess.Popen(list(argv), stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        on_exit(self.stop)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{what} exited {self.proc.returncode}: {log.read_text()[-2000:]}")
            if _mounted(mountpoint) and (mountpoint / ready).exists():
                return
            time.sleep(0.05)
        raise RuntimeError(f"{what} did not come up in 60 s: {log.read_text()[-2000:]}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if _mounted(self.mountpoint):
            subprocess.run(["fusermount3", "-u", str(self.mountpoint)], capture_output=True)
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=self.stop_wait)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        if _mounted(self.mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", str(self.mountpoint)], capture_output=True)


class Mount(FuseDaemon):
    """``nasfs mount SRC MNT --foreground`` as tests/mounts.py runs it."""

    def __init__(self, source: Path, mountpoint: Path, env: dict[str, str], log: Path, *extra: str,
                 launcher: Sequence[str] | None = None) -> None:
        """``launcher`` replaces ``python -m nasfs`` (to try a patched daemon)."""
        self.source = source
        argv = [*(launcher or [str(PY), "-m", "nasfs"]), "mount", str(source), str(mountpoint), "--foreground",
                "--log-level", "warning", *extra]
        super().__init__(argv, mountpoint, log, ".nas/HELP", "mount daemon", env=env, cwd=REPO)


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        sys.exit(f"this benchmark needs {tool!r} on PATH")
    return path


# -- generated trees ------------------------------------------------------------------
RARE = "quokka_zanzibar"  # in about 1 file of 10,000
MID = "heliotrope"  # in about 1 file of 100
_SYL = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "du", "ga", "hi", "jo", "be", "ze", "fu", "ri", "mo", "la", "xe"]


def _words(rng, n: int) -> list[str]:
    return ["".join(rng.choice(_SYL) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def _vocab(seed: int = 7) -> list[str]:
    import random

    rng = random.Random(seed)
    common = ["the", "of", "and", "to", "in", "is", "for", "that", "with", "on", "as", "by", "this", "data", "file", "value"]
    return common * 20 + _words(rng, 3000)


def _prose(rng, vocab: list[str], words: int) -> str:
    out, line = [], []
    for _ in range(words):
        line.append(rng.choice(vocab))
        if len(line) >= rng.randint(8, 14):
            out.append(" ".join(line))
            line = []
    if line:
        out.append(" ".join(line))
    return "\n".join(out) + "\n"


def code_file(rng, vocab: list[str], funcs: int, handler: bool = False) -> str:
    """A Python module: imports, a class with methods, functions."""
    name = lambda: "_".join(rng.choice(vocab) for _ in range(2)).replace("-", "_")  # noqa: E731
    out = ['"""' + _prose(rng, vocab, 12).strip().replace("\n", " ") + '"""', "", "import os", "import sys", ""]
    cls = name().title().replace("_", "") + ("Handler" if handler else "Model")
    out += [f"class {cls}:", f'    """{rng.choice(vocab)} {rng.choice(vocab)}."""', ""]
    for i in range(max(1, funcs // 3)):
        out += [f"    def {name()}_{i}(self, value, count={i}):", f"        total = value * count + {rng.randint(1, 99)}",
                f"        if total > {rng.randint(100, 999)}:", f"            return '{rng.choice(vocab)}'", "        return total", ""]
    for i in range(funcs - max(1, funcs // 3)):
        out += ["", f"def {name()}_{i}(items, limit={rng.randint(1, 50)}):", f"    # {_prose(rng, vocab, 8).strip()}",
                "    result = []", "    for item in items:", "        if len(result) >= limit:", "            break",
                f"        result.append(item + '{rng.choice(vocab)}')", "    return result", ""]
    return "\n".join(out) + "\n"


def markdown_file(rng, vocab: list[str], sections: int) -> str:
    out = [f"# {' '.join(rng.choice(vocab) for _ in range(3)).title()}", "", _prose(rng, vocab, 30)]
    for s in range(sections):
        out += [f"## {rng.choice(vocab).title()} {s}", "", _prose(rng, vocab, rng.randint(20, 60))]
        if rng.random() < 0.3:
            out += [f"### {rng.choice(vocab).title()}", "", _prose(rng, vocab, 20)]
    return "\n".join(out)


def gen_tree(root: Path, n_files: int, seed: int = 1, per_dir: int = 200) -> dict[str, int]:
    """``n_files`` small files (code, markdown, text, JSON) under ``root``, in
    folders of ``per_dir``. RARE is in about 1 file of 10,000 (at least 1),
    MID in about 1 of 100; every code file has 'return', one in 50 a
    ``class ...Handler``. Returns counts of what was planted."""
    import json as _json
    import random

    rng = random.Random(seed)
    vocab = _vocab()
    planted = {"rare": 0, "mid": 0, "handler": 0, "bytes": 0}
    rare_every = max(1, min(10007, n_files // 2))
    for i in range(n_files):
        folder = root / f"d{i // per_dir:04d}"
        if i % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        kind = i % 4
        if kind == 0:
            handler = i % 50 == 0
            planted["handler"] += handler
            text, ext = code_file(rng, vocab, rng.randint(3, 9), handler), ".py"
        elif kind == 1:
            text, ext = markdown_file(rng, vocab, rng.randint(2, 5)), ".md"
        elif kind == 2:
            text, ext = _prose(rng, vocab, rng.randint(80, 300)), ".txt"
        else:
            obj = {"name": rng.choice(vocab), "id": i, "tags": _words(rng, rng.randint(1, 6)),
                   "spec": {"size": rng.randint(1, 1000), "notes": _prose(rng, vocab, 10).strip()}}
            text, ext = _json.dumps(obj, indent=2) + "\n", ".json"
        if i % 97 == 5:
            text += f"\nsee also {MID} notes\n"
            planted["mid"] += 1
        if i % rare_every == 3 % rare_every:
            text += f"\n{RARE} appears here once\n"
            planted["rare"] += 1
        data = text.encode()
        planted["bytes"] += len(data)
        (folder / f"f{i:05d}{ext}").write_bytes(data)
    return planted


def long_python(lines: int, seed: int = 3) -> str:
    """A Python module of about ``lines`` lines (classes and functions)."""
    import random

    rng = random.Random(seed)
    vocab = _vocab()
    parts, n = [], 0
    while n < lines:
        chunk = code_file(rng, vocab, 9, handler=rng.random() < 0.2)
        if parts:  # one module: drop the repeated docstring and imports
            chunk = chunk.split("\n", 5)[5]
        parts.append(chunk)
        n += chunk.count("\n")
    text = "".join(parts)
    return "\n".join(text.split("\n")[:lines]) + "\n"


# -- sampling a running process (py-spy, when installed) --------------------------------
def pyspy() -> str | None:
    """py-spy, if on PATH or in $PYSPY (install: pip install --target /tmp/pyspy py-spy)."""
    return os.environ.get("PYSPY") or shutil.which("py-spy")


class Spy:
    """``py-spy record --format raw`` on a process for one phase; ``stop()``
    says which functions the samples were in (own time and inclusive)."""

    def __init__(self, pid: int, out: Path, rate: int = 250) -> None:
        self.out = out
        exe = pyspy()
        if exe is None:
            raise RuntimeError("py-spy not found: pip install --target /tmp/pyspy py-spy; PYSPY=/tmp/pyspy/bin/py-spy")
        self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--format", "raw", "--rate", str(rate),
                                      "--threads", "--nonblocking", "-o", str(out)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        on_exit(self._kill)
        time.sleep(0.5)  # let it attach

    def _kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, top: int = 15) -> str:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._kill()
        if not self.out.exists():
            return "py-spy wrote nothing: " + (self.proc.stderr.read().decode(errors="replace")[-500:] if self.proc.stderr else "")
        return summarize_stacks(self.out.read_text(), top)


_IDLE = ("epoll_wait", "get_events (trio", "_epoll_wait (trio", "select (", "poll (", "wait (threading", "_wait_for_tstate_lock", "acquire (", "_worker (",
         "get (queue", "sleep (")


def summarize_stacks(raw: str, top: int = 15) -> str:
    """Own-time and inclusive top functions from collapsed stacks (``a;b;c N``)."""
    from collections import Counter

    own: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = [_frame_name(f) for f in stack.split(";")[1:]]  # drop the thread frame
        if not frames:
            continue
        count = int(n)
        total += count
        own[frames[-1]] += count
        for f in set(frames):
            incl[f] += count
    if not total:
        return "no samples\n"
    busy = total - sum(c for f, c in own.items() if any(k in f for k in _IDLE))
    lines = [f"{total} samples, {busy} ({busy / total:.0%}) not waiting", "own time (leaf frame):"]
    lines += [f"  {c / total:6.1%}  {f}" for f, c in own.most_common(top)]
    lines += ["inclusive:"]
    lines += [f"  {c / total:6.1%}  {f}" for f, c in incl.most_common(top + 10)]
    return "\n".join(lines) + "\n"


def _frame_name(frame: str) -> str:
    """'read (nasfs/fuse/ops.py:412)' -> 'read (nasfs/fuse/ops.py)'; paths shortened."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path = where.rsplit(":", 1)[0]
    for cut in ("/site-packages/", str(REPO) + "/", "/lib/python3"):
        if cut in path:
            path = path.split(cut, 1)[1]
    return f"{name} ({path})" if path else name
