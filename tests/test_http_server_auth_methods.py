"""The token gate on every MCP request, not only the POST: the GET stream and the DELETE
of a session (2025-11-25, a session-era version) without a token get 401 before the
session is looked at, with a refused token 401 ``invalid_token``, and with another
principal's token 404 (the session is not theirs); with its own token the DELETE ends the
session. Also: the scheme is case-insensitive (RFC 6750 section 2.1 via RFC 9110 section
11.1: "It uses a case-insensitive token"), and an ``Authorization`` field of another scheme
is a 401 without an error (RFC 6750 section 3). Over the asyncio built-in server (real
loopback HTTP, ``http.client``)."""

from __future__ import annotations

import http.client
from collections.abc import Mapping

import pytest

pytest.importorskip("joserfc")

from test_http_server_auth import OTHER_KEY, challenge, mint
from test_http_server_auth_runtimes import (
    free_port,
    in_thread,
    make_auth,
    run_asyncio,
)

LIMIT = 10.0
INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)


def _send(
    port: int, method: str, headers: Mapping[str, str], body: bytes | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
    try:
        h = {"accept": "application/json, text/event-stream", **headers}
        if body is not None:
            h["content-type"] = "application/json"
        conn.request(method, "/mcp", body=body, headers=h)
        response = conn.getresponse()
        data = b"" if method == "GET" and response.status == 200 else response.read()
        return response.status, response.headers, data
    finally:
        conn.close()


def _session(port: int, token: str) -> str:
    status, headers, body = _send(port, "POST", {"authorization": f"Bearer {token}"}, INIT)
    assert status == 200, body
    sid = headers["mcp-session-id"]
    assert sid
    return str(sid)


def test_get_and_delete_need_the_sessions_own_token() -> None:
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(run_asyncio(port, auth)):
        alice = mint(resource)
        sid = _session(port, alice)
        session = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        for method in ("GET", "DELETE"):
            status, headers, _ = _send(port, method, session)
            assert status == 401, method
            assert "error" not in challenge(headers)
            assert challenge(headers)["scope"] == "mcp:tools"
            forged = {**session, "authorization": f"Bearer {mint(resource, key=OTHER_KEY)}"}
            status, headers, _ = _send(port, method, forged)
            assert status == 401, method
            assert challenge(headers)["error"] == "invalid_token"
            mallory = {**session, "authorization": f"Bearer {mint(resource, sub='mallory')}"}
            status, _, _ = _send(port, method, mallory)
            assert status == 404, method  # not mallory's session
        # the session outlived all that; its owner ends it
        mine = {**session, "authorization": f"Bearer {alice}"}
        status, _, _ = _send(port, "DELETE", mine)
        assert status in (200, 202, 204)
        status, _, _ = _send(port, "DELETE", mine)
        assert status == 404  # ended


@pytest.mark.parametrize(
    ("value", "status", "error"),
    [
        ("bearer {t}", 200, None),
        ("BEARER {t}", 200, None),
        ("Basic dXNlcjpwYXNz", 401, None),
        ("Bearer", 400, "invalid_request"),
        ("Bearer {t} {t}", 400, "invalid_request"),
    ],
)
def test_the_authorization_field(value: str, status: int, error: str | None) -> None:
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(run_asyncio(port, auth)):
        token = mint(resource)
        got, headers, body = _send(port, "POST", {"authorization": value.format(t=token)}, INIT)
        assert got == status, body
        assert token.encode() not in body
        if status != 200:
            assert challenge(headers).get("error") == error


def test_two_authorization_fields_are_refused() -> None:
    # Authorization is not a list field, so two of them make a malformed request (RFC 9110
    # section 5.3: a sender "MUST NOT generate multiple field lines with the same name"
    # unless the field is a list); RFC 6750 section 3.1: invalid_request for a request
    # that "repeats the same parameter ... or is otherwise malformed", the resource server
    # SHOULD answer 400. (Was: alice's then bob's token served as bob.)
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(run_asyncio(port, auth)):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
        try:
            conn.putrequest("POST", "/mcp")
            conn.putheader("accept", "application/json, text/event-stream")
            conn.putheader("content-type", "application/json")
            conn.putheader("authorization", f"Bearer {mint(resource)}")
            conn.putheader("authorization", f"Bearer {mint(resource, sub='bob')}")
            conn.putheader("content-length", str(len(INIT)))
            conn.endheaders(INIT)
            response = conn.getresponse()
            response.read()
            assert response.status == 400
            assert challenge(response.headers)["error"] == "invalid_request"
        finally:
            conn.close()
