"""A tree for folder maps, and the checks every door's map must pass: within
its budget (counted with the project's tokenizer, header included) and every
pointer in it verifying."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from nasfs import tokens as tok

from .conftest import git, header

BUDGETS = [0, 1, 10, 30, 49, 50, 51, 60, 75, 90, 120, 200, 300, 500, 800, 1200, 2000, 5000, 10**12]
FILE_LINE = re.compile(r"^(\S+@[0-9a-f]{12}(?:#L\d+-L\d+)?) \(")
ENTRY_LINE = re.compile(r"^  .* \(L(\d+)-L(\d+)\)$")
TOP = re.compile(r"; top: (\S+)$")


def grow(home: Path, outside: Path) -> None:
    """The demo tree plus a package whose modules import one another, ignored
    files, an untracked file, an edited file and symlinks (out of the tree too)."""
    pkg = home / "pkg"
    (pkg / "deep" / "er").mkdir(parents=True)
    (home / "README.md").write_text("# Home\n\nThe demo home, with a package.\n\n## Layout\n\npkg/ holds code.\n")
    (pkg / "core.py").write_text("class Core:\n    def run(self) -> int:\n        return 1\n\n\ndef helper() -> None:\n    pass\n")
    for i in range(24):
        (pkg / f"mod{i:02}.py").write_text(f"from pkg.core import Core\n\n\ndef f{i}(x: int) -> int:\n    return Core().run() + x\n")
    for i in range(6):
        (pkg / "deep" / "er" / f"leaf{i}.md").write_text(f"# Leaf {i}\n\n## Part\n\ntext {i}\n")
    (home / ".gitignore").write_text("build/\n*.log\n")
    (home / "build").mkdir()
    (home / "build" / "out.txt").write_text("built\n")
    (home / "debug.log").write_text("ignored\n")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "a package")
    (home / "kept.log").write_text("tracked although ignored\n")
    git(home, "add", "-f", "kept.log")
    git(home, "commit", "-q", "-m", "a tracked log")
    (home / "untracked.txt").write_text("not yet added\n")
    (pkg / "mod00.py").write_text((pkg / "mod00.py").read_text() + "\n\ndef extra() -> None:\n    pass\n")
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    os.symlink(outside, home / "out-dir")
    os.symlink(outside / "secret.py", home / "out-file.py")
    os.symlink("pkg", home / "pkg-link")


def pointers(text: str) -> list[str]:
    """Every pointer a map's text gives: each file's, each entry's (its file's
    pointer with the entry's lines), and a skeleton's top file."""
    found: list[str] = []
    current = ""
    for line in text.splitlines()[1:]:
        m = FILE_LINE.match(line)
        if m:
            current = m.group(1)
            found.append(current)
            continue
        m = ENTRY_LINE.match(line)
        if m and current:
            found.append(f"{current.split('#')[0]}#L{m.group(1)}-L{m.group(2)}")
        m = TOP.search(line)
        if m:
            found.append(m.group(1))
    return found


def within(text: bytes, budget: int | None, tokenizer: str = "cl100k_base") -> dict[str, str]:
    """The header, after checking the answer is declared truly and within budget."""
    keys = header(text)
    counted = tok.count(text, tokenizer)
    assert int(keys["tokens"]) == counted, (keys["tokens"], counted)
    if budget is not None:
        assert counted <= budget, (counted, budget)
    return keys


@pytest.fixture
def tree(home: Path, tmp_path: Path) -> Path:
    """The demo tree grown with the folders these tests map (and a tree outside it)."""
    grow(home, tmp_path / "outside")
    return home
