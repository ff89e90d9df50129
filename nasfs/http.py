"""The HTTP door: ``nasfs serve`` — the core's answers as JSON over HTTP.

Starlette routes the requests and uvicorn serves them (docs/http.md says why).
Every endpoint is a thin carrier: the body is checked against the same field
table the OpenAPI document is made from, the work is one call into
:class:`~nasfs.service.Nas` (or search/diff), and the answer is
``Response.envelope()`` unchanged. Paths and views go through the one grammar
parser: ``{path, view}`` is spelled ``path@view`` and handed to ``Nas.read``.

:class:`Door` is shared with the MCP door: core calls block (pygit2,
tree-sitter, ripgrep), so they run in a worker thread, one at a time, never
on the event loop. Errors are mapped in one place, :func:`_endpoint`: a
:class:`NasError` becomes ``{error, detail}`` with its ``http_status``;
anything else is logged with its traceback and answered 500.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from . import __version__
from .access import Caller
from .diffs import diff_response
from .errors import NasError
from .grammar import DEFAULT_READ_BUDGET, MAX_BUDGET
from .repo import clean_path
from .search import search
from .service import Nas
from .tokens import MAX_MARGIN, spell

log = logging.getLogger("nasfs.http")

MAX_BODY = 64 * 1024


class BadRequest(NasError):
    """A body that is not the JSON object an endpoint takes."""

    kind = "bad_request"


class Unauthorized(NasError):
    """No bearer token, or the wrong one, where a token file guards the server."""

    http_status = 401
    kind = "unauthorized"


class TooLarge(NasError):
    """A body over :data:`MAX_BODY`: refused before it is held or parsed."""

    http_status = 413
    kind = "too_large"


class Exposed(NasError):
    """A listen address other than loopback, with no token to guard it."""

    kind = "exposed"


# -- the operations, shared by the HTTP and MCP doors -------------------------
class Door:
    """One :class:`Nas` behind async calls, one core call at a time.

    ``default_budget`` is the budget of a read that names none (neither
    ``budget_tokens`` nor ``@N``): an HTTP or MCP client gets one answer and
    cannot stop a large file mid-way, so it gets a budgeted answer, declared
    in ``budget_tokens``. 0 turns it off."""

    def __init__(self, nas: Nas, default_budget: int = DEFAULT_READ_BUDGET) -> None:
        self.nas = nas
        self.default_budget = default_budget
        self._limiter = anyio.CapacityLimiter(1)
        self._fetching = anyio.CapacityLimiter(2)  # another node's pointers: fetches wait on remotes, not on the core

    async def call(self, op: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        """Run ``op`` in a worker thread: the event loop never blocks on git.
        A deref or verify of another node's pointer may wait on that node's
        remote (seconds, or a remote that hangs): it runs beside the core slot,
        on a cache repository of its own, so reads of this tree never wait on it."""
        foreign = getattr(self.nas.elsewhere, "claims", None)
        pointer = kwargs.get("pointer")
        elsewhere = (op.__name__ in ("deref", "verify") and isinstance(pointer, str) and foreign is not None
                     and foreign(pointer))
        limiter = self._fetching if elsewhere else self._limiter
        return await anyio.to_thread.run_sync(functools.partial(op, **kwargs), limiter=limiter)

    def counting(self, tokenizer: str | None, margin: float | None) -> Nas:
        """The tree counted with a request's own tokenizer setting, if it names one
        (a margin alone applies to the server's tokenizer)."""
        if tokenizer is None and margin is None:
            return self.nas
        try:
            return self.nas.using(spell(tokenizer or self.nas.tokenizer, margin))
        except NasError as exc:
            self.nas.refused(f"tokenizer={tokenizer} margin={margin}", exc)
            raise

    def read(self, path: str, view: str | None = None, budget_tokens: int | None = None, at: str | None = None,
             tokenizer: str | None = None, margin: float | None = None, caller: Caller | None = None) -> dict[str, Any]:
        """``{path, view}`` is ``path@view`` read through ``Nas.read``
        (``''`` is the root folder, as ``.`` is). ``caller``, in every
        operation: the account a request is answered as (None: the server's)."""
        path = path or "."
        spec = f"{path}@{view.removeprefix('@')}" if view else path
        return self.counting(tokenizer, margin).read(spec, at, budget_tokens, default_budget=self.default_budget,
                                                     caller=caller).envelope()

    def list(self, path: str = "", budget_tokens: int | None = None, skip: int | None = None,
             tokenizer: str | None = None, margin: float | None = None, caller: Caller | None = None) -> dict[str, Any]:
        """A folder's entries, budgeted (the door's default when none is given)."""
        from .listing import list_folder

        budget = budget_tokens if budget_tokens is not None else (self.default_budget or None)
        nas = self.counting(tokenizer, margin)
        try:
            return list_folder(nas, path, budget, skip or 0, caller).envelope()
        except NasError as exc:
            self.nas.refused(path, exc, caller)
            raise

    def search(self, query: str, budget_tokens: int | None = None, at: str | None = None,
               tokenizer: str | None = None, margin: float | None = None, caller: Caller | None = None) -> dict[str, Any]:
        response = search(self.counting(tokenizer, margin), query, at=at, budget=budget_tokens, caller=caller)
        self.nas.cite(response)
        return response.envelope()

    def deref(self, pointer: str, caller: Caller | None = None) -> dict[str, Any]:
        """The bytes a pointer names; ``sha256`` is of the bytes, exactly
        (``content`` shows them as UTF-8, invalid bytes replaced)."""
        p, body = self.nas.deref(pointer, caller)
        return {"pointer": str(p), "content": body.decode("utf-8", errors="replace"), "sha256": hashlib.sha256(body).hexdigest()}

    def verify(self, pointer: str, sha256: str | None = None, quote: str | None = None,
               caller: Caller | None = None) -> dict[str, Any]:
        """``{pointer, verified, sha256, detail}`` (``nasfs verify --json`` too)."""
        return self.nas.check(pointer, sha256=sha256, quote=quote, caller=caller)

    def diff(self, range: str, path: str | None = None, budget_tokens: int | None = None,
             tokenizer: str | None = None, margin: float | None = None, caller: Caller | None = None) -> dict[str, Any]:
        where = clean_path(path) if path else None
        response = diff_response(self.counting(tokenizer, margin), range, where, budget_tokens, caller)
        self.nas.cite(response)
        return response.envelope()


# -- request bodies: one table gives the checks and the OpenAPI schema --------
@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: type  # str, int (tokens) or float (a margin)
    required: bool = False
    doc: str = ""

    def schema(self) -> dict[str, Any]:
        base: dict[str, Any] = ({"type": "string"} if self.kind is str else {"type": "number", "minimum": 0, "maximum": MAX_MARGIN}
                                if self.kind is float else {"type": "integer", "minimum": 0, "maximum": MAX_BUDGET})
        if not self.required:
            base["type"] = [base["type"], "null"]
        return {**base, "description": self.doc}

    def check(self, value: object) -> None:
        if value is None and not self.required:
            return
        if self.kind is int:
            if not isinstance(value, int) or isinstance(value, bool):
                raise BadRequest(f"{self.name} must be a whole number of tokens")
            if not 0 <= value <= MAX_BUDGET:
                raise BadRequest(f"{self.name} must be between 0 and {MAX_BUDGET}")
        elif self.kind is float:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= MAX_MARGIN:
                raise BadRequest(f"{self.name} must be a number from 0 to {MAX_MARGIN:g}", "e.g. 0.30 for 30 %")
        elif not isinstance(value, str):
            raise BadRequest(f"{self.name} must be a string")


TOKENIZER = Field("tokenizer", str, False, "cl100k_base, o200k_base, a preset (claude, llama, ...) or max:A,B; docs/tokens.md")
MARGIN = Field("margin", float, False, "fit budget/(1+margin), declared (e.g. 0.30)")
READ = (
    Field("path", str, True, "file or folder from the tree root, may carry @view ('.': the root's map)"),
    Field("view", str, False, "outline, keys, L12-L18, section=NAME, section=NAME@outline, since=REV, summary, N; each may add @N"),
    Field("budget_tokens", int, False, f"tokens for the whole answer, the view degrading to fit; default {DEFAULT_READ_BUDGET} "
          "(nasfs serve --default-budget), declared"),
    Field("at", str, False, "a revision: commit, branch or tag"),
    TOKENIZER, MARGIN,
)
LIST = (
    Field("path", str, True, "folder ('.': the root)"),
    Field("budget_tokens", int, False, "tokens for the whole answer; the rest is declared, next=skip:K"),
    Field("skip", int, False, "the K of an answer's next=skip:K"),
    TOKENIZER, MARGIN,
)
SEARCH = (
    Field("query", str, True, "literal (smart case), re:REGEX, in:FOLDER, glob:PATTERN, skip:N"),
    Field("at", str, False, "a revision"),
    Field("budget_tokens", int, False, "tokens for the whole answer (default 1000); the rest is declared, next=skip:K"),
    TOKENIZER, MARGIN,
)
POINTER = Field("pointer", str, True, "nas://NODE/TREE/PATH@COMMIT#La-Lb, or PATH@COMMIT#La-Lb")
DEREF = (POINTER,)
VERIFY = (
    POINTER,
    Field("sha256", str, False, "the sha256 the named bytes must have"),
    Field("quote", str, False, "a text that must occur in the named bytes"),
)
DIFF = (
    Field("range", str, True, "REV (to now), A..B, or A.. (to now)"),
    Field("path", str, False, "one file; without it, the whole tree"),
    Field("budget_tokens", int, False, "tokens for the whole answer: diff, changed entries, or a diffstat"),
    TOKENIZER, MARGIN,
)


def _arguments(body: object, fields: tuple[Field, ...]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", ", ".join(f.name for f in fields))
    known = {f.name: f for f in fields}
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}", ", ".join(known))
    for f in fields:
        if f.required and f.name not in body:
            raise BadRequest(f"{f.name} is required")
        f.check(body.get(f.name))
    return {k: v for k, v in body.items() if v is not None}


async def _json_body(request: Request) -> object:
    """The body, read with a limit: 413 past ``MAX_BODY`` bytes, declared or sent."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise TooLarge(f"the body is {declared} bytes; at most {MAX_BODY}")
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise TooLarge(f"the body is over {MAX_BODY} bytes")
    try:
        return json.loads(raw)
    except ValueError as exc:  # also bad UTF-8
        raise BadRequest(f"the body is not JSON: {exc}") from None


# -- the application -----------------------------------------------------------
def _error(status: int, kind: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": kind, "detail": detail}, status_code=status, headers=headers)


Tokens = tuple[tuple[str, Caller | None], ...]  # (token, the account it answers as; None: the server's)


def _caller(request: Request, tokens: Tokens | None) -> Caller | None:
    """The account a request is answered as: its bearer token's (None: the
    server's own); Unauthorized when tokens guard the server and none matches."""
    if tokens is None:
        return None
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    found, caller = False, None
    for token, account in tokens:  # every token compared, in constant time each
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            found, caller = True, account
    if not found:
        raise Unauthorized("a bearer token is required: Authorization: Bearer <token>")
    return caller


def _endpoint(
    work: Callable[..., Awaitable[dict[str, Any]]], tokens: Tokens | None
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """Authorize, run as the token's account, and map every error: the one
    place a door's errors become statuses."""

    async def endpoint(request: Request) -> JSONResponse:
        try:
            caller = _caller(request, tokens)
            return JSONResponse(await work(request, caller))
        except NasError as exc:
            headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthorized) else None
            return _error(exc.http_status, exc.kind, str(exc), headers)
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            return _error(500, "internal", "internal error; the server log has the traceback")

    return endpoint


def _post(door: Door, op: Callable[..., dict[str, Any]], fields: tuple[Field, ...]) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def work(request: Request, caller: Caller | None) -> dict[str, Any]:
        return await door.call(op, caller=caller, **_arguments(await _json_body(request), fields))

    return work


async def _framework_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own refusals (no route, wrong method) in the same JSON shape."""
    assert isinstance(exc, HTTPException)
    kind = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")
    return _error(exc.status_code, kind, str(exc.detail), dict(exc.headers or {}))


def app(nas: Nas, token: str | Tokens | None = None, default_budget: int = DEFAULT_READ_BUDGET) -> Starlette:
    """The ASGI application; ``token`` set: every operation wants one as a
    bearer token (a string: that one, answered as the server's account; or
    (token, account) pairs, as ``--token-file`` lines give them);
    ``default_budget``: of a read that names no budget (0: none)."""
    door = Door(nas, default_budget)
    document = openapi()
    tokens: Tokens | None = ((token, None),) if isinstance(token, str) else token

    async def health(request: Request, caller: Caller | None) -> dict[str, Any]:
        return {"status": "ok", "version": __version__}

    async def spec(request: Request, caller: Caller | None) -> dict[str, Any]:
        return document

    async def index(request: Request, caller: Caller | None) -> dict[str, Any]:
        return INDEX

    routes = [
        Route("/", _endpoint(index, None), methods=["GET"]),
        Route("/v1/health", _endpoint(health, None), methods=["GET"]),
        Route("/v1/openapi.json", _endpoint(spec, None), methods=["GET"]),
        Route("/v1/files/read", _endpoint(_post(door, door.read, READ), tokens), methods=["POST"]),
        Route("/v1/files/list", _endpoint(_post(door, door.list, LIST), tokens), methods=["POST"]),
        Route("/v1/search", _endpoint(_post(door, door.search, SEARCH), tokens), methods=["POST"]),
        Route("/v1/evidence/dereference", _endpoint(_post(door, door.deref, DEREF), tokens), methods=["POST"]),
        Route("/v1/evidence/verify", _endpoint(_post(door, door.verify, VERIFY), tokens), methods=["POST"]),
        Route("/v1/diff", _endpoint(_post(door, door.diff, DIFF), tokens), methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: _framework_error})


# -- the OpenAPI document (served at /v1/openapi.json, kept in docs/) ----------
INDEX = {
    "name": "nasfs",
    "version": __version__,
    "api": "/v1/openapi.json",
    "docs": "docs/http.md in the nasfs source tree",
    "health": "/v1/health",
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(summary: str, fields: tuple[Field, ...], result: str, statuses: tuple[int, ...]) -> dict[str, Any]:
    body = {
        "type": "object",
        "properties": {f.name: f.schema() for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }
    responses = {"200": _json(_ref(result), "the answer")}
    for status in (400, 401, 403, 409, *statuses, 413):  # 403: the token's account may not read the path; 409: its file swapped while read
        responses[str(status)] = _json(_ref("Error"), HTTPStatus(status).phrase)
    return {
        "summary": summary,
        "security": [{}, {"bearer": []}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": responses,
    }


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of this door, made from the field tables."""
    evidence = {
        "type": "object",
        "properties": {"pointer": {"type": "string"}, "sha256": {"type": "string"},
                       "swhid": {"type": "string", "description": "a file pointer's SWHID (docs/pointers.md); absent for folders"}},
        "required": ["pointer", "sha256"],
    }
    envelope = {
        "type": "object",
        "description": ("What a response declares (contract §5); extra keys of a view (query, matches, next...) may follow, "
                        "counts as numbers. budget_tokens bounds the text answer (header line + content); tokens is content's share."),
        "properties": {
            "view": {"type": "string", "description": "the view actually served, e.g. outline, full, skeleton, none"},
            "tokens": {"type": "integer", "description": "tokens of content"},
            "generated": {"type": "boolean"},
            "truncated": {"type": "boolean", "description": "true only for view=none: even the skeleton did not fit"},
            "content": {"type": "string"},
            "evidence": {"type": "array", "items": _ref("Evidence")},
            "tokenizer": {"type": "string", "description": "the tokenizer setting counted with (docs/tokens.md)"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"},
                       "description": "each tokenizer's count of content, for a set (max:A,B or a preset) or a margin"},
            "margin": {"type": "number", "description": "tokens is the largest count times 1+margin, rounded up"},
            "estimated": {"type": "boolean", "description": "true when no counted tokenizer is the reader's model's own"},
            "budget_tokens": {"type": ["integer", "null"]},
            "full_tokens": {"type": ["integer", "null"], "description": "tokens of the whole file; null for binary or large files"},
        },
        "required": ["view", "tokens", "generated", "truncated", "content", "evidence", "tokenizer", "budget_tokens", "full_tokens"],
    }
    strings = {"type": "string"}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "nasfs",
            "version": __version__,
            "description": "Budgeted, checkable reads over a git-backed tree. See docs/http.md.",
        },
        "paths": {
            "/v1/files/read": {"post": _operation("Read a file or a view of it, within a token budget", READ, "Envelope", (404,))},
            "/v1/files/list": {"post": _operation("List a folder: names, kinds, sizes, known tokens, within a token budget", LIST, "Envelope", (404,))},
            "/v1/search": {"post": _operation("Snippets with evidence pointers, never whole files", SEARCH, "Envelope", (404,))},
            "/v1/evidence/dereference": {"post": _operation("Exactly the bytes a pointer names", DEREF, "Dereferenced", (404,))},
            "/v1/evidence/verify": {"post": _operation("Check a pointer: commit, lines, sha256, quote", VERIFY, "Verified", ())},
            "/v1/diff": {"post": _operation("Diff between revisions, within a token budget", DIFF, "Envelope", (404,))},
            "/": {"get": {"summary": "Where the API document is", "security": [], "responses": {"200": _json(_ref("Index"), "pointers to the API")}}},
            "/v1/health": {"get": {"summary": "Liveness", "security": [], "responses": {"200": _json(_ref("Health"), "up")}}},
            "/v1/openapi.json": {
                "get": {"summary": "This document", "security": [], "responses": {"200": _json({"type": "object"}, "this document")}},
            },
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "required when the server has "
                                       "--token-file; a line TOKEN USER answers the token's requests as that account"}},
            "schemas": {
                "Envelope": envelope,
                "Evidence": evidence,
                "Dereferenced": {
                    "type": "object",
                    "properties": {"pointer": strings, "content": strings, "sha256": strings},
                    "required": ["pointer", "content", "sha256"],
                },
                "Verified": {
                    "type": "object",
                    "properties": {
                        "pointer": strings,
                        "verified": {"type": "boolean"},
                        "sha256": {"type": ["string", "null"], "description": "of the bytes the pointer names; null when it names none"},
                        "detail": strings,
                        "swhid": {"type": "string", "description": "the SWHID verified, when one was given"},
                    },
                    "required": ["pointer", "verified", "sha256", "detail"],
                },
                "Index": {
                    "type": "object",
                    "properties": {"name": strings, "version": strings, "api": strings, "docs": strings, "health": strings},
                    "required": ["name", "version", "api", "docs", "health"],
                },
                "Health": {
                    "type": "object",
                    "properties": {"status": {"const": "ok"}, "version": strings},
                    "required": ["status", "version"],
                },
                "Error": {
                    "type": "object",
                    "properties": {"error": strings, "detail": strings},
                    "required": ["error", "detail"],
                },
            },
        },
    }


