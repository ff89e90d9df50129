"""``nasfs SOURCE MOUNTPOINT -o OPTIONS``: the mount-helper form behind
``mount -t fuse.nasfs`` and fstab lines of type ``fuse.nasfs``.

mount(8) hands a ``fuse.nasfs`` line to ``mount.fuse3`` (Debian's fuse3),
which runs ``/bin/sh -c 'nasfs SOURCE MOUNTPOINT -o OPTIONS'``; mount(8)
drops PATH first, so the shell's default PATH
(``/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin``) must find
``nasfs`` (``nasfs install`` links it into /usr/local/sbin). The options are
nasfs's own (``node=box``, ``allow_other``, ...) mixed with the generic ones
mount(8) and mount.fuse3 pass along (``rw``, ``noatime``, ``dev,suid``, ...):
the generic ones are ignored, ``ro`` and ``noexec`` are applied to the mount
point, anything else is refused in one line. The mount is then made exactly
as ``nasfs mount`` makes it, daemon and all, and this returns once it
answers, so mount(8) returns.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .errors import NasError

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# nasfs's own options: name -> ('nasfs mount' flag, takes a value)
OWN: dict[str, tuple[str, bool]] = {
    "node": ("--node", True),
    "tree": ("--tree", True),
    "tokenizer": ("--tokenizer", True),
    "margin": ("--margin", True),
    "summarizer": ("--summarizer", True),
    "summary_model": ("--summary-model", True),
    "summary_key_file": ("--summary-key-file", True),
    "summary_context": ("--summary-context", True),
    "summaries": ("--summaries", True),
    "summaries_in_ladder": ("--summaries-in-ladder", False),
    "summaries_keep_unsupported": ("--summaries-keep-unsupported", False),
    "summary_judge": ("--summary-judge", True),
    "summary_judge_model": ("--summary-judge-model", True),
    "log_file": ("--log-file", True),
    "log_level": ("--log-level", True),
    "attr_timeout": ("--attr-timeout", True),
    "autocommit": ("--autocommit", False),
    "allow_other": ("--allow-other", False),
    "publish": ("--publish", True),
    "publish_private": ("--publish-private", False),
}
LOG_LEVELS = ("debug", "info", "warning", "error")

# Generic options with nothing to do: what they ask is already so (a FUSE mount
# is always nosuid,nodev and nasfs always uses default_permissions; atime is
# the source filesystem's business), they are mount(8)'s or systemd's own
# (auto, user, nofail, _netdev, x-systemd.*), or they ask for what libfuse
# never grants (dev, suid: the mount stays nodev,nosuid).
IGNORED = frozenset({
    "rw", "defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group", "nofail", "_netdev",
    "dev", "nodev", "suid", "nosuid", "exec", "async", "silent", "loud",
    "atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
    "lazytime", "nolazytime", "iversion", "noiversion", "default_permissions",
})
IGNORED_PREFIXES = ("x-", "comment=")

# Per-mount-point flags, applied by a bind remount once the daemon answers.
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
FLAGS = {"ro": MS_RDONLY, "noexec": MS_NOEXEC}

REFUSED = {
    "remount": "remount is not supported; 'umount' the folder and mount it again",
    "sync": "sync is not supported (writes go to the source as its filesystem does them)",
    "dirsync": "dirsync is not supported (writes go to the source as its filesystem does them)",
}

VALID = ("node=NAME, tree=NAME, tokenizer=NAME|max:A+B+...|PRESET, margin=M, summarizer=URL|CMD, summary_model=NAME, summary_key_file=FILE, summary_context=N, summaries=off|on-demand|background, summaries_in_ladder, summaries_keep_unsupported, summary_judge=URL|CMD, summary_judge_model=NAME, autocommit, allow_other, "
         "log_file=FILE, log_level=debug|info|warning|error, attr_timeout=SECONDS, ro, noexec "
         "(generic ones such as rw, defaults, _netdev, nofail, noatime, x-systemd.* are ignored)")


class MountOptionError(NasError):
    """An -o option nasfs does not know, or a value it cannot take."""


@dataclass
class HelperCall:
    source: str
    mountpoint: str
    mount_argv: list[str] = field(default_factory=list)  # for 'nasfs mount'
    flags: list[str] = field(default_factory=list)  # ro, noexec


def is_helper_form(argv: Sequence[str], commands: Sequence[str]) -> bool:
    """``SOURCE MOUNTPOINT [-o OPTS]...``: the first word names no command and
    is a path (has a '/' or is an existing folder), so a mistyped command
    (``nasfs raed x``) still gets argparse's list of commands."""
    if len(argv) < 2 or argv[0] in commands or argv[0].startswith("-"):
        return False
    return "/" in argv[0] or os.path.isdir(argv[0])


