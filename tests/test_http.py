"""The HTTP door, served for real: ``python -m nasfs serve`` on a free loopback
port, spoken to with httpx; plus a schemathesis run over its OpenAPI document."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from .processes import end

ROOT = Path(__file__).resolve().parent.parent
ACME = "notes/customer-acme.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def post(self, endpoint: str, body: object, **kwargs) -> httpx.Response:
        return httpx.post(self.url + endpoint, json=body, timeout=30, **kwargs)


@contextlib.contextmanager
def serving(home: Path, *extra: str) -> Iterator[Server]:
    """``nasfs serve`` over ``home`` (node box, tree home), up once /v1/health answers."""
    port = free_port()
    log = home.parent / f"serve-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nasfs", "serve", "--repo", str(home), "--node", "box", "--tree", "home",
             "--listen", f"127.0.0.1:{port}", *extra],
            stdout=out, stderr=subprocess.STDOUT,
        )
    server = Server(f"http://127.0.0.1:{port}", proc, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, f"server exited {proc.returncode}: {log.read_text()}"
            try:
                if httpx.get(server.url + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"server did not come up: {log.read_text()}"
            time.sleep(0.05)
        yield server
    finally:
        end(proc)


@pytest.fixture
def server(home: Path) -> Iterator[Server]:
    with serving(home) as s:
        yield s


DEFAULT = 8000  # the server's default budget of a read that names none


def core(nas, spec: str, at: str | None = None, budget: int | None = None, default: int | None = DEFAULT) -> dict:
    return json.loads(json.dumps(nas.read(spec, at, budget, default_budget=default).envelope()))


# -- reads -------------------------------------------------------------------------
def test_health(server: Server) -> None:
    r = httpx.get(server.url + "/v1/health")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "version": "0.1.0"}


@pytest.mark.parametrize(
    ("body", "spec"),
    [
        ({"path": ACME, "view": "outline"}, ACME + "@outline"),
        ({"path": ACME + "@outline"}, ACME + "@outline"),
        ({"path": ACME, "view": "outline", "budget_tokens": 30}, ACME + "@outline@30"),
        ({"path": ACME, "view": "L12-L18"}, ACME + "@L12-L18"),
        ({"path": ACME, "view": "section=Renewal"}, ACME + "@section=Renewal"),
        ({"path": ACME, "view": "section=Renewal", "budget_tokens": 200}, ACME + "@section=Renewal@200"),
        ({"path": ACME, "budget_tokens": 120}, ACME + "@120"),
        ({"path": ACME, "view": "since=v1"}, ACME + "@since=v1"),
        ({"path": ACME}, ACME),
        ({"path": "code/billing.py", "view": "outline", "budget_tokens": None, "at": None}, "code/billing.py@outline"),
    ],
)
def test_read_is_the_core_envelope(server: Server, nas, body: dict, spec: str) -> None:
    r = server.post("/v1/files/read", body)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.json() == core(nas, spec)


def test_a_read_without_a_budget_gets_the_servers_default(home: Path, server: Server) -> None:
    plain = server.post("/v1/files/read", {"path": ACME}).json()
    assert plain["budget_tokens"] == DEFAULT and plain["view"] == "full"
    with serving(home, "--default-budget", "100") as small:
        env = small.post("/v1/files/read", {"path": ACME}).json()
        assert env["budget_tokens"] == 100 and env["view"] == "outline"  # the ladder applies
        exact = small.post("/v1/files/read", {"path": ACME, "view": "L1-L3"}).json()
        assert exact["view"] == "lines" and exact["content"] == "".join((home / ACME).read_text().splitlines(True)[:3])
        over = small.post("/v1/files/read", {"path": ACME, "view": "L1-L38"}).json()
        assert over["view"] == "skeleton" and over["budget_tokens"] == 100  # a range that does not fit degrades
        assert small.post("/v1/files/read", {"path": ACME, "budget_tokens": 5000}).json()["budget_tokens"] == 5000
        assert small.post("/v1/files/read", {"path": ACME + "@outline@30"}).json()["budget_tokens"] == 30
    for off in ("0", "none"):
        with serving(home, "--default-budget", off) as unbudgeted:
            env = unbudgeted.post("/v1/files/read", {"path": ACME}).json()
            assert env["budget_tokens"] is None and env["view"] == "full"


def test_read_at_a_revision(server: Server, nas) -> None:
    r = server.post("/v1/files/read", {"path": ACME, "view": "L14", "at": "v1"})
    assert r.status_code == 200
    assert r.json() == core(nas, ACME + "@L14", at="v1")
    assert "then +3%" not in r.json()["content"]


def test_read_declares_the_seed_fields(server: Server) -> None:
    env = server.post("/v1/files/read", {"path": ACME, "view": "outline", "budget_tokens": 400}).json()
    for key in ("view", "tokens", "generated", "truncated", "content", "evidence", "tokenizer", "budget_tokens", "full_tokens"):
        assert key in env
    assert env["view"] == "outline" and env["budget_tokens"] == 400 and env["tokenizer"] == "cl100k_base"
    assert env["evidence"][0]["pointer"].startswith("nas://box/home/notes/customer-acme.md@")


def test_search(server: Server, nas) -> None:
    from nasfs.search import search

    r = server.post("/v1/search", {"query": "renewal", "budget_tokens": 300})
    assert r.status_code == 200
    env = r.json()
    assert env == json.loads(json.dumps(search(nas, "renewal", budget=300).envelope()))
    assert env["view"] == "search" and env["evidence"]
    at_v1 = server.post("/v1/search", {"query": "then +3%", "at": "v1"}).json()
    assert at_v1["content"] == "no matches\n"


def test_deref_and_verify(server: Server) -> None:
    env = server.post("/v1/files/read", {"path": ACME, "view": "section=Renewal"}).json()
    ev = env["evidence"][0]
    r = server.post("/v1/evidence/dereference", {"pointer": ev["pointer"]})
    assert r.status_code == 200
    d = r.json()
    assert d["pointer"] == ev["pointer"] and d["sha256"] == ev["sha256"]
    assert hashlib.sha256(d["content"].encode()).hexdigest() == ev["sha256"]
    assert d["content"].startswith("## Renewal")

    ok = server.post("/v1/evidence/verify", {"pointer": ev["pointer"], "sha256": ev["sha256"], "quote": "2026 rate"})
    assert ok.status_code == 200 and ok.json()["verified"] is True
    assert ok.json()["pointer"] == ev["pointer"] and ok.json()["sha256"] == ev["sha256"]
    assert ok.json()["detail"].startswith("verified ")
    bad = server.post("/v1/evidence/verify", {"pointer": ev["pointer"], "sha256": "0" * 64})
    assert bad.status_code == 200 and bad.json()["verified"] is False
    assert "sha256" in bad.json()["detail"]
    gone = server.post("/v1/evidence/verify", {"pointer": ev["pointer"].split("#")[0] + "#L900-L901"})
    assert gone.status_code == 200 and gone.json()["verified"] is False


def test_search_numbers_and_a_budget_nothing_fits(server: Server) -> None:
    env = server.post("/v1/search", {"query": "renewal", "budget_tokens": 90}).json()
    assert (env["view"], env["truncated"], env["shown"], env["matches"], env["next"]) == ("none", True, 0, 2, "skip:1")
    assert isinstance(env["needs"], int) and env["needs"] > 90
    shown = server.post("/v1/search", {"query": "renewal", "budget_tokens": env["needs"]}).json()
    assert shown["view"] == "search" and shown["shown"] == 1 and isinstance(shown["files"], int)
    diffed = server.post("/v1/diff", {"range": "v1..main"}).json()
    assert [type(diffed[k]) for k in ("files", "added", "deleted")] == [int] * 3


def test_list_a_folder_within_its_budget(home: Path, server: Server) -> None:
    (home / "outside").symlink_to("/etc")
    server.post("/v1/files/read", {"path": ACME, "view": "outline"})  # counts the file's tokens once
    root = server.post("/v1/files/list", {"path": ""}).json()
    assert root["view"] == "list" and root["entries"] == root["shown"] == 6 and root["budget_tokens"] == DEFAULT
    assert "notes/\tdir" in root["content"] and "outside -> /etc\tlink" in root["content"] and ".git" not in root["content"]
    notes = server.post("/v1/files/list", {"path": "notes", "budget_tokens": None}).json()
    acme = next(line for line in notes["content"].splitlines() if line.startswith("customer-acme.md\t"))
    assert acme.split("\t")[1:3] == ["file", str((home / ACME).stat().st_size)] and acme.split("\t")[3].isdigit()
    small = server.post("/v1/files/list", {"path": ".", "budget_tokens": 60}).json()
    assert small["tokens"] <= 60 and 0 < small["shown"] < small["entries"]
    rest = server.post("/v1/files/list", {"path": ".", "skip": int(small["next"].removeprefix("skip:"))}).json()
    assert rest["shown"] == rest["entries"] - small["shown"] and "next" not in rest
    tiny = server.post("/v1/files/list", {"path": ".", "budget_tokens": 10}).json()
    assert (tiny["view"], tiny["truncated"], tiny["shown"]) == ("none", True, 0) and tiny["needs"] > 10
    for path, status, reason in (("../x", 400, "leaves the tree"), ("outside", 400, "outside the tree"), (".git", 400, ".git"),
                                 (ACME, 404, "is a file, not a folder"), ("nope", 404, "does not exist")):
        r = server.post("/v1/files/list", {"path": path})
        assert r.status_code == status and reason in r.json()["detail"], (path, r.text)


def test_diff(server: Server, nas) -> None:
    from nasfs.diffs import diff_response

    r = server.post("/v1/diff", {"range": "v1..main", "path": ACME})
    assert r.status_code == 200
    assert r.json() == json.loads(json.dumps(diff_response(nas, "v1..main", ACME, None).envelope()))
    assert "+- price held at the 2026 rate, then +3%" in r.json()["content"]
    small = server.post("/v1/diff", {"range": "v1", "budget_tokens": 40}).json()
    assert small["budget_tokens"] == 40 and small["tokens"] <= 40


def test_concurrent_reads_all_answer(server: Server) -> None:
    bodies = [{"path": ACME, "view": v} for v in ("outline", "L1-L5", "section=Contacts", "40", "since=v1")] * 4
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda b: server.post("/v1/files/read", b), bodies))
    assert [a.status_code for a in answers] == [200] * len(bodies)
    assert answers[0].json() == answers[5].json()


# -- errors ----------------------------------------------------------------------
def test_index_points_to_the_api_document(server: Server) -> None:
    r = httpx.get(server.url + "/", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    index = r.json()
    assert index["api"] == "/v1/openapi.json" and "http.md" in index["docs"] and index["health"] == "/v1/health"
    assert httpx.get(server.url + index["api"], timeout=30).json()["openapi"].startswith("3.")


@pytest.mark.parametrize(("body", "says"), [
    ({"path": ACME, "view": "outlien"}, "did you mean @outline?"),
    ({"path": ACME + "@Outline"}, "did you mean @outline?"),
    ({"path": ACME, "view": "L5-L2"}, "did you mean @L2-L5?"),
    ({"path": "notes/absent.md"}, "does not exist"),
    ({"path": "notes", "view": "L1-L2"}, "is a folder; @L1-L2 is a view of files"),
    ({"path": "notes", "view": "since=v1"}, "is a folder"),
    ({"path": "notes/..", "view": "2000"}, "leaves the folder through"),
    ({"path": "notes", "view": "..@2000"}, "unknown view"),
])
def test_refusals_say_what_was_meant(server: Server, body: dict, says: str) -> None:
    r = server.post("/v1/files/read", body)
    assert r.status_code in (400, 404) and says in r.json()["detail"], r.text


@pytest.mark.parametrize(
    ("endpoint", "body", "status", "error"),
    [
        ("/v1/files/read", {"path": ACME, "view": "outlines"}, 400, "bad_view"),
        ("/v1/files/read", {"path": ACME, "view": "L9-L3"}, 400, "bad_view"),
        ("/v1/files/read", {"path": "../etc/passwd"}, 400, "bad_path"),
        ("/v1/files/read", {"path": ACME, "view": "outline\u0000"}, 400, "bad_path"),
        ("/v1/files/read", {"path": ACME, "budget_tokens": -1}, 400, "bad_request"),
        ("/v1/files/read", {"path": ACME, "budget_tokens": "12"}, 400, "bad_request"),
        ("/v1/files/read", {"path": ACME, "budget_tokens": True}, 400, "bad_request"),
        ("/v1/files/read", {"view": "outline"}, 400, "bad_request"),
        ("/v1/files/read", {"path": ACME, "colour": "red"}, 400, "bad_request"),
        ("/v1/files/read", [ACME], 400, "bad_request"),
        ("/v1/evidence/dereference", {"pointer": "not a pointer"}, 400, "bad_pointer"),
        ("/v1/evidence/dereference", {"pointer": "nas://elsewhere/home/notes/x.md@0123456789ab#L1-L2"}, 400, "bad_pointer"),
        ("/v1/evidence/verify", {"pointer": "nope"}, 400, "bad_pointer"),
        ("/v1/search", {"query": "re:("}, 400, "bad_query"),
        ("/v1/search", {"query": ""}, 400, "bad_query"),
        ("/v1/diff", {"range": "..."}, 400, "bad_view"),
        ("/v1/files/read", {"path": "notes/absent.md"}, 404, "not_found"),
        ("/v1/files/read", {"path": "notes/absent.md", "view": "outline"}, 404, "not_found"),
        ("/v1/files/read", {"path": ACME, "at": "no-such-rev"}, 404, "not_found"),
        ("/v1/files/read", {"path": ACME, "view": "section=Pricing"}, 404, "not_found"),
        ("/v1/files/read", {"path": ACME, "view": "L900-L901"}, 404, "not_found"),
        ("/v1/files/read", {"path": ACME, "view": "since=nowhere"}, 404, "not_found"),
        ("/v1/evidence/dereference", {"pointer": "notes/customer-acme.md@0000000000aa#L1-L2"}, 404, "not_found"),
        ("/v1/search", {"query": "x", "at": "no-such-rev"}, 404, "not_found"),
        ("/v1/diff", {"range": "no-such-rev"}, 404, "not_found"),
    ],
)
def test_errors_are_json_with_the_right_status(server: Server, endpoint: str, body: object, status: int, error: str) -> None:
    r = server.post(endpoint, body)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"] == error
    assert r.json()["detail"]


def test_bodies_that_are_not_json(server: Server) -> None:
    for raw in (b"", b"{", b"\xff\xfe", b"null"):
        r = httpx.post(server.url + "/v1/files/read", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400, raw
        assert r.json()["error"] == "bad_request"


def test_body_over_64k_is_413(server: Server) -> None:
    big = {"path": ACME, "view": "section=" + "x" * 70_000}
    r = server.post("/v1/files/read", big)
    assert r.status_code == 413 and r.json()["error"] == "too_large"
    # sent without a length (chunked), it is cut off just the same
    chunks = iter([b'{"path": "', b"x" * 40_000, b"y" * 40_000, b'"}'])
    r = httpx.post(server.url + "/v1/files/read", content=chunks)
    assert r.status_code == 413
    assert server.post("/v1/files/read", {"path": ACME, "view": "section=" + "x" * 60_000}).status_code == 404


def test_framework_refusals_are_json(server: Server) -> None:
    r = httpx.get(server.url + "/v1/files/read")
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"
    assert r.headers["allow"] == "POST"
    r = server.post("/v1/nothing", {})
    assert r.status_code == 404 and r.json()["error"] == "not_found"


def test_bearer_token(home: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    with serving(home, "--token-file", str(token_file)) as server:
        body = {"path": ACME, "view": "outline"}
        missing = server.post("/v1/files/read", body)
        assert missing.status_code == 401 and missing.json()["error"] == "unauthorized"
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = server.post("/v1/files/read", body, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        for endpoint in ("/v1/search", "/v1/evidence/dereference", "/v1/evidence/verify", "/v1/diff"):
            assert server.post(endpoint, {}).status_code == 401
        good = server.post("/v1/files/read", body, headers={"Authorization": "Bearer s3cret-token"})
        assert good.status_code == 200 and good.json()["view"] == "outline"
        assert httpx.get(server.url + "/v1/health").status_code == 200


@pytest.mark.parametrize("address", ["0.0.0.0:8740", "192.0.2.7:8740", "[::]:8740", "example.com:80"])
def test_refuses_a_non_loopback_address_without_a_token(home: Path, address: str) -> None:
    r = subprocess.run([sys.executable, "-m", "nasfs", "serve", "--repo", str(home), "--listen", address],
                       check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "not loopback" in r.stderr and "--token-file" in r.stderr
    assert r.stdout == ""


def test_bad_listen_and_token_file(home: Path, tmp_path: Path) -> None:
    bad = subprocess.run([sys.executable, "-m", "nasfs", "serve", "--repo", str(home), "--listen", "8740"],
                         check=False, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr
    empty = tmp_path / "empty"
    empty.write_text("\n")
    r = subprocess.run([sys.executable, "-m", "nasfs", "serve", "--repo", str(home), "--token-file", str(empty)],
                       check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "empty" in r.stderr


def test_an_unexpected_error_is_a_logged_500(nas, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from starlette.testclient import TestClient

    from nasfs import http

    def broken(self, spec, at=None, budget=None, default_budget=None, caller=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(type(nas), "read", broken)
    with caplog.at_level(logging.ERROR, logger="nasfs.http"), TestClient(http.app(nas)) as client:
        r = client.post("/v1/files/read", json={"path": ACME})
    assert r.status_code == 500
    assert r.json() == {"error": "internal", "detail": "internal error; the server log has the traceback"}
    assert "boom" in caplog.text and "Traceback" in caplog.text


# -- the OpenAPI document -----------------------------------------------------------
def test_openapi_served_equals_docs(server: Server) -> None:
    served = httpx.get(server.url + "/v1/openapi.json").json()
    assert served == json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert served["openapi"].startswith("3.")
    assert set(served["paths"]) == {
        "/v1/files/read", "/v1/search", "/v1/evidence/dereference", "/v1/evidence/verify", "/v1/diff",
        "/v1/health", "/v1/openapi.json", "/", "/v1/files/list",
    }


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_generated_input_makes_a_5xx(server: Server, mode: GenerationMode) -> None:
    """Schemathesis over the served document, bodies that fit it and bodies
    that do not, 30 per operation: never a 5xx, every answer documented.
    (Driven with Hypothesis directly: schemathesis' lazy pytest fixtures do
    not run under pytest 9.)"""
    schema = schemathesis.openapi.from_url(server.url + "/v1/openapi.json")
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    started = time.monotonic()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {o.path for o in operations} >= {"/v1/files/read", "/v1/search", "/v1/evidence/dereference", "/v1/evidence/verify", "/v1/diff"}
    if mode is GenerationMode.NEGATIVE:  # nothing to break in a GET without parameters
        operations = [o for o in operations if o.method.upper() == "POST"]
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def call(case) -> None:
            case.call_and_validate(base_url=server.url, checks=checks, timeout=30)

        call()
    assert time.monotonic() - started < 60


def test_a_section_named_json_is_reachable(server: Server, home: Path) -> None:
    (home / "msg.py").write_text("class Message:\n    def json(self):\n        return '{}'\n")
    env = server.post("/v1/files/read", {"path": "msg.py", "view": "section=Message.json"}).json()
    assert (env["view"], env["section"]) == ("section", "Message.json"), env
    assert env["content"] == "    def json(self):\n        return '{}'\n"
    whole = server.post("/v1/files/read", {"path": "msg.py", "view": "section=Message~1.json"}).json()
    assert whole["section"] == "Message"
