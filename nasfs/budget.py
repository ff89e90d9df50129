"""The degradation ladder (contract §4): the richest rung that fits, never a cut.

Rungs are tried richest first; each is built only when the ones before it did
not fit. ``truncated=true`` appears only on ``view=none``, when even the
skeleton is over the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .declare import Response
from .views import Served

Rung = Callable[[], Served | None]


def fit(rungs: Iterable[Rung], declare: Callable[[Served], Response], budget: int, nothing: Served) -> Response:
    """Declare rungs in order and return the first within ``budget`` tokens."""
    for make in rungs:
        served = make()
        if served is None:
            continue
        response = declare(served)
        if response.tokens <= budget and response.complete:  # an incomplete count was already past the budget
            return response
    return declare(nothing)
