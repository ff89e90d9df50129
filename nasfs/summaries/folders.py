"""Folder summaries, bottom-up (RAPTOR-style): made from the children's summaries.

A folder's children are its own files and subfolders (at most MAX_FILES and
MAX_FOLDERS, by name); each is shown to the model as ``[n] name: text``,
where the text is the child's summary (made first when missing) or, for a
file whose summary could not be made, its skeleton line from the folder
map (kind, size, top entries). Each kept sentence must cite children
``[n]`` and be supported by their texts (checker.py); its evidence
pointers are those of the cited children's sentence that shares the most
words with it (kept as path, lines, commit and sha256, so they name
whichever node and tree serve it, and verify as the child's do). A
sentence sharing no word with any sentence of the children it cites is
refused: its pointer would name lines it says nothing about.

The record is keyed by the folder's signature: the names and blob ids of
exactly the children it is made from, and their subfolders' signatures. A
change of content below makes it stale; a ``touch`` (new times, same bytes)
or a change to a file past the caps does not.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..access import Identity
from ..errors import FileChanged, settled
from ..folders import Listing, walk_commit, walk_worktree
from .backends import Backend
from .checker import check_children, content_words, split_answer
from .prompt import folder_prompt

if TYPE_CHECKING:
    from ..cache import DiskCache
    from ..reader import Reader
    from ..repo import Content

MAX_FILES = 8
MAX_FOLDERS = 4
PREFIX = 5  # a folder sentence and a child sentence match on the first letters of their words


def listing_of(nas: Reader, path: str, at: str | None) -> Listing:
    if at is None:
        return walk_worktree(nas, path)
    return walk_commit(nas, str(nas.tree.resolve(at).id), path)


WALKS = 3  # a folder walked again when a child was replaced meanwhile (an editor saves by rename)


def walked_signature(nas: Reader, path: str, at: str | None, disk: DiskCache | None = None,
                     check: Callable[[Listing], None] | None = None) -> tuple[Listing, str]:
    """The folder's listing and signature. A child replaced between the walk
    and its hashing is FileChanged (child_content): the folder is walked
    again, WALKS times in all (errors.settled). ``check``: the reader's
    decision, made on each walk's listing before anything is read of it
    (a walk again sees a file the last decision never saw)."""
    def walk() -> tuple[Listing, str]:
        listing = listing_of(nas, path, at)
        if check is not None:
            check(listing)
        return listing, signature(nas, listing, listing.folder, at, disk)
    return settled(walk, WALKS)


def signature(nas: Reader, listing: Listing, path: str, at: str | None, disk: DiskCache | None = None) -> str:
    """What ``path``'s summary is made from: its children's names and blob
    ids, its subfolders' signatures (recursively), never times or inodes.

    A read computes it in the core, and a blob id may mean hashing a large
    file: so it is remembered by the listing's own (stat) signature once the
    listing has settled, as folder maps are; a ``touch`` computes it again
    (to the same value) once, not at every read (``disk``: the summary store's)."""
    key = f"summ-sig{MAX_FILES}.{MAX_FOLDERS}:{nas.tree.root}:{at or ''}:{listing.signature}:{path}" if disk is not None and listing.settled else None
    if key is not None and (known := disk.get(key)) is not None:
        return known.decode()
    made = _signature(nas, listing, path, at)
    if key is not None:
        disk.put(key, made.encode())
    return made


def _signature(nas: Reader, listing: Listing, path: str, at: str | None,
               stamps: dict[str, Identity | None] | None = None) -> str:
    stamps = stamps if stamps is not None else walked(listing)
    files, folders = children(listing, path)
    h = hashlib.sha256(f"{path}\0".encode("utf-8", "surrogateescape"))
    for child in files:
        h.update(f"{child}\0{child_content(nas, child, at, stamps).blob_id}\n".encode("utf-8", "surrogateescape"))
    for sub in folders:
        h.update(f"{sub}/\0{_signature(nas, listing, sub, at, stamps)}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def walked(listing: Listing) -> dict[str, Identity | None]:
    """Each file as the walk saw it: (device, inode), as a decision names a
    file (an inode number alone may be another device's); None at a revision."""
    return {item.path: item.identity for item in listing.items}


def child_content(nas: Reader, child: str, at: str | None, stamps: dict[str, Identity | None]) -> Content:
    """A child's content as the walk listed it. The walk saw a regular file
    (lstat); the daemon reads by path, which may name another file by then
    (swapped for a symlink to a file of another account): a working file's
    bytes count only when read from the inode the walk recorded, else
    FileChanged, so a summary served under this path (its record, the
    folder's, a stale one) is never drawn from another file."""
    content = nas.content(child, at)
    if at is None:
        seen = stamps.get(child)
        if seen is None or content.source is None or content.source != seen:
            raise FileChanged(f"{child!r} changed since its folder was walked", "read it again")
    return content


def children(listing: Listing, path: str) -> tuple[list[str], list[str]]:
    """The folder's own files and its subfolders (tree-relative paths), by name, capped."""
    prefix = f"{path}/" if path else ""
    files, folders = [], set()
    for item in listing.items:
        if not item.path.startswith(prefix):
            continue
        rest = item.path[len(prefix):]
        if "/" in rest:
            folders.add(prefix + rest.split("/", 1)[0])
        else:
            files.append(item.path)
    return sorted(files)[:MAX_FILES], sorted(folders)[:MAX_FOLDERS]


def head(nas: Reader, files: list[str], at: str | None, stamps: dict[str, Identity | None]) -> dict[str, Any] | None:
    """The header's pointer of a folder's summary: its first file, whole (as a folder map's names its first file)."""
    if not files:
        return None
    a = nas.analysis(child_content(nas, files[0], at, stamps))
    whole = a.whole_evidence()
    if not whole:
        return None
    p = whole[0].pointer
    return {"path": p.path, "start": p.start, "end": p.end, "commit": a.content.commit, "sha256": whole[0].sha256}


def bottom_up(listing: Listing) -> list[str]:
    """Every folder of a listing that holds a file, and the folders above them, deepest first, the root ("") last."""
    held = {listing.folder} | {i.path.rsplit("/", 1)[0] for i in listing.items if "/" in i.path}
    every = {p.rsplit("/", k)[0] for p in held if p for k in range(p.count("/") + 1)} | {listing.folder}
    return sorted(every, key=lambda p: (-p.count("/") - (p != ""), p))


def _stems(text: str) -> set[str]:
    return {w[:PREFIX] for w in content_words(text)}


def _best(sentence: str, kept: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The child sentence sharing the most words with ``sentence``; None when none shares one."""
    words = _stems(sentence)
    shared, best = max(((len(words & _stems(k["text"])), k) for k in kept), key=lambda p: p[0], default=(0, None))
    return best if shared else None


def summarize_folder(backend: Backend, path: str, items: list[tuple[str, str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """``items``: (child name, its text, its sentences, each with its text and pointers) as the rules leave it."""
    prompt = folder_prompt(path, [(name, text) for name, text, _ in items])
    started = time.monotonic()
    answer = backend.generate(prompt.system, prompt.user) if items else ""  # nothing to summarize: no sentence
    seconds = time.monotonic() - started
    texts = [f"{name}\n{text}" for name, text, _ in items]
    kept, refused = [], []
    for sentence in split_answer(answer, folder=True):
        verdict = check_children(sentence, texts)
        if not verdict.supported:
            refused.append({"text": sentence.text, "cited": sentence.cited, "reason": verdict.reason})
            continue
        cited = [items[n - 1] for n, _ in dict.fromkeys(sentence.cited)]
        best = _best(sentence.text, [k for _, _, sentences in cited for k in sentences])
        if best is None:
            names = ", ".join(name for name, _, _ in cited)
            refused.append({"text": sentence.text, "cited": sentence.cited,
                            "reason": f"no sentence of {names} shares a word with it, so no pointer of theirs supports it"})
            continue
        kept.append({"text": sentence.text, "cited": sentence.cited, "children": [name for name, _, _ in cited],
                     "source": "\n".join(texts[n - 1] for n, _ in dict.fromkeys(sentence.cited)),
                     "pointers": best["pointers"]})
    return {"model": backend.name, "path": path, "written": len(kept) + len(refused), "kept": kept,
            "refused": refused, "children": [name for name, _, _ in items], "seconds": round(seconds, 3),
            "answer": answer, "checked": "rules"}


def child_items(files: list[str], folders: list[str], file_record: Callable[[str], tuple[dict[str, Any] | None, Any]],
                folder_record: Callable[[str], dict[str, Any] | None]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """What the model is shown of each child. ``file_record(path)`` gives the
    child's record (or None) and its analysis; ``folder_record`` a subfolder's."""
    items = []
    for child in files:
        record, a = file_record(child)
        if record is not None and record["kept"]:
            kept = [{"text": k["text"], "pointers": [dict(s, path=child, commit=a.content.commit) for s in k["spans"]]}
                    for k in record["kept"]]
            items.append((child, " ".join(k["text"] for k in kept), kept))
        elif a is not None:
            skeleton = a.skeleton(None)
            text = skeleton.body.decode()
            pointers = [{"path": child, "start": e.pointer.start, "end": e.pointer.end, "sha256": e.sha256,
                         "commit": a.content.commit} for e in skeleton.evidence]
            items.append((child, text.strip(), [{"text": text, "pointers": pointers}] if pointers else []))
    for child in folders:
        record = folder_record(child)
        if record is not None and record["kept"]:
            items.append((child + "/", " ".join(k["text"] for k in record["kept"]), record["kept"]))
    return items
