"""The two ways to ask a model: a command, or an OpenAI-compatible chat endpoint.

Both take a system and a user message and return the model's text, or raise
:class:`BackendDown` naming what failed (the endpoint's URL, the command).
The endpoint is asked with bounded retries and exponential backoff, at most
``in_flight`` requests at once; its API key is sent, never logged or echoed.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
import threading
import time
from typing import Protocol

import httpx

from .settings import SummarySettings

log = logging.getLogger("nasfs.summaries")


class BackendDown(Exception):
    """The summarizer could not be asked or gave no answer; the message names it."""


class Backend(Protocol):
    name: str

    def generate(self, system: str, user: str) -> str: ...


class CommandBackend:
    """A command that reads the whole prompt on stdin and writes its answer on stdout."""

    def __init__(self, command: str, model: str, timeout: float) -> None:
        self.argv = shlex.split(command)
        self.name = model
        self.timeout = timeout

    def generate(self, system: str, user: str) -> str:
        try:
            done = subprocess.run(self.argv, input=f"{system}\n\n{user}".encode(), capture_output=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendDown(f"the summarizer command {self.argv[0]!r} failed: {exc}") from None
        if done.returncode != 0 or not done.stdout.strip():
            detail = done.stderr.decode(errors="replace").strip()[:200] or "no output"
            raise BackendDown(f"the summarizer command {self.argv[0]!r} failed: exit {done.returncode}: {detail}")
        return done.stdout.decode("utf-8", errors="replace")


class ChatBackend:
    """``POST {base}/chat/completions`` with temperature 0 (the same file gives the same answer)."""

    def __init__(self, settings: SummarySettings) -> None:
        self.base = settings.summarizer.rstrip("/")
        self.name = settings.model
        self.settings = settings
        self._slots = threading.BoundedSemaphore(max(1, settings.in_flight))
        headers = {"Content-Type": "application/json"}
        key = settings.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        connect = min(5.0, settings.timeout)
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(settings.timeout, connect=connect))

    def generate(self, system: str, user: str) -> str:
        body = {"model": self.name, "temperature": 0, "seed": 0, "max_tokens": self.settings.max_tokens,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        url = f"{self.base}/chat/completions"
        last = ""
        for attempt in range(self.settings.retries + 1):
            if attempt:
                time.sleep(min(2 ** (attempt - 1), 30))
            try:
                with self._slots:
                    reply = self._client.post(url, json=body)
            except httpx.TimeoutException:
                last = f"no answer within {self.settings.timeout:g} s"
                continue
            except httpx.HTTPError as exc:
                last = f"cannot be reached ({type(exc).__name__}: {exc})"
                continue
            if reply.status_code >= 500 or reply.status_code == 429:
                last = f"answered HTTP {reply.status_code}"
                continue
            if reply.status_code != 200:  # a wrong model name or key: retrying will not help
                raise BackendDown(f"the summarizer endpoint {self.base} refused: HTTP {reply.status_code}: {reply.text[:200]}")
            try:
                return str(reply.json()["choices"][0]["message"]["content"] or "")
            except (ValueError, KeyError, IndexError, TypeError):
                raise BackendDown(f"the summarizer endpoint {self.base} gave an answer that is not a chat completion") from None
        raise BackendDown(f"the summarizer endpoint {self.base} is down: {last} ({self.settings.retries + 1} tries)")

    def close(self) -> None:
        self._client.close()


def make_backend(settings: SummarySettings) -> CommandBackend | ChatBackend:
    if settings.is_http:
        return ChatBackend(settings)
    return CommandBackend(settings.summarizer, settings.model_name, settings.timeout)
