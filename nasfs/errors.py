"""The error classes every door maps in one place.

Each error says what was wrong and, where it helps, what is valid. Doors map
the class to their own vocabulary: an exit code (CLI), an errno (FUSE), an
HTTP status. Nothing else is raised to a door on bad input.
"""

from __future__ import annotations

import errno
import unicodedata
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class NasError(Exception):
    """Base: a refusal with a message a person can act on."""

    exit_code = 2
    http_status = 400
    errno = errno.EINVAL
    kind = "error"

    def __init__(self, message: str, valid: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.valid = valid

    def __reduce__(self) -> tuple[type, tuple[str, str | None]]:
        """Pickled whole, message and what is valid (a worker process raises these)."""
        return type(self), (self.message, self.valid)

    def __str__(self) -> str:
        if self.valid:
            return one_line(f"{self.message}; valid: {self.valid}")
        return one_line(self.message)


_UNSEEN = ("Cc", "Cf", "Zl", "Zp")  # controls, format (bidi overrides), line and paragraph separators


def one_line(text: str) -> str:
    """``text`` with every control, bidirectional or line-breaking character
    written as an escape (``\\n``, ``\\u202e``): a name echoed in an error
    can then neither break the one-line message nor reorder what a reader
    sees, nor forge a line of ``.nas/errors``."""
    if all(unicodedata.category(c) not in _UNSEEN for c in text):
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in _UNSEEN else c
                   for c in text)


class BadView(NasError):
    """The text after ``@`` is not a view of the grammar."""

    errno = errno.ENOENT
    kind = "bad_view"


class BadTokenizer(BadView):
    """A tokenizer, tokenizer set or margin that nasfs cannot count with."""

    kind = "bad_tokenizer"


class BadPath(NasError):
    """A path that is malformed or would leave the served tree."""

    errno = errno.ENOENT
    kind = "bad_path"


class BadPointer(NasError):
    """A pointer that does not parse or belongs to another node or tree."""

    kind = "bad_pointer"


class NotFound(NasError):
    """A path, revision, line range or section that does not exist."""

    http_status = 404
    errno = errno.ENOENT
    kind = "not_found"


class NotServable(NasError):
    """A view that parses but cannot be served for this file (binary lines...)."""

    http_status = 404
    errno = errno.ENOENT
    kind = "not_servable"


class FileChanged(NasError):
    """The path named another file when it was read than when the access
    decision allowed it (swapped for a symlink, say): nothing of the file read
    is served. ESTALE makes the kernel look the name up once more."""

    http_status = 409
    errno = errno.ESTALE
    kind = "file_changed"


def settled(make: Callable[[], T], tries: int = 3) -> T:
    """``make()``, made again while it raises FileChanged: a file replaced
    between a walk or a decision and its read (an editor saves by rename)
    costs a second look, not an error; one replaced at every try still is."""
    for _ in range(tries - 1):
        try:
            return make()
        except FileChanged:
            continue
    return make()


class Unavailable(NasError):
    """The repository being served is gone or cannot be opened (a long-running
    door outlived it); the message says which, and that it must come back."""

    http_status = 503
    errno = errno.EIO
    kind = "unavailable"


class VerifyFailed(NasError):
    """A pointer that parses but does not verify against its commit."""

    exit_code = 1
    http_status = 200
    kind = "verify_failed"


def check_text(what: str, value: str, error: type[NasError]) -> str:
    """Refuse text no file name, view or query can hold: a NUL character, or
    a lone surrogate (bytes that are not UTF-8, which no view can declare)."""
    if "\0" in value:
        raise error(f"{what} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{what} is not valid UTF-8", "UTF-8 text; such files are still served as plain files") from None
    return value
