"""The command-line door: ``nasfs read|deref|verify|...`` over a source tree.

Exit 0 on success, 1 when a verify fails, 2 on bad input; the error is one
line on stderr saying what was wrong and what is valid.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn
from collections.abc import Callable, Sequence

from .errors import NasError

if TYPE_CHECKING:
    import argparse  # imported when a parser is made: a read answered by a daemon needs none (read_client.py)


def _tree_args(p: argparse.ArgumentParser, views: bool = True, summary_mode: bool = True) -> None:
    p.add_argument("--repo", help="the git work tree to serve (default: the one around the current folder)")
    p.add_argument("--node", help="node name in pointers (default: the host name)")
    p.add_argument("--tree", help="tree name in pointers (default: the source folder's name)")
    if views:  # pointers (deref, verify) need neither a tokenizer nor a summarizer
        _tokenizer_args(p)
        _summary_args(p, summary_mode)


def _summary_args(p: argparse.ArgumentParser, mode: bool = True) -> None:
    """The flags of @summary (docs/summaries.md); each has an environment twin."""
    p.add_argument("--summarizer", help="for @summary: an OpenAI-compatible endpoint http://HOST:PORT/v1, or a command "
                                        "reading the prompt on stdin (default: $NASFS_SUMMARIZER)")
    p.add_argument("--summary-model", help="the endpoint's model name (default: $NASFS_SUMMARY_MODEL)")
    p.add_argument("--summary-key-file", help="file holding the endpoint's API key (default: $NASFS_SUMMARY_KEY_FILE, "
                                              "else the key in $NASFS_SUMMARY_API_KEY); never logged")
    p.add_argument("--summary-context", type=int, help="the model's context in tokens (default 2048, $NASFS_SUMMARY_CONTEXT)")
    if mode:
        p.add_argument("--summaries", choices=["off", "on-demand", "background"],
                       help="off; on-demand (default: a read queues what is missing); background (also walks the tree)")
    p.add_argument("--summaries-in-ladder", action="store_true", help="@N may serve a fresh, fully supported summary "
                                                                      "between the outline and the skeleton")
    p.add_argument("--summaries-keep-unsupported", action="store_true",
                   help="keep the sentences the checker refused, marked (unsupported: why), instead of dropping them")
    p.add_argument("--summary-judge", metavar="URL|CMD", help="after the rules, ask this OpenAI-compatible endpoint or "
                                                             "command whether the cited lines support each sentence "
                                                             "(default: $NASFS_SUMMARY_JUDGE)")
    p.add_argument("--summary-judge-model", metavar="NAME", help="the judge endpoint's model name, e.g. bespoke-minicheck "
                                                                 "(default: $NASFS_SUMMARY_JUDGE_MODEL)")


def _summary_settings(args: argparse.Namespace, detached: bool = False):
    from .summaries import build_settings

    mode = getattr(args, "summaries", None)
    return build_settings(getattr(args, "summarizer", None), getattr(args, "summary_model", None),
                          mode if isinstance(mode, str) else None, getattr(args, "summaries_in_ladder", False),
                          getattr(args, "summaries_keep_unsupported", False), getattr(args, "summary_key_file", None),
                          getattr(args, "summary_context", None), detached,
                          getattr(args, "summary_judge", None), getattr(args, "summary_judge_model", None))


def _tokenizer_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", default="cl100k_base",
                   help="cl100k_base (default), another installed tokenizer, max:A,B,... (fit every one), or a "
                        "model family's preset (claude, gemini, llama, qwen, mistral, deepseek, openai); docs/tokens.md")
    p.add_argument("--margin", help="fit views into budget/(1+MARGIN) of the largest count, declared (e.g. 0.30)")


READ_EPILOG = """\
views (PATH@VIEW; quote the argument if it holds spaces):
  nasfs read notes.md                      the real file, byte for byte
  nasfs read notes.md@outline              headings / symbols / keys, each line starting with its lines
  nasfs read notes.md@outline=41@400       the outline from its 41st entry (the next page)
  nasfs read notes.md@L12-L18              exactly lines 12..18, no header (@L12: one line)
  nasfs read notes.md@section=Renewal      one section: heading, Class.method, a.b.0 key path
  nasfs read notes.md@since=v1             unified diff from a revision (since=A..B)
  nasfs read notes.md@summary              a generated summary, cited line by line (needs --summarizer;
                                           the first read queues it and answers at once)
  nasfs read notes.md@400                  the richest view within 400 tokens:
                                           full > outline > shallower outlines > a page > skeleton > none
  nasfs read notes.md@section=Renewal@200  any view, degraded to fit a budget
  nasfs read notes.md@outline.json         the JSON envelope (same as --json)
  nasfs read --at v1 notes.md@L12          the file at a revision

