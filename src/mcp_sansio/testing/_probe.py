"""The probe: ``mcp-sansio probe``, and :func:`run_probe` for programs.

It tests an MCP server (we play the client) in three phases, and reports one row per rule.

1. **Versions.** ``server/discover`` (2026-07-28) and ``initialize`` for each version of
   the initialize era, each on a fresh peer: the versions the server *offers* are those it
   accepts (``supportedVersions``) or echoes.
2. **Checks.** Deterministic: for each offered era (its newest version, plus 2025-03-26
   for batches when offered), one fresh peer per check, each firing the canonical
   near-miss of one rule (:func:`~mcp_sansio.testing.shot_builders`), plus the
   checks that need more than one message: the lifecycle before and around the handshake,
   an unsupported version in ``initialize``, cancelling ``initialize``, an oversized line,
   batches, progress, an ``input_required`` round trip, a ``subscriptions/listen`` stream.
   Everything the server sends is judged by our own :class:`~mcp_sansio.Connection`.
3. **Fuzz.** :class:`~mcp_sansio.testing.PeerMachine` for each offered era's newest
   version, ``examples`` examples each, seeded: the same seed gives the same messages and
   verdicts (as long as the server is deterministic and shrinking ends within its bound,
   :data:`SHRINK_SECONDS`; an exchange shows lines in the order they crossed the wire, so
   the server's may interleave differently with the probe's). A failure is shrunk by
   hypothesis to a short exchange.

The report: each rule of :data:`mcp_sansio.testing.RULES` (and the probe's own,
:data:`PROBE_RULES`) passes, fails or does not apply, and each failure comes with the
shortest exchange that shows it, as the bytes each side sent.

Where the probe calls tools: only for the progress check (a tool whose name says
``progress`` or ``long-running``, with no required argument) and the ``input_required``
check (a tool whose name says ``input_required``, 2026-07-28): a probe of a server whose
tools have side effects should keep that in mind. The fuzz phase never calls tools.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, TextIO

import attrs
import orjson

from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import ErrorResponse, InputRequired, Response
from mcp_sansio._state import Role
from mcp_sansio._versions import ALL_VERSIONS, VERSIONS, capability_met
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._report import (
    Outcome,
    Report,
    passive_outcomes,
    report_rows,
    unopened_notes,
)
from mcp_sansio.testing._rules import RULES
from mcp_sansio.testing._runner import (
    DEFAULT_EXAMPLES,
    DEFAULT_JOBS,
    Check,
    CheckFn,
    Probe,
    Progress,
    fuzz_phase,
    oversized_check,
    shot_check,
    split_eras,
)
from mcp_sansio.testing._shots import shot_builders
from mcp_sansio.testing._stdio_target import StdioTarget
from mcp_sansio.testing._targets import Target
from mcp_sansio.testing._wire import (
    DEFAULT_STARTUP,
    DEFAULT_TIMEOUT,
    Demand,
    Shot,
    refusal,
    sampled_message,
)


class ServerProbe(Probe):
    """The probe of a server: the versions it offers, then a check per rule."""

    # -------------------------------------------------------------- versions

    def versions_phase(self) -> list[Outcome]:
        checks: list[tuple[str, CheckFn]] = []
        # server/discover always: whether the server also speaks 2026-07-28 matters to
        # the checks of the initialize era even when that version is not probed.
        for version in self.modern or tuple(v for v in ALL_VERSIONS if v not in self.legacy)[:1]:
            checks.append((version, self._discover))
        for version in self.legacy:
            checks.append((version, self._initialize))
        outcomes = self.run(checks, "versions")
        offered = [v for v in self.versions if v in self.offered]
        self.offered = sorted(set(offered), reverse=True)
        return [attrs.evolve(o, phase="versions") for o in outcomes]

    def _first_answer(self, conv: Conversation, answer: Any) -> None:
        """Note what a fresh peer's first answer says about the whole probe: once one
        has said anything, later silences are their own; a first peer that says nothing
        within the startup bound ends the phase (the others are not waited for)."""
        if conv.heard:
            self.heard = True
        elif answer is None and not conv.cut and not self.heard:
            self.gave_up = (
                f"answered nothing within {max(self.timeout, self.startup):g} s of starting "
                "(the startup bound, --startup)"
            )

    def _trial(self, asked: str, conv: Conversation, answer: Any) -> tuple[str, str]:
        """What ``answer`` (to ``asked``, the first request of ``conv``) comes to: the text
        for :attr:`answers` and, when it offers nothing, why (kept in :attr:`trials`)."""
        if isinstance(answer, Response):
            if asked == "server/discover":
                supported = answer.result.get("supportedVersions")
                listed = supported if isinstance(supported, list) else []
                text = ", ".join(map(str, listed)) or "[]"
                return text, f"supportedVersions: {text}"
            text = str(answer.result.get("protocolVersion"))
            return text, f"it answered with version {text}"
        if conv.peer_lines and conv.echoes == conv.peer_lines:
            return "an echo", "it sends back what it is sent (an echo, not an MCP server)"
        if conv.cut:
            return "cut off", conv.cut
        if isinstance(answer, ErrorResponse):
            text, why = f"error {answer.code}", f"error {answer.code} {answer.message!r}"
        elif conv.channel.closed:
            # The last note is how the peer ended (an exit status), when the transport says.
            ended = next((ln.data.decode() for ln in reversed(conv.lines) if ln.side == "note"), "")
            text, why = "no answer", f"it closed without answering ({ended})"
        else:
            text, why = "no answer", conv.dead or "no answer"
        refused = [v for v in conv.violations if v.rule != "response.missing"]
        if refused:
            why += f"; what it sent was refused: {refused[0].message}"
        said = conv.channel.stderr.strip()[-300:]
        if said and answer is None:
            why += f"; its stderr ends: {said!r}"
        return text, why

    def _record_trial(self, asked: str, conv: Conversation, answer: Any, offered: bool) -> str:
        """:meth:`_trial`, kept when nothing was offered; the text for :attr:`answers`."""
        text, why = self._trial(asked, conv, answer)
        if not offered:
            self.trials.append((asked, why, tuple(conv.lines)))
        return text

    def _discover(self, check: Check) -> None:
        if self.gave_up:
            self.answers["server/discover"] = "not asked"
            return
        offered = False
        with check.talk() as conv:
            answer = conv.request("server/discover")
            self._first_answer(conv, answer)
            if isinstance(answer, Response):
                supported = answer.result.get("supportedVersions")
                supported = supported if isinstance(supported, list) else []
                caps = answer.result.get("capabilities")
                if supported:
                    self.speaks_modern = True
                if check.version in supported:
                    offered = True
                    self.offered.append(check.version)
                    self.caps[check.version] = caps if isinstance(caps, dict) else {}
        self.answers["server/discover"] = self._record_trial(
            "server/discover", conv, answer, offered
        )

    def _initialize(self, check: Check) -> None:
        version = check.version
        if self.gave_up:
            self.answers[version] = "not asked"
            return
        offered = False
        with check.talk() as conv:
            answer = conv.request("initialize", conv.initialize_params(version))
            self._first_answer(conv, answer)
            if isinstance(answer, Response):
                chosen = answer.result.get("protocolVersion")
                if chosen == version:
                    offered = True
                    self.offered.append(version)
                    caps = answer.result.get("capabilities")
                    self.caps[version] = caps if isinstance(caps, dict) else {}
                conv.notify("notifications/initialized")
                conv.barrier()
        self.answers[version] = self._record_trial(f"initialize {version}", conv, answer, offered)

    # -------------------------------------------------------------- the plan

    def plan(self) -> list[tuple[str, CheckFn]]:
        legacy, modern = split_eras(self.offered)
        checks: list[tuple[str, CheckFn]] = []
        main_versions = ([legacy[0]] if legacy else []) + ([modern[0]] if modern else [])
        for version in main_versions:
            for name, builder in shot_builders().items():
                rule_ = RULES.get(name)
                if rule_ is not None and not rule_.applies(version, Role.SERVER):
                    continue
                checks.append((version, shot_check(name, builder)))
            checks.append((version, oversized_check))
            checks.append((version, _progress))
        if legacy:
            first = legacy[0]
            checks.append((first, self._before_initialize))
            checks.append((first, _handshake))
            checks.append((first, _cancel_initialize))
            checks.append((first, self._initialize_version))
            batched = [v for v in legacy if VERSIONS[v].batches]
            if batched:
                checks.append((batched[0], _batch_accepted))
                if first != batched[0]:  # else the shots above covered them
                    for name in ("envelope.empty-batch", "envelope.batch-mixed"):
                        checks.append((batched[0], shot_check(name, shot_builders()[name])))
        elif modern and self.legacy:
            checks.append((modern[0], self._initialize_stateless))
        if legacy and modern:
            checks.append((modern[0], _also_legacy))
        if modern:
            checks.append((modern[0], _discover_kept))
            checks.append((modern[0], _input_required))
            checks.append((modern[0], _listen))
        return checks

    # -------------------------------------------------------------- checks needing the probe

    def _before_initialize(self, check: Check) -> None:
        caps = self.caps.get(check.version, {})
        method = next(
            (m for m, gate in _LISTS if capability_met(caps, gate)), "completion/complete"
        )
        due = refusal("lifecycle.request-before-initialize", ())
        codes = due.codes
        if codes and self.speaks_modern:
            # A server of both eras may read it as a 2026-07-28 request without _meta
            # (over HTTP: without the standard headers).
            codes += (int(ErrorCode.INVALID_PARAMS),)
            if self.target.transport == "http":
                codes += (int(ErrorCode.HEADER_MISMATCH),)
        with check.talk() as conv:
            rid = conv.fresh_id()
            check.fire(
                conv,
                Shot(
                    "lifecycle.request-before-initialize",
                    orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method}),
                    Demand("error", codes, (rid,)),
                    f"{method} before initialize",
                ),
            )

    def _initialize_version(self, check: Check) -> None:
        offered = list(split_eras(self.offered)[0])
        with check.talk() as conv:
            rid = conv.fresh_id()
            params = conv.initialize_params("1999-01-01")

            def echoed(answer: Mapping[str, Any]) -> str | None:
                result = answer["result"]
                chosen = result.get("protocolVersion") if isinstance(result, dict) else None
                if chosen not in offered:
                    return (
                        f"the result names {chosen!r}, not a version the server offers "
                        f"({', '.join(offered)})"
                    )
                return None

            check.fire(
                conv,
                Shot(
                    "lifecycle.initialize-version",
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
                    ),
                    Demand("result", (), (rid,), echoed),
                    "initialize asking for version 1999-01-01",
                ),
            )

    def _initialize_stateless(self, check: Check) -> None:
        with check.talk() as conv:
            rid = conv.fresh_id()
            params = conv.initialize_params(self.legacy[0])
            check.fire(
                conv,
                Shot(
                    "lifecycle.initialize-stateless",
                    orjson.dumps(
                        {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}
                    ),
                    Demand("error", (), (rid,)),
                    f"initialize ({self.legacy[0]}) to a server of 2026-07-28 only",
                ),
            )


_LISTS: Final = (
    ("tools/list", ("tools",)),
    ("prompts/list", ("prompts",)),
    ("resources/list", ("resources",)),
)


def _also_legacy(check: Check) -> None:
    check.not_applicable(
        "lifecycle.initialize-stateless", "the server speaks the initialize era too"
    )


def _handshake(check: Check) -> None:
    """The initialize window, between the initialize result and notifications/initialized:
    a notification gets no reply, and a request (a list the server offers) is served: the
    client may send it once initialize is answered; only the server waits for
    notifications/initialized."""
    window = "lifecycle.request-in-initialize-window"
    with check.talk() as conv:
        answer = conv.request("initialize", conv.initialize_params(check.version))
        if not isinstance(answer, Response):
            check.not_applicable(window, "initialize failed")
            return
        caps = conv.mirror.server_capabilities or {}
        check.fire(
            conv,
            Shot(
                "lifecycle.notification-before-initialized",
                orjson.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
                Demand("none"),
                "a notification before notifications/initialized",
            ),
        )
        method = next((m for m, gate in _LISTS if capability_met(caps, gate)), None)
        if method is None:
            check.not_applicable(window, "the server offers no list to ask for")
            return
        rid = conv.fresh_id()
        check.fire(
            conv,
            Shot(
                window,
                orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method}),
                Demand("result", (), (rid,)),
                f"{method} after the initialize result, before notifications/initialized",
            ),
        )


def _cancel_initialize(check: Check) -> None:
    with check.talk() as conv:
        rid = conv.request("initialize", conv.initialize_params(check.version), wait=False)
        cancel = orjson.dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        )
        mark = conv.send_raw(cancel)
        # Not response.missing when none comes: the receiver of a cancel SHOULD "Not send a
        # response for the cancelled request" (the probe broke the client's MUST NOT).
        answer = conv.wait_answer(rid, blame=False)
        stray = conv.raw_answers(mark, ())
        if not isinstance(answer, Response):
            check.failed(
                "cancel.initialize",
                "initialize, then a cancel naming it: initialize was not answered with a result",
                conv,
            )
        elif stray:
            check.failed("cancel.initialize", "the cancel was answered", conv)
        else:
            check.passed("cancel.initialize", "initialize, then a cancel naming it")


def _discover_kept(check: Check) -> None:
    """``stateless.discover``: a well-formed ``server/discover`` gets a result first thing
    on a fresh peer, and again after a request without ``_meta`` (answered with whatever
    error: ``meta.missing`` judges that; a server of both eras may take it for either
    era's)."""
    name = "stateless.discover"

    def discover(conv: Conversation, why: str) -> bool:
        rid = conv.fresh_id()
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "server/discover",
            "params": {"_meta": conv.meta()},
        }
        return check.fire(
            conv, Shot(name, orjson.dumps(message), Demand("result", (), (rid,)), why)
        )

    with check.talk() as conv:
        if not discover(conv, "server/discover, the first request"):
            return
        rid = conv.fresh_id()
        mark = conv.send_raw(orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}), [rid])
        conv._pump(lambda: bool(conv.raw_answers(mark, [rid])), None)
        discover(conv, "server/discover after a ping without _meta")


