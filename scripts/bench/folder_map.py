"""Benchmark of folder maps (issue 10 §4): the root's map of a large tree, cold and warm.

    .venv/bin/python scripts/bench/folder_map.py [TREE] [--files 20000] [--budgets 2000,8000] [--runs 5] [--keep]

TREE is a git work tree to map (left untouched: it is copied into a temp
folder first when it is not a git repository). Without it, a tree of at least
--files files is made under /tmp from copies of this Python's standard library
(or generated files when that is not there), committed once.

For each budget it times ``Nas.read('.@N')``:

- after ``nasfs index``: a fresh disk cache filled by ``nasfs index`` (a
  process, timed too), then a fresh Nas: what the first map costs after an
  index (its answer checked to be the cold one's, byte for byte);
- cold: a fresh disk cache and a fresh Nas (every file is read once to rank it);
- warm, new Nas: the disk cache of the cold run, nothing in memory (what a
  one-shot ``nasfs read`` pays beyond starting Python);
- warm, same Nas: memory and disk warm (a mount, ``nasfs serve``, ``nasfs mcp``);
- after an edit: one file changed, same Nas (only it is read again);
- ``nasfs read .@N`` as a whole process, warm (Python start-up included).

The baseline, measured in the same run, is walking the tree with ``os.scandir``
and ``lstat`` of every file (no ignore rules, no reading): what any view that
sees the tree's changes must pay at least. Target: warm, and after
``nasfs index``, under 1 s for 20,000 files. Every answer is checked to be
within its budget.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

TARGET_S = 1.0


def stdlib_tree(root: Path, files: int) -> int:
    """Copies of the standard library under ``root`` until it holds ``files`` files."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    made = copy = 0
    while made < files:
        copy += 1
        target = root / f"copy{copy:02d}"
        shutil.copytree(lib, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "site-packages", "*.pyc"))
        made = sum(len(f) for _, _, f in os.walk(root) if ".git" not in _)
        if copy == 1 and made < 50:  # no usable standard library here
            shutil.rmtree(target)
            C.gen_tree(root, files)
            return sum(len(f) for _, _, f in os.walk(root))
    return made


def baseline_walk(root: Path) -> int:
    n = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.name == ".git":
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    e.stat(follow_symlinks=False)
                    n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", nargs="?", help="a git work tree to map (default: a generated one)")
    ap.add_argument("--files", type=int, default=20000, help="files of the generated tree (default 20000)")
    ap.add_argument("--budgets", default="2000,8000", help="comma-separated budgets (default 2000,8000)")
    ap.add_argument("--runs", type=int, default=5, help="warm runs per measure (median)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    C.banner("folder maps: the root's map, cold and warm")

    work = C.workdir("fmap", args.keep)
    if args.tree:
        root = Path(args.tree).resolve()
        if not (root / ".git").exists():
            copy = work / "tree"
            shutil.copytree(root, copy, symlinks=True)
            C.make_repo(copy)
            root = copy
    else:
        root = work / "tree"
        root.mkdir()
        stdlib_tree(root, args.files)
        C.make_repo(root)
    cache = work / "cache"
    os.environ["NASFS_CACHE_DIR"] = str(cache)

    from nasfs import tokens as tok
    from nasfs.cache import DiskCache
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    def forget_memory() -> None:
        from nasfs import folder_map, folders

        folder_map._RANKER = folders.Ranker()
        folders._DECIDED = folders.LRU(100_000)

    def fresh() -> Nas:
        disk = DiskCache(cache)
        return Nas(GitTree(root, hashes=disk), disk=disk)

    walk_times = [C.timed(lambda: baseline_walk(root)) for _ in range(args.runs)]
    n_files = baseline_walk(root)
    base = C.median(walk_times)
    print(f"tree: {root} ({n_files} files); baseline walk (scandir + lstat of every file): {C.ms(base)}")
    print()

    rows = []
    edited = next(p for p in sorted(root.rglob("*.py")) if ".git" not in p.parts)
    for budget in budgets:
        spec = f".@{budget}"
        shutil.rmtree(cache, ignore_errors=True)
        # -P: the nasfs of PYTHONPATH when it is set (an older checkout), not the one in the current folder
        indexing = C.run_timed([C.PY, "-P", "-m", "nasfs", "index", "--quiet", root])[0]
        forget_memory()
        indexed = []
        after_index = C.timed(lambda: indexed.append(fresh().read(spec)))
        shutil.rmtree(cache, ignore_errors=True)
        forget_memory()  # cold: nothing this process learnt for the budget before either
        nas = fresh()
        answers = []
        cold = C.timed(lambda: answers.append(nas.read(spec)))
        assert indexed[0].text == answers[0].text, "the map after nasfs index is not the cold one"
        warm_new = C.median([C.timed(lambda: answers.append(fresh().read(spec))) for _ in range(args.runs)])
        warm_same = C.median([C.timed(lambda: answers.append(nas.read(spec))) for _ in range(args.runs)])
        edits = []
        for i in range(args.runs):
            edited.write_text(edited.read_text() + f"\n# edit {i}\n")
            edits.append(C.timed(lambda: answers.append(nas.read(spec))))
        after_edit = C.median(edits)
        time.sleep(2.1)  # the files settle, so the disk cache keeps the maps of them
        nas.read(spec)
        cli = C.median([C.run_timed([C.PY, "-m", "nasfs", "read", spec], cwd=root)[0] for _ in range(args.runs)])
        worst = max(tok.count(a.text) for a in answers)
        assert all(tok.count(a.text) == a.tokens <= budget for a in answers), "over budget"
        head = answers[-1].header
        shown = dict(kv.split("=", 1) for kv in head.split(" ")[1:])
        rows.append([budget, C.ms(indexing), C.ms(after_index), C.ms(cold), C.ms(warm_new), C.ratio(warm_new, base),
                     C.ms(warm_same), C.ms(after_edit),
                     C.ms(cli), f"{worst}", f"{shown.get('view')}/{shown.get('detail', '-')} {shown.get('shown', '-')}/{shown.get('files', '-')}",
                     C.verdict(warm_new < TARGET_S), C.verdict(after_index < TARGET_S)])
    C.table(["budget", "nasfs index", "after index", "cold", "warm (new Nas)", "vs walk", "warm (same Nas)", "after 1 edit",
             "nasfs read (process)", "max tokens", "served", f"warm < {TARGET_S:g} s", f"after index < {TARGET_S:g} s"], rows)
    print("nasfs index: the process, on a fresh cache; after index: the first map then (new Nas); "
          "cold: fresh cache; warm (new Nas): the disk cache of the cold run, nothing in memory; "
          "same Nas: a long-running door; after 1 edit: one file changed before each read; "
          "nasfs read: the whole process, median of runs")
    print("profile of a warm read (new Nas):")
    print(C.profile_top(lambda: fresh().read(f".@{budgets[-1]}"), n=12))  # remembered after the edits above
    C.finish()


if __name__ == "__main__":
    main()
