"""What deciding a snapshot's store costs: views' commits of changed files, an earlier checkout against this one.

    git archive main | tar -x -C /tmp/nasfs-main     # or any commit
    .venv/bin/python scripts/bench/snapshots.py /tmp/nasfs-main [--files 300] [--runs 5]

A tree of --files small files in public/ (0755) and as many in private/
(0700), all committed, then all changed. Each run, in a new process for each
side in turn (the order reversed every other run), times ``GitTree.working``
of every changed file twice: first (each makes its snapshot commit) and again
(each finds it). Prints the median per side and after/before ratios. The
"before" side imports nasfs from BEFORE (PYTHONPATH). Run as root (the
private files are another account's in a real NAS; here root's, which is
enough for the audience to be judged narrower than .git's).
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

CHILD = r"""
import sys, time
from nasfs.repo import GitTree
root, files = sys.argv[1], int(sys.argv[2])
paths = [f"{side}/f{i}.md" for side in ("public", "private") for i in range(files)]
out = []
for _ in range(2):
    tree = GitTree(root)
    t = time.perf_counter()
    for p in paths:
        tree.working(p)
    out.append(time.perf_counter() - t)
print(*out)
"""


def make_tree(base: Path, files: int) -> Path:
    root = base / "t"
    for side in ("public", "private"):
        (root / side).mkdir(parents=True)
        for i in range(files):
            (root / side / f"f{i}.md").write_text(f"# {side} {i}\n\nbody\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(["git", *cmd], cwd=root, env=env, check=True)
    os.chmod(root / "private", 0o700)
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout (or an exported commit) holding nasfs/")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="nasfs-bench-snap-", dir="/tmp"))
    os.chmod(base, 0o755)
    here = str(Path(__file__).resolve().parents[2])
    sides = {"before": str(args.before.resolve()), "after": here}
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    try:
        for run in range(args.runs):
            for side in (("before", "after") if run % 2 == 0 else ("after", "before")):
                root = make_tree(base / f"{side}{run}", args.files)
                for p in root.glob("*/f*.md"):
                    p.write_text(p.read_text() + "changed\n")
                env = dict(os.environ, PYTHONPATH=sides[side], NASFS_CACHE_DIR=str(base / f"cache-{side}{run}"))
                done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(args.files)], env=env,
                                      capture_output=True, text=True, check=True, cwd="/")
                first, again = map(float, done.stdout.split())
                times[side].append((first, again))
        n = 2 * args.files
        for i, what in enumerate(("first (makes snapshots)", "again (finds them)")):
            b = statistics.median(t[i] for t in times["before"])
            a = statistics.median(t[i] for t in times["after"])
            print(f"{what}: {n} files, before {b * 1e3:.0f} ms ({b / n * 1e6:.0f} us/file), "
                  f"after {a * 1e3:.0f} ms ({a / n * 1e6:.0f} us/file), after/before {a / b:.2f}")
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
