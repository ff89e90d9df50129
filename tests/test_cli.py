"""The CLI door as a user runs it: real processes, exit codes, one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import git

ACME = "notes/customer-acme.md"


def nasfs(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "nasfs", *args], capture_output=True, text=True, cwd=cwd)


def test_read_forms_and_json(home: Path) -> None:
    raw = nasfs("read", "--repo", str(home), ACME)
    assert raw.returncode == 0 and raw.stdout == (home / ACME).read_text()
    out = nasfs("read", "--repo", str(home), f"{ACME}@outline")
    assert out.stdout.startswith("nasfs view=outline ") and "\n11-20 ## Renewal\n" in out.stdout
    env = json.loads(nasfs("read", "--repo", str(home), "--json", f"{ACME}@section=Renewal").stdout)
    assert env["view"] == "section" and env["evidence"][0]["pointer"].endswith("#L11-L20")
    assert json.loads(nasfs("read", "--repo", str(home), f"{ACME}@200.json").stdout)["budget_tokens"] == 200
    old = nasfs("read", "--repo", str(home), "--at", "v1", f"{ACME}@L15")
    assert old.stdout == "- price held at the 2026 rate for twelve months\n"
    o200 = nasfs("read", "--repo", str(home), "--tokenizer", "o200k_base", f"{ACME}@outline")
    assert "tokenizer=o200k_base" in o200.stdout


def test_repo_defaults_to_the_work_tree_around_the_cwd(home: Path) -> None:
    out = nasfs("read", "customer-acme.md@L1", cwd=home / "notes")
    assert out.returncode == 0 and out.stdout == "# Acme Corp\n"


def test_every_emitted_pointer_verifies_with_git_show(home: Path) -> None:
    for spec in (f"{ACME}@section=Renewal", "code/billing.py@section=Invoice.add", "config/deploy.yaml@section=spec.replicas"):
        env = json.loads(nasfs("read", "--repo", str(home), "--json", spec).stdout)
        ev = env["evidence"][0]
        path, rest = ev["pointer"].split("/", 4)[4].rsplit("@", 1)
        commit, lines = rest.split("#")
        a, b = (int(x) for x in lines[1:].split("-L"))
        shown = git(home, "show", f"{commit}:{path}").encode().splitlines(keepends=True)[a - 1 : b]
        assert hashlib.sha256(b"".join(shown)).hexdigest() == ev["sha256"]
        assert nasfs("verify", "--repo", str(home), ev["pointer"], "--sha256", ev["sha256"]).returncode == 0
        assert nasfs("deref", "--repo", str(home), ev["pointer"]).stdout.encode() == b"".join(shown)


@pytest.mark.parametrize("args, code, says", [
    (["read", f"{ACME}@bogus"], 2, "unknown view"),
    (["read", f"{ACME}@L0"], 2, "start at 1"),
    (["read", f"{ACME}@L9-L3"], 2, "ends before it starts"),
    (["read", f"{ACME}@L1-L999999999"], 2, "valid: L1-L38"),
    (["read", f"{ACME}@section=Nope"], 2, "Acme Corp.Renewal"),
    (["read", "--at", "nosuch", f"{ACME}@outline"], 2, "unknown revision"),
    (["read", "../outside@outline"], 2, "leaves the tree"),
    (["read", "/etc/passwd"], 2, "absolute"),
    (["read", "notes"], 2, "directory"),
    (["read", "notes"], 2, "is a folder"),
    (["read", "notes@L1-L2"], 2, "is a folder; @L1-L2 is a view of files"),
    (["read", "notes/..@2000"], 2, "leaves the folder through"),
    (["read", "nowhere@2000"], 2, "does not exist"),
    (["read", "notes/absent.md"], 2, "does not exist"),
    (["read", "notes/absent.md@outline"], 2, "does not exist"),
    (["read", f"{ACME}@outlien"], 2, "did you mean @outline?"),
    (["read", f"{ACME}@Outline"], 2, "did you mean @outline?"),
    (["read", f"{ACME}@outlien@200.json"], 2, "did you mean @outline@200.json?"),
    (["read", f"{ACME}@L5-L2"], 2, "did you mean @L2-L5?"),
    (["read", f"{ACME}@sectoin=Renewal"], 2, "did you mean @section=Renewal?"),
    (["read", f"{ACME}@sectoin=Re\nnewal"], 2, "did you mean @section=Re\\nnewal?"),
    (["read", f"{ACME}@sectoin=\u202eRenewal"], 2, "did you mean @section=\\u202eRenewal?"),
    (["read", "--tokenizer", "gpt2", f"{ACME}@outline"], 2, "unknown tokenizer"),
    (["verify", "nas://box/home/x"], 2, "malformed pointer"),
    (["verify", f"nas://other/home/{ACME}@0000000#L1-L2"], 2, "this is node"),
    (["verify", f"{ACME}@0000000000#L1-L2"], 1, "does not verify"),
    (["deref", "garbage"], 2, "malformed pointer"),
])
def test_bad_input_exit_codes_and_messages(home: Path, args: list[str], code: int, says: str) -> None:
    done = nasfs(*args[:1], "--repo", str(home), "--node", "box", "--tree", "home", *args[1:])
    assert done.returncode == code, done.stderr
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_not_a_git_tree(tmp_path: Path) -> None:
    done = nasfs("read", "--repo", str(tmp_path), "x.md@outline")
    assert done.returncode == 2 and "not inside a git work tree" in done.stderr


def test_warm_read_skips_the_tokenizer(home: Path, tmp_path: Path) -> None:
    env = dict(os.environ, NASFS_CACHE_DIR=str(tmp_path / "c"))
    code = ("import sys; from nasfs.cli import main; rc = main(sys.argv[1:]);"
            "print('tiktoken' in sys.modules, 'tree_sitter' in sys.modules, file=sys.stderr); sys.exit(rc)")
    run = lambda: subprocess.run([sys.executable, "-c", code, "read", "--repo", str(home), "code/billing.py@outline"],  # noqa: E731
                                 capture_output=True, text=True, env=env)
    first, second = run(), run()
    assert first.stdout == second.stdout
    assert first.stderr.split() == ["True", "True"]
    assert second.stderr.split() == ["False", "False"]  # served from the disk cache by blob id


def test_version_and_read_help_teach_the_grammar() -> None:
    from nasfs import __version__

    version = nasfs("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"nasfs {__version__}"
    helped = nasfs("read", "--help")
    assert helped.returncode == 0
    for form in ("PATH[@VIEW]", "a file relative to the tree root", "@outline", "@L12-L18", "@section=Renewal",
                 "@since=v1", "@400", "@section=Renewal@200", "@outline.json", "--at v1"):
        assert form in helped.stdout, form


def test_deref_and_verify_take_json_and_only_their_options(home: Path) -> None:
    for command in ("deref", "verify"):
        helped = nasfs(command, "--help").stdout
        assert "--json" in helped and "--repo" in helped
        assert "--tokenizer" not in helped and "--summarizer" not in helped and "--at" not in helped
    ev = json.loads(nasfs("read", "--repo", str(home), "--json", f"{ACME}@section=Renewal").stdout)["evidence"][0]
    deref = nasfs("deref", "--repo", str(home), "--json", ev["pointer"])
    assert deref.returncode == 0
    d = json.loads(deref.stdout)
    assert d["pointer"] == ev["pointer"] and d["sha256"] == ev["sha256"] and d["content"].startswith("## Renewal")
    ok = nasfs("verify", "--repo", str(home), "--json", ev["pointer"], "--quote", "2026 rate")
    assert ok.returncode == 0
    assert json.loads(ok.stdout) == {"pointer": ev["pointer"], "verified": True, "sha256": ev["sha256"],
                                     "detail": f"verified {ev['pointer']} sha256={ev['sha256']}"}
    bad = nasfs("verify", "--repo", str(home), "--json", ev["pointer"], "--sha256", "0" * 64)
    assert bad.returncode == 1
    b = json.loads(bad.stdout)
    assert b["verified"] is False and b["sha256"] == ev["sha256"] and "not " + "0" * 64 in b["detail"]
    gone = nasfs("verify", "--repo", str(home), "--json", ev["pointer"].split("#")[0] + "#L900-L901")
    assert gone.returncode == 1 and json.loads(gone.stdout)["sha256"] is None
    malformed = nasfs("verify", "--repo", str(home), "--json", "garbage")
    assert malformed.returncode == 2 and "malformed pointer" in malformed.stderr


def test_search_that_fits_nothing_says_what_the_first_hit_needs(home: Path) -> None:
    tight = nasfs("search", "--repo", str(home), "--budget", "90", "renewal")
    assert tight.returncode == 0
    header = dict(kv.split("=", 1) for kv in tight.stdout.split("\n")[0].split(" ")[1:])
    assert header["view"] == "none" and header["truncated"] == "true" and header["shown"] == "0"
    assert header["matches"] == "2" and header["next"] == "skip:1" and int(header["tokens"]) <= 90
    needs = int(header["needs"])
    assert needs > 90
    env = json.loads(nasfs("search", "--repo", str(home), "--budget", str(needs), "--json", "renewal").stdout)
    assert env["view"] == "search" and env["shown"] == 1 and env["truncated"] is False
    env = json.loads(nasfs("search", "--repo", str(home), "--budget", "90", "--json", "renewal").stdout)
    assert (env["view"], env["truncated"], env["content"], env["needs"]) == ("none", True, "", needs)


def test_envelope_numbers_are_json_numbers(home: Path) -> None:
    found = json.loads(nasfs("search", "--repo", str(home), "--json", "renewal").stdout)
    assert [type(found[k]) for k in ("matches", "files", "shown", "skip", "tokens")] == [int] * 5
    diffed = json.loads(nasfs("diff", "--repo", str(home), "--json", "v1..main").stdout)
    assert [type(diffed[k]) for k in ("files", "added", "deleted", "tokens")] == [int] * 4


def test_bad_arguments_get_one_line(home: Path) -> None:
    """argparse's usage block once came before its error (found by fuzz)."""
    done = subprocess.run([sys.executable, "-P", "-m", "nasfs", "diff", "--budget", "x", "v1"], cwd=home,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["nasfs diff: argument --budget: invalid int value: 'x'; see 'nasfs diff --help'"]


MESSAGE_PY = "class Message:\n    def json(self):\n        return '{}'\n\n    def text(self):\n        return ''\n"


def test_a_section_named_json_is_reachable(home: Path) -> None:
    (home / "msg.py").write_text(MESSAGE_PY)
    method = nasfs("read", "--repo", str(home), "msg.py@section=Message.json")
    assert method.returncode == 0, method.stderr
    assert method.stdout.split("\n", 1)[1] == "    def json(self):\n        return '{}'\n"
    assert "section=Message.json" in method.stdout.split("\n", 1)[0]
    # the envelope of the class: '~1' (its first match) leaves '.json' to the envelope
    env = json.loads(nasfs("read", "--repo", str(home), "msg.py@section=Message~1.json").stdout)
    assert env["section"] == "Message" and env["content"] == MESSAGE_PY
    # where no section has that name, .json is the envelope as before
    env = json.loads(nasfs("read", "--repo", str(home), "msg.py@section=text.json").stdout)
    assert env["section"] == "Message.text"
