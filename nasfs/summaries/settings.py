"""How summaries are made and served: one settings object every door builds.

A summarizer is either a command (reads a prompt on stdin, writes the
answer on stdout) or an OpenAI-compatible chat endpoint (``http://HOST:PORT/v1``
with ``--summary-model NAME``): llama.cpp's server, llama-cpp-python's
``llama_cpp.server``, Ollama and vLLM all speak it. Each flag has an
environment twin (``NASFS_SUMMARIZER``, ``NASFS_SUMMARY_MODEL``, ...) so a
systemd unit or fstab line can set them once.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ..errors import BadView, NotServable

MODES = ("off", "on-demand", "background")
VALID_NOW = "@outline, @N, @section=NAME, @L12-L18"


class SummaryPending(NotServable):
    """A summary not generated yet: queued, never waited for (EAGAIN: try again later)."""

    errno = errno.EAGAIN


@dataclass(frozen=True, slots=True)
class SummarySettings:
    summarizer: str  # a command, or an http(s):// URL of an OpenAI-compatible API (up to /v1)
    model: str = ""  # the endpoint's model name; a command's name for itself
    mode: str = "on-demand"
    in_ladder: bool = False  # a fresh, fully supported summary is a rung of @N
    keep_unsupported: bool = False  # keep and mark sentences the checker refused, instead of dropping them
    api_key_file: str | None = None  # never logged; NASFS_SUMMARY_API_KEY when unset
    context_tokens: int = 2048  # the model's context: a larger file is given its outline and what sections fit
    max_tokens: int = 200  # of an answer
    timeout: float = 120.0  # seconds one generation may take ($NASFS_SUMMARY_TIMEOUT)
    retries: int = 2  # after the first try, with backoff 1 s, 2 s, 4 s ...
    in_flight: int = 1  # generations at once (worker threads)
    queue_size: int = 256
    detached: bool = False  # a one-shot door (the CLI): a miss starts a background process instead of a thread

    @property
    def is_http(self) -> bool:
        return self.summarizer.startswith(("http://", "https://"))

    @property
    def model_name(self) -> str:
        """What ``model=`` declares: the endpoint's model, or ``command:ARGV0``."""
        if self.model:
            return self.model
        return "command:" + os.path.basename(self.summarizer.split()[0]) if self.summarizer.split() else "command"

    def api_key(self) -> str | None:
        if self.api_key_file:
            with open(self.api_key_file, encoding="utf-8") as f:
                return f.read().strip() or None
        return os.environ.get("NASFS_SUMMARY_API_KEY") or None

    def argv(self, mode: bool = True) -> list[str]:
        """Flags that make the same settings in another process (a daemon; a fill, which has no mode)."""
        out = ["--summarizer", self.summarizer] + (["--summaries", self.mode] if mode else [])
        if self.model:
            out += ["--summary-model", self.model]
        if self.api_key_file:
            out += ["--summary-key-file", self.api_key_file]
        if self.in_ladder:
            out.append("--summaries-in-ladder")
        if self.keep_unsupported:
            out.append("--summaries-keep-unsupported")
        out += ["--summary-context", str(self.context_tokens)]
        return out


def build_settings(summarizer: str | None = None, model: str | None = None, mode: str | None = None,
                   in_ladder: bool = False, keep_unsupported: bool = False, key_file: str | None = None,
                   context: int | None = None, detached: bool = False) -> SummarySettings | None:
    """Settings from flags, falling back to the environment; None: no summarizer."""
    env = os.environ.get
    summarizer = summarizer if summarizer is not None else env("NASFS_SUMMARIZER")
    if not summarizer or not summarizer.strip():
        return None
    mode = mode or env("NASFS_SUMMARIES") or "on-demand"
    if mode not in MODES:
        raise BadView(f"--summaries {mode!r} is not a mode", "off, on-demand, background")
    model = model if model is not None else env("NASFS_SUMMARY_MODEL", "")
    if summarizer.startswith(("http://", "https://")) and not model:
        raise BadView(f"the summarizer {summarizer} is an endpoint: it needs a model name",
                      "--summary-model NAME (or NASFS_SUMMARY_MODEL)")
    context = context or int(env("NASFS_SUMMARY_CONTEXT") or 2048)
    timeout = float(env("NASFS_SUMMARY_TIMEOUT") or 120)
    if context < 512:
        raise BadView(f"--summary-context {context} is too small for a prompt", "512 or more (the model's context in tokens)")
    return SummarySettings(
        summarizer.strip(), model, mode,
        in_ladder=in_ladder or env("NASFS_SUMMARIES_IN_LADDER") == "1",
        keep_unsupported=keep_unsupported or env("NASFS_SUMMARIES_KEEP_UNSUPPORTED") == "1",
        api_key_file=key_file or env("NASFS_SUMMARY_KEY_FILE") or None,
        context_tokens=context, timeout=timeout, detached=detached)
