"""Reproductions of the ways the mount can still wedge for good through a
folder swapped for a symlink into the mount itself (docs/mount.md, "Still
open"); not a test: each hangs only some of the time, or on purpose, and a
test that hangs costs CI its timeout. Every hung mount's FUSE connection is
aborted, so nothing stays stuck. Run as root from the repository:

    .venv/bin/python scripts/bench/core_wedge.py maps [--runs 5]
    .venv/bin/python scripts/bench/core_wedge.py same-name

``maps``: tests/test_loop_walk.py's race (``d`` swapped in a tight loop for
a link to the mount's own ``.at/HEAD/d``) with readers of the folder map
``d@outline``, a search ``in:d``, the diff and a view of an edited file.
libgit2's status and ``path_is_ignored`` (a map's ``worktree_state`` and
walk) read the tree by path holding Python's GIL: through the link they
wait on this daemon, whose request loop cannot run. Seen: 3 runs hung in 5.

``same-name``: the last guard (a FUSE request of the thread running a core
call is ENOENT at once: fuse/virtual._as_core, fuse/ops.fuse_op) never sees
a wait the kernel makes that thread do on another thread's request: here a
lookup of the same name, in flight and waiting for this core call. Hangs
every time.

Exit status 1 when a run hung.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.conftest import git  # noqa: E402
from tests.mounts import communicate_on_mount  # noqa: E402
from tests.summary_servers import CITING_SCRIPT  # noqa: E402
from tests.test_core_walk import CORE_STAT  # noqa: E402
from tests.test_loop_walk import race_on_mount, reader_of  # noqa: E402

MAPS = reader_of('cat "$1/.nas/search/words in:d"', 'cat "$1/d@outline"', 'cat "$1/.nas/diff/HEAD"',
                 'cat "$1/d/x.md@outline"')

IN_CORE = r"""
import threading, time

def in_core():
    threading.Thread(target=stat_view, daemon=True).start()
    time.sleep(1)  # the other thread's lookup of the name is in flight, waiting for this very core call
    return stat_view()  # the kernel has this thread wait for that lookup: no request of its own

"""
# tests/test_core_walk.py's daemon, whose core call stats a view of its own mount: here while
# another thread's lookup of that view is in flight
SAME_NAME = CORE_STAT.replace("async def main", f"{IN_CORE}async def main").replace("ops.core(stat_view)", "ops.core(in_core)")


def maps(runs: int) -> int:
    hung = 0
    script = Path(tempfile.mkdtemp(prefix="nasfs-core-wedge-")) / "cite.py"
    script.write_text(CITING_SCRIPT)
    try:
        for n in range(1, runs + 1):
            base = Path(tempfile.mkdtemp(prefix="nasfs-core-wedge-"))
            os.chmod(base, 0o755)
            try:
                race_on_mount(base, ".at/HEAD/d", MAPS, "--no-warm", "--summarizer", f"{sys.executable} {script}",
                              dirty=True, least=1, after=(("d/x.md@outline", "# X"), ("d@outline", "d/x.md")))
                print(f"run {n}: answered throughout", flush=True)
            except AssertionError as exc:
                hung += "hung" in str(exc)
                print(f"run {n}: {exc}", flush=True)
            finally:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        shutil.rmtree(script.parent, ignore_errors=True)
    print(f"{hung} of {runs} runs hung")
    return hung


def same_name() -> int:
    base = Path(tempfile.mkdtemp(prefix="nasfs-core-wedge-"))
    try:
        root, mnt = base / "tree", base / "mnt"
        (root / "d").mkdir(parents=True)
        mnt.mkdir()
        (root / "d" / "x.md").write_text("# X\n\nwords\n")
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "one")
        try:
            _, out, err = communicate_on_mount(mnt, ["env", f"PYTHONPATH={REPO}", sys.executable, "-c", SAME_NAME,
                                                     str(root), str(mnt)], 20, "a core call's stat of a name in flight")
        except AssertionError as exc:
            print(f"hung: the core thread waited for another thread's lookup of the same name ({exc})")
            return 1
        finally:
            subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
        print(out.strip(), err.strip()[-2000:])
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("maps").add_argument("--runs", type=int, default=5)
    sub.add_parser("same-name")
    args = parser.parse_args()
    hung = maps(args.runs) if args.what == "maps" else same_name()
    return 1 if hung else 0


if __name__ == "__main__":
    sys.exit(main())
