"""A one-shot door's way to get a summary made: a detached ``nasfs index``.

The CLI cannot keep a worker thread alive after it answers, so a miss
starts ``nasfs index --summaries-only PATH`` in its own session (at most
one per content every SPAWN_AGAIN_SECONDS, remembered in the disk cache)
and returns at once. The child runs in ``/`` with the same settings, whose
paths build_settings made absolute.
"""

from __future__ import annotations

import subprocess
import sys
import time

from .settings import SummarySettings
from .store import Store

SPAWN_AGAIN_SECONDS = 600


def spawn_fill(settings: SummarySettings, store: Store, ident: str, path: str) -> str:
    """Start the fill of ``path`` (whose content is ``ident``) unless one started lately; what to tell the reader."""
    marker = f"summ-spawned:{settings.identity}:{store.root}:{store.tree}:{ident}"
    raw = store.disk.get(marker)
    if raw is not None and time.time() - float(raw) < SPAWN_AGAIN_SECONDS:
        return "a background nasfs index --summaries is making it"
    argv = [sys.executable, "-P", "-m", "nasfs", "index", "--repo", store.root, "--quiet",
            *([f"--tree={store.tree}"] if store.tree else []),  # the store key holds it ("=": a name may start with "-")
            *settings.argv(mode=False), "--summaries-only", path or "."]
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 cwd="/", start_new_session=True)
    except OSError as exc:
        return f"but a background nasfs index could not start: {exc}"
    store.disk.put(marker, str(time.time()).encode())
    return f"background nasfs index --summaries pid {child.pid} is making it"
