"""What real programs do to open files, in one folder, with every outcome kept.

Run by the trust tests as a child process (``python tests/file_scenarios.py
FOLDER``) once in a folder of the disk and once through a mount, so a hung
mount hangs this process, not pytest. Prints one JSON object: scenario ->
what it saw (values, or the errno / signal it met); the two must be equal.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable


def main(folder: str) -> dict[str, object]:
    def p(name: str) -> str:
        return os.path.join(folder, name)

    def in_child(code: str) -> str:
        """Run ``code`` in a child (it may die of SIGBUS): its exit status and output."""
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        return f"exit {done.returncode}: {done.stdout.strip()}"

    def truncated_while_mapped() -> object:
        with open(p("m.bin"), "wb") as fh:
            fh.write(b"a" * 8192)
        return in_child(f"""
import mmap, os
fh = open({p('m.bin')!r}, 'r+b')
m = mmap.mmap(fh.fileno(), 8192)
print(m[4096:4100])
os.truncate({p('m.bin')!r}, 100)
print(m[:4], m[100:104], flush=True)
print(m[5000:5004])  # past the end of the file: SIGBUS
""")

    def read_while_another_open_truncates() -> object:
        with open(p("t.bin"), "wb") as fh:
            fh.write(b"b" * 10000)
        reader = os.open(p("t.bin"), os.O_RDONLY)
        writer = os.open(p("t.bin"), os.O_WRONLY | os.O_TRUNC)
        empty = os.pread(reader, 20000, 0)
        os.write(writer, b"c" * 5000)
        after = os.pread(reader, 20000, 0)
        os.close(writer)
        os.close(reader)
        return [len(empty), len(after), after.count(b"\0"), os.stat(p("t.bin")).st_size]

    def unlinked_while_open() -> object:
        with open(p("u.txt"), "wb") as fh:
            fh.write(b"hello")
        fd = os.open(p("u.txt"), os.O_RDWR)
        os.unlink(p("u.txt"))
        os.pwrite(fd, b"HELLO world", 0)
        st = os.fstat(fd)
        data = os.pread(fd, 100, 0)
        os.ftruncate(fd, 3)
        with mmap.mmap(fd, 3) as m:
            mapped = m[:]
        size = os.fstat(fd).st_size
        os.close(fd)
        return [st.st_nlink, st.st_size, data.decode(), size, mapped.decode(), os.path.lexists(p("u.txt"))]

    def replaced_while_open() -> object:
        with open(p("r.txt"), "wb") as fh:
            fh.write(b"old")
        fd = os.open(p("r.txt"), os.O_RDWR)
        with open(p("r.new"), "wb") as fh:
            fh.write(b"new!")
        os.rename(p("r.new"), p("r.txt"))
        os.pwrite(fd, b"OLD", 0)
        held = os.pread(fd, 10, 0)
        os.close(fd)
        with open(p("r.txt"), "rb") as fh:
            return [held.decode(), fh.read().decode()]

    def direct_io() -> object:
        fd = os.open(p("d.bin"), os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
        buf = mmap.mmap(-1, 8192)  # page-aligned, as O_DIRECT wants
        buf.write(b"d" * 8192)
        written = os.pwritev(fd, [buf], 0)
        back = mmap.mmap(-1, 8192)
        read = os.preadv(fd, [back], 0)
        os.close(fd)
        return [written, read, back[:4].decode(), os.stat(p("d.bin")).st_size]

    def copies() -> object:
        body = b"0123456789" * 1000
        with open(p("c.src"), "wb") as fh:
            fh.write(body)
        out = []
        for how in ("copy_file_range", "sendfile", "splice"):
            src = os.open(p("c.src"), os.O_RDONLY)
            dst = os.open(p(f"c.{how}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            if how == "copy_file_range":
                n = os.copy_file_range(src, dst, len(body))
            elif how == "sendfile":
                n = os.sendfile(dst, src, 0, len(body))
            else:
                r, w = os.pipe()
                n = os.splice(src, w, 4096)
                n = os.splice(r, dst, n)
                os.close(r)
                os.close(w)
            os.close(src)
            os.close(dst)
            with open(p(f"c.{how}"), "rb") as fh:
                out.append([how, n, body.startswith(fh.read())])
        return out

    def two_appenders() -> object:
        open(p("a.txt"), "wb").close()
        a = os.open(p("a.txt"), os.O_WRONLY | os.O_APPEND)
        b = os.open(p("a.txt"), os.O_WRONLY | os.O_APPEND)
        for _ in range(100):
            os.write(a, b"a" * 10)
            os.write(b, b"b" * 10)
        os.close(a)
        os.close(b)
        with open(p("a.txt"), "rb") as fh:
            data = fh.read()
        return [len(data), data[:40].decode()]

    def busy_text() -> object:
        shutil.copy("/bin/sleep", p("sleeper"))
        running = subprocess.Popen([p("sleeper"), "3"])
        try:
            for _ in range(100):  # until it runs the file
                if os.path.exists(f"/proc/{running.pid}/exe") and os.readlink(f"/proc/{running.pid}/exe").endswith("sleeper"):
                    break
                time.sleep(0.01)
            os.open(p("sleeper"), os.O_WRONLY)
            seen = "opened for writing"
        except OSError as exc:
            seen = errno.errorcode[exc.errno or 0]
        running.wait(timeout=60)
        return seen

    def written_through_a_map() -> object:
        with open(p("w.bin"), "wb") as fh:
            fh.write(b"\0" * 4096)
        fd = os.open(p("w.bin"), os.O_RDWR)
        with mmap.mmap(fd, 4096) as m:
            m[:5] = b"hello"
            with open(p("w.bin"), "rb") as fh:
                seen = fh.read(5)
        os.ftruncate(fd, 8192)
        with mmap.mmap(fd, 8192) as m:
            grown = m[4096:4100]
        os.close(fd)
        return [seen.decode(), grown.hex(), os.stat(p("w.bin")).st_size]

    scenarios: dict[str, Callable[[], object]] = {
        "truncated while mapped": truncated_while_mapped,
        "read while another open truncates": read_while_another_open_truncates,
        "unlinked while open": unlinked_while_open,
        "replaced by a rename while open": replaced_while_open,
        "O_DIRECT": direct_io,
        "copy_file_range, sendfile, splice": copies,
        "two O_APPEND writers": two_appenders,
        "a running program's file opened for writing": busy_text,
        "written through a map, then grown": written_through_a_map,
    }
    seen: dict[str, object] = {}
    for name, scenario in scenarios.items():
        try:
            seen[name] = scenario()
        except OSError as exc:
            seen[name] = f"OSError {errno.errorcode.get(exc.errno or 0, exc.errno)}"
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
