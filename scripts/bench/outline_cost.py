"""Outline-first reads against whole-file reads, on a corpus of real files (issues 10 and 21).

    .venv/bin/python scripts/bench/outline_cost.py CORPUS [--tasks 150] [--seed 10] [--budget N]
    .venv/bin/python scripts/bench/outline_cost.py CORPUS --named [--tasks 210] [--min-tokens 1000]
    .venv/bin/python scripts/bench/outline_cost.py --make-corpus SRC CORPUS

``--named`` is issue 21's workload (see ``run_named``): look-ups by name in
Markdown, Python, JSON, YAML, YAML streams, TOML and JSON Lines, reading at
most the one follow-up (``@section=NAME@outline``) an outline line names; it
reports how many targets the outline names, how many are reachable with that
one follow-up, the follow-up reads, cost, median and worst task. What follows
is the default workload's (issue 10's) agent (``_outline_agent.py``; the
``--named`` agent and report are in ``_named_agent.py``, the corpus, tasks and
grouping in ``_outline_tasks.py``).

Lookup tasks are picked by parsers independent of nasfs's outliners: Python's
``ast`` (functions, classes, methods), markdown-it-py's full CommonMark parse
(headings), PyYAML's composer (keys of JSON and YAML files, with their lines).
A simulated agent reads ``P@outline`` (or ``P@N`` with ``--budget``, following
``next`` pages), finds the target by its qualified name in the outline text
or, when the outline does not show it, its deepest shown ancestor. When the
answer shows that ancestor collapsed (on the last level of an outline cut to
``depth=K/M``, or an array listing its first elements only), it drills down
with ``P@section=NAME@B`` (the section's outline when its text does not fit
B; see ``run_task``), then reads the lines found with ``P@La-Lb``. A task
succeeds when the lines read hold the target's lines. The cost is every token
read, headers included, against the whole file's tokens (``cat P``). It prints the cost by family, for keys files (JSON/YAML of
1-5k tokens), overall and for the median task, the success rate, and what
``@outline`` costs against each file for every family (CSV and text too).

It reads outlines in both the compact form (``11-20 ## Renewal``) and the
earlier one (``## Renewal (L11-L20)``), so the same command measures an
older nasfs on ``PYTHONPATH`` for a before/after comparison. CORPUS is copied
and committed to a temp folder (at a fixed date, so the commit every pointer
names, and with it every total, is the same in each run); nothing is written
into it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _named_agent import named_report  # noqa: E402
from _outline_agent import run_task  # noqa: E402
from _outline_tasks import KEYS_BAND, TASK_FAMILIES, family_of, grouped, make_corpus, pct, pick_tasks  # noqa: E402

# Every header's pointer names the corpus commit (12 hex digits, 4 to 12 tokens
# as the digits fall): a commit made at a fixed date has the same id in every
# run, so the totals are the same too (with the time, they moved by ~0.5%).
COMMIT_DATE = "2026-01-01T00:00:00+00:00"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", help="a folder of real files (Markdown, Python, JSON, YAML, CSV, text)")
    ap.add_argument("--tasks", type=int, default=150)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--budget", type=int, default=None, help="read P@N instead of P@outline (pages followed)")
    ap.add_argument("--named", action="store_true",
                    help="issue 21's workload: find by name in P@outline, at most one named follow-up, every data family")
    ap.add_argument("--min-tokens", type=int, default=0,
                    help="with --named: tasks only in files of at least this many tokens (files worth an outline)")
    ap.add_argument("--make-corpus", nargs=2, metavar=("SRC", "CORPUS"), help="assemble a corpus from checkouts")
    args = ap.parse_args()
    if args.make_corpus:
        make_corpus(Path(args.make_corpus[0]), Path(args.make_corpus[1]))
        return
    if not args.corpus:
        ap.error("CORPUS is required")
    import nasfs
    from nasfs import tokens
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    C.banner("outline-first reads against whole-file reads")
    print(f"nasfs from {Path(nasfs.__file__).parent}")
    work = C.workdir("outline-cost")
    tree = work / "corpus"
    shutil.copytree(args.corpus, tree, ignore=shutil.ignore_patterns(".git"))
    C.make_repo(tree, "outline-cost corpus", date=COMMIT_DATE)
    nas = Nas(GitTree(tree, node="bench", tree="corpus"))
    files: dict[str, list[str]] = {}
    fulls: dict[str, int] = {}
    for p in sorted(tree.rglob("*")):
        rel = p.relative_to(tree).as_posix()
        if p.is_file() and not rel.startswith(".git/") and family_of(rel):
            fulls[rel] = tokens.count(p.read_bytes())
            if fulls[rel]:
                files.setdefault(family_of(rel), []).append(rel)
    print("corpus: " + ", ".join(f"{f} {len(v)} files" for f, v in sorted(files.items())) + "\n")

    rows = []
    for fam, paths in sorted(files.items()):
        answers = [nas.read(f"{p}@outline") for p in paths]
        outline = [r.tokens for r in answers]
        full = [fulls[p] for p in paths]
        whole = sum(r.view == "full" for r in answers)
        over = sum(r.view != "full" and o > f for r, o, f in zip(answers, outline, full))
        small = [(o, f) for o, f in zip(outline, full) if f <= 150]
        rows.append([fam, len(paths), sum(full), sum(outline), pct(sum(outline), sum(full)),
                     f"{statistics.median(o / f for o, f in zip(outline, full)):.0%}", whole, over,
                     f"{sum(o for o, _ in small)}/{sum(f for _, f in small)}" if small else "-"])
    C.table(["family", "files", "file tokens", "@outline tokens", "@outline/file", "median file", "served whole",
             "outline > file", "files <= 150 tokens: @outline/file"], rows,
            "@outline of every file against the file (cat P); 'served whole': @outline gave the file itself:")

    if args.named:
        big = {f: [p for p in v if fulls[p] >= args.min_tokens] for f, v in files.items()}
        named_report(nas, tree, big, fulls, args.tasks, args.seed, args.min_tokens)
        C.finish()
        return
    tasks = pick_tasks(tree, files, fulls, args.tasks, args.seed)
    outcomes = [run_task(nas, t, fulls[t.path], args.budget) for t in tasks]
    rows = []
    for name, group in grouped(nas, outcomes, TASK_FAMILIES, {
        "keys files (JSON/YAML, 1-5k tokens)": lambda o: o.task.family in ("json", "yaml") and KEYS_BAND[0] <= o.full <= KEYS_BAND[1],
        "tasks in files over 5k tokens": lambda o: o.full > 5000,
    }).items():
        cost, full = sum(o.cost for o in group), sum(o.full for o in group)
        hows = {h: sum(o.how == h for o in group) for h in ("full", "exact", "drill", "ancestor", "missing", "skeleton")}
        rows.append([name, len(group), pct(sum(o.ok for o in group), len(group)), cost, full, pct(cost, full),
                     pct(sum(o.outline for o in group), full), pct(sum(o.headers for o in group), full),
                     pct(sum(o.floor for o in group), full),
                     f"{100 * statistics.median(o.cost / o.full for o in group):.1f}%",
                     " ".join(f"{h}={n}" for h, n in hows.items() if n)])
    mode = f"P@{args.budget}, next pages followed" if args.budget else "P@outline"
    C.table(["tasks", "n", "success", "outline-first tokens", "whole-file tokens", "cost/whole", "of it outline",
             "of it headers", "target lines alone", "median task", "how"],
            rows, f"{len(tasks)} lookup tasks ({mode}, then P@La-Lb), seed {args.seed}:")
    failed = [o for o in outcomes if not o.ok][:10]
    for o in failed:
        print(f"  not reached: {o.task.path} {'.'.join(o.task.target)} L{o.task.start}-L{o.task.end} ({o.how})")
    C.finish()


if __name__ == "__main__":
    main()
