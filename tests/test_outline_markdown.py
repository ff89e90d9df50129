"""Markdown outlines as CommonMark reads them, in memory and streamed (files over 32 MiB)."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from nasfs.outline.markdown import outline_markdown, outline_markdown_stream
from nasfs.service import Nas

from .conftest import git, header

OFL = b"""Copyright 2010 The Authors

-----------------------------------------------------------
SIL OPEN FONT LICENSE Version 1.1 - 26 February 2007
-----------------------------------------------------------

PREAMBLE
The goals of the Open Font License.
"""


def _heads(data: bytes) -> list[tuple[str, int, int]]:
    return [(e.label, e.start, e.end) for e in outline_markdown(data).entries]


def test_thematic_break_before_a_setext_heading_is_not_part_of_it() -> None:
    # The break on line 3 is a break; lines 4-5 are a setext heading on line 4.
    assert _heads(OFL) == [("## SIL OPEN FONT LICENSE Version 1.1 - 26 February 2007", 4, 8)]


def test_commonmark_blocks_that_hold_no_heading() -> None:
    doc = (
        b"# Top\n"           # 1
        b"- item\n"          # 2
        b"  # in a list\n"   # 3: a heading inside a list item, not a section of the file
        b"\n"                # 4
        b"<div>\n"           # 5
        b"# in html\n"       # 6: an HTML block
        b"</div>\n"          # 7
        b"\n"                # 8
        b"    # indented code\n"  # 9
        b"\n"                # 10
        b"~~~\n# fenced\n~~~\n"  # 11-13
        b"Two line\n"        # 14
        b"setext\n"          # 15
        b"===\n"             # 16
        b"## Closed ##\n"    # 17
    )
    assert _heads(doc) == [("# Top", 1, 13), ("# Two line setext", 14, 17), ("## Closed", 17, 17)]


def test_lone_carriage_return_keeps_nasfs_line_numbers() -> None:
    # CommonMark ends a line at a lone CR; nasfs does not, and the outline uses nasfs lines.
    assert _heads(b"# A\r\nx\ry\r\n## B\r\n") == [("# A", 1, 3), ("## B", 3, 3)]


def test_streamed_windows_give_the_in_memory_outline(monkeypatch) -> None:
    from nasfs.outline import markdown

    doc = b"".join(
        b"# Chapter %d\n\ntext\n\n```\n# not a heading\n\n```\n\nPara %d\n---\n\n- a\n\n  # no\n\n" % (i, i) for i in range(300)
    )
    whole = outline_markdown(doc)
    monkeypatch.setattr(markdown, "WINDOW", 200)  # cut the stream into many windows
    monkeypatch.setattr(markdown, "MAX_WINDOW", 10**9)
    pieces = (doc[i : i + 77] for i in range(0, len(doc), 77))
    assert outline_markdown_stream(pieces) == whole
    assert len(whole.entries) == 600 and whole.entries[-1].label == "## Para 299"


def test_markdown_over_32_mib_keeps_headings_and_sections(home: Path) -> None:
    big = home / "big.md"
    chapter = "# Chapter {0}\n\n" + "A line of the chapter's text, long enough to add up.\n" * 40 + "\n## Part {0}.1\n\nlast\n\n"
    with open(big, "w") as fh:
        for i in range(17000):
            fh.write(chapter.format(i))
    assert big.stat().st_size > 33 << 20
    git(home, "add", "big.md")
    git(home, "commit", "-q", "-m", "big")
    lines_per_chapter = chapter.count("\n")
    first = 12345 * lines_per_chapter + 1
    code = (
        "import re,sys\n"
        "from nasfs.repo import GitTree\nfrom nasfs.service import Nas\n"
        "nas = Nas(GitTree(sys.argv[1], node='box', tree='home'))\n"
        "for spec in ('big.md@outline@300', 'big.md@section=Chapter 12345'):\n"
        "    sys.stdout.buffer.write(nas.read(spec).text + b'\\0')\n"
        "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1), file=sys.stderr)\n"
    )
    out = subprocess.run([os.sys.executable, "-c", code, str(home)], capture_output=True, timeout=240)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    outline, section, _ = out.stdout.split(b"\0")
    keys = header(outline)  # a page of the headings, not a text outline
    assert keys["kind"] == "markdown" and keys["entries"].endswith("/17000"), outline[:300]
    assert outline.split(b"\n")[1] == b"1-%d # Chapter 0" % lines_per_chapter
    assert header(section)["pointer"].endswith(f"#L{first}-L{first + lines_per_chapter - 1}")
    assert section.split(b"\n", 2)[1] == b"# Chapter 12345"
    rss_kb = int(out.stderr.decode().strip().splitlines()[-1])
    assert rss_kb < 250 * 1024, f"{rss_kb} KiB for a {big.stat().st_size >> 20} MiB file"


def test_small_markdown_outline_through_the_core(nas: Nas, home: Path) -> None:
    (home / "ofl.md").write_bytes(OFL)
    body = nas.read("ofl.md@section=SIL OPEN FONT LICENSE Version 1.1 - 26 February 2007").served.body
    assert body.startswith(b"SIL OPEN FONT LICENSE") and body.endswith(b"Open Font License.\n")


def test_a_heading_shows_its_links_as_text_and_is_found_by_it(nas: Nas, home: Path) -> None:
    (home / "CHANGES.md").write_text(
        "# 3.9.6\n\n#### Support `import defer` ([#19624](https://github.com/p/p/pull/19624) by [@fisker](https://github.com/fisker))\n\n"
        + "A line of text about the change, long enough to be worth an outline.\n" * 30
    )
    outline = nas.read("CHANGES.md@outline").text.decode()
    assert "\n3-34 #### Support `import defer` (#19624 by @fisker)\n" in outline and "https://" not in outline
    body = nas.read("CHANGES.md@section=Support `import defer` (#19624 by @fisker)").served.body
    assert body.startswith(b"#### Support") and body.endswith(b"an outline.\n")


def test_markdown_it_debug_records_stay_out_of_a_debug_log(caplog: pytest.LogCaptureFixture) -> None:
    """The parser logs each block rule it tries at debug level (about 250,000
    records per MB); under ``--log-level debug`` they would flood the log."""
    with caplog.at_level(logging.DEBUG):
        heads = _heads(b"# A\n\ntext\n> quote\n\n## B\n\n- item\n\n    code\n")
        logging.getLogger("nasfs.test").debug("a debug record of nasfs itself")
    assert heads == [("# A", 1, 10), ("## B", 6, 10)]
    assert [r.name for r in caplog.records] == ["nasfs.test"]
