"""An expired Streamable HTTP session reopened, sans-IO (initialize era).

When a POST that carried the session id gets HTTP 404 (or another of
``expired_statuses``), the specification says the client MUST start a new session. The
transport does it without the session noticing: it replays the session's ``initialize``
request (under an id of its own, without the old session id), checks that the result names
the same version, sends ``notifications/initialized`` with the new session id, and sends
again what the 404 refused (the server did not take it), then what the session wrote
meanwhile. What the old session held on the server is restored first, under ids of the
transport's own whose answers the session never sees: the logging level of the last
``logging/setLevel`` the server accepted, then a ``resources/subscribe`` for each resource
subscribed to (and not unsubscribed from) with the server's success, each answered before
anything else is sent. Once in a row: if what it resent gets 404 again before anything
succeeded, or the new ``initialize`` fails, the requests waiting get errors. A
:class:`~mcp_sansio.http._client.TransportProblem` says the session was reopened and what
was restored, and another one says what the new session refused to restore.
"""

from __future__ import annotations

from typing import Any

import orjson

from ._client_auth import Authorizing
from ._client_parts import (
    _LISTEN,
    _REOPEN,
    _REOPEN_ID,
    _RESTORE_ID,
    TRANSPORT_ERROR,
    ClientAction,
    HttpRequest,
    TransportProblem,
    _error,
    _Exchange,
    _is_id,
)

__all__ = ["Reopening"]