Every view but a raw read or a line range starts with one header line
(nasfs view=... tokens=... pointer=...). 'nasfs help' has the whole grammar.
"""


def _default_budget(p: argparse.ArgumentParser) -> None:
    from .grammar import DEFAULT_READ_BUDGET, parse_default_budget

    p.add_argument("--default-budget", type=parse_default_budget, default=DEFAULT_READ_BUDGET, metavar="N",
                   help=f"tokens of a read that names no budget (default {DEFAULT_READ_BUDGET}); 0 or none: no default")


def _parser() -> argparse.ArgumentParser:
    import argparse

    from . import __version__

    class _Parser(argparse.ArgumentParser):
        """Bad arguments get one line on stderr, like every other refusal (exit 2)."""

        def error(self, message: str) -> NoReturn:
            self.exit(2, f"{self.prog}: {message}; see '{self.prog} --help'\n")

    parser = _Parser(prog="nasfs", description="Budgeted, checkable reads over a git-backed tree.")
    parser.add_argument("--version", action="version", version=f"nasfs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    read = sub.add_parser("read", help="read PATH or PATH@VIEW (outline, L12-L18, section=NAME, since=REV, N, ...)",
                          description="Read a file of the tree, or a view of it.", epilog=READ_EPILOG,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    _tree_args(read)
    read.add_argument("--at", help="read the tree at this revision (commit, branch, tag)")
    read.add_argument("--json", action="store_true", help="print the JSON envelope")
    read.add_argument("spec", metavar="PATH[@VIEW]",
                      help="a file relative to the tree root (or the current folder), optionally @VIEW and @N; see below")

    pointer_help = "nas://NODE/TREE/PATH@COMMIT#La-Lb, or PATH@COMMIT#La-Lb"
    deref = sub.add_parser("deref", help="print exactly the bytes a pointer names")
    _tree_args(deref, views=False)
    deref.add_argument("--json", action="store_true", help="print {pointer, content, sha256, swhid} as JSON")
    deref.add_argument("--swhid", action="store_true", help="print the pointer's SWHID (swh:1:cnt:...;anchor=...;path=...;lines=a-b)")
    deref.add_argument("--offline", action="store_true", help="never fetch another node's commit; use what is fetched already")
    deref.add_argument("pointer", help=pointer_help)

    verify = sub.add_parser("verify", help="check a pointer: commit, lines, optional sha256 and quote")
    _tree_args(verify, views=False)
    verify.add_argument("--json", action="store_true", help="print {pointer, verified, sha256, detail} as JSON")
    verify.add_argument("pointer", help=pointer_help + ", another node's (nasfs nodes), or a SWHID")
    verify.add_argument("--offline", action="store_true", help="never fetch another node's commit; use what is fetched already")
    verify.add_argument("--sha256", help="the sha256 the lines must have")
    verify.add_argument("--quote", help="a text that must occur in the lines")

    search = sub.add_parser("search", help="snippets with pointers: literal, re:REGEX, in:FOLDER, glob:PATTERN, skip:N")
    _tree_args(search)
    search.add_argument("--at", help="search the tree at this revision")
    search.add_argument("--json", action="store_true", help="print the JSON envelope")
    search.add_argument("--budget", type=int, help="tokens for the whole answer (default 1000)")
    search.add_argument("query", nargs="+")

    diff = sub.add_parser("diff", help="diff between revisions (REV, A..B, A..): full, changed entries or diffstat")
    _tree_args(diff)
    diff.add_argument("--json", action="store_true", help="print the JSON envelope")
    diff.add_argument("--budget", type=int, help="tokens for the whole answer")
    diff.add_argument("range", metavar="A[..B]")
    diff.add_argument("path", nargs="?")

    mount = sub.add_parser("mount", help="mount SOURCE (a git work tree) at MOUNTPOINT")
    mount.add_argument("source")
    mount.add_argument("mountpoint")
    mount.add_argument("--node", help="node name in pointers (default: the host name)")
    mount.add_argument("--tree", help="tree name in pointers (default: the source folder's name)")
    _tokenizer_args(mount)
    _summary_args(mount)
    mount.add_argument("--autocommit", action="store_true", help="commit writes through the mount onto the checked-out branch on close")
    mount.add_argument("--allow-other", action="store_true", help="let other users (Samba, NFS servers) use the mount")
    mount.add_argument("--foreground", action="store_true", help="stay in the foreground (systemd, debugging)")
    mount.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    mount.add_argument("--log-file", help="daemon log (default: stderr in the foreground, none otherwise)")
    mount.add_argument("--attr-timeout", type=float, default=1.0, help="seconds the kernel may cache real entries when the source cannot be watched (default 1; watched: an hour)")

    _publish_args(mount)
    mount.add_argument("--no-warm", action="store_true", help="no background warm-up ('nasfs index') of the tree's caches at start")

    index = sub.add_parser("index", help="warm the caches: the @outline view and token count of every file git does not "
                                         "ignore, and folder maps")
    _tree_args(index, summary_mode=False)
    index.add_argument("source", nargs="?", help="the git work tree (same as --repo)")
    index.add_argument("--jobs", type=int, help="worker processes (default: the CPU count)")
    index.add_argument("--quiet", action="store_true", help="no progress bar and no summary; errors only")
    index.add_argument("--progress-log", action="store_true", help="progress as 'warm-up: N/M files, S s' lines on stderr (the mount's warm-up)")
    index.add_argument("--summaries", action="store_true", help="also fill the summary cache (needs --summarizer), with a progress bar")
    index.add_argument("--summaries-only", nargs="+", metavar="PATH", help="only make the summaries of these files or folders")

    install = sub.add_parser("install", help="link this nasfs into /usr/local/sbin, where mount -t fuse.nasfs and fstab find it")
    install.add_argument("--bin-dir", default="/usr/local/sbin", help="where to link it (default /usr/local/sbin)")
    install.add_argument("--root", default="/", help="install below this folder instead of / (packaging, tests)")

    unit = sub.add_parser("install-unit", help="write the systemd unit nasfs@.service running this nasfs; with INSTANCE also its settings")
    unit.add_argument("instance", nargs="?", help="also write /etc/nasfs/INSTANCE.env and its RequiresMountsFor= drop-in")
    unit.add_argument("--source", help="the instance's git work tree")
    unit.add_argument("--mountpoint", help="the instance's mount point (made at start if missing)")
    unit.add_argument("--options", default="", help="more 'nasfs mount' options, e.g. --options='--node nas1 --allow-other'")
    unit.add_argument("--force", action="store_true", help="replace an existing /etc/nasfs/INSTANCE.env with other settings")
    unit.add_argument("--root", default="/", help="install below this folder instead of / (packaging, tests)")

    umount = sub.add_parser("umount", help="unmount a nasfs mount (also clears a stale one)")
    umount.add_argument("mountpoint")

    status = sub.add_parser("status", help="what is mounted from where")
    status.add_argument("mountpoint", nargs="?")

    serve = sub.add_parser("serve", help="the HTTP API (POST /v1/files/read, /v1/search, ...); loopback unless --token-file")
    _tree_args(serve)
    serve.add_argument("--listen", default="127.0.0.1:8740", metavar="HOST:PORT", help="address to listen on (default 127.0.0.1:8740)")
    serve.add_argument("--token-file", help="file holding the bearer token clients must send; required off loopback")
    _default_budget(serve)
    _publish_args(serve)

    mcp = sub.add_parser("mcp", help="the MCP server over stdio: nas_read, nas_list, nas_search, nas_deref, nas_diff, nas_help")
    _tree_args(mcp)
    _default_budget(mcp)
    _publish_args(mcp)

    nodes = sub.add_parser("nodes", help="the node registry: where other nodes publish the commits their pointers name")
    nodes_sub = nodes.add_subparsers(dest="action", required=True)
    add = nodes_sub.add_parser("add", help="register NAME (the node name in its pointers) and its git remote URL")
    add.add_argument("name")
    add.add_argument("url", help="the git remote the node publishes to (git://, http(s)://, ssh://, a path)")
    add.add_argument("--http", help="the node's 'nasfs serve' address, listed for people and agents")
    nodes_sub.add_parser("list", help="the registered nodes and the registry's file")
    remove = nodes_sub.add_parser("remove", help="forget a node")
    remove.add_argument("name")

    sub.add_parser("help", help="the view grammar with examples")
    return parser


def _publish_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--publish", metavar="REMOTE", help="push the commits served pointers name to this git remote, "
                                                        "under refs/nasfs/NODE/, in the background (docs/pointers.md)")
    p.add_argument("--publish-private", action="store_true", help="also push snapshots kept out of the shared "
                                                                  "snapshot store (files fewer accounts may read)")


def _start_publishing(args: argparse.Namespace, nas) -> None:
    if getattr(args, "publish", None):
        from .evidence.nodes import check_url
        from .evidence.publish import Publisher

        import atexit

        publisher = Publisher(nas.tree.git_dir, check_url(args.publish, "--publish"), nas.tree.node, args.publish_private)
        nas.publish_to(publisher)
        atexit.register(publisher.stop)  # what is still pending is saved for the next run


def _open(args: argparse.Namespace):
    """(Nas, prefix): the service for --repo or the tree around the cwd, and
    the cwd's path inside that tree (so relative paths work from a subfolder)."""
    from .cache import DiskCache
    from .reads import cwd_prefix
    from .repo import GitTree, work_tree_top
    from .service import Nas

    disk = DiskCache()
    tree = GitTree(args.repo or work_tree_top(os.getcwd()), node=args.node, tree=args.tree, hashes=disk)
    prefix = "" if args.repo else cwd_prefix(tree.root, os.getcwd())
    tokenizer = getattr(args, "tokenizer", "cl100k_base")
    settings = _summary_settings(args, detached=args.command == "read") if hasattr(args, "summarizer") else None
    nas = Nas(tree, tokenizer=tokenizer, disk=disk, summarizer=settings)
    if args.command in ("deref", "verify", "serve", "mcp"):
        from .evidence.foreign import Foreign

        nas.elsewhere = Foreign(nas, offline=getattr(args, "offline", False))
    return nas, prefix


