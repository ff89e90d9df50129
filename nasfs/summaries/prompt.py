"""What the model is shown: the file in labelled parts, or what fits of it.

The file is cut into parts at blank lines (at most PART_LINES lines each),
each shown after its label ``[L12-L18]``; the model is asked to start each
sentence with the label of the part it comes from, which a small model
copies far more reliably than it counts lines. A file too large for the
model's context is given its outline (each entry with its line span) and
then the parts of each top-level section in turns, first parts first,
until the context is used. Only lines the model saw can support a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import tokens as tok
from ..outline import Outline

SYSTEM = "You summarize files. Each part of the file starts with its label in brackets."
ASK = ("Write one short sentence for each of the 3 most important parts. Start each sentence with the part's "
       "label, like [L3-L5], then copy the main fact of that part in its own words.")
FOLDER_SYSTEM = "You summarize folders. Each item of the folder starts with its number in brackets."
FOLDER_ASK = ("Write one short sentence for each of the 3 most important items. Start each sentence with the "
              "item's number, like [2], then copy the main fact of that item in its own words.")
RESERVED = 200  # tokens of instructions and chat formatting around the file
SAFETY = 1.3  # the model's tokenizer is not ours: our count times this must fit
PART_LINES = 12


@dataclass(frozen=True, slots=True)
class Prompt:
    system: str
    user: str
    whole: bool  # the file was shown whole (else its outline and some parts)


def parts(lines: Sequence[str], first: int, last: int) -> list[tuple[int, int]]:
    """Lines first..last cut at blank lines, at most PART_LINES each (blank lines in none)."""
    out, start = [], None
    for n in range(first, last + 1):
        blank = not lines[n - 1].strip()
        if start is None and not blank:
            start = n
        if start is not None and (blank or n - start + 1 == PART_LINES or n == last):
            out.append((start, n - 1 if blank else n))
            start = None
    return out


def _shown(lines: Sequence[str], a: int, b: int) -> str:
    return f"[L{a}-L{b}]\n" + "\n".join(lines[a - 1:b])


def _cost(text: str) -> int:
    return int(tok.count(text) * SAFETY) + 1


def numbered_lines(text: str) -> list[str]:
    """The lines of ``text`` as every view numbers them: ended by ``\n`` only
    (a form feed, ``\r`` or U+2028 stays inside its line, as in LineIndex)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line
    return lines


def file_prompt(path: str, text: str, outline: Outline, context_tokens: int, answer_tokens: int) -> Prompt:
    lines = numbered_lines(text)
    budget = context_tokens - answer_tokens - RESERVED
    body = "\n\n".join(_shown(lines, a, b) for a, b in parts(lines, 1, len(lines)))
    if _cost(body) <= budget:
        return Prompt(SYSTEM, f"File {path}:\n\n{body}\n\n{ASK}", True)
    head = f"File {path} ({len(lines)} lines) is too long to show whole. Its outline, each entry after its lines:\n"
    shown_outline = outline.render()
    while _cost(head + shown_outline) > budget // 2 and "\n" in shown_outline.strip():
        kept = shown_outline.splitlines()
        shown_outline = "\n".join(kept[: max(1, len(kept) // 2)])
    spent = _cost(head + shown_outline)
    spans = [(e.start, e.end) for e in outline.entries if e.depth == 0] or [(1, len(lines))]
    queues = [parts(lines, a, min(b, len(lines))) for a, b in spans]
    chosen: list[tuple[int, int]] = []
    while any(queues):
        for queue in queues:
            if not queue:
                continue
            a, b = queue.pop(0)
            cost = _cost(_shown(lines, a, b))
            if spent + cost > budget:
                queue.clear()  # this section's next parts would not fit either, most likely
                continue
            spent += cost
            chosen.append((a, b))
    body = "\n\n".join(_shown(lines, a, b) for a, b in sorted(chosen))
    return Prompt(SYSTEM, f"{head}{shown_outline}\n\nSome of its parts:\n\n{body}\n\n{ASK}", False)


def folder_prompt(path: str, children: Sequence[tuple[str, str]]) -> Prompt:
    """``children``: (name, its summary text), each shown as ``[n] name: text``."""
    items = "\n".join(f"[{i}] {name}: {summary.strip()}" for i, (name, summary) in enumerate(children, 1))
    return Prompt(FOLDER_SYSTEM, f"Folder {path or '.'} holds:\n{items}\n\n{FOLDER_ASK}", True)
