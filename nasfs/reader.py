"""What folder walks, folder maps and diffs are handed: the service as they
see it (a protocol), so that they never import the service that calls them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .access import Caller
    from .cache import DiskCache
    from .declare import Response
    from .progress import Progress
    from .repo import Content, GitTree
    from .views import Analysis


class Reader(Protocol):
    """One tree's views, counted with one tokenizer setting (``Nas`` is one)."""

    tree: GitTree
    disk: DiskCache | None
    tokenizer: str
    progress: Progress  # long work shown in .nas/status

    def content(self, path: str, at: str | None = None, caller: Caller | None = None) -> Content: ...

    def commit_for(self, rev: str, caller: Caller | None = None) -> str: ...

    def analysis(self, content: Content) -> Analysis: ...

    def full_tokens(self, a: Analysis) -> int | None: ...

    def recall(self, key: str) -> Response | None: ...

    def remember(self, key: str, response: Response, to_disk: bool = True) -> None: ...
