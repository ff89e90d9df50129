"""Search that answers with snippets and pointers, never whole files.

ripgrep does the matching: it is fast, and its regex engine runs in linear
time, so no pattern can backtrack catastrophically. The working tree is
searched in place (``.gitignore`` respected, ``.git`` skipped); a past
revision is first written out once into a disposable cache folder keyed by
its commit, then searched the same way. Hits are ranked, grouped by file,
and each carries a pointer to its line at a commit and the outline entry
(section or symbol) it sits in.

Query words: ``re:PATTERN`` (a regular expression), ``in:FOLDER`` and
``glob:PATTERN`` (restrict the files), ``skip:N`` (the next page); the rest,
joined by single spaces, is a literal. Both are smart-case: all lower case
matches any case.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .access import Caller, Seen, check_history, decider, sees_all
from .cache import default_cache_dir, private_folder
from .errors import BadView, NasError, NotServable, check_text
from .outline import Entry
from .grammar import check_budget
from .repo import clean_path
from .tokens import count as count_tokens
from .views import Analysis, Evidence, Served

if TYPE_CHECKING:
    from .declare import Response
    from .repo import Content
    from .service import Nas

DEFAULT_BUDGET = 1000
MAX_QUERY = 1024
RG_SECONDS = 20
KILL_WAIT = 1.0  # seconds a killed ripgrep is waited for before a reaper thread takes it (_bounded)
SNIPPET_CHARS = 200
HEADER_SLACK = 4  # tokens the header may grow by as shown=/next= numbers get longer
QUERY_FORMS = "a literal (smart case), re:REGEX, in:FOLDER, glob:PATTERN, skip:N, combined with spaces"


class BadQuery(BadView):
    kind = "bad_query"


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    regex: bool = False
    folder: str = ""
    glob: str = ""
    skip: int = 0

    def spelled(self) -> str:
        words = [f"re:{self.pattern}" if self.regex else self.pattern]
        words += [f"in:{self.folder}"] if self.folder else []
        words += [f"glob:{self.glob}"] if self.glob else []
        words += [f"skip:{self.skip}"] if self.skip else []
        return " ".join(words)


def parse_query(text: str) -> Query:
    """The one parser of search queries, for every door."""
    check_text("the query", text, BadQuery)
    if len(text) > MAX_QUERY:
        raise BadQuery(f"query is {len(text)} characters long; at most {MAX_QUERY}", QUERY_FORMS)
    literal: list[str] = []
    regex = folder = glob = ""
    skip = 0
    words = text.split(" ")
    for i, word in enumerate(words):
        if word.startswith("re:"):
            regex = " ".join([word[3:], *words[i + 1 :]])  # a regex runs to the end
            break
        if word.startswith("in:"):
            folder = clean_path(word[3:])
        elif word.startswith("glob:"):
            glob = word[5:]
        elif word.startswith("skip:"):
            if not word[5:].isdigit():
                raise BadQuery(f"skip:{word[5:]} is not a whole number", QUERY_FORMS)
            skip = int(word[5:])
        elif word:
            literal.append(word)
    if regex and literal:
        raise BadQuery("give either a literal or re:REGEX, not both", QUERY_FORMS)
    pattern = regex or " ".join(literal)
    if not pattern.strip():
        raise BadQuery("empty query: nothing to search for", QUERY_FORMS)
    return Query(pattern, bool(regex), folder, glob, skip)


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    line: int
    text: bytes


def _rg_args(q: Query, folder: str) -> list[str]:
    args = ["rg", "--null", "--line-number", "--with-filename", "--no-heading", "--color", "never",
            "--smart-case", "--hidden", "--glob", "!.git", "--max-filesize", "32M", "--max-columns", "1000"]
    if not q.regex:
        args.append("--fixed-strings")
    if q.glob:
        args += ["--glob", q.glob]
    args += ["--regexp", q.pattern, "--", folder]
    return args


def _searched_folder(q: Query, root: Path) -> str:
    """The real folder ``in:`` names, relative to ``root`` ("." for the root),
    refused when a symlink leads it outside the tree or into ``.git``. Its
    links are resolved by string from folder descriptors (access.Decider),
    none by the OS: a folder swapped for a link into the mount would have
    this thread wait on the mount's own daemon (tree_walk.py)."""
    if not q.folder:
        return "."
    seen, real, st = decider(root, Caller.root()).resolve(q.folder)
    if seen is Seen.OUTSIDE or real.split("/")[0] == ".git":
        raise BadQuery(f"in:{q.folder} leads outside the served tree (through a symlink)", QUERY_FORMS)
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise BadQuery(f"in:{q.folder} is not a folder of the tree", QUERY_FORMS)
    return real or "."


