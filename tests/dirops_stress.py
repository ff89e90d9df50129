"""Several processes making, renaming, looking up and removing names in one
folder through a mount, while views of a large file there are made again and
again (it grows beside the mount, so each is a new version to compute).

Run as a child process by the trust tests (``python tests/dirops_stress.py
SPEC``, SPEC a JSON object: mountpoint, source, folder, big (a file in the
folder), workers, seconds), so a hung mount hangs this process, which the
test times out. Prints one JSON object: what each worker did, what went
wrong, and the names left in the folder through the mount and in the source.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import sys
import time


def worker(spec: dict, k: int, out: multiprocessing.Queue) -> None:
    """Make a file, rename it, look both names up, read it and a view of it,
    then remove it or keep it (sometimes replaced by a rename over it)."""
    folder, source = os.path.join(spec["mountpoint"], spec["folder"]), os.path.join(spec["source"], spec["folder"])
    rng = random.Random(k)
    stop = time.monotonic() + spec["seconds"]
    kept: dict[str, bytes] = {}
    wrong: list[str] = []
    ops = 0
    while time.monotonic() < stop:
        ops += 1
        made, renamed = f"w{k}_{ops}.md", f"r{k}_{ops}.md"
        body = f"# Worker {k} file {ops}\n\n## Part\n\n{rng.random()}\n".encode()
        try:
            with open(os.path.join(folder, made), "xb") as fh:
                fh.write(body)
            os.rename(os.path.join(folder, made), os.path.join(folder, renamed))
            if os.path.lexists(os.path.join(folder, made)):
                wrong.append(f"{made} still there after its rename")
            with open(os.path.join(folder, renamed), "rb") as fh:
                if fh.read() != body:
                    wrong.append(f"{renamed}: other bytes than written")
            if os.stat(os.path.join(folder, renamed)).st_ino != os.stat(os.path.join(source, renamed)).st_ino:
                wrong.append(f"{renamed}: another inode than the source's")
            with open(os.path.join(folder, renamed + "@section=Part"), "rb") as fh:
                if body.split(b"## Part\n", 1)[1].strip() not in fh.read():
                    wrong.append(f"{renamed}@section=Part: not the section written")
            if os.path.lexists(os.path.join(folder, f"nothing{k}_{ops}")):
                wrong.append(f"nothing{k}_{ops} exists")
            if rng.random() < 0.5:
                os.unlink(os.path.join(folder, renamed))
            else:
                kept[renamed] = body
            if kept and rng.random() < 0.3:
                victim = rng.choice(sorted(kept))
                with open(os.path.join(folder, "t" + made), "wb") as fh:
                    fh.write(b"replaced\n")
                os.rename(os.path.join(folder, "t" + made), os.path.join(folder, victim))
                kept[victim] = b"replaced\n"
        except OSError as exc:
            wrong.append(f"{made}: {exc}")
    for name, body in kept.items():
        with open(os.path.join(folder, name), "rb") as fh:
            if fh.read() != body:
                wrong.append(f"{name}: at the end, other bytes than last written")
    out.put({"worker": k, "ops": ops, "wrong": wrong, "kept": sorted(kept)})


def views(spec: dict, out: multiprocessing.Queue) -> None:
    """Grow the big file beside the mount and read views of the new version."""
    big = os.path.join(spec["folder"], spec["big"])
    stop = time.monotonic() + spec["seconds"]
    wrong: list[str] = []
    n = 0
    while time.monotonic() < stop:
        with open(os.path.join(spec["source"], big), "a") as fh:
            fh.write(f"\n## Added {n}\n\nmore {n}\n")
        for view in ("@outline", f"@section=Added {n}"):
            try:
                with open(os.path.join(spec["mountpoint"], big + view), "rb") as fh:
                    data = fh.read()
                if view.startswith("@section") and f"more {n}".encode() not in data:
                    wrong.append(f"{view}: not the section just added")
            except OSError as exc:
                wrong.append(f"{view}: {exc}")
        n += 1
    out.put({"worker": "views", "ops": n, "wrong": wrong, "kept": []})


def main(spec: dict) -> dict:
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(spec, k, out)) for k in range(spec["workers"])]
    procs.append(multiprocessing.Process(target=views, args=(spec, out)))
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    ours = ("w", "r", "tw")
    return {
        "results": results,
        "mount": sorted(n for n in os.listdir(os.path.join(spec["mountpoint"], spec["folder"])) if n.startswith(ours)),
        "source": sorted(n for n in os.listdir(os.path.join(spec["source"], spec["folder"])) if n.startswith(ours)),
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
