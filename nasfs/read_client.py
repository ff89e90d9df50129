"""``nasfs read`` asked of a running mount daemon over a Unix socket.

A whole ``nasfs read`` process pays Python's start, the imports of pygit2 and
the core, and opening the repository and its cache: 150-300 ms. When a mount
daemon serves the same work tree it has all of that open already, so the CLI
first tries it: this module imports nothing but the standard library's
socket and json, finds the repository's folder by walking up from the current
folder (or ``--repo``), and sends the read to ``<git dir>/nasfs-read.sock``
(fuse/read_socket.py). Anything unusual (an option it does not know, git
environment variables, no socket, a daemon that says no, a broken answer)
returns None, and the CLI does the read itself: the answer is the same bytes
and exit code either way (both run nasfs/reads.py).
"""

from __future__ import annotations

import os
import sys

SOCKET_NAME = "nasfs-read.sock"
VALUED = ("--repo", "--node", "--tree", "--tokenizer", "--summarizer", "--at")
GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_COMMON_DIR")
CONNECT_S = 1.0
ANSWER_S = 300.0  # a cold view of a large file takes the daemon this long at worst; then the CLI does it


def parse(argv: list[str]) -> dict[str, object] | None:
    """``read``'s arguments when they are plainly valid (what argparse would
    take the same way), else None: help, abbreviations, repeats, a value or a
    path that starts with '-' are left to argparse."""
    request: dict[str, object] = {"json": False, "spec": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            if request["json"]:
                return None
            request["json"] = True
        elif arg.startswith("-"):
            name, eq, value = arg.partition("=")
            if name not in VALUED or name[2:] in request:
                return None
            if not eq:
                i += 1
                if i == len(argv):
                    return None
                value = argv[i]
            if value.startswith("-") or not value:
                return None
            request[name[2:]] = value
        elif request["spec"] is None and arg:
            request["spec"] = arg
        else:
            return None
        i += 1
    return request if request["spec"] is not None else None


def git_dir(start: str) -> tuple[str, str] | None:
    """(work tree top, repository folder) around ``start``, walking up as git
    does (not across file systems); None where that is not plain."""
    if any(name in os.environ for name in GIT_ENV):
        return None
    here = os.path.realpath(start)
    try:
        dev = os.stat(here).st_dev
        while True:
            dotgit = os.path.join(here, ".git")
            if os.path.isdir(dotgit):
                return here, dotgit
            if os.path.isfile(dotgit):  # a linked work tree: "gitdir: PATH"
                with open(dotgit) as fh:
                    line = fh.readline().strip()
                if not line.startswith("gitdir: "):
                    return None
                return here, os.path.realpath(os.path.join(here, line[len("gitdir: "):]))
            up = os.path.dirname(here)
            if up == here or os.stat(up).st_dev != dev:
                return None
            here = up
    except OSError:
        return None


def ask(argv: list[str]) -> int | None:
    """Answer ``nasfs read ARGV`` through the daemon: its exit code, having
    written what the CLI would; None when the CLI must do it itself."""
    request = parse(argv)
    if request is None:
        return None
    repo = request.get("repo")
    found = git_dir(str(repo) if repo else os.getcwd())
    if found is None or (repo and found[0] != os.path.realpath(str(repo))):
        return None
    request["root"], request["cwd"] = found[0], os.getcwd()
    if request.get("summarizer") is None and os.environ.get("NASFS_SUMMARIZER"):
        request["summarizer"] = os.environ["NASFS_SUMMARIZER"]
    answer = _exchange(os.path.join(found[1], SOCKET_NAME), request)
    if answer is None:
        return None
    code, out, err = answer
    try:
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
        if err:
            sys.stderr.write(err)
    except BrokenPipeError:
        return 0
    return code


def _exchange(path: str, request: dict[str, object]) -> tuple[int, bytes, str] | None:
    """One request, one answer: a JSON line, then the header's ``size`` bytes."""
    import json
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_S)
            sock.connect(path)
            sock.settimeout(ANSWER_S)
            sock.sendall(json.dumps(request).encode() + b"\n")
            with sock.makefile("rb") as answer:
                header = json.loads(answer.readline())
                if not isinstance(header, dict) or header.get("fallback", True):
                    return None
                size = int(header["size"])
                body = answer.read(size)
                if len(body) != size:
                    return None
                return int(header["exit"]), body, str(header.get("stderr", ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None
