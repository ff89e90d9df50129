"""A big Markdown file's outline, in process: an earlier checkout against this one.

    git archive main | tar -x -C /tmp/nasfs-main     # or any commit
    .venv/bin/python scripts/bench/markdown_outline.py /tmp/nasfs-main [--mb 48] [--runs 3] [--profile]

Writes --mb MB of generated Markdown (tools.py's slow/huge.md: a heading every
~20 paragraphs) under /tmp, then outlines it in a new process per run, the
way a mount's worker outlines a file too large to hold (1 MiB chunks into
``outline_markdown_stream``), BEFORE's nasfs (PYTHONPATH, this venv's
packages) and this checkout's in turn, --runs times each. Printed: CPU
seconds of the outline alone per run, the median of each side and their
ratio, with the load average; and the sha256 of each side's rendered outline,
which must be the same. --profile adds one cProfile run of each side: calls
in all, and calls of ``logging.Logger.debug`` and ``isEnabledFor``, the cost
of markdown-it's debug records. The file is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from tools import huge_markdown  # noqa: E402

CHILD = r"""
import cProfile, hashlib, json, pstats, sys, time
from nasfs.outline.markdown import outline_markdown_stream

def chunks():
    with open(sys.argv[1], "rb") as fh:
        while block := fh.read(1 << 20):
            yield block

profile = cProfile.Profile() if sys.argv[2] == "profile" else None
t = time.process_time()
if profile:
    profile.enable()
outline = outline_markdown_stream(chunks())
if profile:
    profile.disable()
cpu = time.process_time() - t
out = {"cpu": cpu, "entries": len(outline.entries), "sha256": hashlib.sha256(outline.render().encode()).hexdigest()}
if profile:
    stats = pstats.Stats(profile).stats
    out["calls"] = sum(v[1] for v in stats.values())
    out["debug_calls"] = sum(v[1] for k, v in stats.items() if k[2] in ("debug", "isEnabledFor") and k[0].endswith("logging/__init__.py"))
print(json.dumps(out))
"""


def outline_once(path: Path, env: dict[str, str], profile: bool = False) -> dict[str, object]:
    done = subprocess.run([str(C.PY), "-c", CHILD, str(path), "profile" if profile else "time"], env=env, cwd="/",
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout (or an exported commit) holding nasfs/")
    ap.add_argument("--mb", type=int, default=48, help="size of the generated Markdown file (MB)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per side (median)")
    ap.add_argument("--profile", action="store_true", help="one cProfile run per side: calls, and debug-record calls")
    args = ap.parse_args()
    if not (args.before / "nasfs" / "__init__.py").is_file():
        sys.exit(f"{args.before}: no nasfs/ package there (export a commit of this repository there first)")
    C.banner("a big Markdown file's outline in process, before vs after, runs alternating")
    work = C.workdir("markdown-outline")
    path = work / "huge.md"
    size = huge_markdown(path, args.mb)
    print(f"file: {path}, {size / 1e6:.1f} MB (tools.py's generator); before: nasfs from {args.before.resolve()}\n")
    envs = {"before": C.child_env(PYTHONPATH=str(args.before.resolve())), "after": C.child_env()}
    envs["after"].pop("PYTHONPATH", None)
    runs: dict[str, list[dict[str, object]]] = {s: [] for s in envs}
    loads = [f"{os.getloadavg()[0]:.2f}"]
    for _ in range(args.runs):
        for side, env in envs.items():
            runs[side].append(outline_once(path, env))
        loads.append(f"{os.getloadavg()[0]:.2f}")
    med = {s: C.median([float(r["cpu"]) for r in runs[s]]) for s in runs}
    rows = [[s, " ".join(f"{float(r['cpu']):.2f}" for r in runs[s]), f"{med[s]:.2f}", C.ratio(med[s], med["before"]),
             runs[s][0]["entries"], str(runs[s][0]["sha256"])[:16]] for s in runs]
    C.table(["side", "CPU s per run", "median", "vs before", "entries", "sha256 of the outline"], rows,
            title=f"outline of {size / 1e6:.0f} MB of Markdown, CPU of the outline alone (load {' -> '.join(loads)})")
    digests = {str(r["sha256"]) for side in runs.values() for r in side}
    print(f"outlines identical across sides and runs: {'yes' if len(digests) == 1 else 'NO: ' + ', '.join(sorted(digests))}")
    if args.profile:
        prof = {s: outline_once(path, env, profile=True) for s, env in envs.items()}
        C.table(["side", "CPU s under cProfile", "calls", "Logger.debug + isEnabledFor calls"],
                [[s, f"{float(p['cpu']):.2f}", f"{p['calls']:,}", f"{p['debug_calls']:,}"] for s, p in prof.items()],
                title="one cProfile run per side")


if __name__ == "__main__":
    main()
    C.finish()
