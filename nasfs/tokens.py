"""Token counts for the reader's model: one tokenizer, the max over several,
or a model family's preset with a declared margin (docs/tokens.md).

A tokenizer setting is spelled as one string, which every door accepts and
which keys every cache: ``cl100k_base``, ``max:cl100k_base,llama3`` (``+``
may stand for ``,``, as mount options split at commas), a preset such as
``claude``, and ``;margin=0.30`` after any of them. :func:`count` gives the
number a budget is compared with: the largest count of the set, times
``1 + margin``, rounded up, so ``count <= budget`` holds exactly when the
largest count fits ``budget / (1 + margin)``.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from . import vocabularies
from .errors import BadTokenizer

DEFAULT_TOKENIZER = "cl100k_base"
TOKENIZERS = tuple(vocabularies.VOCABULARIES)
MAX_MARGIN = 4.0
_pool_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Preset:
    """A model family: the tokenizers counted and the margin added on top,
    measured or published (docs/tokens.md gives the figure behind each)."""

    names: tuple[str, ...]
    margin: float
    estimated: bool
    models: str


PRESETS: dict[str, Preset] = {
    "openai": Preset(("cl100k_base", "o200k_base"), 0.0, False, "GPT-4, GPT-4o, GPT-4.1, o-series: their own tokenizers"),
    "llama": Preset(("llama3",), 0.0, False, "Llama 3.x: its own tokenizer"),
    "qwen": Preset(("qwen2.5", "qwen3.6"), 0.0, False, "Qwen 2 to 3.6: their own tokenizers"),
    "mistral": Preset(("mistral_tekken",), 0.0, False, "Mistral NeMo, Small 3, Large 2: tekken"),
    "deepseek": Preset(("deepseek_v4",), 0.0, False, "DeepSeek V4: its own tokenizer"),
    "claude": Preset(("cl100k_base", "o200k_base"), 0.75, True, "Claude 3 to Opus 4.7: no offline tokenizer; published ratios"),
    "gemini": Preset(("cl100k_base", "qwen3.6", "mistral_tekken"), 0.30, True,
                     "Gemini and Gemma: no offline tokenizer; the open tokenizers' spread"),
}


@dataclass(frozen=True, slots=True)
class TokenSet:
    """A resolved tokenizer setting."""

    spelled: str  # the canonical spelling (keys caches, printed as tokenizer=)
    names: tuple[str, ...]
    margin: float
    estimated: bool  # True when no counted tokenizer is the reader's own

    @property
    def plain(self) -> bool:
        """One tokenizer named as itself, no margin: declared as before (no counts=)."""
        return self.spelled == self.names[0]

    def charge(self, largest: int) -> int:
        """What a budget is compared with, for a largest count."""
        return math.ceil(largest * (1 + self.margin) - 1e-9) if self.margin else largest

    def counts(self, text: str | bytes, over: int | None = None) -> tuple[int, ...]:
        """Each tokenizer's count of ``text``, in :attr:`names` order; with
        ``over``, only as far as the first whose charge is past it."""
        text = _text(text)
        if not text:
            return (0,) * len(self.names)
        if over is None and len(self.names) > 1 and len(text) >= PARALLEL_FROM:
            return tuple(_pool().map(lambda name: vocabularies.counter(name)(text), self.names))
        counts = []
        for name in self.names:
            counts.append(vocabularies.counter(name)(text))
            if over is not None and self.charge(counts[-1]) > over:
                break
        return tuple(counts)


PARALLEL_FROM = 16 * 1024  # characters: a text this long is counted by its tokenizers at once
_workers: list = []  # the one ThreadPoolExecutor, made on first use (its import costs start-up)
os.register_at_fork(after_in_child=_workers.clear)  # a forked child has none of its threads: it makes its own


def _pool():  # -> concurrent.futures.ThreadPoolExecutor
    """Threads that count one text with several tokenizers at once (tiktoken
    lets go of the GIL while it encodes): a whole file's counts cost about
    one tokenizer's time per core."""
    if not _workers:
        from concurrent.futures import ThreadPoolExecutor

        with _pool_lock:
            if not _workers:
                _workers.append(ThreadPoolExecutor(max_workers=max(os.cpu_count() or 1, 2), thread_name_prefix="nasfs-count"))
    return _workers[0]


def _text(text: str | bytes) -> str:
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


VALID = ("a tokenizer (" + ", ".join(TOKENIZERS) + "), max:A,B,... of them ('+' may separate them), or a preset ("
         + ", ".join(PRESETS) + "); ;margin=M (0 to 4) may follow")


