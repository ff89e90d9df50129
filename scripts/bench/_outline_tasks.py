"""The workload of ``outline_cost.py``: the corpus's families, look-up tasks
picked by parsers independent of nasfs's outliners (``_lookup_targets.py``),
their outcomes, and how outcomes are grouped and reported; ``--make-corpus``."""

from __future__ import annotations

import hashlib
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from _lookup_targets import targets

FAMILIES = {".md": "markdown", ".markdown": "markdown", ".py": "python", ".json": "json", ".yaml": "yaml",
            ".yml": "yaml", ".csv": "csv", ".txt": "text", ".toml": "toml", ".jsonl": "jsonl", ".ndjson": "jsonl"}
TASK_FAMILIES = ("markdown", "python", "json", "yaml")
# --named (issue 21): keys of every data family; a YAML file of several documents is a stream
NAMED_FAMILIES = ("markdown", "python", "json", "yaml", "yaml-stream", "toml", "jsonl")
KEY_FAMILIES = ("json", "yaml", "yaml-stream", "toml", "jsonl")
KEYS_BAND = (1000, 5000)  # full-file tokens of a "keys file"
MAX_BYTES = 256 << 10


@dataclass(frozen=True)
class Task:
    family: str
    path: str
    target: tuple[str, ...]  # qualified name
    start: int
    end: int


@dataclass
class Outcome:
    task: Task
    cost: int
    full: int
    ok: bool
    reads: int
    how: str
    outline: int = 0  # of ``cost``: the outline reads (drill-downs included)
    floor: int = 0  # the target's own lines: what the task costs with an outline that costs nothing
    headers: int = 0  # of ``cost``: the header lines


def grouped(nas, outcomes: list[Outcome], families: tuple[str, ...],  # noqa: ANN001
            extra: dict[str, Callable[[Outcome], bool]]) -> dict[str, list[Outcome]]:
    """Each outcome's floor (its target's lines read alone), then the outcomes
    by family, by each of ``extra``'s tests, and all of them; empty groups left out."""
    for o in outcomes:
        o.floor = nas.read(f"{o.task.path}@L{o.task.start}-L{o.task.end}").tokens
    groups = {f: [o for o in outcomes if o.task.family == f] for f in families}
    groups.update({name: [o for o in outcomes if test(o)] for name, test in extra.items()})
    groups["overall"] = outcomes
    return {name: group for name, group in groups.items() if group}


def _documents(path: Path) -> int:
    try:
        return sum(1 for _ in yaml.compose_all(path.read_text("utf-8", "replace"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return 0


# --- the run ------------------------------------------------------------------------------------

def family_of(path: str) -> str:
    return FAMILIES.get(Path(path).suffix.lower(), "")


def pick_tasks(tree: Path, files: dict[str, list[str]], fulls: dict[str, int], count: int, seed: int,
               families: tuple[str, ...] = TASK_FAMILIES) -> list[Task]:
    """``count`` tasks spread over the task families; for JSON and YAML half
    of them in keys files when there are any. One random target of a random file a task."""
    rng = random.Random(seed)
    per_family = {f: count // len(families) + (i < count % len(families)) for i, f in enumerate(families)}
    tasks: list[Task] = []
    for family, wanted in per_family.items():
        parse = "yaml" if family == "yaml-stream" else family
        pool = {p: targets(parse, (tree / p).read_text("utf-8", "replace")) for p in files.get(family, [])}
        pool = {p: t for p, t in pool.items() if t}
        groups = [sorted(pool)]
        if family in ("json", "yaml"):
            keys = [p for p in sorted(pool) if KEYS_BAND[0] <= fulls[p] <= KEYS_BAND[1]]
            others = [p for p in sorted(pool) if p not in keys]
            groups = [g for g in (keys, others) if g]
        for n in range(wanted):
            group = groups[n % len(groups)] if groups and groups[0] else []
            if not group:
                break
            path = rng.choice(group)
            name, start, end = rng.choice(pool[path])
            tasks.append(Task(family, path, name, start, end))
    return tasks


def make_corpus(src: Path, out: Path, per_family: int = 60) -> None:
    """Copy files of each family from checkouts under SRC (tests and fixtures left out),
    chosen by a hash of their path; JSON and YAML half from the keys band by size."""
    out.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, list[Path]] = {}
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src).as_posix()
        if not p.is_file() or p.is_symlink() or re.search(r"(^|/)(tests?|fixtures?|__tests__|node_modules|\.git)/", rel):
            continue
        fam = family_of(rel)
        if fam and 60 <= p.stat().st_size <= MAX_BYTES:
            chosen.setdefault(fam, []).append(p)
    for fam, paths in chosen.items():
        paths.sort(key=lambda p: hashlib.sha1(p.relative_to(src).as_posix().encode()).hexdigest())
        if fam in ("json", "yaml", "toml", "jsonl"):
            band = [p for p in paths if 4000 <= p.stat().st_size <= 20000][: per_family // 2]
            paths = band + [p for p in paths if p not in band][: per_family - len(band)]
        for p in paths[:per_family]:
            dest = out / p.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest)
    print(f"corpus in {out}: " + ", ".join(f"{f} {min(len(v), per_family)}" for f, v in sorted(chosen.items())))


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
