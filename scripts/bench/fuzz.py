"""Fuzz of names through the three doors: the mount, the CLI and HTTP.

    .venv/bin/python scripts/bench/fuzz.py [--count 100000] [--seed S] [--doors mount,cli,http]
                                           [--cli-sample N] [--http-sample N] [--timeout 30]
                                           [--check-every 1000] [--keep]

Generates --count names from --seed (printed, so a run can be reproduced:
the same seed gives the same names, up to the temp folder's path in the few
absolute ones): grammar-aware ones, valid and near-valid views of every kind
(``@outline``, ``@L0``, ``@L5-L2``, ``@L1-L99999999``, ``@section=`` with odd
bytes and %-escapes, budgets 0, 1, 10^12, -1, 10^40, ``.json``, ``@@``,
nested ``@``, ``..`` components, ``.at/<rev>/..``, ``.at/<unknown>``,
``.nas/search|deref|diff/...``, names of 254 to 256 bytes, paths past
PATH_MAX), names through symlinks that leave the tree, and NUL-free random
bytes, invalid UTF-8 included.

The tree is the demo tree (tag v1, then a second commit) with odd entries
beside it: names with '@', '%', spaces, invalid UTF-8, a binary and an empty
file, symlinks in the tree, symlink loops, and symlinks pointing out of the
tree to a folder beside it whose file holds a secret marker. The marker is
never in a name (names carry halves of it at most); it must never be in any
answer, error message or .nas/errors.

Doors:

- mount: every name, from a child process (so a hang is a process to kill:
  after --timeout without an answer the FUSE connection is aborted and the
  door stops). Per name: open with O_PATH + fstat (stat) and open + read,
  both by openat2 with RESOLVE_BENEATH, so a name the kernel itself would
  walk out of the mount ('..' above the root, absolute paths, a symlink out)
  is answered EXDEV by the kernel and counted as such, never read (a walk
  of '..' that the kernel answers EAGAIN, because a rename elsewhere on the
  machine raced it, is retried up to 200 times, then counted untested). A
  refusal must be ENOENT, EINVAL, ENAMETOOLONG, EISDIR, ENOTDIR, EROFS,
  EACCES, EPERM, ELOOP or EFBIG (EIO and anything else are failures), and a refused
  view (a name with '@' in a folder that exists) must have its reason line
  in .nas/errors (read before a refusal could push it out of the last 100
  kept there). Folders found are listed (readdir), files' extended
  attributes read. Every --check-every names the daemon must be alive and
  .nas/HELP readable.
- cli: a sample (--cli-sample, default 1% of --count, at least 300), two
  processes at a time: ``nasfs read --repo SRC [--json] [--at=REV] -- NAME``
  (a .nas/search|deref|diff/REST name mostly as ``nasfs search|deref|diff
  -- REST``, with odd --budget values too: -1, 10^20, x) must exit 0, or 2
  with exactly one stderr line (README: "2 bad input (one line on stderr)")
  and no traceback. ``--`` keeps a name that starts with '-' a name.
- http: --http-sample names (default all), over two keep-alive connections
  to ``nasfs serve --listen 127.0.0.1:PORT``: POST /v1/files/read as {path},
  {path, view}, {path, view, budget_tokens} (odd ones too: -1, 10^30, 1.5,
  "12", true) or {path, at}, a few as raw bytes that are not valid JSON; a
  .nas/search|deref|diff/REST name often to /v1/search, /v1/evidence/
  dereference or /v1/diff. The answer must be 200 with an envelope, or 4xx
  JSON with ``error`` and a ``detail``; never 5xx. Every --check-every
  answers, GET /v1/health.

At the end: the daemon and the server alive, .nas/HELP readable,
internal_errors=0 in .nas/stats, no traceback in either log. Prints counts per
door and outcome, every failure with up to 3 example names, and exits 1 on
any failure (0 otherwise). The mount, the server and every process are ended
at exit.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import http.client
import json
import os
import random
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import _hang as H  # noqa: E402
from nasfs.errors import one_line  # noqa: E402

ALLOWED = {"ENOENT", "EINVAL", "ENAMETOOLONG", "EISDIR", "ENOTDIR", "EROFS", "EACCES", "EPERM", "ELOOP", "EFBIG"}
FIXED_DATE = "2026-01-01T00:00:00+00:00"  # commits of the same tree are the same commits: names with ids repeat
READ_LIMIT = 8 << 20
REASON_ROOM = 90  # .nas/errors holds the last 100 refusals: check before a refused attempt could push one out
EAGAIN_TRIES = 200
FAILED = [0]  # openat2 attempts that failed since .nas/errors was last read (each may be one refusal there)


# -- the tree ---------------------------------------------------------------------------
def git(src: Path, *args: str) -> str:
    env = dict(os.environ, **C.GIT_ENV, GIT_AUTHOR_DATE=FIXED_DATE, GIT_COMMITTER_DATE=FIXED_DATE)
    return subprocess.run(["git", "-c", "gc.auto=0", "-c", "commit.gpgsign=false", *args], cwd=src, env=env,
                          capture_output=True, check=True).stdout.decode()


def build_tree(work: Path, marker: str) -> dict:
    """The demo tree with odd entries, and a folder beside it holding the
    secret; returns what the generator needs to know about it."""
    src, outside = work / "src", work / "outside"
    shutil.copytree(C.REPO / "demo", src)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"# Secret\n\n## Hidden\n\n{marker}\n\nmore {marker}\n")
    (outside / "secret.md").write_text(f"# {marker}\n\n## {marker} two\n\ntext {marker}\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.py").write_text(f"def {marker.replace('-', '_')}():\n    return '{marker}'\n")
    odd = {
        "user@host.txt": "a name with @ in it\n",
        "@scope/pkg.json": '{"name": "@scope/pkg", "version": "1.0.0"}\n',
        "weird dir/a b.md": "# A B\n\n## Sp ace\n\ntext\n",
        "notes/x@outline": "a real file whose name looks like a view\n",
        "pct%41.md": "# Percent\n\ntext\n",
        "empty.txt": "",
        "notes/crlf.md": "# CRLF\r\n\r\n## Two\r\n\r\nline\r\n",
    }
    for rel, text in odd.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    (src / "data" / "blob.bin").write_bytes(bytes(range(256)) * 4)
    os.makedirs(src / b"bad-\xff-dir".decode("utf-8", "surrogateescape"), exist_ok=True)
    with open(os.path.join(os.fsencode(src), b"bad-\xff.txt"), "wb") as fh:
        fh.write(b"# Bad name\n\nline\n")
    with open(os.path.join(os.fsencode(src), b"bad-\xff-dir", b"inner.md"), "wb") as fh:
        fh.write(b"# Inner\n")
    links = {  # committed: relative, so commits do not depend on the temp folder
        "out-dir": "../outside",
        "notes/out-rel.md": "../../outside/secret.txt",
        "dotdot": "..",
        "in-link.md": "notes/customer-acme.md",
        "in-dir": "notes",
        "notes/up": "..",
        "loop-a": "loop-b",
        "loop-b": "loop-a",
        "self": "self",
        "dangling": "nowhere.md",
    }
    for rel, target in links.items():
        os.symlink(target, src / rel)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "--no-verify", "-m", "first")
    git(src, "tag", "v1")
    acme = src / "notes" / "customer-acme.md"
    acme.write_text(acme.read_text().replace("price held at the 2026 rate", "price held at the 2026 rate, then +3%"))
    git(src, "commit", "-q", "--no-verify", "-am", "second")
    first = git(src, "rev-parse", "v1").strip()
    second = git(src, "rev-parse", "HEAD").strip()
    untracked = {"out-abs": str(outside), "out-file": str(outside / "secret.txt"), "notes/out-abs.md": str(outside / "secret.md")}
    for rel, target in untracked.items():
        os.symlink(target, src / rel)
    files = sorted({p.relative_to(src).as_posix() for p in src.rglob("*") if ".git" not in p.parts and p.is_file() and not p.is_symlink()})
    return {"src": src, "outside": outside, "first": first, "second": second, "files": files,
            "links": sorted(links) + sorted(untracked), "dirs": ["notes", "code", "config", "data", "weird dir", "@scope"]}


# -- the names ------------------------------------------------------------------------------
SECTIONS = ["Renewal", "Acme Corp.Renewal", "Acme Corp.Contacts.Escalation", "renewal", "action-items", "Invoice",
            "Invoice.total", "Invoice.add", "Rate", "monthly_invoice", "spec", "spec.replicas", "spec.template.spec.containers.0",
            "containers", "metadata.labels.app", "model", "header", "Hidden", "Sp ace", "Two", "Background"]
ODD_TEXT = ["%00", "%ff", "%FF%FE", "%2F", "%40", "%", "%%", "%zz", "%2", "%C3%A9", "%E2%80%AE", "\n", "\t", "\r", " ", "  ",
            "~", "~0", "~1", "~2", "~-1", "~99999999999999999999", ".", "..", "...", "@", "@@", "=", "==", "#", "?", "*", "\\",
            "'", '"', "é", "\u202e", "\ufeff", "😀", "\x01", "\x7f", "\x1b[31m", "$(id)", "`id`", ";", "|", "&", "<>", "{}", "[]"]
BUDGETS = ["0", "1", "10", "50", "200", "1000", "1000000000000", "999999999999999", "1000000000000000", "1000000000000001",
           "10000000000000000", "-1", "-0", "+5", "1" + "0" * 40, "007", "00", "1e3", "0x10", "1.5", " 5", "5 ", "٣", "١٠", "²", "Ⅻ"]
LINES = ["0", "1", "2", "3", "5", "12", "18", "38", "39", "99999999", "1000000000000", "1" + "0" * 30, "-1", "01", "",
         "x", "1.5", "١", " 1", "L1"]
REVS_WORDS = ["v1", "main", "HEAD", "HEAD~1", "HEAD^", "HEAD~99", "v9", "deadbeef", "0000000", "nope", "-x", "--all",
              "HEAD@{0}", ":/", "~", "^{tree}", "v1^{}", "refs%2Fheads%2Fmain", "refs/heads/main", "..", "v1..", "..main",
              "v1..main", "a..b..c", "v1...main", "", "@", "%", "%00", "HEAD:notes", "main@{upstream}", "é"]
QUERIES = ["renewal", "Invoice", "re:Inv.ice", "re:(a+)+$", "re:[", "re:\\", "re:.*", "glob:*.md renewal", "glob:../*",
           "glob:**", "glob:/etc/*", "in:notes renewal", "in:out-dir secret", "in:.. secret", "in:/ secret", "in:dotdot x",
           "in:notes/up renewal", "in:.git HEAD", "skip:-1 renewal", "skip:99999999999999999999 x", "skip:x y",
           "nasfs-secret", "Secret", "Hidden", "secret glob:**/*", "in:%2E%2E renewal", "", " ", "re:", "in:", "glob:",
           "-e renewal", "--files", "re:(?i)secret", "in:out-abs secret", "in:notes/out-rel.md x"]


class Names:
    """The generator: one name (bytes) and its category per call."""

    def __init__(self, rng: random.Random, tree: dict, marker_half: str) -> None:
        self.rng = rng
        self.tree = tree
        self.half = marker_half
        self.commits = [tree["first"], tree["second"], tree["first"][:7], tree["second"][:12], tree["first"][:12]]
        self.files = tree["files"] + ["README.txt", "notes/customer-acme.md", "code/billing.py", "config/deploy.yaml",
                                      "data/shipments.csv", "config/agent.json"] * 4
        self.plain = [f for f in self.files if "\udcff" not in f]
        self.categories: list[tuple[str, float]] = [
            ("view", 30), ("near-view", 12), ("view-chain", 6), ("path-trick", 10), ("symlink", 8), ("at", 10),
            ("nas", 8), ("random-bytes", 8), ("random-tail", 5), ("long", 3),
        ]

    def __call__(self) -> tuple[bytes, str]:
        cat = self.rng.choices([c for c, _ in self.categories], [w for _, w in self.categories])[0]
        name = getattr(self, "gen_" + cat.replace("-", "_"))()
        if isinstance(name, str):
            name = name.encode("utf-8", "surrogateescape")
        return name.replace(b"\0", b"%00"), cat

    # pieces
    def r(self, xs):
        return self.rng.choice(xs)

    def file(self) -> str:
        return self.r(self.files)

    def odd(self) -> str:
        return "".join(self.r(ODD_TEXT) for _ in range(self.rng.randint(1, 3)))

    def section_name(self) -> str:
        base = self.r(SECTIONS)
        roll = self.rng.random()
        if roll < 0.3:
            return base
        if roll < 0.6:
            at = self.rng.randint(0, len(base))
            return base[:at] + self.odd() + base[at:]
        if roll < 0.75:
            return self.odd()
        if roll < 0.85:
            return self.rng.randbytes(self.rng.randint(1, 12)).replace(b"\0", b"").replace(b"/", b"").decode("utf-8", "surrogateescape")
        return base * self.rng.randint(5, 40)

    def budget(self) -> str:
        return self.r(BUDGETS) if self.rng.random() < 0.8 else str(self.rng.randint(0, 10**self.rng.randint(1, 18)))

    def base_view(self) -> str:
        kind = self.rng.choices(["outline", "lines", "line", "section", "since", "summary", "budget"], [4, 4, 2, 4, 2, 1, 4])[0]
        if kind == "outline":
            return "outline"
        if kind == "summary":
            return "summary"
        if kind == "lines":
            return f"L{self.r(LINES)}-L{self.r(LINES)}"
        if kind == "line":
            return f"L{self.r(LINES)}"
        if kind == "section":
            return "section=" + self.section_name()
        if kind == "since":
            return "since=" + self.r(REVS_WORDS + self.commits)
        return self.budget()

    def view(self) -> str:
        v = self.base_view()
        if self.rng.random() < 0.3:
            v += "@" + self.budget()
        if self.rng.random() < 0.3:
            v += ".json"
        return v

    # categories
    def gen_view(self) -> str:
        return f"{self.file()}@{self.view()}"

    def gen_near_view(self) -> str:
        name = self.gen_view()
        for _ in range(self.rng.randint(1, 3)):
            at = self.rng.randint(0, len(name))
            op = self.rng.random()
            if op < 0.3:
                name = name[:at] + name[at + 1:]
            elif op < 0.6:
                name = name[:at] + self.r(["@", ".", "L", "-", "=", "%", "/", "json", "0", "9", ".."]) + name[at:]
            elif op < 0.8:
                name = name[:at] + self.odd() + name[at + 1:]
            else:
                name = name.upper() if self.rng.random() < 0.5 else name.replace("@", "@@", 1)
        return name

    def gen_view_chain(self) -> str:
        f = self.file()
        forms = [f"{f}@", f"{f}@@", f"{f}@@outline", f"{f}@outline@", f"{f}@outline@outline", f"{f}@L1@L2",
                 f"{f}@outline@200@300", f"{f}@.json", f"{f}@outline.json.json", f"{f}.json", f"{f}@outline.JSON",
                 f"{f}@{self.view()}@{self.view()}", f"{f}@{self.view()}/x", f"{f}@outline/..", f"{f}@{self.budget()}@{self.budget()}",
                 f"{f}@section={self.section_name()}@section={self.section_name()}", f"{f}@{self.view()}@{self.file()}",
                 f"{f}@outline%40200", f"{f}%40outline", f"{f}@since={self.r(self.commits)}..{self.r(REVS_WORDS)}"]
        return self.r(forms)

    def gen_path_trick(self) -> str:
        f, d = self.file(), self.r(self.tree["dirs"])
        forms = ["..", "../", "../outside/secret.txt", "../outside/secret.txt@outline", f"{d}/../{f}", f"{d}/../../outside/secret.txt",
                 f"./{f}", f"{d}//{f.rsplit('/', 1)[-1]}", f"{f}/", f"{f}/.", f"{f}/..", f"{f}/x", f"{d}/./../{f}@outline",
                 "/etc/passwd", "/etc/passwd@outline", f"/{f}", "//" + f, str(self.tree["outside"] / "secret.txt"),
                 ".git/HEAD", ".git/config", ".git/HEAD@outline", ".git/config@L1", ".git/../" + f, ".git", ".git@outline",
                 "notes/nope.md", "notes/nope.md@outline", "nope/x@outline", ".", "", "/", "@", "@outline", "@@", ".@outline",
                 "..@outline", f"{d}@outline", f"{d}@L1", f"{d}/@outline", f"{d}/.@outline", f"{d}/..@outline",
                 f"{f}@{self.view()}/../{f}", f"{d}/" * self.rng.randint(2, 6) + "x",
                 "/".join([".."] * self.rng.randint(1, 12)) + "/tmp", f"{f}\n", f" {f}", f"{f} "]
        return self.r(forms)

    def gen_symlink(self) -> str:
        link = self.r(self.tree["links"])
        forms = [link, f"{link}@{self.view()}", f"{link}/secret.txt", f"{link}/secret.txt@{self.view()}", f"{link}/secret.md@outline",
                 f"{link}/sub/deep.py@outline", f"{link}/outside/secret.txt", f"{link}/outside/secret.txt@L1-L9",
                 f"{link}/customer-acme.md@outline", f"{link}/notes/customer-acme.md@section=Renewal", f"{link}/",
                 f"{link}/..", f"{link}/../outside/secret.txt", f".at/{self.r(self.commits)}/{link}",
                 f".at/{self.r(self.commits)}/{link}@{self.view()}", f".at/{self.r(self.commits)}/{link}/secret.txt@outline",
                 f".at/{self.r(self.commits)}/{link}/outside/secret.txt", f".nas/deref/{link}@{self.r(self.commits)}#L1-L3",
                 f".nas/deref/{link}/secret.txt@{self.r(self.commits)}#L1", f".nas/search/in:{link} {self.half}"]
        return self.r(forms)

    def rev(self) -> str:
        roll = self.rng.random()
        if roll < 0.5:
            return self.r(self.commits)
        if roll < 0.8:
            return self.r(REVS_WORDS)
        return self.rng.choice([self.rng.randbytes(20).hex(), self.r(self.commits)[: self.rng.randint(1, 6)], self.odd()])

    def gen_at(self) -> str:
        rev, f = self.rev(), self.file()
        forms = [f".at/{rev}", f".at/{rev}/", f".at/{rev}/{f}", f".at/{rev}/{f}@{self.view()}", f".at/{rev}/..",
                 f".at/{rev}/../..", f".at/{rev}/../../outside/secret.txt", f".at/{rev}/../{f}", f".at/{rev}/{f}/..",
                 f".at/{rev}/.nas/search/{self.r(QUERIES)}", f".at/{rev}/.nas/HELP", f".at/{rev}/.at/{rev}/{f}",
                 f".at/{rev}@outline", f".at/{rev}/{self.r(self.tree['dirs'])}@outline", ".at", ".at/", ".at@outline",
                 f".at/{rev}/.git/HEAD", f".at/{rev}/{f}@since={self.rev()}", f".at/{rev}/notes/out-rel.md@{self.view()}",
                 f".at/{rev}/dotdot/outside/secret.txt", f".at/{rev}/in-dir/customer-acme.md@outline"]
        return self.r(forms)

    def gen_nas(self) -> str:
        c, f = self.r(self.commits), self.file()
        q = self.r(QUERIES)
        if self.rng.random() < 0.4:
            q = q + " " + self.odd()
        suffix = self.r(["", "", "@" + self.budget(), ".json", "@" + self.budget() + ".json", "@", "@@"])
        forms = [".nas", ".nas/", ".nas/HELP", ".nas/stats", ".nas/errors", ".nas/HELP@outline", ".nas/stats@L1",
                 ".nas/nope", ".nas/..", ".nas/../" + f, f".nas/search/{q}{suffix}", f".nas/search/{q}{suffix}",
                 f".nas/search/{q}/x", ".nas/search", ".nas/search/", f".nas/deref/{f}@{c}#L{self.r(LINES)}-L{self.r(LINES)}",
                 f".nas/deref/{f}@{c}", f".nas/deref/{f}@{c}#L{self.r(LINES)}", f".nas/deref/{f}@{self.rev()}#L1",
                 f".nas/deref/../outside/secret.txt@{c}#L1", f".nas/deref/{f}", ".nas/deref/", f".nas/deref/nas:/{f}@{c}#L1",
                 f".nas/diff/{self.rev()}..{self.rev()}{suffix}", f".nas/diff/{self.rev()}{suffix}", ".nas/diff/",
                 f".nas/diff/v1..main{suffix}", f".nas/diff/{self.odd()}"]
        return self.r(forms)

    def gen_random_bytes(self) -> bytes:
        n = self.rng.choice([1, 2, 3, 8, 30, 100, 255, 256, self.rng.randint(1, 400)])
        alphabet = self.rng.random()
        if alphabet < 0.4:
            data = self.rng.randbytes(n)
        elif alphabet < 0.7:
            data = bytes(self.rng.choice(b"abc@L0123456789-=./%.json\xff\xfe\xc3\xa9 ") for _ in range(n))
        else:
            data = bytes(self.rng.randint(0x80, 0xFF) for _ in range(n))  # never valid UTF-8 on its own
        return data.replace(b"\0", b"")

    def gen_random_tail(self) -> bytes:
        head = self.r([f"{self.file()}@", f"{self.file()}@section=", f".at/{self.r(self.commits)}/{self.file()}@",
                       ".nas/search/", ".nas/deref/", f"{self.file()}@L", f"{self.file()}@outline@"])
        return head.encode("utf-8", "surrogateescape") + self.gen_random_bytes().replace(b"/", b"")

    def gen_long(self) -> str:
        f = self.r(self.plain)
        folder, _, leaf = f.rpartition("/")
        prefix = folder + "/" if folder else ""
        target = self.rng.choice([254, 255, 256, 257, 300, 1000])
        fill = self.r(["x", "é", "😀", "%41"])
        start = self.r([f"{leaf}@section=", f"{leaf}@", "", f"{leaf}@outline@", "a"])
        body = start
        while len(body.encode()) + len(fill.encode()) <= target:
            body += fill
        body += "y" * (target - len(body.encode()))
        roll = self.rng.random()
        if roll < 0.7:
            return prefix + body
        if roll < 0.85:
            return "/".join(["d" * 200] * self.rng.randint(19, 22)) + "/x"  # near PATH_MAX
        return f".at/{self.r(self.commits)}/" + prefix + body


def generate(count: int, seed: int, tree: dict, half: str) -> tuple[list[bytes], list[str]]:
    gen = Names(random.Random(seed), tree, half)
    names, cats = [], []
    for _ in range(count):
        n, c = gen()
        names.append(n)
        cats.append(c)
    return names, cats


def write_names(path: Path, names: list[bytes]) -> None:
    with open(path, "wb") as fh:
        for n in names:
            fh.write(struct.pack("<I", len(n)) + n)


def read_names(path: Path) -> list[bytes]:
    data = Path(path).read_bytes()
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        out.append(data[at + 4 : at + 4 + n])
        at += 4 + n
    return out


def exceptions(log: str) -> Counter[str]:
    """The exception line that ends each traceback in a log ('IndexError: ...')."""
    found: Counter[str] = Counter()
    lines = log.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("Traceback"):
            for after in lines[n + 1 :]:
                if after and not after.startswith((" ", "Traceback")):
                    found[after.strip()[:160]] += 1
                    break
    return found


def shown(name: bytes, limit: int = 160) -> str:
    r = repr(name)
    return r if len(r) <= limit else r[:limit] + f"...' ({len(name)} bytes)"


# -- the mount door: a child process ------------------------------------------------------------
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


SYS_OPENAT2 = 437  # the same number on every architecture (new system calls are unified)
RESOLVE_BENEATH = 0x08
_libc = ctypes.CDLL(None, use_errno=True)


def openat2(dirfd: int, path: bytes, flags: int) -> int:
    """open() that the kernel keeps beneath ``dirfd``: '..' above it, absolute
    paths and symlinks out of it fail with EXDEV instead of being followed."""
    how = OpenHow(flags | os.O_CLOEXEC, 0, RESOLVE_BENEATH)
    for n in range(EAGAIN_TRIES):
        fd = _libc.syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dirfd), ctypes.c_char_p(path), ctypes.byref(how),
                           ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        e = ctypes.get_errno()
        FAILED[0] += 1
        if e != errno.EAGAIN:
            break
        # EAGAIN: a scoped walk of '..' raced a rename somewhere on the machine
        # (the kernel's global rename seqlock moved); openat2(2) says retry
        if n >= 3:
            time.sleep(0.001)
    raise OSError(e, os.strerror(e))


def errname(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, f"errno{exc.errno}")


def mount_worker(argv: list[str]) -> None:
    names_file, mnt, marker, start, check_every = argv[0], argv[1], argv[2].encode(), int(argv[3]), int(argv[4])
    names = read_names(Path(names_file))
    root = os.open(mnt, os.O_PATH | os.O_DIRECTORY)
    mnt_b = os.fsencode(mnt)
    pending: list[tuple[int, str]] = []
    out = sys.stdout

    def emit(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    def side(name: str) -> bytes:
        with open(os.path.join(mnt, ".nas", name), "rb") as fh:
            return fh.read()

    def check_reasons(at: int) -> None:
        text = side("errors")
        leaked = marker in text
        body = text.decode("utf-8", "replace")
        if FAILED[0] > REASON_ROOM:  # EAGAIN retries made more refusals than the 100 kept: some may be gone
            emit({"reasons": at, "unchecked": len(pending), "missing": [], "leak": leaked})
        else:
            missing = [i for i, leaf in pending if f"/{leaf}: " not in body and f" {leaf}: " not in body]
            emit({"reasons": at, "checked": len(pending), "missing": missing, "leak": leaked})
        pending.clear()
        FAILED[0] = 0

    for i in range(start, len(names)):
        name = names[i]
        res: dict = {"i": i}
        if pending and FAILED[0] + 7 > REASON_ROOM:  # what the next name adds, unless the kernel says EAGAIN
            check_reasons(i - 1)
        try:
            fd = openat2(root, name, os.O_PATH)
            try:
                os.fstat(fd)
                res["s"] = "ok"
            finally:
                os.close(fd)
        except OSError as exc:
            res["s"] = errname(exc)
        data = b""
        try:
            fd = openat2(root, name, os.O_RDONLY | os.O_NONBLOCK)
            try:
                while len(data) < READ_LIMIT:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    data += chunk
                res["o"] = "ok"
                res["n"] = len(data)
            finally:
                os.close(fd)
        except OSError as exc:
            res["o"] = errname(exc)
        if res["o"] == "EISDIR":  # a folder: list it, as ls would
            try:
                fd = openat2(root, name, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    listed = os.listdir(fd)
                    res["l"] = "ok"
                    data += b"\n".join(os.fsencode(x) for x in listed)
                finally:
                    os.close(fd)
            except OSError as exc:
                res["l"] = errname(exc)
        elif res["s"] == "ok":  # a file: its extended attributes (user.nas.* on views), as getfattr -d would
            try:
                fd = openat2(root, name, os.O_PATH)
                try:
                    where = f"/proc/self/fd/{fd}"
                    for attr in os.listxattr(where):
                        data += os.getxattr(where, attr)
                    res["x"] = "ok"
                finally:
                    os.close(fd)
            except OSError as exc:
                res["x"] = errname(exc)
        if marker in data:
            res["leak"] = 1
        folder, _, leaf = name.rpartition(b"/")
        if b"@" in leaf and len(leaf) <= 255 and {res["s"], res["o"]} & {"ENOENT", "EINVAL"}:
            # a refused view, if its folder is one where views are resolved
            try:
                fd = openat2(root, folder or b".", os.O_PATH | os.O_DIRECTORY)
                try:
                    where = os.readlink(f"/proc/self/fd/{fd}").encode("utf-8", "surrogateescape")
                finally:
                    os.close(fd)
                rel = where[len(mnt_b) + 1 :] if where.startswith(mnt_b + b"/") else b""
                if not re.search(rb"(^|/)\.nas$", rel):
                    pending.append((i, one_line(leaf.decode("utf-8", "backslashreplace"))))  # as .nas/errors shows it
                    res["ref"] = 1
            except OSError:
                pass
        emit(res)
        if (i + 1) % check_every == 0 or i == len(names) - 1:
            if pending:
                check_reasons(i)
            try:
                ok = side("HELP").startswith(b"nasfs:")
                emit({"help": i, "ok": ok})
            except OSError as exc:
                emit({"help": i, "ok": False, "error": errname(exc)})
    emit({"done": True})


class Report:
    """Outcomes and failures of every door, thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        self.failures: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.fail_counts: Counter[tuple[str, str]] = Counter()
        self.sent: Counter[str] = Counter()
        self.example: dict[tuple[str, str], str] = {}

    def answered(self, door: str) -> None:
        with self.lock:
            self.sent[door] += 1

    def out(self, door: str, outcome: str, name: bytes | None = None) -> None:
        with self.lock:
            self.outcomes[door][outcome] += 1
            if name is not None and (door, outcome) not in self.example:
                self.example[(door, outcome)] = shown(name, 70)

    def fail(self, door: str, what: str, example: str) -> None:
        with self.lock:
            self.fail_counts[(door, what)] += 1
            seen = self.failures[(door, what)]
            if len(seen) < 3 and example not in seen:
                seen.append(example)


