"""The node registry: which git remote holds each node's published evidence.

One TOML file the user can read and edit (``$NASFS_NODES``, else
``~/.config/nasfs/nodes.toml``), written by ``nasfs nodes add|remove``::

    [nodes."box"]
    remote = "git://nas.example/home.git"
    http = "http://nas.example:8740"
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadPointer, NasError

URLS = "git://HOST[:PORT]/PATH, http(s)://HOST/PATH, ssh://HOST/PATH, USER@HOST:PATH, file:///PATH or /PATH"
_URL = re.compile(r"(git|https?|ssh|file)://\S+|[^\s/:@]+@[^\s/:]+:\S+|/\S*")


class BadRegistry(NasError):
    """The registry file or an entry given for it is not valid."""

    kind = "bad_registry"


@dataclass(frozen=True, slots=True)
class NodeEntry:
    name: str
    remote: str
    http: str | None = None

    def line(self) -> str:
        return f"{self.name}\t{self.remote}" + (f"\thttp={self.http}" if self.http else "")


def registry_path() -> Path:
    if os.environ.get("NASFS_NODES"):
        return Path(os.environ["NASFS_NODES"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "nasfs" / "nodes.toml"


def check_url(url: str, what: str = "remote") -> str:
    if not _URL.fullmatch(url):
        raise BadRegistry(f"{what} {url!r} is not a git remote address", URLS)
    return url


def load(path: Path | None = None) -> dict[str, NodeEntry]:
    """The registry's nodes by name; none when the file does not exist."""
    path = path or registry_path()
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadRegistry(f"node registry {path} cannot be read: {exc}", '[nodes."NAME"] tables with remote = "URL"') from None
    nodes = data.get("nodes", {})
    found = {}
    for name, entry in nodes.items() if isinstance(nodes, dict) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("remote"), str):
            raise BadRegistry(f"node registry {path}: node {name!r} has no remote", f'[nodes."{name}"] remote = "URL"')
        found[name] = NodeEntry(name, entry["remote"], entry.get("http"))
    return found


def save(nodes: dict[str, NodeEntry], path: Path | None = None) -> Path:
    """Write the registry whole (a temporary file renamed over it)."""
    path = path or registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ["# nasfs node registry: 'nasfs nodes add NAME URL [--http URL]' (docs/pointers.md)\n"]
    for name in sorted(nodes):
        e = nodes[name]
        text.append(f"\n[nodes.{json.dumps(name)}]\nremote = {json.dumps(e.remote)}\n")
        if e.http:
            text.append(f"http = {json.dumps(e.http)}\n")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(text))
    os.replace(tmp, path)
    return path


def add(name: str, remote: str, http: str | None = None) -> NodeEntry:
    if not name or any(c.isspace() for c in name):
        raise BadRegistry(f"node name {name!r} is empty or holds a space", "the node name pointers carry (nas://NODE/...)")
    entry = NodeEntry(name, check_url(remote), http and _check_http(http))
    nodes = load()
    nodes[name] = entry
    save(nodes)
    return entry


def remove(name: str) -> None:
    nodes = load()
    if nodes.pop(name, None) is None:
        raise BadRegistry(f"node {name!r} is not in the node registry {registry_path()}", ", ".join(sorted(nodes)) or "no node yet")
    save(nodes)


def lookup(node: str, tree: str) -> NodeEntry:
    """The entry for ``node/tree`` (one node serving several trees) or ``node``;
    an unknown node is one line naming the registry and how to add it."""
    nodes = load()
    entry = nodes.get(f"{node}/{tree}") or nodes.get(node)
    if entry is None:
        raise BadPointer(f"node {node!r} is not in the node registry {registry_path()}",
                         f"add it with 'nasfs nodes add {node} URL' (URL: the git remote it publishes to)")
    return entry


def _check_http(url: str) -> str:
    if not re.fullmatch(r"https?://\S+", url):
        raise BadRegistry(f"--http {url!r} is not an http(s) URL", "http://HOST:PORT of the node's 'nasfs serve'")
    return url
