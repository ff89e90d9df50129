"""Does @summary's checker keep faithful sentences and drop false ones? Issue 25's labelled sets.

    .venv/bin/python scripts/bench/grounding.py [--part PART|all] [--files A,B] [--show]
        [--verify] [--judge URL|CMD [--judge-model NAME] [--judge-timeout S]]

The sets are scripts/bench/grounding/sets/<part>/: files nasfs did not write
(files/, each with its source, licence and sha256 in sources.json, checked
here) and labels.txt, cited sentences labelled true or false by kind (number,
swap, negation, name, clause, miscite), written before any checker ran on them.
The parts: ``tuned`` (the rules were tuned on it), ``check`` and ``check-b``
(written by people who never saw the checker, then tuned on), ``held-out`` and
``held-out-2`` to ``held-out-7`` (written the same way, each run once, then
tuned on), ``held-out-8`` (written the same way; run once, at the end) and
``held-out-9`` and ``held-out-10`` (written the same way; run once, then tuned on)
and ``held-out-11`` and ``held-out-12`` (written the same way; run once, at the end).
docs/summaries.md says what each part has been through.

Each sentence is read as a model's answer is (split_answer) and checked
against its file's lines and path (check_lines), as summaries are. Printed per
part and for all: faithful sentences kept, false sentences dropped by kind and
overall, and the precision of what would be served (true among kept); for the
rules alone and, given ``--judge``, for the judge alone and for the rules then
the judge (a sentence is kept only if the judge says yes; no answer counts as
no). ``--verify`` commits the files to a temp git repository (each at its
source's path under its project's folder, the path the rules read), makes each kept
sentence's record as the summary worker does (files.py) and verifies the
pointer it stores with nasfs's own verify. ``--show`` lists each sentence
judged wrongly, with the checker's reason (the tuned part only, unless
``--part`` names another).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from nasfs.cache import DiskCache  # noqa: E402
from nasfs.lines import LineIndex  # noqa: E402
from nasfs.repo import GitTree  # noqa: E402
from nasfs.service import Nas  # noqa: E402
from nasfs.summaries.checker import check_lines, split_answer  # noqa: E402
from nasfs.summaries.files import summarize_file  # noqa: E402
from nasfs.summaries.judge import Judge, ask  # noqa: E402
from nasfs.summaries.settings import SummarySettings  # noqa: E402

SETS = Path(__file__).resolve().parent / "grounding" / "sets"
PARTS = ("tuned", "check", "check-b", "held-out", "held-out-2", "held-out-3", "held-out-4", "held-out-5",
         "held-out-6", "held-out-7", "held-out-8", "held-out-9", "held-out-10", "held-out-11", "held-out-12")
KINDS = ("number", "swap", "negation", "name", "clause", "miscite")
TARGET_KEPT, TARGET_DROPPED, TARGET_KIND = 0.90, 0.90, 0.80


@dataclass
class Case:
    file: str
    part: str  # one of PARTS
    path: str  # the file's path in its source, under its project's name (the tree it would be served from)
    tree: str  # that project's name
    label: str  # "true" or a kind of KINDS
    text: str  # the sentence with its citation, as a model writes it
    rules: bool = False  # kept by the rules
    reason: str | None = None  # why the rules dropped it
    judge: bool | None = None  # the judge's answer (None: not asked, or no answer)
    cited: list[tuple[int, int]] = field(default_factory=list)


def load(files: set[str] | None, parts: tuple[str, ...] = PARTS) -> tuple[dict[str, bytes], list[Case]]:
    """The files of the ``parts`` asked for (their sha256 checked against sources.json) and their labelled
    cases; a part not asked for is not opened (``--part tuned`` reads nothing of the held-out part)."""
    data: dict[str, bytes] = {}
    cases: list[Case] = []
    known: set[str] = set()
    for part in parts:
        folder = SETS / part
        if not folder.is_dir():
            continue
        sources = {s["file"]: s for s in json.loads((folder / "sources.json").read_text())}
        for name, s in sources.items():
            raw = (folder / "files" / name).read_bytes()
            if hashlib.sha256(raw).hexdigest() != s["sha256"]:
                sys.exit(f"grounding.py: {part}/{name} does not match its sha256 in sources.json: the set was changed")
            data[name] = raw
        known |= set(sources)
        current = None
        for n, line in enumerate((folder / "labels.txt").read_text().splitlines(), 1):
            if line.startswith("## "):
                current = line[3:].strip()
                continue
            if not line.strip() or line.startswith("#"):
                continue
            label, _, text = line.partition(" | ")
            if current not in sources or label not in ("true", *KINDS) or not text:
                sys.exit(f"grounding.py: {part}/labels.txt line {n} is not 'LABEL | SENTENCE' under a known '## FILE'")
            if files is None or current in files:
                tree = _project(sources[current]["source"])
                cases.append(Case(current, part, f"{tree}/{sources[current]['path']}", tree, label, text))
    unknown = (files or set()) - known
    if unknown:
        sys.exit(f"grounding.py: --files {', '.join(sorted(unknown))}: not in the set; valid: {', '.join(sorted(known))}")
    return data, cases


def _project(source: str) -> str:
    """The project a file comes from (``github.com/pallets/click@...``: click; ``PyPI certifi 2026.10``:
    certifi): the name of the tree nasfs would serve it from."""
    if source.startswith("github.com/"):
        return source.split("@")[0].split("/")[2]
    return source.split()[1] if len(source.split()) > 1 else ""


def check(cases: list[Case], data: dict[str, bytes]) -> None:
    """The rules, exactly as a summary's sentences are checked."""
    for case in cases:
        index = LineIndex(data[case.file])

        def lines(a: int, b: int, index: LineIndex = index) -> str:
            return index.slice(a, b).decode("utf-8", errors="replace")

        sentences = split_answer(case.text)
        verdicts = [check_lines(s, index.count, lines, case.path) for s in sentences]
        refused = [v.reason for v in verdicts if not v.supported]
        case.rules = bool(verdicts) and not refused
        case.reason = None if case.rules else (refused[0] if refused else "no sentence found")
        case.cited = [r for s in sentences for r in s.cited]


