"""Generated summaries as a grounded, checked, background cache (docs/summaries.md).

``settings`` (flags and environment), ``backends`` (a command, an
OpenAI-compatible endpoint), ``prompt`` (the file with line numbers),
``checker`` (each cited sentence checked against its lines), ``store`` (the
persistent cache), ``files`` and ``folders`` (making one summary),
``worker`` (the bounded background queue), ``serving`` (what a read gets,
at once), ``fill`` (``nasfs index --summaries``).
"""

from .settings import MODES, SummaryPending, SummarySettings, build_settings

__all__ = ["MODES", "SummaryPending", "SummarySettings", "build_settings"]