# -- serving ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Listen:
    host: str
    port: int
    tokens: Tokens | None

    @classmethod
    def parse(cls, address: str, token_file: str | None) -> Listen:
        """``HOST:PORT`` (``[::1]:PORT`` for IPv6); refuses anything but
        loopback unless a token file guards it."""
        host, sep, port = address.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise BadRequest(f"--listen {address!r} is not HOST:PORT", "127.0.0.1:8740, [::1]:8740, 0.0.0.0:8740 (with --token-file)")
        tokens = None if token_file is None else _read_tokens(token_file)
        if tokens is None and not _loopback(host):
            raise Exposed(
                f"refusing to listen on {host}, which is not loopback, without a bearer token",
                "--token-file FILE (clients send Authorization: Bearer <its content>), or --listen 127.0.0.1:PORT",
            )
        return cls(host, int(port), tokens)


def _read_tokens(token_file: str) -> Tokens:
    """``--token-file``: one token a line, ``TOKEN`` (answered as the
    server's own account) or ``TOKEN USER`` (answered as that account, by the
    access decision); blank lines and ``#`` comments are skipped."""
    try:
        text = Path(token_file).read_text()
    except OSError as exc:
        raise BadRequest(f"cannot read --token-file {token_file}: {exc.strerror}") from None
    tokens: list[tuple[str, Caller | None]] = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) > 2:
            raise BadRequest(f"--token-file {token_file} line {number} has {len(fields)} fields",
                             "TOKEN, or TOKEN USER (an account name or uid), one a line")
        tokens.append((fields[0], Caller.of_account(fields[1]) if len(fields) == 2 else None))
    if not tokens:
        raise BadRequest(f"--token-file {token_file} is empty", "TOKEN, or TOKEN USER, one a line")
    if len({t for t, _ in tokens}) != len(tokens):
        raise BadRequest(f"--token-file {token_file} names one token twice", "a different token on each line")
    return tuple(tokens)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(nas: Nas, listen: Listen, default_budget: int = DEFAULT_READ_BUDGET) -> int:
    """Run until SIGINT/SIGTERM."""
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(app(nas, listen.tokens, default_budget), host=listen.host, port=listen.port, log_level="info", server_header=False)
    return 0


__all__ = ["DEFAULT_READ_BUDGET", "MAX_BODY", "Door", "Listen", "app", "openapi", "serve"]


if __name__ == "__main__":  # python -m nasfs.http > docs/openapi.json
    print(json.dumps(openapi(), indent=2, ensure_ascii=False))
