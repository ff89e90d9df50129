"""``nasfs install``: put this installation where mount(8) looks for it.

``nasfs install`` links this installation's ``nasfs`` script into
/usr/local/sbin, on the PATH mount.fuse3's shell searches (see fstab.py), so
``mount -t fuse.nasfs`` and fstab lines of type ``fuse.nasfs`` work. It takes
``--root`` to write below another folder (packaging, tests).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from .errors import NasError
from .fstab import DEFAULT_PATH

BIN_DIR = "/usr/local/sbin"


class InstallError(NasError):
    """Something in the way of an install; the message says what to do."""


def nasfs_executable() -> Path:
    """This installation's ``nasfs`` script: the one beside this Python's
    scripts (a venv's bin/), else the one that is running."""
    beside = Path(sysconfig.get_path("scripts")) / "nasfs"
    if os.access(beside, os.X_OK):
        return beside
    if os.path.basename(sys.argv[0]) == "nasfs":
        running = Path(os.path.realpath(sys.argv[0]))
        if os.access(running, os.X_OK):
            return running
    raise InstallError(f"found no nasfs script of this installation (not in {beside.parent})",
                       "run the nasfs of the installation, e.g. /opt/nasfs/.venv/bin/nasfs install")


def _under(root: str, path: str) -> Path:
    return Path(root) / path.lstrip("/")


def install_link(root: str = "/", bin_dir: str = BIN_DIR) -> str:
    """ROOT/BIN_DIR/nasfs -> this installation's nasfs; what was done, in lines."""
    target = nasfs_executable()
    link = _under(root, bin_dir) / "nasfs"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink():
        if os.readlink(link) == str(target):
            return f"{link} already links to {target}"
        link.unlink()
    elif link.exists():
        raise InstallError(f"{link} exists and is not a symlink", "remove it, or choose another folder with --bin-dir")
    link.symlink_to(target)
    lines = [f"linked {link} -> {target} (remove the link to undo)"]
    if bin_dir not in DEFAULT_PATH.split(":"):
        lines.append(f"note: mount.fuse3 runs nasfs with PATH={DEFAULT_PATH}, which has no {bin_dir}")
    if root == "/" and shutil.which("mount.fuse3", path="/usr/sbin:/sbin") is None:
        lines.append("note: mount.fuse3 is missing (Debian package fuse3); fstab lines of type fuse.nasfs need it")
    return "\n".join(lines)
