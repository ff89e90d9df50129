"""What the one access decision (nasfs/access.py) costs a door: one
``decider(root, caller).check(path)`` for a file N folders deep, as root (no
walk) and as another account (each folder opened from its parent's
descriptor and fstat'ed, the file stat'ed from its folder's: no link
followed by the OS), and ``decide`` again with one Decider kept (a folder
map's: its folders' descriptors kept), against one ``os.stat`` of the same
file in the same run. Every view a door serves asks it at least once (the
mount: at each lookup and open). Run it from an earlier checkout for the
figures before a change (it imports nasfs from the checkout it is in). With
``setfacl``, also a file whose folders and itself have a POSIX ACL.

    .venv/bin/python scripts/bench/access.py [--depth 4] [--rounds 5] [--calls 10000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from nasfs.access import Caller, decider  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=4, help="folders above the file")
    parser.add_argument("--rounds", type=int, default=5, help="rounds the calls are split in; the median is shown")
    parser.add_argument("--calls", type=int, default=10000, help="calls of each kind in all")
    args = parser.parse_args()
    C.banner("the access decision per path")
    root = C.workdir("access")
    os.chmod(root, 0o755)
    rel = "/".join(f"d{i}" for i in range(args.depth)) + "/f.md"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_text("# f\n")
    other = Caller(os.getuid() + 64000, os.getgid() + 64000)  # an account that owns nothing here: 'other' bits
    kept = decider(root, other)
    cases = {"os.stat (baseline)": lambda: os.stat(root / rel),
             "check as root": lambda: decider(root, Caller.root()).check(rel),
             "check as another account": lambda: decider(root, other).check(rel),
             "decide, one Decider kept": lambda: kept.decide(rel)}
    if shutil.which("setfacl"):  # a POSIX ACL on the file and each folder (a Samba share's), judged since nasfs.acl
        with_acl = rel.replace("f.md", "g.md")
        (root / with_acl).write_text("# g\n")
        for here in [with_acl, *(str(p) for p in Path(with_acl).parents if str(p) != ".")]:
            subprocess.run(["setfacl", "-m", f"u:{other.uid + 1}:r-x", str(root / here)], check=True)
        cases["check as another account, ACLs on the way"] = lambda: decider(root, other).check(with_acl)
    n = args.calls // args.rounds
    times = {name: C.median([timeit.timeit(fn, number=n) / n for _ in range(args.rounds)]) for name, fn in cases.items()}
    base = times["os.stat (baseline)"]
    C.table(["call", "per call", "vs os.stat"], [(name, f"{t * 1e6:.1f} us", C.ratio(t, base)) for name, t in times.items()],
            f"a file {args.depth} folders deep")
    C.finish()


if __name__ == "__main__":
    main()
