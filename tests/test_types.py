"""Unit tests of ``mcp_sansio.types``: the public API, field mapping, absent vs null,
extras, union resolution, every kind of validation error, the METHODS tables, and a
fuzz test (random and mutated JSON into every class: an object or a ValidationError,
nothing else)."""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import assert_type

from mcp_sansio import types as mcp_types
from mcp_sansio.testing import from_schema, json_values
from mcp_sansio.types import (
    OMITTED,
    VERSIONS,
    MethodSpec,
    Omitted,
    ValidationError,
    converter,
    dumps,
    loads,
    module_for,
    structure,
    structure_params,
    structure_result,
    unstructure,
)
from mcp_sansio.types import v2024_11_05 as v24
from mcp_sansio.types import v2025_03_26 as v25a
from mcp_sansio.types import v2025_06_18 as v25b
from mcp_sansio.types import v2025_11_25 as v25
from mcp_sansio.types import v2026_07_28 as v26

MODULES = [module_for(version) for version in VERSIONS]


def error_of(fn: Any, *args: Any, **kwargs: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        fn(*args, **kwargs)
    return info.value


# --------------------------------------------------------------------------- public API


def test_versions_oldest_first() -> None:
    assert VERSIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    assert [m.VERSION for m in MODULES] == list(VERSIONS)


def test_module_for() -> None:
    assert module_for("2025-11-25") is v25
    assert mcp_types.v2026_07_28 is v26  # attribute access imports lazily too
    for bad in ("2024-01-01", "", "draft", None, 2025):
        with pytest.raises(ValueError, match="unknown MCP protocol version"):
            module_for(bad)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        _ = mcp_types.v1999_01_01
    assert "v2025_11_25" in dir(mcp_types)


def test_import_is_lazy() -> None:
    code = (
        "import sys, mcp_sansio.types as t\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mcp_sansio.types.v'))\n"
        "assert loaded == [], loaded\n"
        "t.module_for('2025-06-18')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mcp_sansio.types.v'))\n"
        "assert loaded == ['mcp_sansio.types.v2025_06_18'], loaded\n"
        "assert 'hypothesis' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_reexports() -> None:
    from mcp_sansio import OMITTED as core_omitted
    from mcp_sansio import ValidationError as core_error

    assert OMITTED is core_omitted
    assert ValidationError is core_error
    assert isinstance(OMITTED, Omitted)
    assert issubclass(ValidationError, ValueError)


def test_structure_typing_and_dumps_loads() -> None:
    params = structure({"name": "add", "arguments": {"a": 1}}, v25.CallToolRequestParams)
    assert_type(params, v25.CallToolRequestParams)
    assert params.name == "add"
    assert params.arguments == {"a": 1}
    assert params.task is OMITTED
    assert params.meta is OMITTED
    data = dumps(params)
    assert isinstance(data, bytes)
    assert orjson.loads(data) == {"name": "add", "arguments": {"a": 1}}
    assert loads(data, v25.CallToolRequestParams) == params
    assert loads(data.decode(), v25.CallToolRequestParams) == params
    assert dumps({"plain": [1, "x"]}) == b'{"plain":[1,"x"]}'


def test_loads_rejects_bad_json() -> None:
    for bad in (b"{", b"", b"[1,]", b"\xff", b'{"a": NaN}'):
        err = error_of(loads, bad, v25.Tool)
        assert err.path == ""
        assert "invalid JSON" in str(err)
    assert "invalid JSON" in str(error_of(loads, 12, v25.Tool))


def test_dumps_rejects_non_json() -> None:
    params = v25.CallToolRequestParams(name="x", arguments={"s": {1, 2}})
    assert "not JSON-serializable" in str(error_of(dumps, params))


def test_structure_path_prefix() -> None:
    err = error_of(structure, {"name": 3}, v25.CallToolRequestParams, "/params")
    assert err.path == "/params/name"


def test_structure_other_types_go_through_converter() -> None:
    assert structure([{"type": "text", "text": "a"}], list[v25.ContentBlock]) == [
        v25.TextContent(text="a")
    ]
    assert structure("x", str) == "x"
    assert structure(None, int | None) is None
    err = error_of(structure, [{"type": "nope"}], list[v25.ContentBlock])
    assert "cannot structure" in str(err)


def test_converter_hooks() -> None:
    tools = converter.structure([{"name": "t", "inputSchema": {"type": "object"}}], list[v24.Tool])
    assert tools == [v24.Tool(name="t", input_schema=v24.ToolInputSchema())]
    assert converter.unstructure(tools) == [{"name": "t", "inputSchema": {"type": "object"}}]
    union: Any = v25.ContentBlock
    block = converter.structure({"type": "image", "data": "", "mimeType": "a/b"}, union)
    assert block == v25.ImageContent(data="", mime_type="a/b")
    assert converter.unstructure({"k": block}) == {
        "k": {"type": "image", "data": "", "mimeType": "a/b"}
    }
    err = error_of(converter.structure, {"type": "text"}, v25.TextContent)
    assert err.path == "/text"


def test_unstructure_plain_values() -> None:
    assert unstructure({"a": [1, None]}) == {"a": [1, None]}
    assert unstructure("x") == "x"


# --------------------------------------------------------------------------- classes


@pytest.mark.parametrize("module", MODULES, ids=VERSIONS)
def test_generated_classes_shape(module: Any) -> None:
    for cls in module._UNSTRUCTURE:
        assert attrs.has(cls)
        assert cls.__doc__
        assert "__weakref__" not in cls.__dict__["__slots__"]
        fields = attrs.fields(cls)
        assert fields[-1].name == "extra"
        assert all(f.kw_only for f in fields)
        assert "__dict__" not in dir(cls)
        assert cls.__hash__ is None
    for name in module.__all__:
        assert hasattr(module, name)


def test_frozen_eq_repr_evolve_pickle() -> None:
    text = v25.TextContent(text="hi", extra={"x-a": 1})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        text.text = "no"  # type: ignore[misc]
    assert text == v25.TextContent(text="hi", extra={"x-a": 1})
    assert text != v25.TextContent(text="hi")
    assert text != v24.TextContent(text="hi", extra={"x-a": 1})
    assert text != "hi"
    assert repr(text) == "TextContent(text='hi', type='text', extra={'x-a': 1})"
    assert (
        repr(v25.Implementation(name="n", version="1")) == "Implementation(name='n', version='1')"
    )
    changed = attrs.evolve(text, text="bye")
    assert changed.text == "bye"
    assert changed.extra == {"x-a": 1}
    assert pickle.loads(pickle.dumps(text)) == text
    with pytest.raises(TypeError):
        hash(text)


def test_structured_objects_are_real_instances() -> None:
    obj = structure({"type": "text", "text": "x"}, v25.TextContent)
    assert type(obj) is v25.TextContent
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        obj.text = "y"  # type: ignore[misc]
    assert attrs.evolve(obj, text="y").text == "y"


def test_constructors_and_defaults() -> None:
    tool = v25.Tool(name="t", input_schema=v25.ToolInputSchema(properties={"a": {}}))
    assert unstructure(tool) == {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": {}}},
    }
    request = v25.CallToolRequest(id=1, params=v25.CallToolRequestParams(name="t"))
    assert unstructure(request) == {
        "id": 1,
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": "t"},
    }


# --------------------------------------------------------------------------- field mapping


def test_snake_case_and_meta() -> None:
    wire = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "$schema": "https://json-schema.org/draft/2020-12/schema",
        },
        "outputSchema": {"type": "object"},
        "_meta": {"k": 1},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }
    tool = structure(wire, v25.Tool)
    assert tool.input_schema.schema == "https://json-schema.org/draft/2020-12/schema"
    assert tool.output_schema is not OMITTED
    assert tool.meta == {"k": 1}
    assert tool.annotations is not OMITTED
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.open_world_hint is False
    assert unstructure(tool) == wire
    names = [f.name for f in attrs.fields(v25.Tool)]
    assert "meta" in names
    assert "input_schema" in names


