"""The judge's pass over what the rules kept (judge.py asks; this decides).

Each kept sentence and the text it cites is put to the judge; its yes or
no is remembered per (blob or folder signature, sentence, the cited text, judge identity),
so a summary is judged once. A "no" moves the sentence to the refused ones
with the judge named. A judge that gives no usable answer (down, slow,
neither yes nor no) raises :class:`JudgeDown`: the summary is then not
made, so it is never served with a sentence the judge did not pass, and
never declared judged when it was not; it is tried again later.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .backends import BackendDown
from .judge import Judge, ask
from .store import Store


class JudgeDown(BackendDown):
    """The judge gave no usable answer about a sentence; the message names the judge."""


def judge_record(record: dict[str, Any], judge: Judge, store: Store, ident: str,
                 cited: Callable[[dict[str, Any]], str], timeout: float) -> dict[str, Any]:
    """``record`` (as the rules left it) with only the sentences the judge
    supports kept; ``cited(k)`` is the text sentence ``k`` cites."""
    kept, refused = [], list(record["refused"])
    for k in record["kept"]:
        # keyed by the very text the judge reads, not only by where it is: a folder's
        # cited children may be their summaries or (one failed) their skeletons
        text = cited(k)
        where = json.dumps(k["cited"]) + "\0" + text  # tuples (just made) and lists (loaded) alike
        verdict = store.verdict(ident, k["text"], where, judge.identity)
        if verdict is None:
            verdict = ask(judge, k["text"], text, timeout)
            if verdict is None:
                raise JudgeDown(f"the summary judge {judge.name} gave no usable answer (down, slow, or neither "
                                "yes nor no); the summary waits for it")
            store.judged(ident, k["text"], where, judge.identity, verdict)
        if verdict:
            kept.append(k)
        else:
            refused.append({"text": k["text"], "cited": k["cited"],
                            "reason": f"the judge {judge.name} says the cited text does not support it"})
    return dict(record, kept=kept, refused=refused, checked=f"rules+judge:{judge.name}")
