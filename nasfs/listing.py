"""Folder listings for doors without a mount (HTTP ``/v1/files/list``, MCP ``nas_list``).

One line per entry: name (a folder ends in ``/``, a link shows its target),
kind (file, dir, link, other), size in bytes, and the file's tokens when they
are already known (cached by blob id; ``-`` otherwise: a listing never reads
or tokenizes the files it lists). Budgeted like every answer: as many whole
lines as fit, with ``entries=M shown=K`` and ``next=skip:K`` for the rest,
``view=none truncated=true needs=T`` when not even the first line fits.
Paths go through the same checks as reads: nothing outside the tree or in
``.git`` is listed, a symlink is listed as a link, never followed, and the
folder listed is the one the access decision allowed (its inode).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from .access import NOTHING, Caller, Identity, decider, identity, sees_all, still_names
from .declare import Response, declare
from .errors import FileChanged, NotFound, NotServable
from .grammar import check_budget
from .repo import clean_path
from .tokens import count as count_tokens
from .tree_walk import open_in_tree
from .views import Served

if TYPE_CHECKING:
    from .service import Nas

HEADER_SLACK = 4  # tokens the header may grow by as shown=/next= numbers get longer
COLUMNS = "name\tkind\tbytes\ttokens\n"


def _line(nas: Nas, folder: str, entry: os.DirEntry[str]) -> str:
    st = entry.stat(follow_symlinks=False)
    tokens = "-"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(entry.path)
        except OSError:
            target = "?"
        return f"{entry.name} -> {target}\tlink\t{st.st_size}\t-\n"
    if stat.S_ISDIR(st.st_mode):
        return f"{entry.name}/\tdir\t-\t-\n"
    if not stat.S_ISREG(st.st_mode):
        return f"{entry.name}\tother\t{st.st_size}\t-\n"
    known = nas.cached_tokens(os.path.join(nas.tree.root, folder, entry.name), st)  # its resolved path, as views key it
    if known is not None:
        tokens = str(known)
    return f"{entry.name}\tfile\t{st.st_size}\t{tokens}\n"


def _changed(rel: str) -> FileChanged:
    return FileChanged(f"{rel or '.'!r} changed while it was listed", "list it again")


def _lines(nas: Nas, rel: str, allowed: Identity | None) -> list[str]:
    """The lines of the folder the decision allowed (``allowed``: its
    identity; None: any), listed through one open descriptor of it, since
    the path may name another folder by now (FileChanged). The folder is
    reached from the root with no symlink followed: one on the way swapped
    for a link since it was resolved (out of the tree, into a mount) is not
    listed, whoever asks."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        fd = open_in_tree(nas.tree.root, rel, flags) if rel else os.open(nas.tree.root, flags)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise
        raise _changed(rel) from None
    try:
        if allowed is not None and identity(os.fstat(fd)) != allowed:
            raise _changed(rel)
        with os.scandir(f"/proc/self/fd/{fd}") as it:  # that very folder, by its descriptor
            entries = sorted((e for e in it if not (rel == "" and e.name == ".git")), key=lambda e: e.name)
            return [_line(nas, rel, e) for e in entries]
    finally:
        os.close(fd)


def list_folder(nas: Nas, path: str = "", budget: int | None = None, skip: int = 0, caller: Caller | None = None) -> Response:
    """The entries of a working-tree folder, as many as fit ``budget``
    (None: all of them), starting after ``skip`` entries; only for a caller
    who may list it, as ``ls -l`` (None: this process's own account)."""
    budget = check_budget(budget)
    skip = check_budget(skip) or 0
    allowed = decider(nas.tree.root, caller).check(clean_path(path), want_dir=True)
    allowed = None if sees_all(caller) else allowed  # the kernel limits this process's own account
    rel, real = nas.tree.real_path(clean_path(path))
    if allowed is not None and allowed != NOTHING and not still_names(nas.tree.root, real, allowed):  # before anything of it is told
        raise _changed(rel)
    if not nas.tree.exists(rel):
        raise NotFound(f"no folder {path!r}: it does not exist", "a folder of the tree ('' for its root)")
    if not nas.tree.is_dir(rel):
        raise NotServable(f"{path!r} is a file, not a folder", "read it (nas_read, POST /v1/files/read), or list its folder")
    lines = _lines(nas, rel, allowed)
    page = lines[skip:]
    base: list[tuple[str, object]] = [("path", rel or "."), ("entries", len(lines))]

    def served(k: int) -> Served:
        keys = base + [("shown", k), ("skip", skip)]
        if skip + k < len(lines) and k:
            keys.append(("next", f"skip:{skip + k}"))
        body = (COLUMNS + "".join(page[:k])) if k else ("" if page else "(empty)\n" if not lines else "")
        return Served("list", body.encode(), keys=tuple(keys))

    def declared(s: Served) -> Response:
        return declare(s, None, nas.tokenizer, budget)

    if budget is None:
        return declared(served(len(page)))
    spent = declared(served(0)).tokens + HEADER_SLACK + count_tokens(COLUMNS, nas.tokenizer)
    k = 0
    for line in page:
        spent += count_tokens(line, nas.tokenizer)
        if spent > budget:
            break
        k += 1
    response = declared(served(k))
    while response.tokens > budget and k:  # the estimate was short: give back whole lines
        k -= 1
        response = declared(served(k))
    if k == 0 and page:
        needs = declared(served(1)).tokens
        keys = tuple(served(0).keys) + (("needs", needs), ("next", f"skip:{skip + 1}"))
        response = declared(Served("none", b"", truncated=True, keys=keys))
    return response
