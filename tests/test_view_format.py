"""A cached answer is keyed by VIEW_FORMAT (nasfs/views.py), not by the code
that made it: when served text changes for the same content, the format must
be raised, or a disk cache written by the older code keeps serving the older
text (an outline without its key index, a header with keys no longer sent).

This test pins a digest of a fixed set of served answers to the format: if
it fails because you changed what a view serves, raise VIEW_FORMAT and record
the new digest under it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from nasfs.repo import GitTree
from nasfs.service import Nas
from nasfs.views import VIEW_FORMAT

from .conftest import git

DIGESTS = {
    7: "85c436b7aeaa24a6ef5e1148c2d99add1647e08f673df768cfa420abeddc4b6d",  # issue 27: data outlines end with their key index (or say keys=@keys); no full_tokens on view=full
    8: "85c436b7aeaa24a6ef5e1148c2d99add1647e08f673df768cfa420abeddc4b6d",  # same text; answers of 7 may have read a private store's object through a shared commit
}
COMMIT = re.compile(rb"@[0-9a-f]{12,40}")
TOKENS = re.compile(rb"tokens=\d+")  # a pointer's commit is counted in them, and commits differ run to run


def corpus(home: Path) -> None:
    (home / "fmt").mkdir()
    (home / "fmt/notes.md").write_text("".join(f"# Part {i}\nintro {'words ' * 40}\n\n## Renewal {i}\nterms\n\n## Contacts\n- Ann\n" for i in range(8)))
    (home / "fmt/stream.yaml").write_text("".join(f"---\nname: n{i}\nspec:\n  image: i{i}\n  port: {i}\n" for i in range(12)))
    (home / "fmt/deep.json").write_text(json.dumps({f"s{i}": {"x": {"y": {f"k{i}": i}}} for i in range(40)}, indent=2))
    services = {f"service{i}": {"image": f"img{i}", "limits": {"memory": f"{i}Mi"}} for i in range(60)}
    (home / "fmt/svc.json").write_text(json.dumps({**services, "extra": {"only": {"rare_key": 1}}}, indent=2))
    (home / "fmt/t.csv").write_text("a,b\n1,2\n3,4\n")
    git(home, "add", "-A")
    git(home, "commit", "-q", "-m", "format corpus")


def test_served_text_is_pinned_to_the_view_format(home: Path) -> None:
    corpus(home)
    nas = Nas(GitTree(home, node="box", tree="home"))
    reads = ["fmt/notes.md@outline", "fmt/notes.md@150", "fmt/notes.md@section=Renewal 3", "fmt/t.csv@outline",
             "fmt/notes.md@100000", "fmt/stream.yaml@outline", "fmt/stream.yaml@keys", "fmt/stream.yaml@30",
             "fmt/deep.json@outline", "fmt/deep.json@keys@200", "fmt/svc.json@outline"]
    digest = hashlib.sha256()
    for spec in reads:
        text = TOKENS.sub(b"tokens=T", COMMIT.sub(b"@C", nas.read(spec).text))
        digest.update(spec.encode() + b"\0" + text + b"\0")
    assert DIGESTS.get(VIEW_FORMAT) == digest.hexdigest(), (
        f"served text changed without a new VIEW_FORMAT ({VIEW_FORMAT}): raise it in nasfs/views.py and record "
        f"{digest.hexdigest()} under it in DIGESTS")
