"""What reading each commit through its own objects costs: reads at a revision, an earlier checkout against this one.

    git archive main | tar -x -C /tmp/nasfs-main     # or any commit
    .venv/bin/python scripts/bench/at_reads.py /tmp/nasfs-main [--files 200] [--runs 5]

A tree of --files small Markdown files in public/ (0755, committed) and as
many in private/ (0700, each recorded as a private snapshot of its own in
root's store: root's files, enough for the audience to be judged narrower
than .git's). Each run, in a new process for each side in turn (the order
reversed every other run), times ``Nas.read(path@outline, at=commit)`` of
every public file at HEAD (.git/objects) and of every private file at its
snapshot (a private store), and ``GitTree.item_at`` of each (what a lookup in
``.at/<commit>/`` asks). Prints the median per side and after/before ratios.
The "before" side imports nasfs from BEFORE (PYTHONPATH). Run as root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SETUP = r"""
import sys
from nasfs.repo import GitTree
root, files = sys.argv[1], int(sys.argv[2])
tree = GitTree(root)
for i in range(files):
    print(f"private/f{i}.md", tree.working(f"private/f{i}.md").commit)
"""

CHILD = r"""
import sys, time
from nasfs.repo import GitTree
from nasfs.service import Nas
root, files = sys.argv[1], int(sys.argv[2])
private = dict(line.split() for line in open(sys.argv[3]))
nas = Nas(GitTree(root))
head = str(nas.tree.head().id)
public = {f"public/f{i}.md": head for i in range(files)}
out = []
for reads in (public, private):
    t = time.perf_counter()
    for path, commit in reads.items():
        nas.read(f"{path}@outline", at=commit)
    out.append(time.perf_counter() - t)
t = time.perf_counter()
for reads in (public, private):
    for path, commit in reads.items():
        nas.tree.item_at(commit, path)
out.append(time.perf_counter() - t)
print(*out)
"""

KINDS = ("read at HEAD", "read at a private snapshot", "item_at, both")


def run(python: str, code: str, pythonpath: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=pythonpath, NASFS_CACHE_DIR=tempfile.mkdtemp(prefix="nasfs-bench-cache-"))
    try:
        return subprocess.run([python, "-c", code, *args], env=env, check=True, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(env["NASFS_CACHE_DIR"], ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout (or an exported commit) holding nasfs/")
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    after = str(Path(__file__).resolve().parents[2])
    work = Path(tempfile.mkdtemp(prefix="nasfs-at-reads-"))
    try:
        root = work / "t"
        for side in ("public", "private"):
            (root / side).mkdir(parents=True)
            for i in range(args.files):
                body = "".join(f"## Section {j}\n\ntext {i} {j}\n\n" for j in range(20))
                (root / side / f"f{i}.md").write_text(f"# File {i}\n\n{body}")
        git = ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "public"], check=True)
        subprocess.run([*git, "commit", "-qm", "public"], check=True)
        os.chmod(root / "private", 0o700)
        os.chmod(work, 0o755)
        snapshots = work / "snapshots.txt"
        snapshots.write_text(run(sys.executable, SETUP, after, str(root), str(args.files)))
        times: dict[str, list[list[float]]] = {"before": [], "after": []}
        for r in range(args.runs):
            for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
                path = str(args.before) if side == "before" else after
                out = run(sys.executable, CHILD, path, str(root), str(args.files), str(snapshots))
                times[side].append([float(x) for x in out.split()])
        for k, kind in enumerate(KINDS):
            before = statistics.median(t[k] for t in times["before"])
            now = statistics.median(t[k] for t in times["after"])
            per = 2 * args.files if k == 2 else args.files
            print(f"{kind:28} before {before * 1e3 / per:7.3f} ms  after {now * 1e3 / per:7.3f} ms  "
                  f"(per read, median of {args.runs})  after/before {now / before:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