def _write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def cmd_read(args: argparse.Namespace) -> int:
    from .reads import read_chunks

    nas, prefix = _open(args)
    chunks = read_chunks(nas, args.spec, args.at, args.json, prefix)
    assert chunks is not None  # no raw_limit here
    for chunk in chunks:  # a raw read streams the file: any size, bounded memory
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    return 0


def _pointer_core(args: argparse.Namespace):
    """The tree around (or --repo), or outside any tree the core of the
    pointer's node (its fetched commits): pointers verify anywhere."""
    from .errors import NotFound

    try:
        return _open(args)[0]
    except NotFound:
        if args.repo:
            raise
        from .evidence.foreign import core_for

        return core_for(args.pointer, args.offline)


def cmd_deref(args: argparse.Namespace) -> int:
    nas = _pointer_core(args)
    if args.swhid:
        print(nas.swhid(args.pointer))
        return 0
    p, body = nas.deref(args.pointer)
    if args.json:
        import hashlib
        import json

        answer = {"pointer": str(p), "content": body.decode("utf-8", errors="replace"), "sha256": hashlib.sha256(body).hexdigest()}
        if p.folder is None:
            answer["swhid"] = nas.swhid(args.pointer)
        _write((json.dumps(answer, ensure_ascii=False, indent=1) + "\n").encode())
    else:
        _write(body)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    nas = _pointer_core(args)
    if not args.json:
        print(nas.verify(args.pointer, sha256=args.sha256, quote=args.quote))
        return 0
    import json

    answer = nas.check(args.pointer, sha256=args.sha256, quote=args.quote)
    _write((json.dumps(answer, ensure_ascii=False, indent=1) + "\n").encode())
    return 0 if answer["verified"] else 1


