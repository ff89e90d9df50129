"""The scale benchmark's invariants, timing-free (scripts/bench/scale.py).

The same code as the benchmark, at 10^5 files instead of 10^6 and with
fewer reads: a real mount of a tree built by ``git fast-import``, read by
real programs (find, git, rg, cat) and by threads. Nothing here asserts on
time; what must hold at any size: the run finishes, the tools say through
the mount what they say natively, the root's map counts every file and
shows its progress in ``.nas/status`` while it runs, the daemon's memory
does not grow when the same views are read again, every change made beside
the mount shows through it, and no view mixes two versions of its file.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from .mounts import clear_stale_mounts

ROOT = Path(__file__).resolve().parent.parent
SCALE = ROOT / "scripts" / "bench" / "scale.py"
FILES = 100_000
DEADLINE = 1500  # seconds; about 2-4 minutes on 2 shared cores


def test_a_tree_of_100k_files_mounted_mapped_read_and_changed(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    child = subprocess.Popen(
        [sys.executable, str(SCALE), "--files", str(FILES), "--tree", str(tmp_path / "tree"), "--views", "3000",
         "--rounds", "3", "--repeat", "3", "--runs", "1", "--rg-runs", "1", "--changes", "300", "--no-index", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        log, _ = child.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)  # the benchmark unmounts and stops its daemon on SIGTERM
        try:
            log, _ = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            log, _ = child.communicate()
        clear_stale_mounts(str(tmp_path))
        raise AssertionError(f"the scale run did not finish in {DEADLINE} s:\n{log[-4000:]}") from None
    assert child.returncode == 0, log[-4000:]
    res = json.loads(out.read_text())

    for name, (_, _, _, same) in res["paired"].items():
        assert same == "same output", f"{name}: {same}"
    assert res["view_errors"] == [] and res["views_read"] == 3000 * 2, res["view_errors"][:5]

    header = res["map_header"]
    assert header["view"] == "map" and header["files"] == str(FILES), header  # every file, deep chains included
    assert any(line.startswith("working: folder map of '.'") for line in res["status_lines"]), res["status_lines"]
    assert any("ranking: files read" in line for line in res["status_lines"]), res["status_lines"]

    repeated = res["repeat_rss"]
    assert len(repeated) == 3 and max(repeated) - repeated[0] <= max(8.0, 0.05 * repeated[0]), repeated

    assert res["changes"] == 300 and res["unseen"] == [], res["unseen"][:5]
    assert len(res["change_seen_s"]) == 300
    assert res["reader_reads"] > 0 and res["torn"] == [], res["torn"][:5]
    assert res["deep_view_ms"][0] > 0