class Reopening(Authorizing):
    """A transport that reopens an expired session (with ``reopen=True``) and restores
    what the server held for the old one."""

    def _expired(self, ex: _Exchange) -> list[ClientAction] | None:
        """A POST that carried a session id got HTTP 404 (or another of
        ``expired_statuses``): reopen the session and send its line again; ``None`` when
        that is not to be done (it then fails as any such status)."""
        if not self.reopen or self.closed or self._initialize is None:
            return None
        # One of the transport's restoring requests is not sent again: the next reopened
        # session gets its own.
        body = b"" if ex.owed and ex.owed <= self._restoring.keys() else ex.body
        if ex.session_id != self.session_id and (
            self._reopening is not None or self.session_id is not None
        ):
            # Sent in an earlier session, which has been (or is being) reopened: again.
            self._drop_owed(ex)
            return self._post(body) if body else []
        if self._fresh or self._reopening is not None:
            return None  # the reopened session refused it too: once is enough
        self._drop_owed(ex)
        request_id = _REOPEN_ID
        while request_id in self._owner:  # the session's own ids come first
            request_id += "-"
        message = {**self._initialize, "id": request_id}
        reopen = self._reopening = self._new(_REOPEN, {request_id})
        self._expired_id = ex.session_id
        self._expired_status = ex.status
        self._initialize_ids.add(request_id)
        self._offered_session_id = None
        self.session_id = None
        self._legacy_post_headers = self._post_headers
        # What the session writes meanwhile waits, after what the 404 refused.
        self._gates.add(reopen.stream)
        if body:
            self._held.insert(0, body)
        body = orjson.dumps(message)
        actions: list[ClientAction] = [
            self._abort(listen, "the session expired")  # the new session opens its own
            for listen in list(self._exchanges.values())
            if listen.kind == _LISTEN
        ]
        actions.append(HttpRequest(reopen.stream, "POST", self.target, self._post_headers, body))
        return actions

    def _drop_owed(self, ex: _Exchange) -> None:
        """``ex`` is to be sent again (or, for a restoring request, not at all)."""
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
            self._restoring.pop(request_id, None)

    def _reopened(self, ex: _Exchange, message: dict[str, Any], out: list[bytes]) -> None:
        """The answer to the replayed ``initialize``: the session goes on in the new one,
        or the requests waiting fail."""
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
        result = message.get("result")
        version = result.get("protocolVersion") if type(result) is dict else None
        if type(result) is not dict:
            error = message.get("error")
            detail = error.get("message") if type(error) is dict else None
            self._reopen_failed(f"the new initialize was refused ({detail or 'no result'})", out)
            return
        if version != self.protocol_version:
            self._reopen_failed(
                f"the new initialize negotiated {version!r}, not {self.protocol_version!r}", out
            )
            return
        self._initialized(result)
        self._reopening = None
        self._fresh = True
        self.reopened += 1
        restores = self._restore_lines()
        self._held[0:0] = [
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
            *(line for line, _ in restores),
        ]
        new = f" as {self.session_id!r}" if self.session_id is not None else ""
        what = "; restoring " + ", ".join(what for _, what in restores) if restores else ""
        self._outbox.append(
            TransportProblem(
                f"the session {self._expired_id!r} expired (HTTP {self._expired_status}) and was "
                f"reopened{new}{what}"
            )
        )
        self._outbox.extend(self._release(ex.stream))

    def _changed(self, method: str, params: dict[str, Any]) -> None:
        """The server accepted a request that changes what it holds for the session."""
        value = params.get("level" if method == "logging/setLevel" else "uri")
        if type(value) is not str:
            return
        if method == "logging/setLevel":
            self._log_level = value
        elif method == "resources/subscribe":
            self._subscriptions[value] = None
        else:
            self._subscriptions.pop(value, None)

    def _restore_lines(self) -> list[tuple[bytes, str]]:
        """The requests that restore, in a reopened session, what the old one held, and
        what each restores. Those of an earlier reopening still waiting to go out are
        dropped: these replace them."""
        unsent = {line: request_id for request_id, (_, line) in self._restoring.items()}
        if unsent:
            for line in self._held:
                request_id = unsent.get(line)
                if request_id is not None:
                    del self._restoring[request_id]
            self._held = [line for line in self._held if line not in unsent]
        wanted: list[tuple[str, dict[str, Any], str]] = []
        if self._log_level is not None:
            level = self._log_level
            wanted.append(("logging/setLevel", {"level": level}, f"the logging level {level!r}"))
        wanted.extend(
            ("resources/subscribe", {"uri": uri}, f"the subscription to {uri!r}")
            for uri in self._subscriptions
        )
        lines = []
        for method, params, what in wanted:
            self._restores += 1
            request_id = f"{_RESTORE_ID}{self._restores}"
            while request_id in self._owner:  # the session's own ids come first
                request_id += "-"
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            line = orjson.dumps(message)
            self._restoring[request_id] = (what, line)
            lines.append((line, what))
        return lines

    def _restored(self, request_id: Any, message: dict[str, Any]) -> None:
        """The answer to one of the transport's restoring requests: a success is all it
        needs; an error is worth a :class:`TransportProblem`."""
        what, _ = self._restoring.pop(request_id)
        error = message.get("error")
        if type(error) is dict or type(message.get("result")) is not dict:
            detail = error.get("message") if type(error) is dict else None
            self._outbox.append(
                TransportProblem(
                    f"the reopened session {self.session_id!r} did not restore {what}: "
                    f"{detail or 'no result'}"
                )
            )

    def _reopen_failed(self, why: str, out: list[bytes]) -> None:
        """Reopening failed: every request waiting for it gets an error."""
        ex = self._reopening
        assert ex is not None
        self._reopening = None
        self._exchanges.pop(ex.stream, None)
        for request_id in list(ex.owed):
            self._forget(ex, request_id)
        self._gates.discard(ex.stream)
        held, self._held = self._held, []
        message = (
            f"the session {self._expired_id!r} expired (HTTP {self._expired_status}) and could "
            f"not be reopened: {why}"
        )
        for line in held:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:  # pragma: no cover - the session writes JSON
                continue
            for item in value if type(value) is list else [value]:
                request_id = item.get("id") if type(item) is dict and "method" in item else None
                # (The transport's own restoring requests are dropped, unanswered.)
                if _is_id(request_id) and self._restoring.pop(request_id, None) is None:
                    out.append(_error(request_id, TRANSPORT_ERROR, message, self._expired_status))
        self._fresh = True
