"""A folder map's header pointer names the folder itself (``DIR/@COMMIT``):
its deref is the folder's listing as ``git ls-tree`` prints it, so it
verifies with plain git too."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from nasfs.errors import BadPointer
from nasfs.pointers import parse_pointer
from nasfs.service import Nas

from .conftest import git, header


def ls_tree(home: Path, commit: str, folder: str) -> bytes:
    args = ["git", "-c", "core.quotePath=false", "ls-tree", commit] + ([folder + "/"] if folder else [])
    return subprocess.run(args, cwd=home, capture_output=True, check=True).stdout


def head_pointer(nas: Nas, spec: str, at: str | None = None):
    r = nas.read(spec, at)
    said = header(r.text)["pointer"]
    first = r.envelope()["evidence"][0]
    assert first["pointer"] == said
    return parse_pointer(said, "box", "home"), first["sha256"]


@pytest.mark.parametrize("folder, spec", [("notes", "notes@300"), ("", ".@300"), ("code", "code@outline")])
def test_the_header_names_the_folder_at_head(home: Path, nas: Nas, folder: str, spec: str) -> None:
    p, sha = head_pointer(nas, spec)
    assert p.folder == folder and p.path == (f"{folder}/" if folder else "") and not p.start
    head = git(home, "rev-parse", "HEAD").strip()
    assert head.startswith(p.commit)
    listed = ls_tree(home, head, folder)
    assert nas.deref(str(p))[1] == listed and sha == hashlib.sha256(listed).hexdigest()
    assert nas.verify(str(p), sha256=sha).startswith("verified ")


def test_a_changed_folder_is_named_at_its_snapshot(home: Path, nas: Nas) -> None:
    (home / "notes" / "new.md").write_text("# New\n\nnot committed\n")
    p, sha = head_pointer(nas, "notes@400")
    head = git(home, "rev-parse", "HEAD").strip()
    assert not head.startswith(p.commit)  # a snapshot commit holding the folder as it is
    listed = ls_tree(home, p.commit, "notes")
    assert b"\tnotes/new.md\n" in listed and sha == hashlib.sha256(listed).hexdigest()
    nas.verify(str(p), sha256=sha, quote="notes/new.md")
    assert "?? notes/new.md" in git(home, "status", "--porcelain")  # the user's tree is untouched


def test_a_map_at_a_revision_names_that_commit(home: Path, nas: Nas) -> None:
    p, sha = head_pointer(nas, "notes@400", at="v1")
    v1 = git(home, "rev-parse", "v1^{commit}").strip()
    assert v1.startswith(p.commit) and sha == hashlib.sha256(ls_tree(home, v1, "notes")).hexdigest()


def test_bad_folder_pointers_say_what_is_valid(home: Path, nas: Nas) -> None:
    head = git(home, "rev-parse", "HEAD").strip()[:12]
    for text, says in ((f"notes/@{head}#L1-L2", "names a folder, which has no lines"),
                       (f"notes//x/@{head}", "malformed folder"),
                       (f"../notes/@{head}", "malformed folder"),
                       (f"./@{head}", "malformed folder")):
        with pytest.raises(BadPointer, match="valid: ") as refused:
            nas.verify(text)
        assert says in str(refused.value)
    answer = nas.check(f"absent/@{head}")
    assert not answer["verified"] and "'absent' is not a folder at" in str(answer["detail"])
    answer = nas.check(f"notes/customer-acme.md/@{head}")
    assert not answer["verified"] and "is not a folder" in str(answer["detail"])


@pytest.mark.parametrize("folder", ["notes", ""])
def test_the_mount_serves_a_folder_pointer(home: Path, mounted, folder: str) -> None:
    """``.nas/deref/DIR/@COMMIT`` (``.nas/deref/@COMMIT`` for the top) on the mount, as a plain read."""
    text = (mounted.mountpoint / f"{folder or '.'}@300").read_bytes()
    short = header(text)["pointer"].removeprefix("nas://box/home/")
    assert short.startswith(f"{folder}/@" if folder else "@")
    head = git(home, "rev-parse", "HEAD").strip()
    assert (mounted.mountpoint / ".nas" / "deref" / short).read_bytes() == ls_tree(home, head, folder)
