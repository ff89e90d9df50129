"""A response as the disk cache and the view workers carry it: JSON that
holds its bytes exactly (latin-1) and its evidence with full commit ids."""

from __future__ import annotations

import json
from dataclasses import replace

from .declare import Response
from .errors import NasError
from .pointers import parse_pointer
from .repo import GitTree
from .views import Evidence, Served


def response_to_json(r: Response) -> bytes:
    s = r.served
    return json.dumps({
        "view": s.view, "body": s.body.decode("latin-1"), "text": r.text.decode("latin-1"),
        "evidence": [[str(e.pointer), e.sha256, e.blob, e.pointer.commit] for e in s.evidence],
        "generated": s.generated, "truncated": s.truncated, "keys": list(s.keys),
        "tokens": r.tokens, "content_tokens": r.content_tokens, "full_tokens": r.full_tokens,
        "tokenizer": r.tokenizer, "budget": r.budget, "headed": r.headed,
        "counts": r.counts, "content_counts": r.content_counts,
    }).encode()


def _evidence_from_json(item: list[str], tree: GitTree) -> Evidence:
    """An evidence item as remembered: pointer, sha256, blob id and the full commit id."""
    pointer, digest, blob, commit = item
    return Evidence(replace(parse_pointer(pointer, tree.node, tree.tree), commit=commit), digest, blob)


def response_from_json(raw: bytes, tree: GitTree) -> Response | None:
    try:
        d = json.loads(raw)
        evidence = tuple(_evidence_from_json(item, tree) for item in d["evidence"])
        served = Served(d["view"], d["body"].encode("latin-1"), evidence, d["generated"], d["truncated"], tuple(tuple(k) for k in d["keys"]))
        return Response(served, d["text"].encode("latin-1"), d["tokens"], d["content_tokens"], d["full_tokens"], d["tokenizer"], d["budget"], d["headed"],
                        tuple(d["counts"]), tuple(d["content_counts"]))
    except (ValueError, KeyError, TypeError, NasError):
        return None
