"""The files an admin installs: the systemd unit and the README's commands."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing (Debian package systemd)")
    unit = (ROOT / "systemd" / "nasfs@.service").read_text()
    assert "/opt/nasfs/.venv/bin/nasfs mount" in unit
    # point ExecStart at this checkout's nasfs so the check is about the unit itself
    local = unit.replace("/opt/nasfs/.venv/bin/nasfs", str(Path(sys.executable).parent / "nasfs"))
    (tmp_path / "nasfs@home.service").write_text(local)
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "nasfs@home.service")],
                          capture_output=True, text=True)
    complaints = [row for row in (done.stdout + done.stderr).splitlines() if "nasfs@home.service" in row]
    assert complaints == [], complaints


def test_readme_names_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "\n    scripts/run\n" in readme and "\n    scripts/test\n" in readme
    assert (ROOT / "scripts" / "run").stat().st_mode & 0o111
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()
