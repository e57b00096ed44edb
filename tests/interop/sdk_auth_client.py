"""The official Python SDK's OAuth client (``mcp==2.3.0``: ``OAuthClientProvider`` on its
``httpx2``) against a protected MCP server over Streamable HTTP, for the authorization
interop tests: run with the interop venv's Python, never imported by the tests.

    sdk_auth_client.py URL MODE CALLS

``MODE`` is the SDK's ``Client(mode=...)`` (``legacy``, ``auto`` or ``2026-07-28``).
``CALLS`` is a JSON list of ``[tool, arguments]``: each is called in turn in one session.
The person's step is done by a browser in this script (``redirect_handler``): it follows
the authorization server's redirects with its cookies, signs in on oidc-provider's
development login form and submits the consent form, and hands the redirect's ``code``,
``state`` and ``iss`` to the SDK (``callback_handler``). It prints one JSON object on
stdout: ``calls`` (each call's text contents, or ``{"error": ...}``), ``tokens`` (the
access token after each call), ``authorizations`` (how many times the browser was sent),
``scopes`` (the ``scope`` of each authorization request), ``errors`` (each error
response the authorization server redirected with), and ``fatal`` when the session itself
failed (the SDK ends it when an authorization flow fails).
"""

# mypy: ignore-errors
# (mypy runs in an environment without the SDK; this file only runs in the SDK's venv.)

from __future__ import annotations

import html
import json
import re
import sys
import traceback
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:9/callback"
HTTP_TIMEOUT = 30.0
SESSION_TIMEOUT = 120.0


class Memory:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """Signs in and consents at oidc-provider, until the redirect to ``REDIRECT_URI``."""

    def __init__(self) -> None:
        self.jar = CookieJar()
        self.redirects: list[str] = []
        self.scopes: list[str | None] = []
        self.errors: list[dict[str, str]] = []

    def _open(self, url, form=None):
        cookies = urllib.request.HTTPCookieProcessor(self.jar)
        opener = urllib.request.build_opener(_NoRedirect, cookies)
        data = None if form is None else urllib.parse.urlencode(form).encode()
        try:
            with opener.open(urllib.request.Request(url, data=data), timeout=HTTP_TIMEOUT) as r:
                return r.status, r.headers.get("Location", ""), r.read().decode()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, e.headers.get("Location", ""), e.read().decode(errors="replace")

    def authorize(self, url: str) -> str:
        self.scopes.append(
            dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("scope")
        )
        form = None
        for _ in range(20):
            status, location, page = self._open(url, form)
            form = None
            if status in (302, 303):
                url = urllib.parse.urljoin(url, location)
                if url.startswith(REDIRECT_URI):
                    self.redirects.append(url)
                    return url
                continue
            if status != 200:
                raise RuntimeError(f"{url}: {status}: {page[:500]}")
            action = re.search(r'<form[^>]*action="([^"]+)"', page)
            prompt = re.search(r'name="prompt" value="(\w+)"', page)
            if not (action and prompt):
                raise RuntimeError(f"no form at {url}: {page[:500]}")
            url = urllib.parse.urljoin(url, html.unescape(action.group(1)))
            form = {"prompt": prompt.group(1)}
            if prompt.group(1) == "login":
                form.update(login="interop-user", password="any")
        raise RuntimeError("no redirect after 20 steps")


async def main(url: str, mode: str, calls: list) -> dict:
    browser = Browser()
    storage = Memory()

    async def redirect_handler(authorization_url: str) -> None:
        await anyio.to_thread.run_sync(browser.authorize, authorization_url)

    async def callback_handler() -> AuthorizationCodeResult:
        redirect = urllib.parse.urlsplit(browser.redirects[-1])
        answer = dict(urllib.parse.parse_qsl(redirect.query))
        if "code" not in answer:
            # an error response (RFC 6749 section 4.1.2.1): the SDK's flow fails on it
            browser.errors.append(answer)
            raise RuntimeError(f"the authorization server answered {answer}")
        return AuthorizationCodeResult(
            code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
        )

    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(
            client_name="sdk-interop-client",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    out: dict = {"calls": [], "tokens": []}
    http = httpx2.AsyncClient(auth=provider, timeout=HTTP_TIMEOUT)
    try:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with (
                http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as client,
            ):
                for name, arguments in calls:
                    try:
                        result = await client.call_tool(name, arguments)
                        texts = [c.text for c in result.content if hasattr(c, "text")]
                        out["calls"].append(texts)
                    except Exception as exc:  # reported to the test
                        out["calls"].append({"error": f"{type(exc).__name__}: {exc}"})
                    held = storage.tokens
                    out["tokens"].append(None if held is None else held.access_token)
    except BaseException as exc:  # the session died (an auth flow's failure ends it)
        traceback.print_exc(file=sys.stderr)
        out["fatal"] = f"{type(exc).__name__}: {exc}"
    out["authorizations"] = len(browser.redirects)
    out["scopes"] = browser.scopes
    out["errors"] = browser.errors
    return out


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))))
