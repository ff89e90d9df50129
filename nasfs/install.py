"""``nasfs install`` and ``nasfs install-unit``: put this installation where
mount(8) and systemd look for it.

``nasfs install`` links this installation's ``nasfs`` script into
/usr/local/sbin, on the PATH mount.fuse3's shell searches (see fstab.py), so
``mount -t fuse.nasfs`` and fstab lines of type ``fuse.nasfs`` work.
``nasfs install-unit`` writes the systemd unit ``nasfs@.service`` with
``ExecStart=`` that same script, and for an instance its settings
(/etc/nasfs/INSTANCE.env) and a drop-in with ``RequiresMountsFor=``. Both
take ``--root`` to write below another folder (packaging, tests).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import sysconfig
from importlib import resources
from pathlib import Path

from .errors import NasError
from .fstab import DEFAULT_PATH

BIN_DIR = "/usr/local/sbin"
UNIT_DIR = "/etc/systemd/system"
ENV_DIR = "/etc/nasfs"
TEMPLATE_EXEC = "/opt/nasfs/.venv/bin/nasfs"  # where the template's ExecStart points
TEMPLATE_DOCS = "Documentation=file:///opt/nasfs/docs/mount.md"
INSTANCE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")


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


def _systemd_path(path: str, what: str) -> str:
    """An absolute path as a unit file may hold it: no whitespace or quotes,
    '%' doubled (systemd reads %x as a specifier)."""
    if re.search(r"[\s\"'\\]", path):
        raise InstallError(f"{what} {path!r} holds whitespace, a quote or a backslash", "a path without them")
    return path.replace("%", "%%")


def render_unit(template: str, executable: Path) -> str:
    """The template with ExecStart= this nasfs and Documentation= the docs
    beside it (a checkout) or none (a wheel has no docs)."""
    start = f"ExecStart={TEMPLATE_EXEC} "
    if template.count(start) != 1:
        raise InstallError(f"the unit template has no single line starting {start!r}")
    text = template.replace(start, f"ExecStart={_systemd_path(str(executable), 'the nasfs script')} ")
    docs = Path(__file__).resolve().parent.parent / "docs" / "mount.md"
    docs_line = f"Documentation=file://{_systemd_path(str(docs), 'the docs')}" if docs.is_file() else None
    lines = [docs_line if line == TEMPLATE_DOCS else line for line in text.splitlines()]
    return "\n".join(line for line in lines if line is not None) + "\n"


def _env_value(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _write(path: Path, text: str, written: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.chmod(0o644)
    tmp.replace(path)
    written.append(str(path))


def install_unit(root: str = "/", instance: str | None = None, source: str | None = None,
                 mountpoint: str | None = None, options: str = "", force: bool = False) -> str:
    """Write nasfs@.service (and an instance's env file and drop-in) below
    ROOT; what was written and what to run next, in lines."""
    if instance is None and (source or mountpoint or options):
        raise InstallError("--source, --mountpoint and --options belong to an instance",
                           "nasfs install-unit INSTANCE --source DIR --mountpoint DIR [--options='...']")
    if instance is not None:
        if not INSTANCE.fullmatch(instance):
            raise InstallError(f"instance name {instance!r} is not a plain name", "letters, digits, '_', '.', ':', '-'")
        if not source or not mountpoint:
            raise InstallError(f"instance {instance} needs --source and --mountpoint",
                               f"nasfs install-unit {instance} --source /srv/agents/{instance} --mountpoint /srv/nasfs/{instance}")
        source, mountpoint = os.path.abspath(source), os.path.abspath(mountpoint)
        if mountpoint == "/":
            raise InstallError("the mount point cannot be /", "an empty folder")
        if "\n" in options:
            raise InstallError("--options holds a newline", "the options of 'nasfs mount' on one line")
    template = resources.files("nasfs").joinpath("data", "nasfs@.service").read_text()
    unit = render_unit(template, nasfs_executable())
    units = _under(root, UNIT_DIR)
    written: list[str] = []
    env_text = dropin_text = ""
    if instance is not None:
        env_text = (f"# written by 'nasfs install-unit {instance}': run it again to change these\n"
                    f"NASFS_SOURCE={_env_value(source)}\nNASFS_MOUNTPOINT={_env_value(mountpoint)}\n"
                    f"NASFS_OPTIONS={_env_value(options)}\n")
        env = _under(root, ENV_DIR) / f"{instance}.env"
        if env.exists() and env.read_text() != env_text and not force:
            raise InstallError(f"{env} exists with other settings", "edit it by hand, or give --force to replace it")
        needs = f"{_systemd_path(source, '--source')} {_systemd_path(os.path.dirname(mountpoint), '--mountpoint')}"
        dropin_text = (f"# written by 'nasfs install-unit {instance}': the source and the mount point's folder\n"
                       f"# must be mounted first (a [Unit] setting cannot read {ENV_DIR}/{instance}.env)\n"
                       f"[Unit]\nRequiresMountsFor={needs}\n")
    _write(units / "nasfs@.service", unit, written)
    if instance is not None:
        _write(_under(root, ENV_DIR) / f"{instance}.env", env_text, written)
        _write(units / f"nasfs@{instance}.service.d" / "mounts.conf", dropin_text, written)
    lines = [f"wrote {path}" for path in written]
    name = f"nasfs@{instance}" if instance else "nasfs@INSTANCE"
    lines.append(f"next: systemctl daemon-reload && systemctl enable --now {name}")
    return "\n".join(lines)
