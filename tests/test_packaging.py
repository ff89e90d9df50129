"""The files an admin installs: the systemd unit template and the README's commands.
(tests/test_install.py installs them for real.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nasfs.install import TEMPLATE_EXEC, render_unit

ROOT = Path(__file__).resolve().parent.parent


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing (Debian package systemd)")
    shipped = ROOT / "systemd" / "nasfs@.service"
    assert shipped.resolve() == ROOT / "nasfs" / "data" / "nasfs@.service"  # the package's template, one file
    template = shipped.read_text()
    assert f"ExecStart={TEMPLATE_EXEC} mount " in template
    # rendered as 'nasfs install-unit' renders it, for this checkout's nasfs
    (tmp_path / "nasfs@home.service").write_text(render_unit(template, Path(sys.executable).parent / "nasfs"))
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "nasfs@home.service")],
                          capture_output=True, text=True)
    complaints = [row for row in (done.stdout + done.stderr).splitlines() if "nasfs@home.service" in row]
    assert complaints == [], complaints


def test_readme_names_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "\n    scripts/run\n" in readme and "\n    scripts/test\n" in readme
    assert (ROOT / "scripts" / "run").stat().st_mode & 0o111
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def packages(script: str) -> list[str]:
    """The Debian packages a set-up script's bash array lists."""
    text = (ROOT / "scripts" / script).read_text()
    [body] = re.findall(r"^(?:APT_)?PACKAGES=\((.*?)^\)", text, flags=re.S | re.M)  # one a line; ")" alone ends it
    return [word for line in body.splitlines() for word in line.split("#")[0].split()]


def test_readme_lists_exactly_what_each_setup_installs() -> None:
    readme = (ROOT / "README.md").read_text()
    setup_section = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    words = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", setup_section.replace("`", " ")))
    for script in ("setup-core", "setup", "setup-reexport"):
        listed = packages(script)
        assert listed, script
        missing = [name for name in listed if name not in words]
        assert missing == [], f"README's set-up section omits what scripts/{script} installs: {missing}"
    run = (ROOT / "scripts" / "run").read_text()
    assert re.search(r"^scripts/setup-core\b", run, flags=re.M) and not re.search(r"^scripts/setup\b(?!-)", run, flags=re.M)
    setup = (ROOT / "scripts" / "setup").read_text()
    assert re.search(r"^scripts/setup-core\b", setup, flags=re.M) and re.search(r"^scripts/setup-reexport\b", setup, flags=re.M)
    assert re.search(r"^scripts/setup\b(?!-)", (ROOT / "scripts" / "test").read_text(), flags=re.M)
