"""What the core promises about trust: nothing outside the tree is searched,
every printed pointer verifies as printed, cached answers never outlive the
repository they describe, a vanished repository is said, and a subfolder of a
repository is not served as if it were the whole. Checked through the core,
the CLI as a process, and plain git (never through the mount)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nasfs.errors import BadView
from nasfs.search import search
from nasfs.service import Nas

from .conftest import git

ACME = "notes/customer-acme.md"
TREE = ("--node", "box", "--tree", "home")


def nasfs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "nasfs", *args], capture_output=True, text=True)


def header_keys(header: str) -> dict[str, str]:
    assert header.startswith("nasfs ")
    return dict(pair.split("=", 1) for pair in header.split(" ")[1:])


def commit_of(pointer: str) -> str:
    return pointer.rpartition("@")[2].partition("#")[0]


def git_ok(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True).returncode == 0


# -- A. search never looks outside the tree ------------------------------------

@pytest.fixture
def escapes(home: Path, tmp_path: Path) -> Path:
    """Symlinks out of the tree (a folder and a file) and one inside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("zebrafish one\nzebrafish two\n")
    (home / "escdir").symlink_to(outside)
    (home / "escfile.txt").symlink_to(outside / "secret.txt")
    (home / "codelink").symlink_to("code")
    (home / "acmelink.md").symlink_to(ACME)
    (home / "gitlink").symlink_to(".git")
    return outside


def test_search_counts_nothing_outside_the_tree(nas: Nas, escapes: Path) -> None:
    keys = header_keys(search(nas, "zebrafish").header)
    assert (keys["matches"], keys["files"]) == ("0", "0")
    for folder in ("escdir", "escfile.txt", "gitlink"):
        with pytest.raises(BadView, match=f"in:{folder} leads outside the served tree"):
            search(nas, f"zebrafish in:{folder}")
    with pytest.raises(BadView, match="in:missing is not a folder"):
        search(nas, "zebrafish in:missing")


def test_search_through_an_in_tree_symlink_counts_each_file_once(nas: Nas, escapes: Path) -> None:
    plain = search(nas, "Invoice", budget=10**6)
    assert search(nas, "Invoice in:codelink", budget=10**6).served.evidence == search(nas, "Invoice in:code", budget=10**6).served.evidence
    assert {e.pointer.path for e in plain.served.evidence} == {"code/billing.py"}  # not codelink/billing.py too
    acme = search(nas, "Renewal", budget=10**6)
    assert {e.pointer.path for e in acme.served.evidence} == {ACME}  # acmelink.md is not searched again


def test_search_at_a_revision_does_not_follow_committed_escapes(nas: Nas, home: Path, escapes: Path) -> None:
    git(home, "add", "escdir", "escfile.txt")
    git(home, "commit", "-q", "-m", "links")
    assert header_keys(search(nas, "zebrafish", at="HEAD").header)["matches"] == "0"
    with pytest.raises(BadView, match="in:escdir leads outside the served tree"):
        search(nas, "zebrafish in:escdir", at="HEAD")


def test_cli_search_refuses_a_folder_link_that_leaves(home: Path, escapes: Path) -> None:
    done = nasfs("search", "--repo", str(home), "zebrafish in:escdir")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "leads outside the served tree" in done.stderr
