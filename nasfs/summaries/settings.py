"""How summaries are made and served: one settings object every door builds.

A summarizer is either a command (reads a prompt on stdin, writes the
answer on stdout) or an OpenAI-compatible chat endpoint (``http://HOST:PORT/v1``
with ``--summary-model NAME``): llama.cpp's server, llama-cpp-python's
``llama_cpp.server``, Ollama and vLLM all speak it. An optional judge
(judge.py) is asked after the checker's rules whether the cited lines
support each kept sentence. Each flag has an environment twin
(``NASFS_SUMMARIZER``, ``NASFS_SUMMARY_JUDGE``, ...): the doors read both
(:func:`build_settings`); the core is handed the result and reads neither.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shlex
from dataclasses import dataclass, field

from ..errors import BadView, NotServable
from . import checker
from .judge import Judge

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
    api_key_file: str | None = None  # never logged
    api_key_env: str | None = field(default=None, repr=False)  # the key itself ($NASFS_SUMMARY_API_KEY); never shown
    context_tokens: int = 2048  # the model's context: a larger file is given its outline and what sections fit
    max_tokens: int = 200  # of an answer
    timeout: float = 120.0  # seconds one generation may take ($NASFS_SUMMARY_TIMEOUT)
    retries: int = 2  # after the first try, with backoff 1 s, 2 s, 4 s ...
    in_flight: int = 1  # generations at once (worker threads)
    queue_size: int = 256
    detached: bool = False  # a one-shot door (the CLI): a miss starts a background process instead of a thread
    judge_target: str = field(default="", repr=False)  # --summary-judge URL|CMD (may carry a token): never shown
    judge_model: str = ""

    @property
    def is_http(self) -> bool:
        return _endpoint(self.summarizer)

    @property
    def model_name(self) -> str:
        """What ``model=`` declares: the endpoint's model, or ``command:ARGV0``."""
        if self.model:
            return self.model
        return "command:" + os.path.basename(self.summarizer.split()[0]) if self.summarizer.split() else "command"

    @property
    def judge(self) -> Judge | None:
        return Judge(self.judge_target, self.judge_model or None) if self.judge_target else None

    @property
    def checked(self) -> str:
        """What ``checked=`` declares: ``rules``, or ``rules+judge:NAME``."""
        judge = self.judge
        return "rules" if judge is None else f"rules+judge:{judge.name}"

    @property
    def identity(self) -> str:
        """What the cache is keyed by: everything that changes an answer (the
        whole command line, or endpoint and model; the context and answer size;
        the rules' version; the judge), hashed."""
        judge = self.judge
        whole = "\0".join((self.summarizer, self.model, str(self.context_tokens), str(self.max_tokens),
                           f"rules{checker.VERSION}", judge.identity if judge else ""))
        return hashlib.sha256(whole.encode("utf-8", "surrogateescape")).hexdigest()[:24]

    def api_key(self) -> str | None:
        if self.api_key_file:
            with open(self.api_key_file, encoding="utf-8") as f:
                return f.read().strip() or None
        return self.api_key_env or None

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
        if self.judge_target:
            out += ["--summary-judge", self.judge_target]
        if self.judge_model:
            out += ["--summary-judge-model", self.judge_model]
        out += ["--summary-context", str(self.context_tokens)]
        return out


def absolute_command(command: str) -> str:
    """A command line with its relative paths made absolute (the daemon and a
    background fill run in ``/``): a program named with a ``/`` (``./sum.sh``)
    and any other word that names an existing file here (``python3 cite.py``)."""
    words = shlex.split(command)
    if not words:
        return command
    out = [os.path.abspath(words[0]) if "/" in words[0] and not os.path.isabs(words[0]) else words[0]]
    out += [os.path.abspath(w) if not w.startswith("-") and not os.path.isabs(w) and os.path.exists(w) else w
            for w in words[1:]]
    return command if out == words else shlex.join(out)


def _endpoint(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def build_settings(summarizer: str | None = None, model: str | None = None, mode: str | None = None,
                   in_ladder: bool = False, keep_unsupported: bool = False, key_file: str | None = None,
                   context: int | None = None, detached: bool = False, judge: str | None = None,
                   judge_model: str | None = None, env: dict[str, str] | None = None) -> SummarySettings | None:
    """Settings from a door's flags, falling back to ``env`` (the door's
    environment, ``os.environ`` by default); None: no summarizer. Relative
    paths are made absolute here, in the caller's folder."""
    get = (os.environ if env is None else env).get
    summarizer = summarizer if summarizer is not None else get("NASFS_SUMMARIZER")
    if not summarizer or not summarizer.strip():
        return None
    summarizer = summarizer.strip()
    mode = mode or get("NASFS_SUMMARIES") or "on-demand"
    if mode not in MODES:
        raise BadView(f"--summaries {mode!r} is not a mode", "off, on-demand, background")
    model = model if model is not None else get("NASFS_SUMMARY_MODEL", "")
    if _endpoint(summarizer) and not model:
        raise BadView(f"the summarizer {summarizer} is an endpoint: it needs a model name",
                      "--summary-model NAME (or NASFS_SUMMARY_MODEL)")
    context = context or int(get("NASFS_SUMMARY_CONTEXT") or 2048)
    timeout = float(get("NASFS_SUMMARY_TIMEOUT") or 120)
    if context < 512:
        raise BadView(f"--summary-context {context} is too small for a prompt", "512 or more (the model's context in tokens)")
    judge = (judge if judge is not None else get("NASFS_SUMMARY_JUDGE", "")).strip()
    judge_model = judge_model if judge_model is not None else get("NASFS_SUMMARY_JUDGE_MODEL", "")
    if judge:
        try:
            Judge(judge, judge_model or None)
        except ValueError as exc:
            raise BadView(str(exc), "--summary-judge URL --summary-judge-model NAME, or --summary-judge CMD") from None
    elif judge_model:
        raise BadView(f"--summary-judge-model {judge_model} names a judge model but no judge is given",
                      "--summary-judge URL|CMD (or NASFS_SUMMARY_JUDGE)")
    key_file = key_file or get("NASFS_SUMMARY_KEY_FILE") or None
    return SummarySettings(
        summarizer if _endpoint(summarizer) else absolute_command(summarizer), model, mode,
        in_ladder=in_ladder or get("NASFS_SUMMARIES_IN_LADDER") == "1",
        keep_unsupported=keep_unsupported or get("NASFS_SUMMARIES_KEEP_UNSUPPORTED") == "1",
        api_key_file=os.path.abspath(key_file) if key_file else None,
        api_key_env=None if key_file else get("NASFS_SUMMARY_API_KEY") or None,
        context_tokens=context, timeout=timeout, detached=detached,
        judge_target=judge if not judge or _endpoint(judge) else absolute_command(judge), judge_model=judge_model)
