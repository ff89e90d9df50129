"""Every door takes the new tokenizer forms (a set, a margin, a preset) and
refuses bad ones saying what is valid: the CLI, the mount (its own flag and
an fstab option), HTTP and MCP (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession

from nasfs import tokens as tok
from nasfs.fuse.mount import mount_at

from .conftest import header
from .mounts import Mount
from .test_http import serving
from .test_install import cleanup_mount, need_root_and_fuse, wait_no_daemon, wait_unmounted
from .test_mcp import call, run

ACME = "notes/customer-acme.md"
BILLING = "code/billing.py"


def counts(text: bytes | str) -> dict[str, int]:
    raw = text.encode() if isinstance(text, str) else text
    return {k: int(v) for k, v in (pair.split(":") for pair in header(raw)["counts"].split(","))}


def within(text: bytes | str, names: list[str], budget: int, margin: float = 0.0) -> None:
    raw = text.encode() if isinstance(text, str) else text
    assert header(raw)["view"] != "none", raw
    declared = counts(raw)
    assert declared == {n: tok.count(raw, n) for n in names}
    assert max(declared.values()) * (1 + margin) <= budget


def nasfs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nasfs", *args], capture_output=True, text=True, timeout=120)


# -- CLI ---------------------------------------------------------------------------
def test_cli_reads_with_a_set_a_margin_and_a_preset(home: Path) -> None:
    done = nasfs("read", "--repo", str(home), "--tokenizer", "max:cl100k_base,llama3,qwen2.5", "--margin", "0.2", f"{BILLING}@300")
    assert done.returncode == 0, done.stderr
    keys = header(done.stdout.encode())
    assert keys["tokenizer"] == "max:cl100k_base,llama3,qwen2.5" and keys["margin"] == "0.20" and keys["estimated"] == "true"
    within(done.stdout, ["cl100k_base", "llama3", "qwen2.5"], 300, 0.2)
    preset = nasfs("read", "--repo", str(home), "--tokenizer", "mistral", "--json", f"{ACME}@200")
    assert preset.returncode == 0, preset.stderr
    assert '"tokenizer": "mistral"' in preset.stdout and '"mistral_tekken"' in preset.stdout


@pytest.mark.parametrize("args, says", [
    (["--tokenizer", "gpt2"], "unknown tokenizer 'gpt2'; valid: installed: cl100k_base, o200k_base, llama3"),
    (["--tokenizer", "max:llama3,,qwen2.5"], "lists an empty tokenizer name"),
    (["--margin", "big"], "margin 'big' is not a number"),
    (["--tokenizer", "claude", "--margin", "5"], "margin '5' is out of range"),
])
def test_cli_refuses_bad_tokenizers_in_one_line(home: Path, args: list[str], says: str) -> None:
    done = nasfs("read", "--repo", str(home), *args, f"{ACME}@200")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


# -- the mount: its flag and an fstab option ---------------------------------------
def test_a_mount_counts_with_its_tokenizer_flag(home: Path, tmp_path: Path) -> None:
    need_root_and_fuse()
    m = Mount(home, tmp_path / "mnt", "--tokenizer", "max:o200k_base,deepseek_v4", "--margin", "0.1")
    try:
        text = (m.mountpoint / f"{BILLING}@300").read_bytes()
        assert header(text)["margin"] == "0.10"
        within(text, ["o200k_base", "deepseek_v4"], 300, 0.1)
        assert os.getxattr(m.mountpoint / f"{BILLING}@300", "user.nas.tokens").decode() == header(text)["tokens"]
    finally:
        assert m.stop() == 0, m.log.read_text()[-2000:]


def test_mount_options_take_a_set_and_refuse_a_bad_one(home: Path, tmp_path: Path) -> None:
    """The helper form mount(8) runs for fstab lines: ``-o tokenizer=max:A+B,margin=M``."""
    need_root_and_fuse()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with cleanup_mount(mnt):
        done = nasfs(str(home), str(mnt), "-o", "node=box,tree=home,tokenizer=max:cl100k_base+llama3,margin=0.25")
        assert done.returncode == 0, done.stderr
        text = (mnt / f"{ACME}@300").read_bytes()
        assert header(text)["tokenizer"] == "max:cl100k_base,llama3" and header(text)["margin"] == "0.25"
        within(text, ["cl100k_base", "llama3"], 300, 0.25)
        assert nasfs("umount", str(mnt)).returncode == 0
        wait_unmounted(mnt)
        wait_no_daemon(mnt)
        for options, says in (("tokenizer=max:cl100k_base+llama9", "unknown tokenizer 'llama9'"),
                              ("tokenizer=claude,margin=-0.5", "margin '-0.5' is out of range")):
            done = nasfs(str(home), str(mnt), "-o", f"node=box,{options}")
            assert done.returncode == 2 and says in done.stderr and done.stderr.count("\n") == 1, done.stderr
            assert mount_at(str(mnt)) is None


# -- HTTP --------------------------------------------------------------------------
def test_http_reads_with_a_requests_tokenizer(home: Path, nas) -> None:
    with serving(home) as server:
        r = server.post("/v1/files/read", {"path": BILLING, "budget_tokens": 300, "tokenizer": "max:cl100k_base+qwen3.6", "margin": 0.3})
        assert r.status_code == 200, r.text
        env = r.json()
        expected = nas.using("max:cl100k_base,qwen3.6;margin=0.3").read(f"{BILLING}@300").envelope()
        assert env["counts"] == expected["counts"] and env["content"] == expected["content"]
        assert env["tokenizer"] == "max:cl100k_base,qwen3.6" and env["margin"] == 0.3 and env["estimated"] is True
        plain = server.post("/v1/files/read", {"path": BILLING, "budget_tokens": 300}).json()
        assert plain["tokenizer"] == "cl100k_base" and "counts" not in plain  # the server's own, unchanged
        listed = server.post("/v1/files/list", {"path": "notes", "tokenizer": "llama"}).json()
        assert listed["tokenizer"] == "llama"
        for body, says in (({"tokenizer": "gpt2"}, "unknown tokenizer 'gpt2'"),
                           ({"tokenizer": 7}, "tokenizer must be a string"),
                           ({"margin": "lots"}, "margin must be a number from 0 to 4"),
                           ({"margin": 9}, "margin must be a number from 0 to 4")):
            r = server.post("/v1/files/read", {"path": ACME, **body})
            assert r.status_code == 400 and says in r.json()["detail"], r.text
        assert httpx.get(server.url + "/v1/health").status_code == 200


# -- MCP ---------------------------------------------------------------------------
def test_mcp_reads_with_a_tokenizer_argument(home: Path) -> None:
    async def body(s: ClientSession) -> None:
        env = await call(s, "nas_read", path=BILLING, budget_tokens=300, tokenizer="max:cl100k_base,mistral_tekken")
        assert set(env["counts"]) == {"cl100k_base", "mistral_tekken"} and env["estimated"] is False
        env = await call(s, "nas_read", path=BILLING, budget_tokens=300, tokenizer="claude")
        assert env["margin"] == tok.PRESETS["claude"].margin and env["estimated"] is True
        for arguments, says in (({"tokenizer": "gpt2"}, "unknown tokenizer 'gpt2'"),
                                ({"tokenizer": "max:llama3,llama3"}, "names a tokenizer twice"),
                                ({"margin": -1}, "margin")):
            result = await s.call_tool("nas_read", {"path": ACME, **arguments})
            assert result.is_error and says in result.content[0].text, result.content[0].text

    run(home, body)
