"""The entailment judge: a real endpoint on 127.0.0.1 and real commands, each
answer read, and every way of not answering turned into None."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from nasfs.summaries.judge import Judge, ask, parse_answer

from .summary_servers import FakeChat, free_port


def test_an_endpoint_is_asked_in_minichecks_format_with_its_key() -> None:
    with FakeChat(lambda user: "Yes" if "30 s" in user else "No") as fake:
        judge = Judge(fake.url, "bespoke-minicheck", key="s3cret")
        assert ask(judge, "The timeout is 30 seconds.", "timeout: 30 s") is True
        assert ask(judge, "The timeout is 5 seconds.", "timeout: 5 min") is False
    [first, _] = fake.requests
    assert first["auth"] == "Bearer s3cret"
    assert first["body"]["model"] == "bespoke-minicheck"
    assert first["body"]["messages"][-1]["content"] == "Document: timeout: 30 s\nClaim: The timeout is 30 seconds."
    assert "s3cret" not in repr(judge)


def test_a_judge_that_hangs_is_no_answer_within_its_timeout() -> None:
    with FakeChat(lambda user: "Yes", delay=30) as fake:
        started = time.monotonic()
        assert ask(Judge(fake.url, "m"), "a claim", "a document", timeout=1.0) is None
        assert time.monotonic() - started < 10


def test_a_judge_that_is_down_is_no_answer() -> None:
    assert ask(Judge(f"http://127.0.0.1:{free_port()}/v1", "m"), "a claim", "a document", timeout=2.0) is None


@pytest.mark.parametrize("reply, verdict", [
    ("Yes", True), ("yes.", True), ("**Yes**", True), ("Answer: No", False), ("No, it does not.", False),
    ("Not supported.", False), ("The claim is supported.", True), ("The claim is not supported", None),
    ("", None), ("Maybe", None),
])
def test_replies_are_read_as_yes_no_or_nothing(reply: str, verdict: bool | None) -> None:
    assert parse_answer(reply) is verdict


def test_a_command_judge_reads_the_prompt_on_stdin(tmp_path: Path) -> None:
    script = tmp_path / "judge.py"
    script.write_text("import sys\nprompt = sys.stdin.read()\nprint('Yes' if 'Claim: It renews yearly.' in prompt "
                      "and 'Document: renews yearly' in prompt else 'No')\n")
    judge = Judge(f"{sys.executable} {script}", None)
    assert judge.name == Path(sys.executable).name
    assert ask(judge, "It renews yearly.", "renews yearly") is True
    assert ask(judge, "It renews monthly.", "renews yearly") is False
    assert ask(Judge(f"{sys.executable} -c 'import sys; sys.exit(3)'", None), "a", "b") is None
    assert ask(Judge(str(tmp_path / "no-such-program"), None), "a", "b") is None


def test_names_and_identities() -> None:
    assert Judge("http://127.0.0.1:11434/v1", "bespoke-minicheck").name == "bespoke-minicheck"
    a, b = Judge("llama-cli -m A.gguf", None), Judge("llama-cli -m B.gguf", None)
    assert a.name == b.name == "llama-cli" and a.identity != b.identity
    assert Judge("http://h/v1", "x").identity != Judge("http://h/v1", "y").identity
    with pytest.raises(ValueError, match="name its model too"):
        Judge("http://127.0.0.1:11434/v1", None)
    with pytest.raises(ValueError, match="judge is empty"):
        Judge("  ", None)


def test_a_judge_that_trickles_its_reply_is_cut_off_at_the_timeout() -> None:
    """httpx's timeout bounds each read: a server sending a byte every half second never trips it."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def trickle() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(60):
                time.sleep(0.25)
                try:
                    conn.sendall(b" ")
                except OSError:
                    return

    threading.Thread(target=trickle, daemon=True).start()
    started = time.monotonic()
    try:
        assert ask(Judge(f"http://127.0.0.1:{srv.getsockname()[1]}/v1", "m"), "a claim", "a doc", timeout=1.0) is None
        assert time.monotonic() - started < 4
    finally:
        srv.close()


@pytest.mark.parametrize("target", ["http://[::1/v1", "http://127.0.0.1:99999/v1"])
def test_a_judge_at_a_malformed_url_is_no_answer_not_an_exception(target: str) -> None:
    assert ask(Judge(target, "m"), "a claim", "a document", timeout=1.0) is None


def test_a_command_judge_that_hangs_is_ended_with_what_it_started(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    judge = Judge(f"sh -c 'sleep 3; touch {marker}; echo Yes'", None)
    started = time.monotonic()
    assert ask(judge, "a claim", "a document", timeout=0.5) is None
    assert time.monotonic() - started < 2.5
    time.sleep(3.5)
    assert not marker.exists(), "the shell's child outlived the judge's timeout"
    assert ask(Judge("echo\x00x", None), "a", "b", timeout=1.0) is None