def test_reserved_prefix_keys_2026() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "progressToken": 5,
    }
    obj = structure(meta, v26.RequestMetaObject)
    assert obj.protocol_version == "2026-07-28"
    assert obj.client_capabilities.roots == {}
    assert obj.client_info == v26.Implementation(name="c", version="1")
    assert obj.progress_token == 5
    assert obj.log_level is OMITTED
    assert unstructure(obj) == meta


def test_no_schema_property_is_named_extra() -> None:
    for module in MODULES:
        for cls in module._UNSTRUCTURE:
            assert [f.name for f in attrs.fields(cls)].count("extra") == 1


# --------------------------------------------------------------------------- absent vs null


def test_absent_versus_null() -> None:
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "now",
        "lastUpdatedAt": "now",
        "ttl": None,
    }
    obj = structure(task, v25.Task)
    assert obj.ttl is None
    assert obj.poll_interval is OMITTED
    assert unstructure(obj) == task
    missing = dict(task)
    del missing["ttl"]
    assert error_of(structure, missing, v25.Task).path == "/ttl"
    assert structure({**task, "ttl": 60}, v25.Task).ttl == 60
    # an optional field that is not nullable rejects null
    err = error_of(structure, {**task, "pollInterval": None}, v25.Task)
    assert err.path == "/pollInterval"
    # "data" of an error is any JSON: null and absent differ
    with_null = structure({"code": 1, "message": "m", "data": None}, v25.Error)
    without = structure({"code": 1, "message": "m"}, v25.Error)
    assert with_null.data is None
    assert without.data is OMITTED
    assert unstructure(with_null) == {"code": 1, "message": "m", "data": None}
    assert unstructure(without) == {"code": 1, "message": "m"}