def split_options(text: str) -> list[str]:
    """Comma-separated, with double quotes around a value that holds commas
    (``summarizer="fold -w 80,x"``); the quotes are dropped."""
    parts, current, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quoted:
        raise MountOptionError(f"unbalanced double quote in -o {text!r}")
    parts.append("".join(current))
    return [p for p in parts if p]


def parse(argv: Sequence[str]) -> HelperCall:
    """The helper's argv (without the program name) as a 'nasfs mount' argv."""
    positional: list[str] = []
    options: list[str] = []
    args = list(argv)
    while args:
        word = args.pop(0)
        if word == "-o":
            if not args:
                raise MountOptionError("-o needs a value", VALID)
            options += split_options(args.pop(0))
        elif word.startswith("-o"):
            options += split_options(word[2:])
        elif word.startswith("-"):
            raise MountOptionError(f"unknown argument {word!r} in the mount-helper form",
                                   "nasfs SOURCE MOUNTPOINT [-o OPTIONS] (or 'nasfs mount --help')")
        else:
            positional.append(word)
    if len(positional) != 2:
        raise MountOptionError(f"the mount-helper form takes SOURCE and MOUNTPOINT, got {len(positional)} words",
                               "nasfs SOURCE MOUNTPOINT [-o OPTIONS]")
    call = HelperCall(positional[0], positional[1])
    seen: dict[str, str] = {}
    for option in options:
        name, eq, value = option.partition("=")
        if option in IGNORED or option.startswith(IGNORED_PREFIXES):
            continue
        if option in FLAGS:
            call.flags.append(option)
            continue
        if option in REFUSED:
            raise MountOptionError(REFUSED[option])
        if name not in OWN:
            raise MountOptionError(f"unknown mount option {option!r}", VALID)
        flag, takes_value = OWN[name]
        if takes_value != bool(eq):
            raise MountOptionError(f"mount option {name} {'needs a value: ' + name + '=...' if takes_value else 'takes no value'}", VALID)
        if takes_value and not value:
            raise MountOptionError(f"mount option {name}= needs a value", VALID)
        if name in seen:
            if seen[name] != value:
                raise MountOptionError(f"mount option {name} is given twice ({seen[name]!r} and {value!r})")
            continue
        seen[name] = value
        if name == "attr_timeout":
            try:
                if float(value) < 0:
                    raise ValueError
            except ValueError:
                raise MountOptionError(f"attr_timeout={value} is not a number of seconds", "attr_timeout=1 or 0.5") from None
        if name == "log_level" and value not in LOG_LEVELS:
            raise MountOptionError(f"log_level={value} is not a log level", "|".join(LOG_LEVELS))
        call.mount_argv += [flag, value] if takes_value else [flag]
    call.mount_argv = ["mount", call.source, call.mountpoint, *call.mount_argv]
    return call


def remount(mountpoint: str, flags: Sequence[str]) -> None:
    """Set ro/noexec on the mount point (a bind remount, which every
    filesystem takes); nosuid and nodev stay, as libfuse set them."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    bits = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV
    for name in flags:
        bits |= FLAGS[name]
    if libc.mount(None, os.fsencode(mountpoint), None, ctypes.c_ulong(bits), None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), mountpoint)


def run_helper(argv: Sequence[str], nasfs: Callable[[list[str]], int]) -> int:
    """Mount as 'nasfs mount' does (daemon mode), then apply ro/noexec; the
    exit code mount(8) reports. ``nasfs`` runs a nasfs command line (the
    CLI's ``main``, handed in: this module does not import its caller)."""
    try:
        call = parse(argv)
    except MountOptionError as exc:
        print(f"nasfs: {exc}", file=sys.stderr)
        return exc.exit_code
    # mount(8) runs helpers without PATH; the daemon runs fusermount3, rg and
    # summarizers, so give it the shell's standard one.
    os.environ.setdefault("PATH", DEFAULT_PATH)
    with contextlib.redirect_stdout(io.StringIO()):  # a mount helper is silent when it succeeds
        rc = nasfs(call.mount_argv)
    if rc != 0 or not call.flags:
        return rc
    try:
        remount(os.path.abspath(call.mountpoint), call.flags)
    except OSError as exc:
        print(f"nasfs: could not make {call.mountpoint} {','.join(call.flags)} ({exc.strerror}); unmounting it",
              file=sys.stderr)
        nasfs(["umount", call.mountpoint])
        return 1
    return 0