def _batch_accepted(check: Check) -> None:
    with check.talk() as conv:
        if not conv.open_session() or conv.negotiated != check.version:
            check.not_applicable("envelope.batch-accepted", f"no {check.version} session")
            return
        ids = [conv.fresh_id(), conv.fresh_id()]
        batch = [{"jsonrpc": "2.0", "id": rid, "method": "ping"} for rid in ids]
        mark = conv.send_raw(orjson.dumps(batch), ids)
        conv._pump(lambda: len(conv.raw_answers(mark, ids)) >= 2, None)
        conv.barrier()
        got = conv.raw_answers(mark, ids)
        conv.forget_raw(ids)
        answered = {m.get("id") for m in got if "result" in m}
        if answered == set(ids) and len(got) == 2:
            check.passed("envelope.batch-accepted", "a batch of two pings")
        else:
            what = "; ".join(json.dumps(m)[:120] for m in got) or "nothing"
            check.failed(
                "envelope.batch-accepted", f"a batch of two pings: answered with {what}", conv
            )


_PROGRESS_TOOL: Final = re.compile(r"progress|long.?running", re.IGNORECASE)
_INPUT_TOOL: Final = re.compile(r"input.?required|mrtr", re.IGNORECASE)


def _tools(conv: Conversation, pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """The server's tools whose name matches and that need no argument."""
    answer = conv.request("tools/list")
    if not isinstance(answer, Response):
        return []
    tools = answer.result.get("tools")
    found = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        schema = tool.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        if pattern.search(tool["name"]) and not required:
            found.append(tool)
    return sorted(found, key=lambda t: str(t["name"]))


def _short_arguments(tool: Mapping[str, Any]) -> dict[str, Any]:
    """Small values for a long-running tool's duration and step count, when it has them."""
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    arguments: dict[str, Any] = {}
    for name, spec in (props or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind in ("number", "integer"):
            if "duration" in name.lower():
                arguments[name] = 1
            elif "step" in name.lower():
                arguments[name] = 3
    return arguments


def _progress(check: Check) -> None:
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable("progress.not-increasing", "the session could not be opened")
            return
        caps = conv.server_capabilities or {}
        if not capability_met(caps, ("tools",)):
            check.not_applicable("progress.not-increasing", "the server has no tools")
            return
        tools = _tools(conv, _PROGRESS_TOOL)
        if not tools:
            check.not_applicable(
                "progress.not-increasing", "no tool named for progress without arguments"
            )
            return
        tool = tools[0]
        token = "probe-progress"
        params = {
            "name": tool["name"],
            "arguments": _short_arguments(tool),
            "_meta": {"progressToken": token},
        }
        before = len(conv.notifications)
        answer = conv.wait_answer(
            conv.request("tools/call", params, wait=False), max(conv.timeout, 15.0)
        )
        seen = [
            n
            for n in conv.notifications[before:]
            if n.method == "notifications/progress"
            and (n.params or {}).get("progressToken") == token
        ]
        if answer is None:
            return  # a response.missing violation is recorded
        if seen:
            check.passed(
                "progress.not-increasing", f"{len(seen)} progress notifications of {tool['name']}"
            )
            check.passed("progress.unknown-token", f"progress of {tool['name']} named our token")
        else:
            check.not_applicable("progress.not-increasing", f"{tool['name']} sent no progress")


def _accept_form(params: Mapping[str, Any]) -> dict[str, Any]:
    schema = params.get("requestedSchema")
    if params.get("mode") == "url" or not isinstance(schema, dict):
        return {"action": "accept"}
    content = {
        name: spec["default"]
        for name, spec in (schema.get("properties") or {}).items()
        if isinstance(spec, dict) and "default" in spec
    }
    for name in schema.get("required") or ():
        spec = (schema.get("properties") or {}).get(name) or {}
        kind = spec.get("type") if isinstance(spec, dict) else None
        if name not in content:
            content[name] = {"number": 1, "integer": 1, "boolean": True}.get(
                str(kind), spec.get("enum", ["probe"])[0] if isinstance(spec, dict) else "probe"
            )
    return {"action": "accept", "content": content}


def _input_responses(requests: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in requests.items():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        if method == "elicitation/create":
            out[key] = _accept_form(params if isinstance(params, dict) else {})
        elif method == "sampling/createMessage":
            out[key] = sampled_message()
        elif method == "roots/list":
            out[key] = {"roots": []}
    return out


_ALL_CLIENT_CAPS: Final[Mapping[str, Any]] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}


def _input_required(check: Check) -> None:
    name = "input-required.retry"
    with check.talk(capabilities=_ALL_CLIENT_CAPS) as conv:
        if not conv.open_session():
            check.not_applicable(name, "the session could not be opened")
            return
        if not capability_met(conv.server_capabilities or {}, ("tools",)):
            check.not_applicable(name, "the server has no tools")
            return
        tools = _tools(conv, _INPUT_TOOL)
        if not tools:
            check.not_applicable(name, "no tool named for input_required without arguments")
            return
        tool = tools[0]
        answer = conv.request("tools/call", {"name": tool["name"], "arguments": {}})
        rounds = 0
        while isinstance(answer, InputRequired) and rounds < 5:
            rounds += 1
            responses = _input_responses(answer.input_requests)
            retry = conv.mirror.retry_request(answer, responses)
            answer = conv.request(retry.method, retry.params)
        if rounds:
            shown = f"{tool['name']}: {rounds} input_required answers"
            check.passed("input-required.invalid", f"{shown}, each well-formed")
            check.passed(
                "input-required.undeclared-capability", f"{shown}, within our capabilities"
            )
        if isinstance(answer, Response) and rounds:
            check.passed(name, f"{tool['name']}: {rounds} input_required rounds, then a result")
        elif isinstance(answer, ErrorResponse) and rounds:
            check.failed(
                name,
                f"{tool['name']}: the retry was refused (error {answer.code} {answer.message!r})",
                conv,
            )
        elif isinstance(answer, InputRequired):
            check.not_applicable(name, f"{tool['name']}: still input_required after 5 rounds")
        elif answer is not None:
            check.not_applicable(name, f"{tool['name']} answered without input_required")


def _listen(check: Check) -> None:
    name = "subscriptions.listen-ack-first"
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable(name, "the session could not be opened")
            return
        caps = conv.server_capabilities or {}
        flags = {
            flag: True
            for flag, gate in (
                ("toolsListChanged", ("tools", "listChanged")),
                ("promptsListChanged", ("prompts", "listChanged")),
                ("resourcesListChanged", ("resources", "listChanged")),
            )
            if capability_met(caps, gate)
        }
        before = len(conv.notifications)
        rid = conv.request("subscriptions/listen", {"notifications": flags}, wait=False)
        if rid is None:
            return

        def acked() -> bool:
            return any(
                n.method == "notifications/subscriptions/acknowledged"
                for n in conv.notifications[before:]
            ) or bool(conv.answers(rid))

        conv._pump(acked, None)
        got = list(conv.notifications[before:])
        answers = conv.answers(rid)
        if got and got[0].method == "notifications/subscriptions/acknowledged":
            check.passed(name, f"subscriptions/listen {json.dumps(flags)}: acknowledged first")
            check.passed("subscriptions.not-opted-in", "the acknowledgement granted what was asked")
        elif answers and isinstance(answers[0], ErrorResponse):
            check.not_applicable(name, f"subscriptions/listen refused (error {answers[0].code})")
            return
        elif not conv.violations:
            check.failed(
                name,
                "subscriptions/listen: no acknowledgement within "
                f"{conv.timeout:g} s" + (" (answered instead)" if answers else ""),
                conv,
            )
        if not conv.answers(rid):
            conv.cancel(rid)
        conv.barrier()


def run_probe(
    target: Target | None = None,
    *,
    versions: Sequence[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    startup: float = DEFAULT_STARTUP,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: TextIO | None = None,
    strict: bool = False,
) -> Report:
    """Probe the server ``target`` (default: the example server over stdio,
    ``python -m mcp_sansio serve``) and return the :class:`Report`.

    :param versions: the versions to probe (default all).
    :param timeout: seconds the server has for each answer.
    :param startup: seconds a fresh server has for its first answer, at least.
    :param examples: fuzz examples per version (0: no fuzz phase).
    :param seed: the fuzz phase's seed (default: a random one, given in the report).
    :param jobs: checks run at once.
    :param progress: where the progress bar goes (e.g. ``sys.stderr``), or nowhere.
    :param strict: count warnings (SHOULD, SHOULD NOT and implied rules) as failures.
    :raises TargetError: the target cannot be used at all.

    A server that offers none of the versions probed (it never answers, echoes what it is
    sent, writes what is not JSON-RPC, refuses every version, ...) gets no verdict: the
    report says why (:attr:`Report.unusable`). A server that answers nothing at all within
    ``max(timeout, startup)`` of its start is given up on once, not once per version.
    """
    if target is None:
        target = StdioTarget([sys.executable, "-m", "mcp_sansio", "serve"])
    chosen = tuple(versions or ALL_VERSIONS)
    seed_value = random.SystemRandom().randrange(2**32) if seed is None else seed
    bar = Progress(progress)
    probe = ServerProbe(
        target, versions=chosen, timeout=timeout, startup=startup, jobs=jobs, progress=bar
    )
    outcomes = probe.versions_phase()
    conversations = len(chosen)
    notes: list[str] = []
    unusable = probe.unusable()
    if unusable is None:
        plan = probe.plan()
        conversations += len(plan)
        outcomes += probe.run(plan, "checks")
        legacy, modern = split_eras(probe.offered)
        fuzzed = ([legacy[0]] if legacy else []) + ([modern[0]] if modern else [])
        # The fuzz phase looks for what the checks did not find: the near-misses of the
        # rules that already failed are not fired again (their failures are minimal).
        failed = {o.rule for o in outcomes if o.status == "fail"}
        rules = sorted((set(shot_builders()) | set(RULES)) - failed)
        for version in fuzzed if examples > 0 else ():
            outcomes += fuzz_phase(
                bar,
                notes,
                target,
                version,
                examples=examples,
                seed_value=seed_value,
                timeout=timeout,
                startup=startup,
                legacy_versions=probe.legacy,
                peer_versions=probe.offered,
                rules=rules,
            )
        passive_outcomes(outcomes, probe.offered, conversations)
        notes += unopened_notes(probe.unopened)
    else:
        # No verdict on a server that cannot be used: what it did is in the notes.
        outcomes = []
        notes += unusable[1]
    return Report(
        target=target.describe(),
        transport=target.transport,
        offered=tuple(probe.offered),
        answers=dict(sorted(probe.answers.items(), key=lambda kv: kv[0], reverse=True)),
        rows=report_rows(outcomes, probe.offered, strict=strict),
        seed=seed_value,
        examples=examples if probe.offered else 0,
        notes=tuple(notes),
        unusable=None if unusable is None else unusable[0],
        evidence=() if unusable is None else unusable[2],
        strict=strict,
    )