def _valid_here() -> str:
    return ("installed: " + ", ".join(vocabularies.installed()) + "; max:A,B,... of them; presets: "
            + ", ".join(PRESETS) + "; ;margin=M (0 to 4) may follow")


def spell(tokenizer: str, margin: float | str | None = None) -> str:
    """The canonical spelling of ``--tokenizer`` with an optional ``--margin``;
    refuses what cannot be counted with, saying what can."""
    if margin is not None and margin != "":
        tokenizer = f"{tokenizer.partition(';')[0]};margin={margin}"  # replaces the setting's own margin
    return resolve(tokenizer).spelled


def check_tokenizer(spec: str) -> str:
    return resolve(spec).spelled


@functools.lru_cache(maxsize=64)
def resolve(spec: str) -> TokenSet:
    """Parse a tokenizer setting (see the module's docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise BadTokenizer("no tokenizer named", VALID)
    base, _, margin_part = spec.strip().partition(";")
    margin: float | None = None
    if margin_part:
        key, _, value = margin_part.partition("=")
        if key.strip() != "margin":
            raise BadTokenizer(f"{margin_part!r} after the tokenizer is not a margin", VALID)
        margin = check_margin(value)
    base = base.strip()
    if base in PRESETS:
        preset = PRESETS[base]
        for name in preset.names:
            vocabularies.check(name)
        used = preset.margin if margin is None else margin
        spelled = base if margin is None else f"{base};margin={used:.2f}"
        return TokenSet(spelled, preset.names, used, preset.estimated or used > 0)
    if base.startswith("max:"):
        names = tuple(n.strip() for n in base[4:].replace("+", ",").split(","))
        if not names or any(not n for n in names):
            raise BadTokenizer(f"{base!r} lists an empty tokenizer name", VALID)
        if len(set(names)) != len(names):
            raise BadTokenizer(f"{base!r} names a tokenizer twice", VALID)
    else:
        names = (base,)
    for name in names:
        if name in PRESETS:
            raise BadTokenizer(f"the preset {name!r} cannot be listed in max:", VALID)
        if name not in vocabularies.VOCABULARIES:
            raise BadTokenizer(f"unknown tokenizer {name!r}", _valid_here())
        vocabularies.check(name)
    used = margin or 0.0
    spelled = (f"max:{','.join(names)}" if base.startswith("max:") else base) + (f";margin={used:.2f}" if used else "")
    return TokenSet(spelled, names, used, used > 0)


def check_margin(value: object) -> float:
    """A margin: a number from 0 to 4 (0.30 adds 30 %)."""
    try:
        margin = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadTokenizer(f"margin {value!r} is not a number", "a margin from 0 to 4, e.g. 0.30 for 30 %") from None
    if not 0 <= margin <= MAX_MARGIN or math.isnan(margin):
        raise BadTokenizer(f"margin {value!r} is out of range", "a margin from 0 to 4, e.g. 0.30 for 30 %")
    return round(margin, 2)


def encoding(name: str = DEFAULT_TOKENIZER):  # -> tiktoken.Encoding
    """tiktoken's encoding of one of OpenAI's vocabularies."""
    return vocabularies.openai_encoding(name)


def count(text: str | bytes, spec: str = DEFAULT_TOKENIZER) -> int:
    """Tokens of ``text`` as a budget counts them; bytes are decoded as UTF-8
    with replacement."""
    tokens = resolve(spec)
    if tokens.plain:
        text = _text(text)
        return vocabularies.counter(tokens.names[0])(text) if text else 0
    return tokens.charge(max(tokens.counts(text)))


def count_stream(chunks: Iterable[bytes], spec: str = DEFAULT_TOKENIZER) -> int:
    """Tokens of a stream too large to hold, counted per block of whole lines.

    Blocks are cut after a newline, where the pretokenizers split anyway, so
    the sum equals the count of the whole text except across runs of blank
    lines at a cut (off by at most one token per cut).
    """
    tokens = resolve(spec)
    totals = [0] * len(tokens.names)
    rest = b""

    def add(block: bytes) -> None:
        for i, n in enumerate(tokens.counts(block)):
            totals[i] += n

    for chunk in chunks:
        buf = rest + chunk
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            rest = buf
            continue
        add(buf[:cut])
        rest = buf[cut:]
    add(rest)
    return tokens.charge(max(totals))
