"""The per-version tables agree with the schema files (the vendored ``<version>.json``) and
with the spec's pages (MCP <version>, Schema Reference and each feature's "Capabilities"):
every method, its kind and direction from the ClientRequest / ServerRequest /
ClientNotification / ServerNotification unions; its gate from the capability table; and the
per-version switches."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import ALL, BATCH_VERSION, LEGACY, MODERN, expected_gates

from mcp_sansio import ALL_VERSIONS
from mcp_sansio._policy import FIELDS
from mcp_sansio._state import Role
from mcp_sansio._versions import (
    POLICIES,
    UNDECIDED,
    VERSIONS,
    Direction,
    Era,
    Kind,
    capability_met,
)

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "src" / "mcp_sansio" / "testing" / "schema"


def _definitions(version: str) -> dict[str, Any]:
    schema = json.loads((SCHEMA_DIR / f"{version}.json").read_text(encoding="utf-8"))
    return schema.get("$defs") or schema["definitions"]  # type: ignore[no-any-return]


def _methods_of(defs: dict[str, Any], union: str) -> set[str]:
    """The method names of a union (or of a single message definition)."""
    node = defs.get(union)
    if node is None:
        return set()
    members = node.get("anyOf") or node.get("oneOf") or [node]
    names = set()
    for member in members:
        if "$ref" in member:
            member = defs[member["$ref"].rsplit("/", 1)[-1]]
        method = member["properties"]["method"]
        names.add(method["const"] if "const" in method else method["enum"][0])
    return names


def _schema_table(version: str) -> dict[str, tuple[Kind, Direction]]:
    defs = _definitions(version)
    table: dict[str, tuple[Kind, Direction]] = {}
    for kind, client_union, server_union in (
        (Kind.REQUEST, "ClientRequest", "ServerRequest"),
        (Kind.NOTIFICATION, "ClientNotification", "ServerNotification"),
    ):
        from_client = _methods_of(defs, client_union)
        from_server = _methods_of(defs, server_union)
        for name in from_client | from_server:
            if name in from_client and name in from_server:
                direction = Direction.BOTH
            elif name in from_client:
                direction = Direction.CLIENT_TO_SERVER
            else:
                direction = Direction.SERVER_TO_CLIENT
            table[name] = (kind, direction)
    return table


@pytest.mark.parametrize("version", ALL)
def test_schema_files_exist(version: str) -> None:
    assert (SCHEMA_DIR / f"{version}.json").is_file()


@pytest.mark.parametrize("version", ALL)
def test_methods_agree_with_the_schema(version: str) -> None:
    schema = _schema_table(version)
    ours = {name: (rule.kind, rule.direction) for name, rule in VERSIONS[version].methods.items()}
    assert set(ours) == set(schema), set(ours) ^ set(schema)
    for name, expected in schema.items():
        assert ours[name] == expected, name


@pytest.mark.parametrize("version", ALL)
def test_rule_names_match_their_keys(version: str) -> None:
    for name, rule in VERSIONS[version].methods.items():
        assert rule.method == name


def test_2026_has_no_server_requests() -> None:
    defs = _definitions(MODERN)
    assert "ServerRequest" not in defs
    assert not [
        name
        for name, rule in VERSIONS[MODERN].methods.items()
        if rule.kind is Kind.REQUEST and rule.direction is not Direction.CLIENT_TO_SERVER
    ]
    client_notes = [
        name
        for name, rule in VERSIONS[MODERN].methods.items()
        if rule.kind is Kind.NOTIFICATION and rule.direction is not Direction.SERVER_TO_CLIENT
    ]
    assert client_notes == ["notifications/cancelled"]


def _senders(direction: Direction) -> tuple[Role, ...]:
    if direction is Direction.BOTH:
        return (Role.CLIENT, Role.SERVER)
    return (Role.CLIENT,) if direction is Direction.CLIENT_TO_SERVER else (Role.SERVER,)


@pytest.mark.parametrize("version", ALL)
def test_gates_agree_with_the_capability_table(version: str) -> None:
    expected = expected_gates(version)
    ours = {
        name: (_senders(rule.direction), rule.gate)
        for name, rule in VERSIONS[version].methods.items()
        if rule.gate
    }
    assert ours == expected


@pytest.mark.parametrize("version", ALL)
def test_gates_are_capabilities_of_the_schema(version: str) -> None:
    """Every gate is a path through ClientCapabilities or ServerCapabilities."""
    defs = _definitions(version)
    for name, rule in VERSIONS[version].methods.items():
        if not rule.gate:
            continue
        holder_is_client = (rule.kind is Kind.REQUEST) == (
            rule.direction is Direction.SERVER_TO_CLIENT
        )
        if rule.direction is Direction.BOTH:
            holders = ["ClientCapabilities", "ServerCapabilities"]
        else:
            holders = ["ClientCapabilities" if holder_is_client else "ServerCapabilities"]
        for holder in holders:
            node = defs[holder]
            for key in rule.gate:
                assert "properties" in node, (name, holder, key)
                assert key in node["properties"], (name, holder, key)
                node = node["properties"][key]
                if "$ref" in node:
                    node = defs[node["$ref"].rsplit("/", 1)[-1]]


@pytest.mark.parametrize("version", ALL)
def test_input_required_methods(version: str) -> None:
    marked = {name for name, rule in VERSIONS[version].methods.items() if rule.input_required}
    if version == MODERN:
        assert marked == {"tools/call", "prompts/get", "resources/read"}
    else:
        assert marked == set()


def test_switches_per_version() -> None:
    assert [v for v in ALL if VERSIONS[v].batches] == [BATCH_VERSION]
    assert [v for v in ALL if not VERSIONS[v].progress_message] == ["2024-11-05"]
    assert [v for v in ALL if VERSIONS[v].era is Era.STATELESS] == [MODERN]
    assert [v for v in ALL if VERSIONS[v].era is Era.INITIALIZE] == list(LEGACY)
    assert {v for v in ALL if VERSIONS[v].elicitation_modes} == {"2025-11-25", MODERN}
    assert {v for v in ALL if VERSIONS[v].sampling_tools} == {"2025-11-25", MODERN}
    assert {VERSIONS[v].resource_not_found for v in LEGACY} == {-32002}
    assert VERSIONS[MODERN].resource_not_found == -32602
    for version, spec in VERSIONS.items():
        assert spec.version == version


def test_batches_in_the_schema_match() -> None:
    for version in ALL:
        defs = _definitions(version)
        has_batch = any("Batch" in name for name in defs)
        assert has_batch == (version == BATCH_VERSION), version


def test_progress_message_in_the_schema_matches() -> None:
    for version in ALL:
        params = _definitions(version).get("ProgressNotificationParams")
        if params is None:
            node = _definitions(version)["ProgressNotification"]["properties"]["params"]
            props = node.get("properties", {})
        else:
            props = params["properties"]
        assert ("message" in props) == VERSIONS[version].progress_message, version


def test_all_versions() -> None:
    assert tuple(sorted(VERSIONS, reverse=True)) == ALL_VERSIONS
    assert set(ALL_VERSIONS) == {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN}


@pytest.mark.parametrize(
    ("caps", "path", "met"),
    [
        ({"tools": {}}, ("tools",), True),
        ({"tools": {"listChanged": True}}, ("tools", "listChanged"), True),
        ({"tools": {"listChanged": False}}, ("tools", "listChanged"), False),
        ({"tools": {"listChanged": None}}, ("tools", "listChanged"), False),
        ({"tools": {}}, ("tools", "listChanged"), False),
        ({"tools": True}, ("tools", "listChanged"), False),
        ({"tools": False}, ("tools",), False),
        ({"tools": None}, ("tools",), False),
        ({}, ("tools",), False),
        ({"tasks": {"list": {}}}, ("tasks", "list"), True),
        ({"tasks": []}, ("tasks", "list"), False),
        ({"tools": 0}, ("tools",), True),
    ],
)
def test_capability_met(caps: dict[str, Any], path: tuple[str, ...], met: bool) -> None:
    assert capability_met(caps, path) is met


def test_each_version_points_to_its_eras_policy() -> None:
    for spec in VERSIONS.values():
        assert spec.policy is POLICIES[spec.era]
    legacy, modern = POLICIES[Era.INITIALIZE], POLICIES[Era.STATELESS]
    # The two eras differ in every field but the probe's (and their era).
    for name in FIELDS:
        if name in ("era", "probe"):
            continue
        assert getattr(legacy, name) != getattr(modern, name), name
    assert legacy.effectful == {
        "initialize",
        "resources/subscribe",
        "resources/unsubscribe",
        "logging/setLevel",
    }
    assert modern.effectful == frozenset()
    # Undecided: the initialize era's rules for ids and effects, and the probe first.
    assert UNDECIDED.era is None
    assert UNDECIDED.probe
    assert not legacy.probe
    assert not modern.probe
    assert UNDECIDED.ids_unique_per_session
    assert UNDECIDED.effectful == legacy.effectful


def test_version_fields_replace_version_compares() -> None:
    assert {v for v, s in VERSIONS.items() if s.negotiated_only_should} == {
        "2024-11-05",
        "2025-03-26",
    }
    assert {v for v, s in VERSIONS.items() if not s.protocol_version_header} == {
        "2024-11-05",
        "2025-03-26",
    }


_CORE = Path(__file__).resolve().parent.parent / "src" / "mcp_sansio"
_CORE_MODULES = (
    "_connection.py",
    "_policy.py",
    "_requests.py",
    "_gates.py",
    "_negotiation.py",
    "_method_rules.py",
    "_names.py",
    "_checks.py",
    "_state.py",
    "_config.py",
    "_ids.py",
    "_jsonrpc.py",
    "_framing.py",
    "_events.py",
    "_errors.py",
    "_sentinels.py",
    "__init__.py",
)
# A conditional that names an era, or an era-identifying lifecycle state.
_ERA_BRANCH = re.compile(
    r"\b(if|elif|while|and|or)\b.*(_ERA_[A-Z]+|Era\.[A-Z]+|_STATE_STATELESS|State\.STATELESS|\b_era\b)"
)
# A version string compared (==, !=, <, >, in) with anything.
_VERSION_COMPARE = re.compile(
    r"(==|!=|<=?|>=?|\bin\b)\s*[\"']\d{4}-\d{2}-\d{2}[\"']|[\"']\d{4}-\d{2}-\d{2}[\"']\s*(==|!=|<=?|>=?|\bin\b)"
)


@pytest.mark.parametrize("module", _CORE_MODULES)
def test_no_core_module_branches_on_eras_or_versions(module: str) -> None:
    """Era and version behaviour is read from VersionSpec / EraPolicy (issue 18, item 4)."""
    found = []
    for number, line in enumerate((_CORE / module).read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if _ERA_BRANCH.search(code) or _VERSION_COMPARE.search(code):
            found.append(f"{module}:{number}: {line.strip()}")
    assert not found, found
