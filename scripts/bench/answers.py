"""Are the answers byte-identical before and after a change? Every file's views, both checkouts.

    git archive main | tar -x -C /tmp/nasfs-main     # or any commit
    .venv/bin/python scripts/bench/answers.py /tmp/nasfs-main [TREE] [--views outline,300,2000,L1-L3,outline.json]

For a speed change that must not change what is served. TREE (default: this
Python's standard library, copied and committed as core.py does) is read by
two child processes, one importing nasfs from BEFORE (PYTHONPATH, with this
venv's packages), one from this checkout, each with an empty cache. Each
serves every tracked file in every view of --views twice, computed and then
over its disk cache (a fresh ``Nas`` on the cache the first filled), and
keeps the sha256 of the text answer and of the JSON envelope. Printed: how
many answers agree, and the first differing ones. Exit status 1 when any
differ. Slow by design (every view of every file, twice): minutes for the
standard library.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from core import default_tree, list_files, prepare  # noqa: E402


def child(root: str, files_json: str, views: str, out: str) -> None:
    import hashlib

    from nasfs.cache import DiskCache
    from nasfs.errors import NasError
    from nasfs.grammar import parse_view
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    files = json.load(open(files_json))
    digests: dict[str, list[str]] = {}
    for _ in ("computed", "from the disk cache"):
        nas = Nas(GitTree(root), disk=DiskCache())
        for v in views.split(","):
            for p in files:
                try:
                    r = nas.read_view(p, parse_view(v))
                    d = hashlib.sha256(r.text).hexdigest() + " " + hashlib.sha256(r.envelope_bytes()).hexdigest()
                except NasError as exc:
                    d = f"refused: {exc}"
                digests.setdefault(f"{p}@{v}", []).append(d)
    json.dump(digests, open(out, "w"))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout (or an exported commit) holding nasfs/")
    ap.add_argument("tree", nargs="?", default=default_tree(), help="a tree of files (default: Python's stdlib)")
    ap.add_argument("--views", default="outline,300,2000,L1-L3,outline.json", help="comma-separated views to compare")
    ap.add_argument("--in-place", action="store_true", help="use TREE as it is (a git work tree) instead of a copy")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    args = ap.parse_args()
    if not (args.before / "nasfs" / "__init__.py").is_file():
        sys.exit(f"{args.before}: no nasfs/ package there (export a commit of this repository there first)")
    C.banner("nasfs answers before vs after, every file, every view")
    work = C.workdir("answers", args.keep)
    tree, how = prepare(args, work)
    files = list_files(tree)
    (work / "files.json").write_text(json.dumps(files))
    print(f"tree: {tree} ({how}); {len(files):,} files; views {args.views}\n")
    got = {}
    for side, extra in (("before", {"PYTHONPATH": str(args.before.resolve())}), ("after", {})):
        out = work / f"{side}.json"
        env = C.child_env(NASFS_CACHE_DIR=str(work / f"cache-{side}"), **extra)
        cmd = [str(C.PY), str(Path(__file__).resolve()), "--child", str(tree), str(work / "files.json"), args.views, str(out)]
        subprocess.run(cmd, env=env, check=True, timeout=3600)
        got[side] = json.loads(out.read_text())
    before, after = got["before"], got["after"]
    unstable = [k for side in got.values() for k, v in side.items() if v[0] != v[1]]
    differ = [k for k in before if before[k] != after.get(k)]
    print(f"{len(before) - len(differ):,} of {len(before):,} answers identical (text and JSON envelope, computed and from the disk cache)")
    for k in differ[:10]:
        print(f"  differs: {k}: before {before[k][0][:40]}..., after {after.get(k, ['absent'])[0][:40]}...")
    if unstable:
        print(f"{len(unstable)} answers differ between computed and cached, e.g. {unstable[0]}")
    if differ or unstable:
        sys.exit(1)


if __name__ == "__main__":
    main()
    if sys.argv[1:2] != ["--child"]:
        C.finish()