def run_rg(q: Query, root: Path) -> list[Hit]:
    """All matching lines under ``root``, as ripgrep reports them."""
    if shutil.which("rg") is None:
        raise NotServable("search needs ripgrep (Debian package 'ripgrep'), which is not installed")
    done = _bounded(_rg_args(q, _searched_folder(q, root)), root)
    if done is None:
        raise BadQuery(f"search took more than {RG_SECONDS} s; narrow it with in: or glob:", QUERY_FORMS)
    if done.returncode == 2 and not done.stdout:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise BadQuery(f"ripgrep refused the query: {' '.join(message[-3:])}", QUERY_FORMS)
    hits = []
    for row in done.stdout.split(b"\n"):
        path, sep, rest = row.partition(b"\0")
        if not sep:
            continue
        number, _, text = rest.partition(b":")
        rel = os.fsdecode(path)
        hits.append(Hit(rel[2:] if rel.startswith("./") else rel, int(number), text))
    return hits


def _bounded(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    """``args`` run in ``cwd``, or None past RG_SECONDS. The child is killed
    then, and waited for KILL_WAIT at most: ripgrep walks by path, and a
    folder swapped for a link into the mount (after ``in:`` was resolved, or
    during the walk) has it wait on a FUSE request of this very daemon,
    which a SIGKILL does not end once the daemon has read it: only the
    answer does, which may need the thread or worker process that waits
    here (subprocess.run's kill then waits for good). A reaper thread waits
    for it instead, and this thread is free to answer."""
    child = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = child.communicate(timeout=RG_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        try:
            child.wait(timeout=KILL_WAIT)
        except subprocess.TimeoutExpired:
            threading.Thread(target=_reap, args=(child,), name="nasfs-rg-reaper", daemon=True).start()
            return None
        _reap(child)
        return None
    return subprocess.CompletedProcess(args, child.returncode, out, err)


def _reap(child: subprocess.Popen[bytes]) -> None:
    """Wait for a killed child and close its pipes."""
    child.wait()
    for pipe in (child.stdout, child.stderr):
        if pipe is not None:
            pipe.close()


def materialize(nas: Nas, commit: str) -> Path:
    """The tree of ``commit`` written out once under the cache folder, so the
    same engine searches the past; safe to delete at any time. Private to the
    daemon's account, as every cache is (a snapshot's tree may hold a private
    file)."""
    base = private_folder(private_folder(default_cache_dir()) / "trees")
    target = base / commit
    if target.is_dir():
        return target
    tmp = Path(tempfile.mkdtemp(dir=base, prefix=f".{commit[:12]}-"))
    nas.tree.write_tree_at(commit, tmp)
    try:
        os.rename(tmp, target)
    except OSError:  # another search wrote it first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _rank(hits: list[Hit], q: Query) -> list[tuple[str, list[Hit]]]:
    """Files with the literal in their path first, then most matches, then path."""
    by_file: dict[str, list[Hit]] = {}
    for h in hits:
        by_file.setdefault(h.path, []).append(h)
    needle = q.pattern.lower()
    return sorted(by_file.items(), key=lambda kv: (needle not in kv[0].lower() or q.regex, -len(kv[1]), kv[0]))


def _enclosing(entries: tuple[Entry, ...], line: int) -> Entry | None:
    best = None
    for e in entries:
        if e.start <= line <= e.end and e.path and (best is None or e.depth >= best.depth):
            best = e
    return best


def _snippet_line(n: int, text: bytes) -> str:
    shown = text.decode("utf-8", errors="replace").rstrip("\r\n")
    if len(shown) > SNIPPET_CHARS:
        shown = shown[:SNIPPET_CHARS] + "…"
    return f"    {n}: {shown}\n"


def search(nas: Nas, text: str, at: str | None = None, budget: int | None = None,
           caller: Caller | None = None) -> Response:
    """Ranked snippets with pointers, as many as fit the budget (default 1000).

    Never a whole file: each hit is its line with one line of context. What
    did not fit is declared (``shown=K matches=M next=skip:K``), not cut.
    ``caller`` (None: this process's own account) sees hits only in files
    they could find: read the file, list every folder above it (access.py);
    at a revision, only with the right to read the repository.
    """
    from .declare import declare

    q = parse_query(text)
    budget = check_budget(budget)
    budget = DEFAULT_BUDGET if budget is None else budget
    nas.tree.check()  # the working tree may outlive its repository: no hits without pointers
    if at is None and q.folder:  # decided before in: is resolved, so its errors tell nothing private
        decider(nas.tree.root, caller).check(q.folder)
    if at is not None:
        check_history(nas.tree.git_dir, caller)
        commit = nas.commit_for(at, caller)  # a private snapshot: only for readers of its sources
        root = materialize(nas, commit)
    else:
        root = nas.tree.root
    hits = run_rg(q, root)
    contents: dict[str, Content | None] = {}
    if at is None and not sees_all(caller):
        judge = decider(nas.tree.root, caller)
        hits = _confirmed(nas, q, [h for h in hits if judge.may_find(h.path)], caller, contents)
    ranked = _rank(hits, q)
    flat = [(path, h) for path, file_hits in ranked for h in file_hits]
    page = flat[q.skip :]
    keys: list[tuple[str, object]] = [("query", q.spelled()), ("matches", len(hits)), ("files", len(ranked))]

    def served(blocks: list[tuple[str, Evidence, int]]) -> Served:
        consumed = blocks[-1][2] + 1 if blocks else 0  # page hits used up, shown or skipped
        ks = keys + [("shown", len(blocks)), ("skip", q.skip)]
        if blocks and q.skip + consumed < len(flat):  # (nothing shown: a larger budget, not a next page)
            ks.append(("next", f"skip:{q.skip + consumed}"))
        body = "".join(b for b, _, _ in blocks) or ("no matches\n" if not flat else "")
        return Served("search", body.encode(), tuple(e for _, e, _ in blocks), keys=tuple(ks))

    def declared(s: Served) -> Response:
        return declare(s, None, nas.tokenizer, budget)

    # Blocks are built in rank order and counted once each, until the budget is
    # spent: a common word's thousands of later hits are never outlined.
    blocks: list[tuple[str, Evidence, int]] = []
    leading: tuple[str, Evidence, int] | None = None  # the first hit that could be shown, fitting or not
    spent = declared(served([])).tokens + HEADER_SLACK
    analyses: dict[str, Analysis] = {}
    for index, (path, h) in enumerate(page):
        a = analyses.get(path)
        if a is None:
            try:
                content = contents.get(path) or nas.content(path, at, caller)  # the inode the caller's decision allowed
                a = analyses[path] = nas.analysis(content)
            except NasError:
                continue  # changed or gone since rg saw it
        if h.line > a.line_count or a.binary:
            continue
        first, last = max(1, h.line - 1), min(a.line_count, h.line + 1)
        snippet = "".join(_snippet_line(n, a.lines_bytes(n, n)) for n in range(first, last + 1))
        entry = _enclosing(a.outline.entries, h.line)
        where = f" in {entry.label} (L{entry.start}-L{entry.end})" if entry else ""
        evidence = a.evidence(h.line, h.line)[0]
        block = f"{evidence.pointer.short()}{where}\n{snippet}"
        leading = leading or (block, evidence, index)
        spent += count_tokens(block, nas.tokenizer)
        if spent > budget:
            break
        blocks.append((block, evidence, index))
    response = declared(served(blocks))
    while response.tokens > budget and blocks:  # the estimate was short: give back whole hits
        blocks.pop()
        response = declared(served(blocks))
    if not blocks and leading is not None:  # hits, none of which fits: say so, as a read does
        needs = declared(served([leading])).tokens
        response = declared(nothing_fits(served(blocks), needs, q.skip + leading[2] + 1))
    return response


def _confirmed(nas: Nas, q: Query, hits: list[Hit], caller: Caller | None,
               contents: dict[str, Content | None]) -> list[Hit]:
    """The hits of a working-tree search a caller (not root, nor this
    process's own account) may be told of: ``rg`` reads files by path, as
    the daemon, so a file swapped for a symlink during its run could add
    another file's hit (to ``matches=``, ``files=``, with its line number).
    A hit counts only when that line of the file read for the caller (the
    inode their decision allowed, kept in ``contents`` for the snippets)
    is the line rg matched, or else still matches the query."""
    lines: dict[str, list[bytes] | None] = {}
    kept = []
    for h in hits:
        if h.path not in lines:
            try:
                content = contents[h.path] = nas.content(h.path, None, caller)
                lines[h.path] = content.read().split(b"\n")
            except (NasError, KeyError):
                contents[h.path], lines[h.path] = None, None
        got = lines[h.path]
        if got is None or h.line > len(got):
            continue
        line = got[h.line - 1]
        if line == h.text or _matches(q, line):
            kept.append(h)
    return kept


def _matches(q: Query, line: bytes) -> bool:
    """Whether rg matches ``line`` alone (as in run_rg: a long line it
    reported as omitted, or a line that differs from the one it read)."""
    args = ["rg", "--quiet", "--smart-case", *([] if q.regex else ["--fixed-strings"]), "--regexp", q.pattern, "-"]
    try:
        done = subprocess.run(args, input=line + b"\n", capture_output=True, timeout=RG_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def nothing_fits(shown: Served, needs: int, past_first: int) -> Served:
    """``view=none truncated=true`` for a search whose first hit is over the
    budget: ``needs=T`` is the budget that would show it (the whole answer),
    ``next=skip:K`` passes over it to the hits after it."""
    keys = tuple(shown.keys) + (("needs", needs), ("next", f"skip:{past_first}"))
    return Served("none", b"", (), truncated=True, keys=keys)

