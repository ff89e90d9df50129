"""An optional entailment judge: does a cited passage support one sentence?

The rules of checker.py see words, numbers and polarity; a judge is a model
asked, after the rules, whether the cited lines support the sentence. It is
any OpenAI-compatible chat endpoint (a MiniCheck-style model under Ollama,
``bespoke-minicheck``, or a general chat model) or a command that reads the
prompt on stdin. The user message is MiniCheck's own format,
``Document: ...`` / ``Claim: ...``, answered Yes or No; the system message
says the same in words, so a general chat model answers in that form too.

A judge that is down, slow or unreadable answers None, which the caller
treats as "not kept": a judge can only ever remove sentences.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass

import httpx

log = logging.getLogger("nasfs.summaries")

SYSTEM = ("Decide whether the claim is supported by the document. It is supported only if everything the claim "
          "says is stated in the document; otherwise it is not. Answer with one word: Yes or No.")
ANSWER_TOKENS = 4
MAX_REPLY_BYTES = 1 << 20  # a chat completion of a few tokens is far smaller
_FIRST_WORD = re.compile(r"[a-z]+")
_YES = frozenset({"yes", "supported", "true", "consistent", "correct"})
_NO = frozenset({"no", "not", "unsupported", "false", "inconsistent", "incorrect"})


@dataclass(frozen=True)
class Judge:
    target: str  # an http(s) URL of an OpenAI-compatible endpoint (up to /v1), or a command line (prompt on stdin)
    model: str | None  # the model name for the endpoint (required for a URL)
    key: str | None = None  # bearer key for the endpoint, if any; never logged

    def __post_init__(self) -> None:
        if not self.target.strip():
            raise ValueError("the summary judge is empty: give an http(s):// URL of an OpenAI-compatible API or a command")
        if self.is_http and not self.model:
            raise ValueError(f"the summary judge {self.target} is an endpoint: name its model too "
                             "(--summary-judge-model NAME, e.g. bespoke-minicheck)")
        if not self.is_http and not shlex.split(self.target):
            raise ValueError(f"the summary judge command {self.target!r} has no program")

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def name(self) -> str:
        """What the view declares (``checked=rules+judge:NAME``): the model, or the command's program."""
        if self.model:
            return self.model
        return os.path.basename(shlex.split(self.target)[0])

    @property
    def identity(self) -> str:
        """The whole identity for cache keys: the endpoint or the full command line, and the model."""
        return f"{self.target.strip()}\n{self.model or ''}"

    def __repr__(self) -> str:  # the endpoint (which may carry a token) and the key stay out of logs and tracebacks
        return f"Judge(name={self.name!r}, key={'***' if self.key else None})"


def user_message(sentence: str, cited: str) -> str:
    """MiniCheck's input format: the document, then the claim."""
    return f"Document: {cited.strip()}\nClaim: {sentence.strip()}"


def parse_answer(reply: str) -> bool | None:
    """Yes/No from a reply; None when it says neither or both (``Yes.``, ``**No**``, ``Answer: yes``)."""
    words = _FIRST_WORD.findall(reply.lower())
    if not words:
        return None
    if words[0] == "answer" and len(words) > 1:
        words = words[1:]
    if words[0] in _YES:
        return True
    if words[0] in _NO:
        return False
    said = {w in _YES for w in words if w in _YES or w in _NO}
    return said.pop() if len(said) == 1 else None


def _ask_endpoint(judge: Judge, user: str, timeout: float) -> str | None:
    """One chat completion within ``timeout`` seconds in all: httpx's timeouts bound each read, so
    an endpoint that trickles its reply is cut off by a deadline checked between chunks."""
    base = judge.target.rstrip("/")
    url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
    headers = {"Authorization": f"Bearer {judge.key}"} if judge.key else {}
    body = {"model": judge.model, "temperature": 0, "seed": 0, "max_tokens": ANSWER_TOKENS,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]}
    deadline = time.monotonic() + timeout
    try:
        with httpx.stream("POST", url, json=body, headers=headers,
                          timeout=httpx.Timeout(timeout, connect=min(5.0, timeout))) as reply:
            if reply.status_code != 200:
                log.warning("the summary judge %s answered HTTP %d", judge.name, reply.status_code)
                return None
            raw = bytearray()
            for chunk in reply.iter_bytes():
                raw += chunk
                if time.monotonic() > deadline:
                    log.warning("the summary judge %s gave no answer within %g s", judge.name, timeout)
                    return None
                if len(raw) > MAX_REPLY_BYTES:
                    log.warning("the summary judge %s answered over %d bytes", judge.name, MAX_REPLY_BYTES)
                    return None
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError, ValueError) as exc:
        log.warning("the summary judge %s gave no answer: %s", judge.name, type(exc).__name__)
        return None
    try:
        return str(json.loads(bytes(raw))["choices"][0]["message"]["content"] or "")
    except (ValueError, KeyError, IndexError, TypeError):
        log.warning("the summary judge %s gave an answer that is not a chat completion", judge.name)
        return None


def _ask_command(judge: Judge, user: str, timeout: float) -> str | None:
    """The command in a session of its own, so a timeout ends it and whatever it started (a shell's
    child holding the pipes) at once."""
    try:
        argv = shlex.split(judge.target)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except (OSError, ValueError) as exc:
        log.warning("the summary judge command %r could not start: %s", judge.target, exc)
        return None
    with proc:  # closes the pipes whatever happens
        try:
            out, _ = proc.communicate(f"{SYSTEM}\n\n{user}".encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            log.warning("the summary judge command %r gave no answer within %g s", argv[0], timeout)
            return None
        finally:
            if proc.returncode is None:  # not reaped yet, so its session id is still its own
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
    if proc.returncode != 0:
        log.warning("the summary judge command %r failed: exit %d", argv[0], proc.returncode)
        return None
    return out[:MAX_REPLY_BYTES].decode("utf-8", errors="replace")


def ask(judge: Judge, sentence: str, cited: str, timeout: float = 60.0) -> bool | None:
    """True: the judge says the cited lines support the sentence; False: it says not;
    None: no usable answer (down, timeout, unparsable): the caller treats None as 'not kept'."""
    user = user_message(sentence, cited)
    try:
        reply = _ask_endpoint(judge, user, timeout) if judge.is_http else _ask_command(judge, user, timeout)
    except Exception as exc:  # noqa: BLE001 (a judge's failure is no answer, never the caller's exception)
        log.warning("the summary judge %s failed: %s", judge.name, type(exc).__name__)
        return None
    if reply is None:
        return None
    verdict = parse_answer(reply)
    if verdict is None:
        log.warning("the summary judge %s answered neither yes nor no: %r", judge.name, reply[:80])
    return verdict