# --------------------------------------------------------------------------- extras


def test_extras_are_kept_and_re_emitted() -> None:
    wire = {"type": "text", "text": "x", "x-vendor": {"a": [1]}, "other": None}
    obj = structure(wire, v25.TextContent)
    assert obj.extra == {"x-vendor": {"a": [1]}, "other": None}
    assert unstructure(obj) == wire
    nested = {"content": [wire], "isError": False}
    assert unstructure(structure(nested, v25.CallToolResult)) == nested


def test_known_fields_win_over_extras() -> None:
    obj = v25.TextContent(text="real", extra={"text": "shadow", "k": 1})
    assert unstructure(obj) == {"type": "text", "text": "real", "k": 1}


def test_extra_keys_must_be_strings() -> None:
    err = error_of(structure, {"type": "text", "text": "x", 1: "y"}, v25.TextContent)
    assert err.path == ""
    assert "keys must be strings" in str(err)


def test_dict_subclasses_are_accepted_and_not_mutated() -> None:
    from collections import OrderedDict, defaultdict

    ordered = OrderedDict(type="text", text="x")
    assert structure(ordered, v25.TextContent) == v25.TextContent(text="x")
    lazy: defaultdict[str, Any] = defaultdict(list, {"type": "text"})
    assert error_of(structure, lazy, v25.TextContent).path == "/text"
    assert dict(lazy) == {"type": "text"}


# --------------------------------------------------------------------------- unions


def test_union_by_type_tag() -> None:
    cases = {
        "text": ({"type": "text", "text": "t"}, v25b.TextContent),
        "image": ({"type": "image", "data": "", "mimeType": "m"}, v25b.ImageContent),
        "audio": ({"type": "audio", "data": "", "mimeType": "m"}, v25b.AudioContent),
        "resource_link": ({"type": "resource_link", "uri": "u", "name": "n"}, v25b.ResourceLink),
        "resource": (
            {"type": "resource", "resource": {"uri": "u", "text": "t"}},
            v25b.EmbeddedResource,
        ),
    }
    for wire, cls in cases.values():
        obj = structure(wire, v25b.ContentBlock)
        assert type(obj) is cls
        assert unstructure(obj) == wire
    err = error_of(structure, {"type": "video"}, v25b.ContentBlock)
    assert err.path == "/type"
    assert "one of" in str(err)
    assert error_of(structure, {"text": "t"}, v25b.ContentBlock).path == "/type"
    assert error_of(structure, {"type": ["text"]}, v25b.ContentBlock).path == "/type"
    assert error_of(structure, [], v25b.ContentBlock).path == ""
    # the member's own errors come out with their paths
    assert error_of(structure, {"type": "text", "text": 1}, v25b.ContentBlock).path == "/text"


