"""What the model is shown: the file with line numbers, or what fits of it.

A file that fits the model's context is given whole, each line as
``12| text``. A larger one is given its outline (each entry starting with its
line span) and then, section by section, the first lines of each top-level
section, in turns, until the context is used. Either way the model sees the
line numbers it must cite, and only lines it saw can support a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import tokens as tok
from ..outline import Outline

SYSTEM = ("You summarize files for a reader who cannot see them. Write 2 or 3 short sentences. "
          "Each sentence says one fact from the file, using the file's own words, "
          "and ends with the numbers of the lines it comes from, like [L4-L6].")
FOLDER_SYSTEM = ("You summarize a folder from the summaries of what it holds. Write 2 or 3 short sentences. "
                 "Each sentence says one fact, using the summaries' own words, and ends with the number "
                 "of the item it comes from, like [2].")
RESERVED = 200  # tokens of instructions and chat formatting around the file
SAFETY = 1.3  # the model's tokenizer is not ours: our count times this must fit
SECTION_LINES = 6  # lines of each section added per turn, when the file does not fit


@dataclass(frozen=True, slots=True)
class Prompt:
    system: str
    user: str
    whole: bool  # the file was shown whole (else its outline and parts)


def _numbered(lines: Sequence[str], first: int, last: int) -> list[str]:
    return [f"{n}| {lines[n - 1]}" for n in range(first, last + 1)]


def _cost(text: str) -> int:
    return int(tok.count(text) * SAFETY) + 1


def file_prompt(path: str, text: str, outline: Outline, context_tokens: int, answer_tokens: int) -> Prompt:
    lines = text.splitlines()
    budget = context_tokens - answer_tokens - RESERVED
    body = "\n".join(_numbered(lines, 1, len(lines)))
    if _cost(body) <= budget:
        return Prompt(SYSTEM, f"File {path}:\n{body}\n\nSummary of {path}, each sentence ending with its [L..-L..]:", True)
    head = f"File {path} ({len(lines)} lines), too long to show whole. Its outline (line spans first):\n"
    shown_outline = outline.render()
    while _cost(head + shown_outline) > budget // 2 and "\n" in shown_outline.strip():
        shown_outline = "\n".join(shown_outline.splitlines()[: max(1, len(shown_outline.splitlines()) // 2)])
    spent = _cost(head + shown_outline)
    tops = [e for e in outline.entries if e.depth == 0] or []
    spans = [(e.start, e.end) for e in tops] or [(1, len(lines))]
    taken = {span: span[0] - 1 for span in spans}  # last line shown of each section
    progress = True
    while progress:
        progress = False
        for start, end in spans:
            done = taken[(start, end)]
            if done >= end:
                continue
            upto = min(end, done + SECTION_LINES)
            piece = "\n".join(_numbered(lines, done + 1, upto))
            if spent + _cost(piece) > budget:
                continue
            spent += _cost(piece)
            taken[(start, end)] = upto
            progress = True
    parts = ["\n".join(_numbered(lines, s, taken[(s, e)])) for s, e in spans if taken[(s, e)] >= s]
    user = f"{head}{shown_outline}\nParts of it:\n" + "\n...\n".join(parts)
    return Prompt(SYSTEM, user + f"\n\nSummary of {path}, each sentence ending with its [L..-L..]:", False)


def folder_prompt(path: str, children: Sequence[tuple[str, str]]) -> Prompt:
    """``children``: (name, its summary text) in the order the folder map ranks them."""
    items = "\n".join(f"[{i}] {name}: {summary.strip()}" for i, (name, summary) in enumerate(children, 1))
    return Prompt(FOLDER_SYSTEM, f"Folder {path or '.'} holds:\n{items}\n\nSummary of the folder, each sentence ending with its [n]:", True)
