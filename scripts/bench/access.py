"""What the one access decision (nasfs/access.py) costs a door: one
``decider(root, caller).check(path)`` for a file N folders deep, as root (no
walk) and as another account (one lstat per folder and the file), against
one ``os.stat`` of the same file in the same run. Every view a door serves
asks it at least once (the mount: at each lookup and open).

    .venv/bin/python scripts/bench/access.py [--depth 4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
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
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 5,000 calls each; the median is shown")
    args = parser.parse_args()
    C.banner("the access decision per path")
    root = C.workdir("access")
    os.chmod(root, 0o755)
    rel = "/".join(f"d{i}" for i in range(args.depth)) + "/f.md"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_text("# f\n")
    other = Caller(os.getuid() + 64000, os.getgid() + 64000)  # an account that owns nothing here: 'other' bits
    cases = {"os.stat (baseline)": lambda: os.stat(root / rel),
             "check as root": lambda: decider(root, Caller.root()).check(rel),
             "check as another account": lambda: decider(root, other).check(rel)}
    n = 5000
    times = {name: C.median([timeit.timeit(fn, number=n) / n for _ in range(args.rounds)]) for name, fn in cases.items()}
    base = times["os.stat (baseline)"]
    C.table(["call", "per call", "vs os.stat"], [(name, f"{t * 1e6:.1f} us", C.ratio(t, base)) for name, t in times.items()],
            f"a file {args.depth} folders deep")
    C.finish()


if __name__ == "__main__":
    main()
