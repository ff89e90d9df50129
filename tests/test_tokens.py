"""Offline tokenizers: the counts are tiktoken's own, whatever way they loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = "# Acme Corp\n\nThe contract renews on 2027-03-01; price +3% — naïve café ✓\n\tindent\r\n"

PROGRAM = """
import os, sys, tiktoken
from nasfs import tokens
name = sys.argv[1]
ours = tokens.count(sys.argv[2], name)
reference = tiktoken.get_encoding(name).encode_ordinary(sys.argv[2])
print(ours, len(reference), sorted(os.listdir(os.environ["TIKTOKEN_CACHE_DIR"])))
"""


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_counts_match_tiktoken_cold_warm_and_after_a_damaged_cache(name: str, tmp_path: Path) -> None:
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "tk"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", PROGRAM, name, SAMPLE], env=env, capture_output=True, text=True, check=True)
        runs.append(out.stdout.split(" ", 2))
    (fast,) = (tmp_path / "tk").glob(f"{name}.nasfs-*.marshal")
    fast.write_bytes(b"damaged")
    out = subprocess.run([sys.executable, "-c", PROGRAM, name, SAMPLE], env=env, capture_output=True, text=True, check=True)
    runs.append(out.stdout.split(" ", 2))
    for ours, reference, _ in runs:
        assert ours == reference and int(ours) > 10
    assert fast.read_bytes() != b"damaged"  # rewritten from the vocabulary