def cmd_search(args: argparse.Namespace) -> int:
    from .search import search

    nas, _ = _open(args)
    response = search(nas, " ".join(args.query), at=args.at, budget=args.budget)
    _write(response.envelope_bytes() if args.json else response.text)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from .diffs import diff_response
    from .repo import clean_path

    nas, prefix = _open(args)
    path = clean_path(prefix + args.path) if args.path else None
    response = diff_response(nas, args.range, path, args.budget)
    _write(response.envelope_bytes() if args.json else response.text)
    return 0


def cmd_mount(args: argparse.Namespace) -> int:
    import logging

    from .fuse.mount import check_mountpoint, run_foreground, start_daemon
    from .repo import GitTree
    from .tokens import check_tokenizer

    check_tokenizer(args.tokenizer)
    GitTree(args.source)  # refuse a source that is not a git work tree, here and now
    check_mountpoint(args.mountpoint)
    if not args.foreground:
        pid = start_daemon(_daemon_argv(args), args.mountpoint, args.log_file)
        print(f"nasfs: {args.source} mounted at {args.mountpoint} (daemon pid {pid}); 'nasfs umount {args.mountpoint}' to stop")
        return 0
    logging.basicConfig(
        level=args.log_level.upper(),
        filename=args.log_file,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    return run_foreground(
        args.source, args.mountpoint, node=args.node, tree=args.tree, tokenizer=args.tokenizer,
        autocommit=args.autocommit, allow_other=args.allow_other, attr_timeout=args.attr_timeout,
        summarizer=_summary_settings(args), warm=not args.no_warm, publish=args.publish, publish_private=args.publish_private,
        faults=os.environ.get("NASFS_TEST_FAULTS") == "1",
    )


def _daemon_argv(args: argparse.Namespace) -> list[str]:
    """The same mount for the daemon, which runs in /: every path made absolute."""
    argv = ["mount", os.path.abspath(args.source), os.path.abspath(args.mountpoint),
            "--tokenizer", args.tokenizer, "--log-level", args.log_level, "--attr-timeout", str(args.attr_timeout)]
    for flag, value in (("--node", args.node), ("--tree", args.tree),
                        ("--log-file", args.log_file and os.path.abspath(args.log_file)), ("--publish", args.publish)):
        if value is not None:
            argv += [flag, value]
    settings = _summary_settings(args)
    if settings is not None:
        argv += settings.argv()
    return argv + [flag for flag, on in (("--autocommit", args.autocommit), ("--allow-other", args.allow_other),
                                         ("--no-warm", args.no_warm), ("--publish-private", args.publish_private)) if on]


def cmd_index(args: argparse.Namespace) -> int:
    import signal

    from .index import run_index
    from .repo import work_tree_top
    from .tokens import check_tokenizer

    check_tokenizer(args.tokenizer)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # ends the workers too
    root = args.repo or args.source or str(work_tree_top(os.getcwd()))
    if not args.summaries_only:
        run_index(root, node=args.node, tree=args.tree, tokenizer=args.tokenizer, jobs=args.jobs,
                  quiet=args.quiet, progress_log=args.progress_log)
    if args.summaries or args.summaries_only:
        from .summaries.fill import fill

        args.repo = root
        nas, _ = _open(args)
        return fill(nas, args.summaries_only, args.quiet)
    return 0


def cmd_umount(args: argparse.Namespace) -> int:
    from .fuse.mount import unmount

    unmount(args.mountpoint)
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    from .install import install_link

    print(install_link(args.root, args.bin_dir))
    return 0


def cmd_install_unit(args: argparse.Namespace) -> int:
    from .install import install_unit

    print(install_unit(args.root, args.instance, args.source, args.mountpoint, args.options, args.force))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from .fuse.mount import describe

    text, healthy = describe(args.mountpoint)
    print(text or ("no nasfs mount" + (f" at {args.mountpoint}" if args.mountpoint else "")))
    return 0 if healthy and (text or not args.mountpoint) else 1


def cmd_serve(args: argparse.Namespace) -> int:
    from .http import Listen, serve

    listen = Listen.parse(args.listen, args.token_file)  # refuse an unguarded address before opening anything
    nas, _ = _open(args)
    if nas.summaries is not None:
        nas.summaries.start_background()
    _start_publishing(args, nas)
    return serve(nas, listen, args.default_budget)


def cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp import serve_stdio

    nas, _ = _open(args)
    if nas.summaries is not None:
        nas.summaries.start_background()
    _start_publishing(args, nas)
    return serve_stdio(nas, args.default_budget)


def cmd_nodes(args: argparse.Namespace) -> int:
    from .evidence import nodes

    if args.action == "add":
        entry = nodes.add(args.name, args.url, args.http)
        print(f"added {entry.line()} to {nodes.registry_path()}")
    elif args.action == "remove":
        nodes.remove(args.name)
        print(f"removed {args.name} from {nodes.registry_path()}")
    else:
        found = nodes.load()
        print(f"# {nodes.registry_path()}" + ("" if found else " (no node yet: nasfs nodes add NAME URL)"))
        for name in sorted(found):
            print(found[name].line())
    return 0


def cmd_help(args: argparse.Namespace) -> int:
    from .help import HELP

    print(HELP, end="")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "read": cmd_read,
    "deref": cmd_deref,
    "verify": cmd_verify,
    "search": cmd_search,
    "diff": cmd_diff,
    "mount": cmd_mount,
    "index": cmd_index,
    "install": cmd_install,
    "install-unit": cmd_install_unit,
    "umount": cmd_umount,
    "status": cmd_status,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "nodes": cmd_nodes,
    "help": cmd_help,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["read"]:  # a mount daemon of the tree answers it without the imports below (read_client.py)
        from .read_client import ask

        answered = ask(argv[1:])
        if answered is not None:
            return answered
    from .fstab import is_helper_form, run_helper

    if is_helper_form(argv, list(COMMANDS)):  # mount.fuse3 (mount -t fuse.nasfs, fstab): SOURCE MOUNTPOINT -o OPTS
        return run_helper(argv, main)
    args = _parser().parse_args(argv)
    try:
        if getattr(args, "tokenizer", None) is not None:  # one spelling of --tokenizer and --margin for every door
            from .tokens import spell

            args.tokenizer = spell(args.tokenizer, args.margin)
        return COMMANDS[args.command](args)
    except NasError as exc:
        print(f"nasfs {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0


def run() -> None:
    sys.exit(main())


__all__ = ["main", "run"]


if __name__ == "__main__":
    run()