def run_mount(names: list[bytes], names_file: Path, m: C.Mount, marker: str, args, report: Report) -> None:
    mnt = m.mountpoint
    start = 0
    deadline_each = args.timeout
    proc = subprocess.Popen([str(C.PY), "-P", __file__, "--mount-worker", str(names_file), str(mnt), marker, str(start),
                             str(args.check_every)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
    C.on_exit(lambda: H.kill(proc, grace=2))
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    next_i = start
    done = False
    while not done:
        ready, _, _ = select.select([fd], [], [], deadline_each)
        if not ready:
            what = shown(names[next_i]) if next_i < len(names) else "the final checks"
            report.fail("mount", "hang (no answer within --timeout; connection aborted)", what)
            print(f"mount: HANG on {what}; {H.abort_connection(mnt)}", flush=True)
            H.kill(proc, grace=2)
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            err = proc.stderr.read().decode(errors="replace")[-1500:] if proc.stderr else ""
            report.fail("mount", "the worker process ended early", f"after {shown(names[next_i - 1]) if next_i else 'nothing'}: {err}")
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            if "i" in msg:
                i = msg["i"]
                next_i = i + 1
                report.answered("mount")
                name = names[i]
                for op, key in (("stat", "s"), ("open+read", "o"), ("listdir", "l"), ("xattrs", "x")):
                    got = msg.get(key)
                    if got is None:
                        continue
                    report.out("mount", f"{op}: {got}", name)
                    if got in ("ok", "EXDEV") or got in ALLOWED or (key == "x" and got in ("ENODATA", "EOPNOTSUPP")):
                        continue
                    if got == "EAGAIN" and b".." in name:  # the kernel's, 200 times: this name was not tested
                        continue
                    report.fail("mount", "EIO" if got == "EIO" else f"errno {got} (not a clear refusal)", f"{op} {shown(name)}")
                if msg.get("leak"):
                    report.fail("mount", "content from outside the tree (the secret marker)", shown(name))
                if msg.get("ref"):
                    report.out("mount", "view refusals checked in .nas/errors", name)
            elif "reasons" in msg:
                if msg.get("unchecked"):
                    report.out("mount", "view refusals not checked (EAGAIN retries overflowed .nas/errors)")
                for i in msg["missing"]:
                    report.fail("mount", "a refused view without its reason in .nas/errors", shown(names[i]))
                if msg["leak"]:
                    report.fail("mount", "the secret marker in .nas/errors", f"after {shown(names[msg['reasons']])}")
            elif "help" in msg:
                if not msg["ok"] or not H.alive(m.pid):
                    report.fail("mount", "daemon death (.nas/HELP unreadable or daemon gone)",
                                f"after {shown(names[msg['help']])} ({msg.get('error', 'dead' if not H.alive(m.pid) else 'bad HELP')})")
                    H.kill(proc, grace=2)
                    return
            elif msg.get("done"):
                done = True
    proc.wait(timeout=30)


# -- the CLI door -------------------------------------------------------------------------------------------
AT_NAME = re.compile(rb"\.at/([^/]*)/(.*)", re.S)
SIDE = re.compile(rb"\.nas/(search|deref|diff)/(.+)", re.S)


def cli_one(i: int, name: bytes, seed: int, src: Path, env: dict, marker: bytes, timeout: float, report: Report) -> None:
    rng = random.Random(seed * 7919 + i)
    command, spec = "read", name
    side = SIDE.fullmatch(name)
    if side and rng.random() < 0.7:  # .nas/search|deref|diff/REST: the command of that name
        command, spec = side.group(1).decode(), side.group(2)
    cmd: list[bytes | str] = [str(C.PY), "-P", "-m", "nasfs", command, "--repo", str(src), "--node", "box", "--tree", "t"]
    m = AT_NAME.fullmatch(name)
    if command == "read" and m and rng.random() < 0.5:
        cmd.append(b"--at=" + m.group(1))  # '=': a revision that starts with '-' stays the option's value
        spec = m.group(2)
    if command != "deref" and rng.random() < 0.3:
        cmd.append("--json")
    if command in ("search", "diff") and rng.random() < 0.3:
        cmd.append(f"--budget={rng.choice(['0', '1', '50', '-1', '1000000000000', '1' + '0' * 20, 'x'])}")
    cmd += ["--", spec]
    with LIVE_LOCK:
        if STOPPING:
            return
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/")
        LIVE.add(proc)
    try:
        stdout, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        H.kill(proc, grace=2)
        report.fail("cli", f"no answer within {timeout:.0f} s (killed)", shown(name))
        report.out("cli", "timeout", name)
        return
    finally:
        with LIVE_LOCK:
            LIVE.discard(proc)
    report.answered("cli")
    rc = proc.returncode
    if marker in stdout or marker in err:
        report.fail("cli", "content from outside the tree (the secret marker)", shown(name))
    if rc < 0:
        report.out("cli", f"killed by signal {-rc}", name)
        report.fail("cli", f"killed by signal {-rc}", shown(name))
        return
    report.out("cli", f"{command}: exit {rc}", name)
    if b"Traceback" in err:
        last = err.decode(errors="replace").strip().splitlines()[-1]
        report.fail("cli", "traceback on stderr", f"{shown(name)} -> {last[:200]}")
        return
    if rc == 0:
        return
    if rc != 2:
        report.fail("cli", f"exit {rc} (not 0 or 2)", f"{shown(name)}: {err[:200]!r}")
        return
    lines = err.split(b"\n")
    prefix = f"nasfs {command}: ".encode()
    if not (len(lines) == 2 and lines[1] == b"" and lines[0].startswith(prefix) and len(lines[0]) > len(prefix)):
        report.fail("cli", f"exit 2 without exactly one 'nasfs {command}: ...' line on stderr", f"{shown(name)}: {err[:300]!r}")


LIVE: set[subprocess.Popen] = set()  # CLI processes running now: ended at exit with the rest
LIVE_LOCK = threading.Lock()
STOPPING = False


def end_live() -> None:
    global STOPPING
    with LIVE_LOCK:
        STOPPING = True  # no new ones
        procs = list(LIVE)
    for proc in procs:
        H.kill(proc, grace=2)


def run_cli(names: list[bytes], sample: list[int], src: Path, cache: Path, marker: str, args, report: Report) -> None:
    C.on_exit(end_live)
    env = C.child_env(NASFS_CACHE_DIR=str(cache))
    todo = list(reversed(sample))
    lock = threading.Lock()

    def lane() -> None:  # daemon threads, so Ctrl-C or SIGTERM ends the run at once
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop()
            cli_one(i, names[i], args.seed, src, env, marker.encode(), max(60.0, args.timeout), report)

    lanes = [threading.Thread(target=lane, daemon=True) for _ in range(2)]
    for t in lanes:
        t.start()
    for t in lanes:
        t.join()


# -- the HTTP door --------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, src: Path, cache: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        with open(log, "ab") as fh:
            self.proc = subprocess.Popen([str(C.PY), "-P", "-m", "nasfs", "serve", "--repo", str(src), "--node", "box", "--tree", "t",
                                          "--listen", f"127.0.0.1:{self.port}"], stdout=fh, stderr=subprocess.STDOUT,
                                         env=C.child_env(NASFS_CACHE_DIR=str(cache)), cwd="/")
        C.on_exit(lambda: H.kill(self.proc))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nasfs serve exited {self.proc.returncode}: {log.read_text()[-1500:]}")
            if self.health() is None:
                return
            time.sleep(0.1)
        raise RuntimeError(f"nasfs serve did not answer in 60 s: {log.read_text()[-1500:]}")

    def health(self) -> str | None:
        """None when GET /v1/health says ok, else what went wrong."""
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            c.request("GET", "/v1/health")
            r = c.getresponse()
            body = r.read()
            c.close()
            return None if r.status == 200 and json.loads(body).get("status") == "ok" else f"{r.status} {body[:200]!r}"
        except (OSError, ValueError, http.client.HTTPException) as exc:
            return str(exc)


ODD_BUDGETS = [0, 1, 10, 200, 10**12, 10**15, 10**15 + 1, -1, 10**30, 1.5, "12", True, None, [], {}]
ENDPOINTS = {b"search": ("/v1/search", "query"), b"deref": ("/v1/evidence/dereference", "pointer"), b"diff": ("/v1/diff", "range")}


def http_request(i: int, name: bytes, seed: int) -> tuple[str, bytes]:
    """The request for a name: POST /v1/files/read with {path}, {path, view},
    {path, view, budget_tokens}, {path, at}, or raw bytes that are not JSON;
    a .nas/search|deref|diff/REST name half the time to its own endpoint."""
    rng = random.Random(seed * 104729 + i)
    text = name.decode("utf-8", "surrogateescape")
    side = SIDE.fullmatch(name)
    if side and rng.random() < 0.6:
        url, field = ENDPOINTS[side.group(1)]
        rest = side.group(2).decode("utf-8", "surrogateescape")
        body = {field: rest}
        if field != "pointer" and rng.random() < 0.4:
            body["budget_tokens"] = rng.choice(ODD_BUDGETS)
        return url, json.dumps(body).encode()
    return "/v1/files/read", http_body(rng, name, text)


def http_body(rng: random.Random, name: bytes, text: str) -> bytes:
    roll = rng.random()
    if roll < 0.03:  # bytes as they are: invalid UTF-8 and control characters are not JSON
        return b'{"path": "' + name + b'"}'
    body: dict = {"path": text}
    folder, _, leaf = text.rpartition("/")
    if roll < 0.35 and "@" in leaf:
        left, _, view = leaf.partition("@")
        body = {"path": f"{folder}/{left}" if folder else left, "view": view}
        if rng.random() < 0.35:
            body["budget_tokens"] = rng.choice(ODD_BUDGETS)
    elif roll < 0.45 and (m := AT_NAME.fullmatch(name)):
        body = {"path": m.group(2).decode("utf-8", "surrogateescape"), "at": m.group(1).decode("utf-8", "surrogateescape")}
    return json.dumps(body).encode()


def run_http(names: list[bytes], sample: list[int], server: Server, marker: str, args, report: Report) -> None:
    mark = marker.encode()
    stop = threading.Event()

    def lane(part: list[int]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=args.timeout)
        for n, i in enumerate(part):
            if stop.is_set():
                return
            name = names[i]
            url, body = http_request(i, name, args.seed)
            try:
                conn.request("POST", url, body=body, headers={"content-type": "application/json"})
                r = conn.getresponse()
                raw = r.read()
            except TimeoutError:
                report.fail("http", f"no answer within {args.timeout:.0f} s", shown(name))
                stop.set()
                return
            except (OSError, http.client.HTTPException) as exc:
                alive = server.proc.poll() is None
                report.fail("http", "server death" if not alive else f"connection error ({type(exc).__name__})", f"{shown(name)}: {exc}")
                if not alive:
                    stop.set()
                    return
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=args.timeout)
                continue
            report.answered("http")
            status = r.status
            report.out("http", f"{url.rsplit('/', 1)[-1]}: {status}", name)
            if mark in raw:
                report.fail("http", "content from outside the tree (the secret marker)", shown(name))
            try:
                obj = json.loads(raw)
            except ValueError:
                report.fail("http", f"{status} with a body that is not JSON", f"{shown(name)}: {raw[:200]!r}")
                continue
            if status >= 500:
                report.fail("http", f"{status} ({obj.get('error') if isinstance(obj, dict) else '?'})", f"{shown(name)} body {body[:200]!r}")
            elif status == 200:
                if not (isinstance(obj, dict) and "content" in obj and ("view" in obj or url.endswith("dereference"))):
                    report.fail("http", "200 without an envelope", f"{shown(name)}: {raw[:200]!r}")
            elif 400 <= status < 500:
                if not (isinstance(obj, dict) and isinstance(obj.get("error"), str) and isinstance(obj.get("detail"), str) and obj["detail"]):
                    report.fail("http", f"{status} without error and detail", f"{shown(name)}: {raw[:200]!r}")
            else:
                report.fail("http", f"unexpected status {status}", shown(name))
            if (n + 1) % args.check_every == 0:
                why = server.health()
                if why is not None:
                    report.fail("http", "server death (health check failed)", f"after {shown(name)}: {why}")
                    stop.set()
                    return
        conn.close()

    lanes = [sample[0::2], sample[1::2]]
    threads = [threading.Thread(target=lane, args=(p,), daemon=True) for p in lanes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# -- main ---------------------------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000, help="names generated")
    ap.add_argument("--seed", type=int, default=None, help="seed of the names (default: from the clock, printed)")
    ap.add_argument("--doors", default="mount,cli,http", help="comma-separated: mount, cli, http")
    ap.add_argument("--cli-sample", type=int, default=None, help="names sent through the CLI (default 1%% of --count, at least 300)")
    ap.add_argument("--http-sample", type=int, default=None, help="names sent over HTTP (default all)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds an operation may take before it is a hang")
    ap.add_argument("--check-every", type=int, default=1000, help="names between liveness checks")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (the mount is always removed)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = int(time.time() * 1000) % 1_000_000
    doors = [d.strip() for d in args.doors.split(",") if d.strip()]
    unknown = set(doors) - {"mount", "cli", "http"}
    if unknown:
        ap.error(f"unknown door {sorted(unknown)[0]!r}; valid: mount, cli, http")

    C.banner("nasfs fuzz of names through the mount, the CLI and HTTP")
    print(f"seed: {args.seed} (reproduce with --seed {args.seed} --count {args.count})")
    rng = random.Random(args.seed)
    token = "%016x" % rng.getrandbits(64)
    half = "nasfs-secret"
    marker = f"{half}-{token}"  # names hold 'nasfs-secret' at most, never the token
    work = C.workdir("fuzz", args.keep)
    tree = build_tree(work, marker)
    src = tree["src"]
    t = time.perf_counter()
    names, cats = generate(args.count, args.seed, tree, half)
    assert not any(token.encode() in n for n in names)
    names_file = work / "names.bin"
    write_names(names_file, names)
    cat_counts = Counter(cats)
    print(f"tree: {src} (demo + odd names and symlinks; outside it {tree['outside']} holds the marker); "
          f"commits {tree['first'][:12]} (v1), {tree['second'][:12]} (main)")
    print(f"names: {len(names):,} ({len(set(names)):,} distinct) in {time.perf_counter() - t:.1f} s: "
          + ", ".join(f"{c} {n:,}" for c, n in cat_counts.most_common()))
    pick = random.Random(args.seed + 1)
    cli_n = min(len(names), args.cli_sample if args.cli_sample is not None else max(300, len(names) // 100))
    cli_sample = sorted(pick.sample(range(len(names)), cli_n))
    http_n = min(len(names), args.http_sample if args.http_sample is not None else len(names))
    http_sample = sorted(pick.sample(range(len(names)), http_n)) if http_n < len(names) else list(range(len(names)))
    report = Report()

    m = server = None
    if "mount" in doors:
        m = H.mount(src, work / "mnt", work / "mount.log", work / "cache-mount")
        print(f"mount: {m.mountpoint} (daemon pid {m.pid}): all {len(names):,} names, stat and open+read each "
              "(then readdir of folders, xattrs of files), by openat2 RESOLVE_BENEATH")
    if "cli" in doors:
        print(f"cli: {len(cli_sample):,} names (nasfs read|search|deref|diff --repo SRC [--json] [--at=REV] -- NAME), 2 at a time")
    if "http" in doors:
        server = Server(src, work / "cache-http", work / "serve.log")
        print(f"http: {len(http_sample):,} names to 127.0.0.1:{server.port} (pid {server.proc.pid}) over 2 connections")
    print(flush=True)

    timings: dict[str, float] = {}

    def timed(door: str, fn, *a) -> None:
        t0 = time.perf_counter()
        try:
            fn(*a)
        except Exception as exc:  # a bug of this script, reported as such
            report.fail(door, f"fuzz.py itself failed: {type(exc).__name__}", str(exc)[:300])
        timings[door] = time.perf_counter() - t0

    jobs = []
    if m is not None:
        jobs.append(threading.Thread(target=timed, args=("mount", run_mount, names, names_file, m, marker, args, report)))
    if "cli" in doors:
        jobs.append(threading.Thread(target=timed, args=("cli", run_cli, names, cli_sample, src, work / "cache-cli", marker, args, report)))
    if server is not None:
        jobs.append(threading.Thread(target=timed, args=("http", run_http, names, http_sample, server, marker, args, report)))
    for j in jobs:
        j.daemon = True  # Ctrl-C or SIGTERM: the cleanups run at once, not after the doors finish
        j.start()
    for j in jobs:
        j.join()

    # -- the end: alive, readable, no internal errors, no tracebacks
    if m is not None:
        hung = any(k[0] == "mount" and k[1].startswith("hang") for k in report.fail_counts)
        if not H.alive(m.pid):
            report.fail("mount", "daemon death (gone at the end)", m.log.read_text(errors="replace")[-300:])
        elif not hung:
            try:
                help_ok = subprocess.run(["head", "-c", "6", str(m.mountpoint / ".nas" / "HELP")], capture_output=True,
                                         timeout=args.timeout).stdout == b"nasfs:"
                stats = subprocess.run(["cat", str(m.mountpoint / ".nas" / "stats")], capture_output=True, timeout=args.timeout).stdout.decode()
            except subprocess.TimeoutExpired:
                help_ok, stats = False, ""
                print("mount: " + H.abort_connection(m.mountpoint))
            if not help_ok:
                report.fail("mount", "daemon death (.nas/HELP unreadable at the end)", "")
            found = re.search(r"internal_errors=(\d+)", stats)
            internal = int(found.group(1)) if found else -1
            print(f"mount: at the end .nas/HELP {'readable' if help_ok else 'NOT readable'}, internal_errors={internal if internal >= 0 else '?'}")
            if internal:
                report.fail("mount", "internal errors (EIO) counted in .nas/stats", f"internal_errors={internal}")
        m.stop()
        for exc, n in exceptions(m.log.read_text(errors="replace")).items():
            for _ in range(n):
                report.fail("mount", "traceback in the daemon's log", exc)
    if server is not None:
        why = server.health() if server.proc.poll() is None else "the server exited"
        print(f"http: at the end /v1/health {'ok' if why is None else why}")
        if why is not None:
            report.fail("http", "server death (at the end)", why)
        H.kill(server.proc)
        for exc, n in exceptions(server.log.read_text(errors="replace")).items():
            for _ in range(n):
                report.fail("http", "traceback in the server's log", exc)

    # -- the report
    print()
    for door in doors:
        rows = [[k, n, report.example.get((door, k), "")]
                for k, n in sorted(report.outcomes[door].items(), key=lambda kv: (kv[0].split(":")[0], -kv[1]))]
        C.table([f"{door}: outcome", "count", "first name with it"], rows,
                title=f"{door}: {report.sent[door]:,} names answered in {timings.get(door, 0):.0f} s")
    rows = [[door, what, n, " | ".join(report.failures[(door, what)])[:400]] for (door, what), n in sorted(report.fail_counts.items())]
    if rows:
        C.table(["door", "failure", "count", "examples"], rows, title="failures")
    total = sum(report.fail_counts.values())
    print(f"seed {args.seed}, {len(names):,} names: " + ("PASS: no failure in any door" if not total else f"FAIL: {total} failures"))
    return 1 if total else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--mount-worker":
        mount_worker(sys.argv[2:])
        sys.exit(0)
    code = main()
    C.finish()
    sys.exit(code)
