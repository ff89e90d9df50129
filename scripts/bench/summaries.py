"""How good are @summary's summaries? The quality report of issue 18.

    .venv/bin/python scripts/bench/summaries.py --endpoint http://127.0.0.1:PORT/v1=MODEL [--command CMD] PATH...

PATH: files or folders of real Markdown, code and data (folders are walked
for .md .rst .txt .py .ts .js .json .yaml .yml .toml .csv). They are copied
into a temp git repository and committed, so every pointer names a commit.
For each backend (each ``--endpoint URL=MODEL``, each ``--command``) and for
an extractive baseline measured in the same run (the first sentence of each
top-level outline section, cited with its own line: "lead of each section"),
every file is summarized through nasfs's own pipeline (prompt, checker,
store) and it prints, by family and overall:

- support: sentences kept by the checker / sentences written;
- cited: sentences that cite anything / written; valid: sentences whose every
  cited range exists at the commit (and spans at most 40 lines) / cited;
- coverage: top-level outline sections (the shallowest level with two or more
  entries) that some kept sentence cites / sections;
- compression: tokens of the kept sentences (with their [La-Lb]) / the file's tokens;
- latency: seconds per file (median and slowest), the model's generation only;
- verified: kept sentences whose evidence pointer ``nasfs verify`` accepts.

Start a model first, e.g. the tests' one (scripts/setup installs it):
    .venv-model/bin/python -m llama_cpp.server --model $(find .venv-model -name '*.gguf') \\
        --model_alias smollm2 --host 127.0.0.1 --port 8081 --n_ctx 2048 --n_threads 2
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from nasfs import tokens as tok  # noqa: E402
from nasfs.cache import DiskCache  # noqa: E402
from nasfs.outline import Entry, Outline  # noqa: E402
from nasfs.repo import GitTree  # noqa: E402
from nasfs.service import Nas  # noqa: E402
from nasfs.summaries import build_settings  # noqa: E402
from nasfs.summaries.backends import BackendDown, make_backend  # noqa: E402
from nasfs.summaries.files import cited_label, summarize_file  # noqa: E402

FAMILIES = {".md": "markdown", ".rst": "markdown", ".txt": "markdown", ".py": "code", ".ts": "code", ".js": "code",
            ".json": "data", ".yaml": "data", ".yml": "data", ".toml": "data", ".csv": "data"}
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")


def sections(outline: Outline) -> list[Entry]:
    """The file's top-level sections: the entries of the shallowest level that has two or more
    (a Markdown file's ``##`` sections under its one ``#`` title; a module's functions and classes)."""
    for depth in range(outline.max_depth + 1):
        level = [e for e in outline.entries if e.depth == depth]
        if len(level) >= 2:
            return level
    return [e for e in outline.entries if e.depth == 0]


class Lead:
    """The extractive baseline: the first sentence of each top-level section, cited with its line."""

    name = "baseline:lead-of-section"

    def __init__(self) -> None:
        self.answer = ""

    def prepare(self, nas: Nas, path: str) -> None:
        a = nas.analysis(nas.content(path))
        lines = (a.data or b"").decode("utf-8", "replace").splitlines()
        out = []
        for e in sections(a.outline)[:6]:
            for n in range(e.start, min(e.end, len(lines)) + 1):
                text = lines[n - 1].strip().lstrip("#>*-/ ").strip()
                if len(re.findall(r"[A-Za-z]{3,}", text)) >= 3:
                    m = _SENTENCE.match(text)
                    out.append(f"{(m.group(1) if m else text)} [L{n}]")
                    break
        self.answer = "\n".join(out)

    def generate(self, system: str, user: str) -> str:
        return self.answer


def corpus(paths: list[str], into: Path) -> list[str]:
    files: list[tuple[Path, str]] = []
    for p in map(Path, paths):
        found = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file())
        files += [(f, f"{p.name}/{f.relative_to(p)}" if p.is_dir() else p.name) for f in found if f.suffix in FAMILIES]
    names = []
    for src, name in files:
        if src.stat().st_size == 0:
            continue
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, into / name)
        names.append(name)
    C.make_repo(into, date="2026-01-01T00:00:00Z")
    return sorted(names)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--endpoint", action="append", default=[], metavar="URL=MODEL")
    ap.add_argument("--command", action="append", default=[])
    ap.add_argument("--context", type=int, default=2048)
    args = ap.parse_args()
    C.banner("summary quality: checked support, citations, coverage, compression, latency (issue 18)")
    work = C.workdir("summaries")
    repo = work / "corpus"
    repo.mkdir()
    names = corpus(args.paths, repo)
    nas = Nas(GitTree(repo, node="bench", tree="corpus"), disk=DiskCache(work / "cache"))
    backends: list[tuple[str, object]] = [(Lead.name, Lead())]
    settings = {}
    for spec in args.endpoint:
        url, _, model = spec.rpartition("=")
        s = build_settings(url, model, context=args.context)
        settings[model] = s
        backends.append((model, make_backend(s)))
    for cmd in args.command:
        s = build_settings(cmd, context=args.context)
        settings[s.model_name] = s
        backends.append((s.model_name, make_backend(s)))
    default = build_settings("true", context=args.context)
    print(f"corpus: {len(names)} files ({', '.join(f'{v} {k}' for k, v in sorted(_count(names).items()))}) from "
          + ", ".join(args.paths))
    print()
    rows = []
    per_file = []
    for label, backend in backends:
        stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for name in names:
            fam = FAMILIES[Path(name).suffix]
            a = nas.analysis(nas.content(name))
            if a.data is None or a.binary:
                continue
            if isinstance(backend, Lead):
                backend.prepare(nas, name)
            t0 = time.monotonic()
            try:
                record = summarize_file(backend, settings.get(label, default), name, a.content.blob_id, a.content.commit,
                                        a.data, a.outline)
            except BackendDown as exc:
                print(f"  {label} {name}: {exc}")
                continue
            seconds = time.monotonic() - t0
            kept, refused = record["kept"], record["refused"]
            cited = [r for r in refused if r["cited"]] + kept
            invalid = [r for r in refused if r["reason"].startswith("it cites L")]
            tops = sections(a.outline)
            covered = [e for e in tops if any(s["start"] <= e.end and e.start <= s["end"] for k in kept for s in k["spans"])]
            summary = "\n".join(f"{k['text']} [{cited_label(k['cited'])}]" for k in kept)
            verified = sum(1 for k in kept if all(nas.check(f"{name}@{a.content.commit}#L{s['start']}-L{s['end']}",
                                                            s["sha256"])["verified"] for s in k["spans"]))
            full = nas.full_tokens(a) or 1
            for key in (fam, "all"):
                st = stats[key]
                st["written"].append(record["written"])
                st["kept"].append(len(kept))
                st["cited"].append(len(cited))
                st["valid"].append(len(cited) - len(invalid))
                st["tops"].append(len(tops))
                st["covered"].append(len(covered))
                st["summary_tokens"].append(tok.count(summary) if summary else 0)
                st["file_tokens"].append(full)
                st["seconds"].append(seconds)
                st["verified"].append(verified)
            per_file.append((label, name, f"{len(kept)}/{record['written']}", f"{len(covered)}/{len(tops)}", round(seconds, 2)))
        for fam in ("markdown", "code", "data", "all"):
            st = stats.get(fam)
            if not st:
                continue
            s = {k: sum(v) for k, v in st.items()}
            rows.append((label, fam, len(st["written"]), f"{_share(s['kept'], s['written'])} ({int(s['kept'])}/{int(s['written'])})",
                         _share(s["cited"], s["written"]), _share(s["valid"], s["cited"]), _share(s["covered"], s["tops"]),
                         f"{s['summary_tokens'] / s['file_tokens']:.3f}", f"{C.median(st['seconds']):.2f} s",
                         f"{max(st['seconds']):.2f} s", f"{int(s['verified'])}/{int(s['kept'])}"))
    C.table(["backend", "family", "files", "support", "cited", "valid", "coverage", "compression", "latency median",
             "slowest", "verified"], rows, "by backend and family (support, cited, valid, coverage: shares of sums)")
    C.table(["backend", "file", "support", "coverage", "seconds"], per_file, "by file")
    C.finish()


def _share(a: float, b: float) -> str:
    return f"{a / b:.0%}" if b else "n/a"


def _count(names: list[str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for n in names:
        out[FAMILIES[Path(n).suffix]] += 1
    return out


if __name__ == "__main__":
    main()