def test_union_by_method_tag() -> None:
    request = {"method": "tools/call", "params": {"name": "t"}}
    assert type(structure(request, v25a.ClientRequest)) is v25a.CallToolRequest
    assert type(structure({"method": "ping"}, v25a.ServerRequest)) is v25a.PingRequest
    note = {"method": "notifications/progress", "params": {"progressToken": 1, "progress": 0.5}}
    assert type(structure(note, v25a.ServerNotification)) is v25a.ProgressNotification
    assert error_of(structure, {"method": "tools/call"}, v25a.ServerRequest).path == "/method"
    assert error_of(structure, {"method": 1}, v25a.ClientRequest).path == "/method"
    assert error_of(structure, {"method": "tools/call"}, v25a.ClientRequest).path == "/params"
    legacy_cancel = {"method": "notifications/cancelled", "params": {"requestId": 1}}
    assert type(structure(legacy_cancel, v24.ClientNotification)) is v24.CancelledNotification


def test_union_by_mode_tag_with_absent_tag() -> None:
    form = {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}
    assert type(structure(form, v25.ElicitRequestParams)) is v25.ElicitRequestFormParams
    explicit = {**form, "mode": "form"}
    assert type(structure(explicit, v25.ElicitRequestParams)) is v25.ElicitRequestFormParams
    url = {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}
    assert type(structure(url, v25.ElicitRequestParams)) is v25.ElicitRequestURLParams
    assert error_of(structure, {**form, "mode": "sms"}, v25.ElicitRequestParams).path == "/mode"


def test_union_by_required_key() -> None:
    text = {"uri": "u", "text": "t"}
    blob = {"uri": "u", "blob": "AA=="}
    assert type(structure(text, v24.ReadResourceResultContentsItem)) is v24.TextResourceContents
    assert type(structure(blob, v24.ReadResourceResultContentsItem)) is v24.BlobResourceContents
    # the preferred member fails, another one fits: anyOf semantics
    both = {"uri": "u", "text": 5, "blob": "AA=="}
    obj = structure(both, v24.ReadResourceResultContentsItem)
    assert type(obj) is v24.BlobResourceContents
    assert obj.extra == {"text": 5}
    # none fits: the preferred member's error
    err = error_of(structure, {"uri": "u", "text": 5}, v24.ReadResourceResultContentsItem)
    assert err.path == "/text"
    assert error_of(structure, {"uri": "u"}, v24.ReadResourceResultContentsItem).path == ""


def test_jsonrpc_message_resolution() -> None:
    cases = [
        ({"jsonrpc": "2.0", "id": 1, "method": "m"}, v25.JSONRPCRequest),
        ({"jsonrpc": "2.0", "method": "m"}, v25.JSONRPCNotification),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, v25.JSONRPCResultResponse),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}},
            v25.JSONRPCErrorResponse,
        ),
        ({"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}}, v25.JSONRPCErrorResponse),
    ]
    for wire, cls in cases:
        obj = structure(wire, v25.JSONRPCMessage)
        assert type(obj) is cls
        assert unstructure(obj) == wire
    assert error_of(structure, {"jsonrpc": "1.0", "method": "m"}, v25.JSONRPCMessage).path == (
        "/jsonrpc"
    )
    # older schemas require the id of an error
    assert error_of(
        structure, {"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}}, v24.JSONRPCMessage
    )


def test_batches_2025_03_26() -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "n"}]
    obj = structure(batch, v25a.JSONRPCMessage)
    assert [type(x) for x in obj] == [v25a.JSONRPCRequest, v25a.JSONRPCNotification]
    assert unstructure(obj) == batch
    responses = [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert type(structure(responses, v25a.JSONRPCMessage)[0]) is v25a.JSONRPCResponse
    assert error_of(structure, [{"jsonrpc": "2.0"}], v25a.JSONRPCMessage).path == "/0/method"
    assert error_of(structure, [1], v24.JSONRPCMessage).path == ""  # no batches in 2024-11-05


def test_primitive_schema_definition_groups() -> None:
    union = v25.PrimitiveSchemaDefinition
    cases = [
        ({"type": "boolean"}, v25.BooleanSchema),
        ({"type": "integer"}, v25.NumberSchema),
        ({"type": "number", "minimum": 1}, v25.NumberSchema),
        ({"type": "string"}, v25.StringSchema),
        ({"type": "string", "format": "email"}, v25.StringSchema),
        ({"type": "string", "enum": ["a"]}, v25.UntitledSingleSelectEnumSchema),
        ({"type": "string", "enum": ["a"], "enumNames": ["A"]}, v25.LegacyTitledEnumSchema),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            v25.TitledSingleSelectEnumSchema,
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}},
            v25.UntitledMultiSelectEnumSchema,
        ),
        (
            {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            v25.TitledMultiSelectEnumSchema,
        ),
    ]
    for wire, cls in cases:
        obj = structure(wire, union)
        assert type(obj) is cls, wire
        assert unstructure(obj) == wire
    assert error_of(structure, {"type": "object"}, union).path == "/type"


