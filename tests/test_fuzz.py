"""A short run of the name fuzzer (scripts/bench/fuzz.py) through all three doors.

2000 names from a fixed seed through a real mount (stat and open+read of
each), 30 of them through the CLI and all of them over HTTP: no daemon death,
no hang, no EIO or other unclear errno, every refused view's reason in
.nas/errors, no traceback, no 5xx, and never the secret marker kept beside the
tree behind symlinks. fuzz.py exits 1 and prints each failure with example
names otherwise; the long run (10^5 names) is the benchmark's, not the tests'.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "scripts" / "bench" / "fuzz.py"
SEED = 20261201


def test_fuzzed_names_get_clear_answers_through_every_door() -> None:
    cmd = [sys.executable, str(FUZZ), "--count", "2000", "--seed", str(SEED), "--cli-sample", "30", "--timeout", "30",
           "--check-every", "250"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        out, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)  # fuzz.py unmounts and ends what it started on SIGTERM
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        pytest.fail(f"fuzz.py did not finish in 240 s:\n{out[-4000:]}")
    assert proc.returncode == 0, out[-6000:]
    assert "PASS: no failure in any door" in out
    for door in ("mount", "cli", "http"):
        assert f"{door}: outcome" in out, f"no outcomes for {door}:\n{out[-3000:]}"
