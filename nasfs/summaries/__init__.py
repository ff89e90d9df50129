"""Generated summaries as a grounded, checked, background cache (docs/summaries.md).

``settings`` (what the doors read of flags and environment), ``backends``
(a command, an OpenAI-compatible endpoint), ``prompt`` (the file in labelled
parts), ``checker`` (each cited sentence checked against its lines),
``judge`` and ``judging`` (the optional entailment judge after the rules),
``store`` (the persistent cache), ``files`` and ``folders`` (one summary's
record), ``generate`` (making and storing records), ``worker`` (the bounded
background queue), ``spawn`` (a one-shot door's detached fill), ``walk``
(background mode), ``serving`` (what a read gets, at once), ``fill``
(``nasfs index --summaries``).
"""

from .settings import MODES, SummaryPending, SummarySettings, build_settings

__all__ = ["MODES", "SummaryPending", "SummarySettings", "build_settings"]