def test_input_required_result_2026() -> None:
    alias = v26.METHODS["tools/call"].result
    assert alias == v26.InputRequiredResult | v26.CallToolResult
    irr = {"resultType": "input_required", "requestState": "s", "content": []}
    obj = structure_result("2026-07-28", "tools/call", irr)
    assert type(obj) is v26.InputRequiredResult
    assert obj.extra == {"content": []}
    done = {"resultType": "complete", "content": []}
    assert type(structure_result("2026-07-28", "tools/call", done)) is v26.CallToolResult
    # InputRequiredResult is chosen by resultType only, never as a fallback
    err = error_of(structure_result, "2026-07-28", "tools/call", {"resultType": "complete"})
    assert err.path == "/result/content"
    requests = {
        "resultType": "input_required",
        "inputRequests": {
            "a": {"method": "roots/list"},
            "b": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "m", "url": "u"},
            },
        },
    }
    obj = structure(requests, v26.ServerResult)
    assert type(obj.input_requests["a"]) is v26.ListRootsRequest
    assert type(obj.input_requests["b"].params) is v26.ElicitRequestURLParams
    assert unstructure(obj) == requests
    err = error_of(
        structure, {**requests, "inputRequests": {"a/b": {"method": "x"}}}, v26.ServerResult
    )
    assert err.path == "/inputRequests/a~1b/method"


def test_union_tried_in_order() -> None:
    assert type(structure({}, v25.ServerResult)) is v25.Result
    task = {"taskId": "t", "status": "working", "createdAt": "c", "lastUpdatedAt": "l", "ttl": None}
    assert type(structure(task, v25.ServerResult)) in (v25.GetTaskResult, v25.CancelTaskResult)
    assert type(structure({"tools": []}, v25.ServerResult)) is v25.ListToolsResult
    listen = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 3}}
    assert type(structure(listen, v26.ServerResult)) is v26.SubscriptionsListenResult
    assert type(structure({"resultType": "complete"}, v26.ServerResult)) is v26.Result
    assert error_of(structure, {}, v26.ServerResult).path == "/resultType"


def test_mixed_unions() -> None:
    single = {"role": "user", "content": {"type": "text", "text": "t"}, "model": "m"}
    assert type(structure(single, v25.CreateMessageResult).content) is v25.TextContent
    many = {
        **single,
        "content": [
            {"type": "text", "text": "a"},
            {"type": "tool_use", "id": "i", "name": "n", "input": {}},
        ],
    }
    obj = structure(many, v25.CreateMessageResult)
    assert isinstance(obj.content, list)
    assert [type(c) for c in obj.content] == [v25.TextContent, v25.ToolUseContent]
    assert unstructure(obj) == many
    assert (
        error_of(structure, {**single, "content": "x"}, v25.CreateMessageResult).path == "/content"
    )
    elicit = {"action": "accept", "content": {"a": ["x"], "b": "s", "c": 1, "d": True}}
    assert unstructure(structure(elicit, v25.ElicitResult)) == elicit
    bad = {"action": "accept", "content": {"a": [1]}}
    assert error_of(structure, bad, v25.ElicitResult).path == "/content/a/0"


