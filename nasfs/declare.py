"""What a response declares: the header line (text) and the JSON envelope.

``tokens`` in the header counts everything the read returns, the header line
included, so it is found as a fixed point (the count's own digits count).
In the envelope ``tokens`` counts ``content`` only (contract §5).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import quote

from . import tokens as tok
from .pointers import Pointer
from .views import Served

_HEADER_SAFE = "/@#:+-._~!$&'()*,;=[]{}"


_PLAIN = re.compile(f"[\\w.~{re.escape(_HEADER_SAFE)}-]+", re.ASCII)  # what quote() leaves as it is


def _value(v: object) -> str:
    """A header value with no space in it (spaces and '%' escaped). A pointer
    is escaped by its own spelling already; escaping it again would print one
    that no longer verifies."""
    if isinstance(v, Pointer):
        return str(v)
    text = str(v).lower() if isinstance(v, bool) else str(v)
    if _PLAIN.fullmatch(text):  # most values (numbers, names): nothing to escape
        return text
    return quote(text, safe=_HEADER_SAFE) if text else '""'


@dataclass(frozen=True, slots=True)
class Response:
    """A declared view: the text served (header + body) and its envelope.

    ``tokens`` is what the budget was compared with (the largest count of the
    tokenizer set, with its margin); ``counts`` holds each tokenizer's own
    count of ``text`` and ``content_counts`` of the body alone."""

    served: Served
    text: bytes
    tokens: int  # of ``text``
    content_tokens: int
    full_tokens: int | None
    tokenizer: str  # the setting's canonical spelling (tokens.resolve)
    budget: int | None
    headed: bool  # False for exact line ranges and raw reads: bytes only
    counts: tuple[int, ...] = ()
    content_counts: tuple[int, ...] = ()
    complete: bool = True  # False: a probe stopped counting once past its limit (never served)

    @property
    def view(self) -> str:
        return self.served.view

    @property
    def header(self) -> str:
        return self.text.split(b"\n", 1)[0].decode() if self.headed else ""

    def envelope(self) -> dict[str, object]:
        s = self.served
        env: dict[str, object] = {
            "view": s.view,
            "tokens": self.content_tokens,
            "generated": s.generated,
            "truncated": s.truncated,
            "content": s.body.decode("utf-8", errors="replace"),
            "evidence": [e.as_dict() for e in s.evidence],
            "tokenizer": self.tokenizer.partition(";")[0],
            "budget_tokens": self.budget,
            "full_tokens": self.full_tokens,
        }
        env.update(_set_keys(self.tokenizer, self.content_counts, as_json=True))
        env.update(dict(s.keys))
        return env

    def envelope_bytes(self) -> bytes:
        return (json.dumps(self.envelope(), ensure_ascii=False, indent=1) + "\n").encode()

    def xattrs(self) -> dict[str, str]:
        s = self.served
        return {
            "user.nas.view": s.view,
            "user.nas.tokens": str(self.tokens),
            "user.nas.generated": str(s.generated).lower(),
            "user.nas.truncated": str(s.truncated).lower(),
            "user.nas.pointer": str(s.evidence[0].pointer) if s.evidence else "",
        }


def _set_keys(tokenizer: str, counts: tuple[int, ...], as_json: bool = False) -> list[tuple[str, object]]:
    """What a tokenizer set declares beyond ``tokens``: each tokenizer's count,
    the margin, and ``estimated`` when no counted tokenizer is the reader's
    own. Nothing for one tokenizer without a margin."""
    used = tok.resolve(tokenizer)
    if used.plain or not counts:
        return []
    keys: list[tuple[str, object]] = [
        ("counts", dict(zip(used.names, counts)) if as_json else ",".join(f"{n}:{c}" for n, c in zip(used.names, counts)))]
    if used.margin:
        keys.append(("margin", used.margin if as_json else f"{used.margin:.2f}"))
    if used.estimated or as_json:  # a header says only what is not exact
        keys.append(("estimated", used.estimated))
    return keys


def header_line(served: Served, tokens: int, full_tokens: int | None, tokenizer: str, budget: int | None,
                counts: tuple[int, ...] = ()) -> str:
    """The header: what every answer must declare, then only what differs from
    the defaults (``truncated`` appears only as ``true``, ``tokenizer`` only
    when it is not ``cl100k_base``, ``counts`` only for a set or a margin) or
    tells the reader something (``full_tokens`` not on the file itself):
    a header costs tokens on every read. The envelope keeps every key."""
    pairs: list[tuple[str, object]] = [
        ("view", served.view),
        ("tokens", tokens),
        ("generated", served.generated),
    ]
    if served.truncated:
        pairs.append(("truncated", True))
    pairs.append(("pointer", served.evidence[0].pointer if served.evidence else "none"))
    if full_tokens is not None and served.view != "full":  # the file itself: its count is the answer's, less this line
        pairs.append(("full_tokens", full_tokens))
    named = tokenizer.partition(";")[0]  # the margin is declared on its own
    if named != tok.DEFAULT_TOKENIZER:
        pairs.append(("tokenizer", named))
    pairs.extend(_set_keys(tokenizer, counts))
    if budget is not None:
        pairs.append(("budget", budget))
    pairs.extend(served.keys)
    return "nasfs " + " ".join(f"{k}={_value(v)}" for k, v in pairs) + "\n"


def declare(
    served: Served,
    full_tokens: int | None,
    tokenizer: str,
    budget: int | None,
    headed: bool = True,
    body_counts: tuple[int, ...] | None = None,
    over: int | None = None,
) -> Response:
    """Attach the header and the true token counts to a served view.

    Each tokenizer of the set counts the whole answer (its header holds every
    count, so they are found together as a fixed point: the counts' own
    digits count). ``body_counts`` may be passed when already known (the
    whole file's, cached by blob) to spare tokenizing the body again.
    ``over``: a rung being tried against a budget; once one tokenizer's count
    of the body alone is past it, the others are not counted and the answer
    is marked incomplete (it only ever loses to the budget).
    """
    used = tok.resolve(tokenizer)
    if body_counts is None:
        body_counts = used.counts(served.body, over)
        if len(body_counts) < len(used.names):
            past = used.charge(max(body_counts))
            return Response(served, served.body, past, past, full_tokens, tokenizer, budget, headed, (), (), False)
    body_tokens = used.charge(max(body_counts))
    if not headed:
        return Response(served, served.body, body_tokens, body_tokens, full_tokens, tokenizer, budget, False, body_counts, body_counts)
    joins_cleanly = not served.body[:1].isspace()
    counts = body_counts
    for _ in range(8):
        header = header_line(served, used.charge(max(counts)), full_tokens, tokenizer, budget, counts)
        if joins_cleanly:
            counted = tuple(h + b for h, b in zip(used.counts(header), body_counts))
        else:  # a leading newline can merge with the header's: count the whole
            counted = used.counts(header.encode() + served.body)
        if counted == counts:
            break
        counts = counted
    text = header.encode() + served.body
    return Response(served, text, used.charge(max(counts)), body_tokens, full_tokens, tokenizer, budget, True, counts, body_counts)