def judged(cases: list[Case], data: dict[str, bytes], judge: Judge, timeout: float) -> int:
    """Ask the judge about every case (its cited lines as the document); the number of non-answers."""
    missing = 0
    for case in cases:
        index = LineIndex(data[case.file])
        claim = " ".join(s.text for s in split_answer(case.text))
        if not case.cited or any(not 1 <= a <= b <= index.count for a, b in case.cited):
            case.judge = False  # nothing the judge could be shown: never kept
            continue
        cited = "\n".join(index.slice(a, b).decode("utf-8", errors="replace") for a, b in case.cited)
        case.judge = ask(judge, claim, cited, timeout=timeout)
        missing += case.judge is None
    return missing


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.0%})" if total else "-"


def column(cases: list[Case], kept: dict[int, bool]) -> list[str]:
    """One column of the table: faithful kept, each kind dropped, all false dropped, precision."""
    true = [c for c in cases if c.label == "true"]
    false = [c for c in cases if c.label != "true"]
    out = [rate(sum(kept[id(c)] for c in true), len(true))]
    for kind in KINDS:
        of = [c for c in false if c.label == kind]
        out.append(rate(sum(not kept[id(c)] for c in of), len(of)))
    out.append(rate(sum(not kept[id(c)] for c in false), len(false)))
    served = [c for c in cases if kept[id(c)]]
    out.append(rate(sum(c.label == "true" for c in served), len(served)))
    return out


def met(cases: list[Case]) -> bool:
    """The issue's targets for the rules alone: faithful kept >= 90%, false dropped >= 90% and >= 80% per kind."""
    def share(of: list[Case], good: bool) -> float:
        return sum(c.rules == good for c in of) / len(of) if of else 1.0
    false = [c for c in cases if c.label != "true"]
    return (share([c for c in cases if c.label == "true"], True) >= TARGET_KEPT
            and share(false, False) >= TARGET_DROPPED
            and all(share([c for c in false if c.label == k], False) >= TARGET_KIND for k in KINDS))


def report(title: str, cases: list[Case], with_judge: bool) -> None:
    columns = {"rules": {id(c): c.rules for c in cases}}
    if with_judge:
        columns["judge alone"] = {id(c): c.judge is True for c in cases}
        columns["rules+judge"] = {id(c): c.rules and c.judge is True for c in cases}
    rows_of = {name: column(cases, kept) for name, kept in columns.items()}
    names = ["faithful sentences kept", *(f"{k} dropped" for k in KINDS), "false sentences dropped",
             "precision of kept (true/kept)"]
    files = len({c.file for c in cases})
    C.table(["", *columns], [[n, *(rows_of[col][i] for col in columns)] for i, n in enumerate(names)],
            title=f"{title}: {len(cases)} sentences over {files} files; rules alone meet the targets: "
                  f"{C.verdict(met(cases)) if cases else '-'}")