# --------------------------------------------------------------------------- errors


def test_error_paths() -> None:
    cases: list[tuple[Any, Any, str, str]] = [
        ("x", v25.Tool, "", "expected object, got string"),
        ({}, v25.Tool, "/inputSchema", "missing required property 'inputSchema'"),
        ({"name": 1}, v25.Implementation, "/name", "expected string, got integer 1"),
        ({"uri": "u", "name": "n", "size": 1.5}, v25.Resource, "/size", "expected integer"),
        ({"uri": "u", "name": "n", "size": True}, v25.Resource, "/size", "expected integer"),
        (
            {"progressToken": 1, "progress": False},
            v25.ProgressNotificationParams,
            "/progress",
            "number",
        ),
        (
            {"progressToken": None, "progress": 1},
            v25.ProgressNotificationParams,
            "/progressToken",
            "",
        ),
        ({"level": "loud", "data": 1}, v25.LoggingMessageNotificationParams, "/level", "one of"),
        ({"method": "ping", "jsonrpc": "1.0", "id": 1}, v25.PingRequest, "/jsonrpc", '"2.0"'),
        ({"content": [{"type": "text", "text": 1}]}, v25.CallToolResult, "/content/0/text", ""),
        ({"content": {}}, v25.CallToolResult, "/content", "expected array"),
        ({"content": [], "isError": "no"}, v25.CallToolResult, "/isError", "boolean"),
        ({"name": "t", "arguments": []}, v25.CallToolRequestParams, "/arguments", "object"),
        ({"name": "t", "arguments": {1: 2}}, v25.CallToolRequestParams, "/arguments", "strings"),
        ({"costPriority": 1.5}, v25.ModelPreferences, "/costPriority", "in [0, 1]"),
        ({"hints": [{"name": 1}]}, v25.ModelPreferences, "/hints/0/name", ""),
        ({"roots": [{"uri": "u"}, {"uri": 2}]}, v25.ListRootsResult, "/roots/1/uri", ""),
        ({"audience": ["user", "robot"]}, v25.Annotations, "/audience/1", "one of"),
        (
            {"name": "p", "arguments": {"a": 1}},
            v25.GetPromptRequestParams,
            "/arguments/a",
            "expected string",
        ),
        (
            {"name": "p", "arguments": {"a": "x", "b~": None}},
            v25.GetPromptRequestParams,
            "/arguments/b~0",
            "expected string, got null",
        ),
        (
            {"completion": {"values": ["v"] * 101}, "resultType": "complete"},
            v26.CompleteResult,
            "/completion/values",
            "at most 100",
        ),
        (
            {"tools": [], "resultType": "complete", "ttlMs": -1, "cacheScope": "public"},
            v26.ListToolsResult,
            "/ttlMs",
            ">= 0",
        ),
        (
            {"name": "t", "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
            v26.CallToolRequestParams,
            "/_meta/io.modelcontextprotocol~1protocolVersion",
            "missing",
        ),
        (
            {"type": "object", "properties": {"a": {1: 2}}},
            v25.ToolInputSchema,
            "/properties/a",
            "strings",
        ),
        (
            {"type": "object", "properties": {"a/b": []}},
            v25.ToolInputSchema,
            "/properties/a~1b",
            "object",
        ),
        ({"experimental": {"x": 1}}, v24.ClientCapabilities, "/experimental/x", "object"),
    ]
    for value, cls, path, message in cases:
        err = error_of(structure, value, cls)
        assert err.path == path, (value, err)
        assert message in str(err), (value, err)
        assert err.reason in str(err)


def test_error_from_nested_union_members() -> None:
    result = {"content": [{"type": "resource", "resource": {"uri": "u", "text": 1}}]}
    assert error_of(structure, result, v25.CallToolResult).path == "/content/0/resource/text"


def test_structure_params_and_result() -> None:
    assert structure_params("2025-06-18", "ping") is OMITTED
    assert structure_params("2025-06-18", "ping", {}) == v25b.PingRequestParams()
    err = error_of(structure_params, "2025-06-18", "tools/call")
    assert err.path == "/params"
    err = error_of(structure_params, "2025-06-18", "tools/call", {"name": 1})
    assert err.path == "/params/name"
    err = error_of(structure_params, "2025-06-18", "tools/teleport", {})
    assert err.path == "/method"
    with pytest.raises(ValueError, match="unknown MCP protocol version"):
        structure_params("1999-01-01", "ping")
    assert structure_result("2024-11-05", "ping", {}) == v24.Result()
    result = structure_result("2025-06-18", "tools/list", {"tools": []})
    assert result == v25b.ListToolsResult(tools=[])
    err = error_of(structure_result, "2025-06-18", "notifications/progress", {})
    assert "notification" in str(err)
    assert error_of(structure_result, "2025-06-18", "tools/list", []).path == "/result"


# --------------------------------------------------------------------------- METHODS


def test_methods_tables() -> None:
    ping = v24.METHODS["ping"]
    assert ping == MethodSpec(
        method="ping",
        direction="both",
        kind="request",
        params=v24.PingRequestParams,
        result=v24.EmptyResult,
        params_required=False,
    )
    assert v24.METHODS["tools/call"].direction == "client_to_server"
    assert v24.METHODS["tools/call"].params is v24.CallToolRequestParams
    assert v24.METHODS["tools/call"].params_required
    assert v24.METHODS["tools/call"].result is v24.CallToolResult
    assert v24.METHODS["sampling/createMessage"].direction == "server_to_client"
    assert v24.METHODS["notifications/cancelled"].direction == "both"
    assert v24.METHODS["notifications/initialized"].kind == "notification"
    assert v24.METHODS["notifications/initialized"].result is None
    assert v24.METHODS["resources/subscribe"].result is v24.EmptyResult
    assert "elicitation/create" not in v25a.METHODS
    assert v25b.METHODS["elicitation/create"].direction == "server_to_client"
    assert v25.METHODS["elicitation/create"].params is v25.ElicitRequestParams
    assert v25.METHODS["tasks/get"].direction == "both"
    assert v25.METHODS["tasks/result"].result is v25.GetTaskPayloadResult
    assert v25.METHODS["notifications/elicitation/complete"].direction == "server_to_client"
    assert "ping" not in v26.METHODS
    assert "initialize" not in v26.METHODS
    assert v26.METHODS["server/discover"].result is v26.DiscoverResult
    assert v26.METHODS["notifications/cancelled"].direction == "both"
    assert v26.METHODS["subscriptions/listen"].result is v26.SubscriptionsListenResult
    for method in ("tools/call", "prompts/get", "resources/read"):
        assert v26.InputRequiredResult in v26.METHODS[method].result.__args__  # type: ignore[union-attr]
    assert v26.METHODS["tools/list"].result is v26.ListToolsResult
    assert all(
        v.direction != "server_to_client" or v.kind == "notification" for v in v26.METHODS.values()
    )


@pytest.mark.parametrize("module", MODULES, ids=VERSIONS)
def test_methods_consistent(module: Any) -> None:
    for method, spec in module.METHODS.items():
        assert spec.method == method
        assert (spec.result is None) == (spec.kind == "notification")
        assert spec.params is not None
        assert spec.direction in ("client_to_server", "server_to_client", "both")
        if spec.params_required:
            with pytest.raises(ValidationError):
                structure_params(module.VERSION, method)


# --------------------------------------------------------------------------- fuzz


def _targets(module: Any) -> list[tuple[str, Any]]:
    """Every structuring function of a module: classes, union aliases, definitions."""
    out = {f"class:{getattr(k, '__name__', repr(k))}": v for k, v in module._STRUCTURE.items()}
    out.update({f"def:{k}": v for k, v in module._DEFS.items()})
    return sorted(out.items(), key=lambda item: item[0])


TARGETS = [(m.VERSION, name, fn) for m in MODULES for name, fn in _targets(m)]


def _check_no_other_exception(fn: Any, value: Any) -> None:
    with contextlib.suppress(ValidationError):
        fn(value, "")


#: Fuzz examples: 3x the hypothesis profile's max_examples (default profile: 300).
FUZZ = settings().max_examples * 3


@settings(max_examples=FUZZ, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(TARGETS), value=json_values())
def test_fuzz_random_json(target: tuple[str, str, Any], value: Any) -> None:
    _check_no_other_exception(target[2], value)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Any, Any]:
    """A valid value of a definition with some subtrees replaced, deleted or added."""
    version = draw(st.sampled_from(VERSIONS))
    module = module_for(version)
    name = draw(st.sampled_from(sorted(module._DEFS)))
    value = draw(from_schema(version, name))
    for _ in range(draw(st.integers(1, 3))):
        value = _mutate(draw, value)
    return module._DEFS[name], value


