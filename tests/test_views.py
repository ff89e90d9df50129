"""Views served by the core over a real git repository (no mount)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from nasfs import tokens
from nasfs.errors import BadPath, BadView, NotFound, NotServable
from nasfs.service import Nas

from .conftest import git, header as header_keys

ACME = "notes/customer-acme.md"


def test_markdown_outline_has_ranges(nas: Nas) -> None:
    r = nas.read(f"{ACME}@outline")
    body = r.served.body.decode()
    assert body.splitlines() == [
        "1-38 # Acme Corp",
        "6-10 ## Background",
        "11-20 ## Renewal",
        "21-31 ## Contacts",
        "27-31 ### Escalation",
        "32-38 ## History",
    ]
    keys = header_keys(r.text)
    assert keys["view"] == "outline" and keys["generated"] == "false" and "truncated" not in keys
    assert "tokenizer" not in keys  # the default, left out; the envelope names it
    assert keys["tokens"] == str(tokens.count(r.text))
    assert keys["pointer"].startswith("nas://box/home/notes/customer-acme.md@")
    assert keys["pointer"].endswith("#L1-L38")


def test_setext_headings_front_matter_and_fences(nas: Nas) -> None:
    body = nas.read("notes/meeting-2026-11-12.md@outline").served.body.decode()
    assert body.splitlines() == [
        "6-26 # Weekly sync",
        "11-21 ## Decisions",
        "22-26 ## Action items",
    ]


def test_line_range_is_exact_bytes_without_header(nas: Nas, home: Path) -> None:
    data = (home / ACME).read_bytes()
    r = nas.read(f"{ACME}@L11-L13")
    assert r.text == b"".join(data.splitlines(keepends=True)[10:13])
    assert not r.headed
    assert nas.read(f"{ACME}@L1").text == data.splitlines(keepends=True)[0]


def test_crlf_and_missing_final_newline_are_kept(nas: Nas, home: Path) -> None:
    (home / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree")
    assert nas.read("crlf.txt@L2").text == b"two\r\n"
    assert nas.read("crlf.txt@L2-L3").text == b"two\r\nthree"
    with pytest.raises(NotFound, match="past the end"):
        nas.read("crlf.txt@L4")


def test_sections_by_heading_path_slug_and_duplicate(nas: Nas, home: Path) -> None:
    lines = (home / ACME).read_bytes().splitlines(keepends=True)
    renewal = nas.read(f"{ACME}@section=Renewal")
    assert renewal.served.body == b"".join(lines[10:20])
    assert header_keys(renewal.text)["pointer"].endswith("#L11-L20")
    assert nas.read(f"{ACME}@section=Acme Corp.Contacts.Escalation").served.body == b"".join(lines[26:31])
    assert nas.read(f"{ACME}@section=escalation").served.body == b"".join(lines[26:31])
    (home / "dup.md").write_text("# A\n## Notes\none\n# B\n## Notes\ntwo\n")
    assert nas.read("dup.md@section=Notes").served.body == b"## Notes\none\n"
    assert nas.read("dup.md@section=Notes~2").served.body == b"## Notes\ntwo\n"
    assert nas.read("dup.md@section=B.Notes").served.body == b"## Notes\ntwo\n"
    with pytest.raises(NotFound) as err:
        nas.read(f"{ACME}@section=Pricing")
    assert "Acme Corp.Renewal" in str(err.value)


def test_code_section_by_qualified_name(nas: Nas, home: Path) -> None:
    r = nas.read("code/billing.py@section=Invoice.add")
    assert r.served.body.decode().strip().startswith("def add(self, label: str, amount: Decimal)")
    prop = nas.read("code/billing.py@section=Invoice.total").served.body.decode()
    assert prop.lstrip().startswith("@property")  # a symbol starts at its decorator


def test_data_section_by_key_path(nas: Nas) -> None:
    body = nas.read("config/deploy.yaml@section=spec.template.spec.containers.0").served.body.decode()
    assert "name: routing" in body and "sidecar" not in body
    assert '"context_tokens": 32000' in nas.read("config/agent.json@section=model").served.body.decode()


def _all_budget_views(nas: Nas) -> list[str]:
    specs = []
    for path in (ACME, "code/billing.py", "config/agent.json", "data/shipments.csv", "README.txt"):
        for budget in (0, 1, 10, 30, 45, 60, 80, 120, 200, 400, 800, 10**12):
            specs += [f"{path}@{budget}", f"{path}@outline@{budget}"]
    specs += [f"{ACME}@section=Contacts@{b}" for b in (5, 40, 70, 200)]
    return specs


def test_budget_invariant_declared_tokens_are_true_and_within_budget(nas: Nas) -> None:
    for spec in _all_budget_views(nas):
        r = nas.read(spec)
        keys = header_keys(r.text)
        budget = int(spec.rsplit("@", 1)[1])
        assert int(keys["tokens"]) == tokens.count(r.text), spec
        assert r.tokens == tokens.count(r.text), spec
        assert keys["budget"] == str(budget)
        if keys["view"] == "none":
            assert keys["truncated"] == "true" and r.served.body == b"", spec
        else:
            assert "truncated" not in keys, spec  # declared only when true
            assert r.tokens <= budget, spec


RICHNESS = {"full": 100, "outline": 50, "skeleton": 1, "none": 0}


def _richness(text: bytes) -> float:
    keys = header_keys(text)
    rank = RICHNESS[keys["view"]]
    if "depth" in keys:  # a shallower outline is poorer than a deeper one
        kept, deepest = map(int, keys["depth"].split("/"))
        rank -= deepest - kept + 0.5
    return rank


@pytest.mark.parametrize("path", [ACME, "code/billing.py", "config/agent.json"])
def test_ladder_degrades_monotonically(nas: Nas, path: str) -> None:
    ranks = [_richness(nas.read(f"{path}@{b}").text) for b in range(400, -1, -5)]
    assert ranks == sorted(ranks, reverse=True)
    assert ranks[0] == RICHNESS["full"] and ranks[-1] == RICHNESS["none"]
    assert len(set(ranks)) >= 3  # it passes through outlines, not straight to none


def test_ladder_steps_for_the_acme_note(nas: Nas) -> None:
    # one token short of the whole outline, it loses a level or two; how many tokens the outline
    # costs depends on how the commit id in the pointer tokenizes, so the budget follows it
    short = nas.read(f"{ACME}@outline").tokens - 1
    seen = [header_keys(nas.read(f"{ACME}@{b}").text) for b in (10**12, 200, short, 0)]
    assert [k["view"] for k in seen] == ["full", "outline", "outline", "none"]
    kept, deepest = map(int, seen[2]["depth"].split("/"))
    assert "depth" not in seen[1] and deepest == 3 and kept < 3
    richer = next(header_keys(nas.read(f"{ACME}@{b}").text) for b in range(short + 1, 400)
                  if header_keys(nas.read(f"{ACME}@{b}").text).get("depth") != seen[2]["depth"])
    assert int(richer["tokens"]) > short and int(seen[2]["tokens"]) <= short
    assert richer.get("depth", "3/3") > seen[2]["depth"]
    full = nas.read(f"{ACME}@{10**12}")
    assert full.served.body == nas.read(ACME).text  # never cut: the whole file
    # the file itself: full_tokens would repeat the content's count, so only the envelope keeps it
    assert "full_tokens" not in header_keys(full.text) and full.envelope()["full_tokens"] == tokens.count(full.served.body)


def test_budget_zero_and_one_declare_none(nas: Nas) -> None:
    for budget in (0, 1):
        keys = header_keys(nas.read(f"{ACME}@{budget}").text)
        assert keys["view"] == "none" and keys["truncated"] == "true"


def test_json_envelope_fields(nas: Nas, home: Path) -> None:
    import json

    r = nas.read(f"{ACME}@section=Renewal@400.json")
    env = json.loads(r.envelope_bytes())
    assert env["view"] == "section" and env["generated"] is False and env["truncated"] is False
    assert env["tokens"] == tokens.count(env["content"])
    assert env["tokenizer"] == "cl100k_base" and env["budget_tokens"] == 400
    ev = env["evidence"][0]
    lines = (home / ACME).read_bytes().splitlines(keepends=True)
    assert ev["sha256"] == hashlib.sha256(b"".join(lines[10:20])).hexdigest()


def test_o200k_tokenizer(home: Path) -> None:
    from nasfs.repo import GitTree

    nas = Nas(GitTree(home, node="box", tree="home"), tokenizer="o200k_base")
    r = nas.read(f"{ACME}@outline")
    assert header_keys(r.text)["tokenizer"] == "o200k_base"
    assert r.tokens == tokens.count(r.text, "o200k_base")
    with pytest.raises(BadView, match="unknown tokenizer"):
        Nas(GitTree(home), tokenizer="gpt2")


def test_pointers_verify_with_plain_git(nas: Nas, home: Path) -> None:
    for spec in (f"{ACME}@section=Renewal", f"{ACME}@outline", "code/billing.py@section=Invoice"):
        r = nas.read(spec)
        ptr = r.served.evidence[0].pointer
        shown = git(home, "show", f"{ptr.commit}:{ptr.path}").encode()
        lines = shown.splitlines(keepends=True)[ptr.start - 1 : ptr.end]
        assert hashlib.sha256(b"".join(lines)).hexdigest() == r.served.evidence[0].sha256
        assert nas.verify(str(ptr), sha256=r.served.evidence[0].sha256).startswith("verified")


def test_changed_file_gets_snapshot_commit_and_user_state_untouched(nas: Nas, home: Path) -> None:
    head = git(home, "rev-parse", "HEAD")
    acme = home / ACME
    acme.write_text(acme.read_text() + "\n## Pricing\n\nNew tier from 2027.\n")
    status = git(home, "status", "--porcelain")
    r = nas.read(f"{ACME}@section=Pricing")
    ptr = r.served.evidence[0].pointer
    assert not head.startswith(ptr.commit)
    assert git(home, "rev-parse", "HEAD") == head  # the branch did not move
    assert git(home, "status", "--porcelain") == status  # index and work tree untouched
    assert git(home, "rev-parse", f"{ptr.commit}^") == head  # parent: the checked-out commit
    assert git(home, "show", f"{ptr.commit}:{ACME}") == acme.read_text()
    assert ptr.commit in git(home, "log", "--format=%H", "refs/nasfs/snapshots")
    again = nas.read(f"{ACME}@section=Pricing").served.evidence[0].pointer
    assert again == ptr  # same content, same snapshot
    untracked = home / "new.md"
    untracked.write_text("# New\n")
    p2 = nas.read("new.md@outline").served.evidence[0].pointer
    assert git(home, "show", f"{p2.commit}:new.md") == "# New\n"


def test_at_revision_serves_old_content(nas: Nas, home: Path) -> None:
    old = nas.read(f"{ACME}@section=Renewal", at="v1").served.body.decode()
    assert "then +3%" not in old and "price held at the 2026 rate" in old
    assert "then +3%" in nas.read(f"{ACME}@section=Renewal").served.body.decode()
    first = git(home, "rev-parse", "v1").strip()
    assert nas.read(f"{ACME}@L1", at=first[:7]).text == b"# Acme Corp\n"
    assert nas.read(f"{ACME}@outline", at="main").served.evidence[0].pointer.commit == git(home, "rev-parse", "main").strip()
    with pytest.raises(NotFound, match="unknown revision") as err:
        nas.read(f"{ACME}@outline", at="nosuchrev")
    assert "main" in str(err.value) and "v1" in str(err.value)


def test_since_is_a_unified_diff(nas: Nas, home: Path) -> None:
    r = nas.read(f"{ACME}@since=v1")
    assert r.view == "diff"
    expected = git(home, "diff", "v1", "--", ACME)
    minus_plus = [row for row in expected.splitlines() if row[:1] in "+-" and not row.startswith(("+++", "---"))]
    got = r.served.body.decode().splitlines()
    assert minus_plus and all(line in got for line in minus_plus)
    degraded = {nas.read(f"{ACME}@since=v1@{b}").view for b in range(60, 300, 10)}
    assert {"diff", "diffstat"} <= degraded


@pytest.mark.parametrize(
    "spec, error, says",
    [
        ("../etc/passwd@outline", BadPath, "leaves the tree"),
        ("/etc/passwd", BadPath, "absolute"),
        ("notes@section=Renewal", NotServable, "is a folder; @section=Renewal is a view of files"),
        ("notes/..@outline", BadPath, "leaves the folder through '..'"),
        (f"{ACME}@bogus", BadView, "unknown view"),
        (f"{ACME}@L0", BadView, "start at 1"),
        (f"{ACME}@L9-L3", BadView, "ends before"),
        (f"{ACME}@L1-L999999999", NotFound, "past the end"),
        ("missing.md@outline", NotFound, "no file"),
        ("missing.md", NotFound, "no file"),
        (f"{ACME}@section=\udc80", BadPath, "not valid UTF-8"),
        ("a\0b@outline", BadPath, "NUL"),
        (".git/config", BadPath, ".git"),
        (f"{ACME}@summary", NotServable, "summarizer"),
    ],
)
def test_bad_input_is_refused_clearly(nas: Nas, spec: str, error: type, says: str) -> None:
    with pytest.raises(error) as err:
        nas.read(spec)
    assert says in str(err.value)
    assert nas.errors[-1].name == spec


def test_directory_and_symlink_escape(nas: Nas, home: Path, tmp_path: Path) -> None:
    with pytest.raises(NotServable, match="directory"):
        nas.read("notes")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    os.symlink(secret, home / "escape.txt")
    with pytest.raises(BadPath, match="outside the tree"):
        nas.read("escape.txt@outline")
    os.symlink("notes/customer-acme.md", home / "inside.md")
    r = nas.read("inside.md@outline")
    assert r.served.evidence[0].pointer.path == ACME  # the pointer names the real file


def test_binary_empty_and_invalid_utf8(nas: Nas, home: Path) -> None:
    (home / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    r = nas.read("img.png@outline")
    assert "binary" in r.served.body.decode() and "108 bytes" in r.served.body.decode()
    assert r.served.evidence[0].pointer.start == 0  # whole blob, no lines
    with pytest.raises(NotServable, match="binary"):
        nas.read("img.png@L1")
    assert nas.read("img.png@100").view in ("outline", "skeleton")
    (home / "empty.md").write_bytes(b"")
    r = nas.read("empty.md@outline")
    assert header_keys(r.text)["pointer"] == "none" and r.served.evidence == ()
    with pytest.raises(NotFound, match="empty"):
        nas.read("empty.md@L1")
    (home / "latin.txt").write_bytes(b"caf\xe9 au lait\nsecond line\n" + b"a longer paragraph of plain words\n" * 30)
    assert nas.read("latin.txt@L1").text == b"caf\xe9 au lait\n"
    assert "32 lines" in nas.read("latin.txt@outline").served.body.decode()


def test_csv_counts_records_not_lines(nas: Nas, home: Path) -> None:
    (home / "many.csv").write_text("id,note\n" + "".join(f'{i},"two\nlines for record {i}"\n' for i in range(100)))
    body = nas.read("many.csv@outline").served.body.decode()
    assert "records: 100" in body and "lines: 201" in body


def test_broken_json_falls_back_to_text(nas: Nas, home: Path) -> None:
    (home / "broken.json").write_text('{"a": 1,\n' + "".join(f' "key{i}": "a value of some words",\n' for i in range(60)) + ' "b": \n')
    body = nas.read("broken.json@outline").served.body.decode()
    assert "did not parse" in body


def test_pointer_errors(nas: Nas, home: Path) -> None:
    from nasfs.errors import BadPointer, VerifyFailed

    good = nas.read(f"{ACME}@section=Renewal").served.evidence[0].pointer
    with pytest.raises(BadPointer, match="this is node 'box'"):
        nas.deref(str(good).replace("nas://box/", "nas://other/"))
    with pytest.raises(BadPointer, match="tree 'home'"):
        nas.deref(str(good).replace("/home/", "/elsewhere/"))
    for bad in ("nas://box/home/x", "nonsense", f"{ACME}@zzzzzzz#L1-L2", f"{ACME}@{good.commit}#L5-L2"):
        with pytest.raises(BadPointer, match="pointer"):
            nas.deref(bad)
    with pytest.raises(VerifyFailed, match="unknown revision"):
        nas.verify(f"{ACME}@{'0' * 12}#L1-L2")
    with pytest.raises(VerifyFailed, match="does not exist"):
        nas.verify(f"notes/none.md@{good.commit}#L1-L2")
    with pytest.raises(VerifyFailed, match="past the end"):
        nas.verify(f"{ACME}@{good.commit}#L1-L900")
    with pytest.raises(VerifyFailed, match="sha256"):
        nas.verify(str(good), sha256="0" * 64)
    with pytest.raises(VerifyFailed, match="quoted text"):
        nas.verify(str(good), quote="not in there")
    assert nas.verify(str(good), quote="2027-03-01").startswith("verified")
    assert nas.deref(good.short())[1] == nas.read(f"{ACME}@section=Renewal").served.body


def test_second_view_of_unchanged_file_does_not_retokenize(nas: Nas, monkeypatch: pytest.MonkeyPatch) -> None:
    nas.read(f"{ACME}@outline")
    calls = []
    real = tokens.count
    monkeypatch.setattr(tokens, "count", lambda *a, **k: calls.append(1) or real(*a, **k))
    nas.read(f"{ACME}@outline")
    nas.read(f"{ACME}@200")  # a new view: full_tokens is known by blob id
    before = len(calls)
    nas.read(f"{ACME}@200")
    assert len(calls) == before
    assert nas.stats.cache_hits >= 2


def test_large_file_is_streamed_in_bounded_memory(home: Path) -> None:
    big = home / "big.log"
    line = b"2026-11-30T05:00:00 worker-3 processed shipment batch with no errors\n"
    with open(big, "wb") as fh:
        block = line * 16384
        for _ in range(200 * 1024 * 1024 // len(block)):
            fh.write(block)
    size = big.stat().st_size
    assert size > 190 * 1024 * 1024
    # VmHWM, not ru_maxrss: the latter keeps the forking parent's peak across exec
    code = (
        "import re,sys; from nasfs.cli import main; rc=main(sys.argv[1:]);"
        "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1), file=sys.stderr); sys.exit(rc)"
    )
    for view in ("big.log@outline", "big.log@L100000-L100001", "big.log@400"):
        out = subprocess.run([os.sys.executable, "-c", code, "read", "--repo", str(home), view], capture_output=True)
        assert out.returncode == 0, out.stderr
        rss_kb = int(out.stderr.decode().strip().splitlines()[-1])
        assert rss_kb < 150 * 1024, f"{view}: {rss_kb} KiB"
    assert out.stdout.startswith(b"nasfs view=")


def test_a_duplicate_index_of_zero_is_a_clear_refusal(nas) -> None:
    """'NAME~0' once raised IndexError (EIO on the mount, 500 on HTTP); found by fuzz."""
    from nasfs.errors import NotFound

    for spec in ("README.txt@section=~~0", "notes/customer-acme.md@section=Renewal~0"):
        with pytest.raises(NotFound):
            nas.read(spec)