class _Answer:
    """A summarizer whose answer is one labelled sentence, so the record is made as the worker makes it."""

    name = "grounding"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, system: str, user: str) -> str:
        return self.text


def verify(cases: list[Case], data: dict[str, bytes]) -> tuple[int, int, int]:
    """Commit the files, make each kept sentence's summary record as the worker does (files.py:
    the checker, then the pointer it stores), and verify each stored pointer with nasfs verify."""
    at: dict[str, str] = {}  # two set files at one path (a project's file in two parts): one would be read for both
    for case in cases:
        if at.setdefault(case.path, case.file) != case.file and data[at[case.path]] != data[case.file]:
            sys.exit(f"grounding.py --verify: {at[case.path]} and {case.file} are both {case.path}; verify one at a time")
    work = C.workdir("grounding")
    repo = work / "set"
    repo.mkdir()
    for case in cases:  # under its project's folder, at its path in its source: the path the checker reads
        (repo / case.path).parent.mkdir(parents=True, exist_ok=True)
        (repo / case.path).write_bytes(data[case.file])
    C.make_repo(repo, date="2026-01-01T00:00:00Z")
    nas = Nas(GitTree(repo, node="bench", tree="grounding"), disk=DiskCache(work / "cache"), summarizer="")
    settings = SummarySettings(summarizer="grounding")
    checked = verified = wider = 0
    for case in (c for c in cases if c.rules):
        content = nas.content(case.path)
        a = nas.analysis(content)
        record = summarize_file(_Answer(case.text), settings, case.path, content.blob_id, content.commit,
                                a.data, a.outline, "")
        checked += 1  # a sentence the rules kept but the record does not is counted as not verified
        ok = bool(record["kept"]) and not record["refused"]
        for k in record["kept"]:
            cited = {n for x, y in k["cited"] for n in range(x, y + 1)}
            for span in k["spans"]:  # one pointer per cited range
                ok &= bool(nas.check(f"{case.path}@{content.commit}#L{span['start']}-L{span['end']}",
                                     span["sha256"])["verified"])
                wider += any(n not in cited for n in range(span["start"], span["end"] + 1))
        verified += ok
    shutil.rmtree(work, ignore_errors=True)
    return verified, checked, wider


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=(*PARTS, "all"), default="all")
    ap.add_argument("--files", help="a comma-separated slice of the set's files (default: all)")
    ap.add_argument("--show", action="store_true", help="list the sentences judged wrongly, with why")
    ap.add_argument("--verify", action="store_true", help="verify every kept sentence's pointers against a commit")
    ap.add_argument("--judge", metavar="URL|CMD", help="an OpenAI-compatible endpoint (up to /v1) or a command")
    ap.add_argument("--judge-model", metavar="NAME")
    ap.add_argument("--judge-timeout", type=float, default=60.0)
    args = ap.parse_args()
    try:
        judge = Judge(args.judge, args.judge_model, os.environ.get("NASFS_SUMMARY_JUDGE_KEY")) if args.judge else None
    except ValueError as exc:
        ap.error(str(exc))
    C.banner("grounding: does the summary checker keep faithful sentences and drop false ones (issue 25)")
    data, cases = load(set(args.files.split(",")) if args.files else None,
                       PARTS if args.part == "all" else (args.part,))
    check(cases, data)
    if judge is not None:
        missing = judged(cases, data, judge, args.judge_timeout)
        print(f"judge: {judge.name} ({judge.target}); {missing} of {len(cases)} questions got no usable answer "
              "(counted as no)\n")
    for part in PARTS:
        if of := [c for c in cases if c.part == part]:
            report(f"{part} part", of, judge is not None)
    if len({c.part for c in cases}) > 1:
        report("all parts", cases, judge is not None)
    counts = Counter(c.label for c in cases)
    print("labels: " + ", ".join(f"{k} {counts[k]}" for k in ("true", *KINDS)) + "\n")
    if args.show:
        for c in cases:
            if c.rules != (c.label == "true") and (args.part != "all" or c.part == "tuned"):
                print(f"  {'kept' if c.rules else 'dropped'} {c.label:8} {c.file}: {c.text}\n      {c.reason or ''}")
        print()
    if args.verify:
        verified, checked, wider = verify(cases, data)
        print(f"pointers of kept sentences: {verified} of {checked} verify against their commit "
              f"(as the worker stores them; {wider} span lines the sentence did not cite)\n")
    C.finish()


if __name__ == "__main__":
    main()