def _mutate(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        action = draw(st.sampled_from(["descend", "replace", "delete"]))
        out = dict(value)
        if action == "descend":
            out[key] = _mutate(draw, value[key])
        elif action == "replace":
            out[key] = draw(json_values())
        else:
            del out[key]
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        out_list[index] = _mutate(draw, value[index])
        return out_list
    return draw(json_values() | st.sampled_from([None, True, 0, -1, 1.5, "", [], {}, {1: 2}]))


@settings(max_examples=FUZZ, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_fuzz_mutated_valid_values(case: tuple[Any, Any]) -> None:
    fn, value = case
    _check_no_other_exception(fn, value)


@settings(max_examples=FUZZ // 2, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from(VERSIONS), method=st.text(max_size=30), value=json_values())
def test_fuzz_params_and_results(version: str, method: str, value: Any) -> None:
    methods = sorted(module_for(version).METHODS)
    for name in (method, methods[len(method) % len(methods)]):
        for fn in (structure_params, structure_result):
            with contextlib.suppress(ValidationError):
                fn(version, name, value)


@settings(max_examples=FUZZ // 2, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=64) | st.builds(orjson.dumps, json_values()))
def test_fuzz_loads(data: bytes) -> None:
    for module in (v24, v26):
        with contextlib.suppress(ValidationError):
            loads(data, module.JSONRPCMessage)


# --------------------------------------------------------------------------- runtime helpers


def test_base_helpers() -> None:
    from mcp_sansio.types import _base

    assert _base._describe("x" * 100) == "string '" + "x" * 36 + "..."
    assert _base._describe({1, 2}) == "non-JSON value of type set"
    assert _base._describe(None) == "null"
    err = _base._entry_error({1: "a"}, v25._structure_TextContent, "/p")
    assert (err.path, "keys must be strings" in str(err)) == ("/p", True)
    err = _base._entry_error({"k": {"type": "text"}}, v25._structure_TextContent, "/p")
    assert err.path == "/p/k/text"
    table = v25._UNSTRUCTURE
    value = {"a": [v25.TextContent(text="t")], "b": 1}
    assert _base._unstructure_value(value, table) == {"a": [{"type": "text", "text": "t"}], "b": 1}
    assert _base._first_of({}, "", (v25._structure_Result,)) == v25.Result()
    err = error_of(_base._first_of, [], "", (v25._structure_Result, v25._structure_Tool))
    assert "expected object" in str(err)


def test_non_string_keys_in_typed_maps() -> None:
    err = error_of(structure, {"name": "p", "arguments": {1: "x"}}, v25.GetPromptRequestParams)
    assert err.path == "/arguments"
    assert "keys must be strings" in str(err)
    irr = {"resultType": "input_required", "inputRequests": {1: {"method": "roots/list"}}}
    err = error_of(structure, irr, v26.InputRequiredResult)
    assert err.path == "/inputRequests"


def test_optional_union_goes_through_cattrs() -> None:
    optional: Any = v25.TextContent | None
    assert structure(None, optional) is None
    assert structure({"type": "text", "text": "t"}, optional) == v25.TextContent(text="t")
    assert error_of(structure, {"type": "text"}, optional).path == "/text"
