"""How far apart tokenizers count the same files, and what counting with
several costs a view (issue 19; docs/tokens.md).

(a) The spread: for real files by family (English prose, CJK prose, Python,
other code, JSON/YAML, CSV), each installed tokenizer's count over
cl100k_base's, per file: median, p95, max. The presets' margins come from it.
(b) The cost: the same views served cold (a new Nas, no disk cache) with one
tokenizer and with a set, alternating per case; the median of the paired
ratios.

Corpora are passed as FAMILY=PATH (a file or a folder, walked); nothing is
kept in the repository. CJK prose may be gettext catalogs (.mo): their
translations are the text. Example (Debian 12):

    .venv/bin/python scripts/bench/tokens.py \\
        --corpus english=/usr/share/doc --corpus cjk=/usr/share/locale/ja --corpus cjk=/usr/share/locale/zh_CN \\
        --corpus python=/usr/lib/python3.11 --corpus code=/usr/include --corpus code=/usr/lib/node_modules/npm/lib \\
        --corpus data=/usr/share/iso-codes/json --corpus data=/usr/lib/google-cloud-sdk/lib/googlecloudsdk/third_party/apis \\
        --corpus csv=/usr/share/distro-info --corpus csv=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import gettext
import gzip
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

FAMILIES = {
    "english": ("English prose", (".md", ".txt", ".rst", "README", ".gz")),
    "cjk": ("CJK prose", (".mo", ".txt", ".md")),
    "python": ("Python", (".py",)),
    "code": ("other code", (".c", ".h", ".js", ".mjs", ".ts", ".sh", ".go", ".rs", ".java", ".rb", ".cc", ".cpp")),
    "data": ("JSON/YAML", (".json", ".yaml", ".yml")),
    "csv": ("CSV", (".csv", ".tsv")),
}
CAP = 64 * 1024  # bytes of one file counted: the head, cut at a line


def readable(path: Path, family: str) -> str | None:
    """The text of one corpus file, or None when it is not text of its family."""
    try:
        if path.suffix == ".mo":
            with path.open("rb") as f:
                catalog = gettext.GNUTranslations(f)
            text = "\n\n".join(v for k, v in catalog._catalog.items() if k and isinstance(v, str))  # noqa: SLF001
        elif path.suffix == ".gz":
            if family != "english" or not any(w in path.name.lower() for w in ("readme", "news", "faq", "guide")):
                return None
            text = gzip.decompress(path.read_bytes()[: 4 * CAP]).decode("utf-8")
        else:
            text = path.read_bytes()[:CAP].decode("utf-8")
    except (OSError, ValueError, EOFError, UnicodeDecodeError, gzip.BadGzipFile):
        return None
    text = text[:CAP]
    text = text[: text.rfind("\n") + 1] or text
    return text if len(text) >= 400 else None


def corpus(specs: list[str], per_family: int) -> dict[str, list[tuple[str, str]]]:
    """family -> [(path, text)], at most ``per_family`` spread evenly over the sorted candidates."""
    found: dict[str, list[Path]] = {}
    for spec in specs:
        family, _, where = spec.partition("=")
        if family not in FAMILIES or not where:
            sys.exit(f"bad --corpus {spec!r}: FAMILY=PATH with FAMILY one of {', '.join(FAMILIES)}")
        root = Path(where)
        suffixes = FAMILIES[family][1]
        paths = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
            and (p.suffix in suffixes or any(p.name.startswith(s) for s in suffixes if not s.startswith("."))))
        found.setdefault(family, []).extend(paths)
    picked: dict[str, list[tuple[str, str]]] = {}
    for family, paths in found.items():
        step = max(len(paths) // (per_family * 3), 1)
        texts = []
        for p in paths[::step]:
            text = readable(p, family)
            if text is not None:
                texts.append((str(p), text))
            if len(texts) == per_family:
                break
        picked[family] = texts
    return picked


def spread(files: dict[str, list[tuple[str, str]]], names: list[str]) -> dict[str, dict[str, list[float]]]:
    from nasfs import tokens as tok

    ratios: dict[str, dict[str, list[float]]] = {}
    for family, texts in files.items():
        gemini = tok.PRESETS["gemini"].names
        bound = f"max(all)/max({','.join(gemini)})"
        per = ratios.setdefault(family, {n: [] for n in names + ["max(all open)/max(openai)", bound]})
        for _, text in texts:
            counts = {n: tok.count(text, n) for n in names}
            base = counts["cl100k_base"]
            for n in names:
                per[n].append(counts[n] / base)
            per["max(all open)/max(openai)"].append(max(counts.values()) / max(counts["cl100k_base"], counts["o200k_base"]))
            per[bound].append(max(counts.values()) / max(counts[n] for n in gemini))
    return ratios


def print_spread(files: dict[str, list[tuple[str, str]]], ratios: dict[str, dict[str, list[float]]]) -> None:
    rows = []
    for family, per in ratios.items():
        label = f"{FAMILIES[family][0]} ({len(files[family])} files)"
        for name, xs in per.items():
            if name == "cl100k_base" or not xs:
                continue
            rows.append([label, name, f"{C.median(xs):.2f}", f"{C.pct(xs, 95):.2f}", f"{max(xs):.2f}"])
            label = ""
    C.table(["family", "tokenizer", "median", "p95", "max"], rows,
            "(a) each tokenizer's count over cl100k_base's, per file")


def cost(files: dict[str, list[tuple[str, str]]], sets: list[str], views: list[str], cases: int, work: Path) -> None:
    """Cold views with one tokenizer and with each set, alternating per case."""
    from nasfs import tokens as tok
    from nasfs.repo import GitTree
    from nasfs.service import Nas

    tree = work / "tree"
    chosen = [(f, p, t) for f in ("english", "python", "code", "data", "cjk", "csv") for p, t in files.get(f, [])[:cases]]
    for i, (family, _, text) in enumerate(chosen):
        target = tree / family / f"f{i}{'.py' if family == 'python' else '.md' if family in ('english', 'cjk') else '.json' if family == 'data' else '.csv' if family == 'csv' else '.c'}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    C.make_repo(tree)
    git_tree = GitTree(tree, node="bench", tree="tokens")
    paths = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
    for name in ("cl100k_base", *(s for s in sets)):  # load every vocabulary before timing
        Nas(git_tree, tokenizer=name).read(f"{paths[0]}@outline")
    rows = []
    def cold(spec: str, spelled: str) -> float:
        return C.timed(lambda: Nas(git_tree, tokenizer=spec).read(spelled))

    known: dict[tuple[str, str], int] = {}  # (tokenizer, blob id) -> count of the whole file

    def counted(spec: str, spelled: str) -> float:
        """The view not served before, its file's counts known (as after the
        mount's warm-up, 'nasfs index', or an earlier view of the file: they
        are cached by blob and tokenizer), its outline parsed anew."""
        nas = Nas(git_tree, tokenizer=spec)
        blob = nas.content(spelled.split("@", 1)[0]).blob_id
        for name in tok.resolve(spec).names:
            if (name, blob) not in known:
                known[name, blob] = tok.count(nas.content(spelled.split("@", 1)[0]).read(), name)
            nas._full_tokens.put((name, blob), known[name, blob])  # noqa: SLF001 (what the disk cache would give)
        return C.timed(lambda: nas.read(spelled))

    for label, serve in (("cold: nothing cached", cold), ("the file's counts cached", counted)):
        rows = []
        for spec in sets:
            paired, single_t, multi_t = [], [], []
            for k, spelled in enumerate(f"{p}@{v}" for p in paths for v in views):
                if k % 2:  # alternate which goes first
                    many, one = serve(spec, spelled), serve("cl100k_base", spelled)
                else:
                    one, many = serve("cl100k_base", spelled), serve(spec, spelled)
                paired.append(many / one)
                single_t.append(one)
                multi_t.append(many)
            rows.append([spec, len(paired), C.ms(C.median(single_t)), C.ms(C.median(multi_t)), f"{C.median(paired):.2f}x",
                         f"{C.pct(paired, 95):.2f}x", C.verdict(C.median(paired) <= 1.5)])
        C.table(["set", "cases", "one (median)", "set (median)", "ratio median", "ratio p95", "<= 1.5x"], rows,
                f"(b) {label}: a view with the set over the same view with cl100k_base alone (paired, alternating); "
                f"views {', '.join(views)} of {len(paths)} files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=[], metavar="FAMILY=PATH", required=True)
    parser.add_argument("--per-family", type=int, default=60, help="files counted per family (default 60)")
    parser.add_argument("--cost-files", type=int, default=6, help="files per family in the cost part (default 6; 0: skip it)")
    parser.add_argument("--set", action="append", default=[], dest="sets",
                        help="a tokenizer set for the cost part (default: max:cl100k_base,o200k_base and the gemini preset)")
    args = parser.parse_args()
    from nasfs import tokens as tok
    from nasfs import vocabularies

    C.banner("tokenizer spread and the cost of counting with several")
    names = vocabularies.installed()
    files = corpus(args.corpus, args.per_family)
    started = time.monotonic()
    ratios = spread(files, names)
    print(f"counted {sum(len(v) for v in files.values())} files with {len(names)} tokenizers in {time.monotonic() - started:.0f} s")
    print_spread(files, ratios)
    print("presets: " + "; ".join(f"{k} = max:{','.join(p.names)} margin {p.margin:.2f}" for k, p in tok.PRESETS.items()))
    print()
    if args.cost_files:
        work = C.workdir("nasfs-bench-tokens")
        try:
            cost(files, args.sets or ["max:cl100k_base,o200k_base", "max:cl100k_base,llama3,qwen2.5", "gemini"],
                 ["outline", "400", "2000"], args.cost_files, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    C.finish()


if __name__ == "__main__":
    main()
