"""Readers of a file's views against writers of the file, through a mount.

Run as a child process by the trust tests (``python tests/view_stress.py
SPEC``, SPEC a JSON object), so a hung mount hangs this process, which the
test can time out and free by aborting the FUSE connection, never pytest.
Prints one JSON object: every distinct answer per view, counts, and errors.

SPEC: mountpoint, file (relative), views (names after '@'), versions (the
contents the writers cycle through), writers (list of "inplace" |
"replace"), readers, seconds, open_mode ("rb", or "r+b" to open the
real file for update as well), write_root (optional: the writers write
the file below this folder, the mount's source, instead of through the mount)
and single_read (the real file is read with one read(2) of 1 MiB: several
reads of a file rewritten between them can span two versions, natively too).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter, defaultdict


def main(spec: dict) -> dict:
    mnt, rel = spec["mountpoint"], spec["file"]
    target = os.path.join(mnt, rel)
    written = os.path.join(spec.get("write_root", mnt), rel)
    stop = time.monotonic() + spec["seconds"]
    seen: dict[str, Counter[bytes]] = defaultdict(Counter)
    errors: Counter[str] = Counter()
    torn: list[str] = []
    lock = threading.Lock()
    versions = [v.encode() for v in spec["versions"]]

    def write(kind: str, n: int) -> None:
        i = n
        while time.monotonic() < stop:
            data = versions[i % len(versions)]
            i += 1
            try:
                if kind == "inplace":
                    with open(written, "wb") as fh:
                        fh.write(data)
                else:
                    tmp = f"{written}.tmp{n}"
                    with open(tmp, "wb") as fh:
                        fh.write(data)
                    os.rename(tmp, written)
            except OSError as exc:
                with lock:
                    errors[f"write {kind}: {exc}"] += 1

    def read(n: int) -> None:
        views = spec["views"]
        i = n
        while time.monotonic() < stop:
            view = views[i % len(views)]
            i += 1
            path = f"{target}@{view}" if view else target
            try:
                with open(path, spec.get("open_mode", "rb") if not view else "rb") as fh:
                    data = os.read(fh.fileno(), 1 << 20) if spec.get("single_read") and not view else fh.read()
                    size = os.fstat(fh.fileno()).st_size
            except FileNotFoundError:
                continue  # between a writer's unlink and rename nothing is there: native too
            except OSError as exc:
                with lock:
                    errors[f"read {view or 'file'}: {exc}"] += 1
                continue
            with lock:
                seen[view][data] += 1
                if view and len(data) != size:
                    torn.append(f"{view}: read {len(data)} bytes of a handle whose size is {size}")

    threads = [threading.Thread(target=write, args=(kind, n), daemon=True) for n, kind in enumerate(spec["writers"])]
    threads += [threading.Thread(target=read, args=(n,), daemon=True) for n in range(spec["readers"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "answers": {view: {data.decode("latin-1"): n for data, n in c.items()} for view, c in seen.items()},
        "reads": sum(sum(c.values()) for c in seen.values()),
        "errors": dict(errors),
        "torn": torn[:20],
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
