"""Declaring an MCP server: its tools, resources, templates, prompts and completion.

A :class:`Server` is a plain registry; it does no protocol work and no I/O. Handlers are
functions (or coroutine functions, for the asyncio and trio adapters) that take a context
first; the adapters run them for a :class:`~mcp_sansio.session.ServerSession`, which turns
what they return into the result objects of the protocol::

    server = Server("demo", "1.0")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    def echo(ctx, arguments):
        "Echo the text back."
        return arguments["text"]          # a str becomes one text content block

This is a protocol server, not a framework: schemas are given, not inferred.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from ._versions import MethodSpec

__all__ = ["Prompt", "Resource", "ResourceTemplate", "Server", "Tool", "ToolError"]

F = TypeVar("F", bound=Callable[..., Any])

_ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


class ToolError(Exception):
    """Raised by a tool handler to answer with an ``isError: true`` result (the model sees
    the message). Any other exception (not an :class:`~mcp_sansio.session.McpError`) is a
    bug of the handler: it is logged with its traceback, and the client gets -32603."""


@attrs.frozen
class Tool:
    """A tool: its declaration (as listed by ``tools/list``) and its handler."""

    name: str
    """The tool's name."""
    handler: Callable[..., Any]
    """Called as ``handler(context, arguments)``."""
    input_schema: Mapping[str, Any]
    """The JSON schema of the arguments."""
    description: str | None = None
    """What the tool does."""
    title: str | None = None
    """A display name."""
    output_schema: Mapping[str, Any] | None = None
    """The JSON schema of ``structuredContent``, if the tool returns one."""
    annotations: Mapping[str, Any] | None = None
    """Hints (``readOnlyHint``, ``destructiveHint``, …)."""

    def declaration(self) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list``."""
        d: dict[str, Any] = {"name": self.name, "inputSchema": dict(self.input_schema)}
        if self.title is not None:
            d["title"] = self.title
        if self.description is not None:
            d["description"] = self.description
        if self.output_schema is not None:
            d["outputSchema"] = dict(self.output_schema)
        if self.annotations is not None:
            d["annotations"] = dict(self.annotations)
        return d


@attrs.frozen
class Resource:
    """A resource with a fixed URI."""

    uri: str
    """Its URI."""
    handler: Callable[..., Any]
    """Called as ``handler(context, uri)``; returns text (``str``), bytes, or contents."""
    name: str
    """Its name."""
    description: str | None = None
    """What it holds."""
    mime_type: str | None = None
    """Its MIME type."""
    title: str | None = None
    """A display name."""

    def declaration(self) -> dict[str, Any]:
        """The ``Resource`` object of ``resources/list``."""
        d: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.title is not None:
            d["title"] = self.title
        if self.description is not None:
            d["description"] = self.description
        if self.mime_type is not None:
            d["mimeType"] = self.mime_type
        return d


@attrs.frozen
class ResourceTemplate:
    """A family of resources named by an RFC 6570 level-1 template (``{var}`` segments)."""

    uri_template: str
    """The template, e.g. ``test://template/{id}/data``."""
    handler: Callable[..., Any]
    """Called as ``handler(context, uri, variables)``."""
    name: str
    """Its name."""
    description: str | None = None
    """What its resources hold."""
    mime_type: str | None = None
    """The MIME type of its resources."""
    title: str | None = None
    """A display name."""
    pattern: re.Pattern[str] = attrs.field(init=False)
    """The template as a regular expression."""

    @pattern.default
    def _pattern(self) -> re.Pattern[str]:
        parts = re.split(r"\{([A-Za-z0-9_]+)\}", self.uri_template)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)"
            for i, part in enumerate(parts)
        )
        return re.compile(regex + r"\Z")

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables in ``uri``, or ``None`` when it does not match."""
        found = self.pattern.match(uri)
        return found.groupdict() if found else None

    def declaration(self) -> dict[str, Any]:
        """The ``ResourceTemplate`` object of ``resources/templates/list``."""
        d: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        if self.title is not None:
            d["title"] = self.title
        if self.description is not None:
            d["description"] = self.description
        if self.mime_type is not None:
            d["mimeType"] = self.mime_type
        return d


@attrs.frozen
class Prompt:
    """A prompt template."""

    name: str
    """Its name."""
    handler: Callable[..., Any]
    """Called as ``handler(context, arguments)``; returns messages or a whole result."""
    description: str | None = None
    """What it is for."""
    arguments: Sequence[Mapping[str, Any]] = ()
    """Its arguments: ``{"name", "description"?, "required"?}`` each."""
    title: str | None = None
    """A display name."""

    def declaration(self) -> dict[str, Any]:
        """The ``Prompt`` object of ``prompts/list``."""
        d: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            d["title"] = self.title
        if self.description is not None:
            d["description"] = self.description
        if self.arguments:
            d["arguments"] = [dict(a) for a in self.arguments]
        return d


class Server:
    """The registry of one MCP server.

    :param name: ``serverInfo.name``.
    :param version: ``serverInfo.version``.
    :param instructions: optional instructions for the client's model.
    :param logging: whether to declare the ``logging`` capability.
    :param subscribe: whether resources can be subscribed to (``resources.subscribe``).
    :param list_changed: whether to declare ``listChanged`` for tools, prompts and resources.
    :param methods: application methods (:class:`~mcp_sansio.MethodSpec`: a vendor request
        such as ``acme/search``, an extension's notifications) added to the protocol's
        tables of every session served; handlers of its requests are registered with
        :meth:`method`.
    :param experimental: the ``experimental`` capability to declare (``{"acme": {}}``), which
        gates the methods whose ``gate`` is ``("experimental", "acme")``.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        logging: bool = True,
        subscribe: bool = True,
        list_changed: bool = True,
        methods: Sequence[MethodSpec] = (),
        experimental: Mapping[str, Any] | None = None,
    ) -> None:
        self.info: dict[str, Any] = {"name": name, "version": version}
        """``serverInfo``."""
        if title is not None:
            self.info["title"] = title
        self.instructions = instructions
        """Instructions for the client's model, or ``None``."""
        self.logging = logging
        """Whether ``logging`` is declared."""
        self.subscribe = subscribe
        """Whether resource subscriptions are offered."""
        self.list_changed = list_changed
        """Whether list-changed notifications are declared."""
        self.tools: dict[str, Tool] = {}
        """The tools, by name."""
        self.resources: dict[str, Resource] = {}
        """The fixed resources, by URI."""
        self.templates: list[ResourceTemplate] = []
        """The resource templates, in the order declared."""
        self.prompts: dict[str, Prompt] = {}
        """The prompts, by name."""
        self.completer: Callable[..., Any] | None = None
        """The ``completion/complete`` handler, or ``None``."""
        self.methods: tuple[MethodSpec, ...] = tuple(methods)
        """The application methods (``MethodSpec``) the sessions' connections add."""
        self.experimental: dict[str, Any] | None = (
            None if experimental is None else dict(experimental)
        )
        """The ``experimental`` capability declared, or ``None``."""
        self.handlers: dict[str, Callable[..., Any]] = {}
        """The handlers of application requests, by method (see :meth:`method`)."""

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server capabilities implied by what is registered."""
        caps: dict[str, Any] = {}
        changed = {"listChanged": True} if self.list_changed else {}
        if self.tools:
            caps["tools"] = dict(changed)
        if self.prompts:
            caps["prompts"] = dict(changed)
        if self.resources or self.templates:
            caps["resources"] = dict(changed)
            if self.subscribe:
                caps["resources"]["subscribe"] = True
        if self.completer is not None:
            caps["completions"] = {}
        if self.logging:
            caps["logging"] = {}
        if self.experimental is not None:
            caps["experimental"] = dict(self.experimental)
        return caps

    def tool(
        self,
        name: str | None = None,
        *,
        input_schema: Mapping[str, Any] | None = None,
        description: str | None = None,
        title: str | None = None,
        output_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register a tool; the handler's docstring is the default description."""

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            self.tools[tool_name] = Tool(
                name=tool_name,
                handler=fn,
                input_schema=input_schema or _ANY_OBJECT,
                description=description if description is not None else _doc(fn),
                title=title,
                output_schema=output_schema,
                annotations=annotations,
            )
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        title: str | None = None,
    ) -> Callable[[F], F]:
        """Register a resource with a fixed URI."""

        def register(fn: F) -> F:
            self.resources[uri] = Resource(
                uri=uri,
                handler=fn,
                name=name or fn.__name__,
                description=description if description is not None else _doc(fn),
                mime_type=mime_type,
                title=title,
            )
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        title: str | None = None,
    ) -> Callable[[F], F]:
        """Register a resource template (``{var}`` segments)."""

        def register(fn: F) -> F:
            self.templates.append(
                ResourceTemplate(
                    uri_template=uri_template,
                    handler=fn,
                    name=name or fn.__name__,
                    description=description if description is not None else _doc(fn),
                    mime_type=mime_type,
                    title=title,
                )
            )
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        arguments: Sequence[Mapping[str, Any]] = (),
        title: str | None = None,
    ) -> Callable[[F], F]:
        """Register a prompt."""

        def register(fn: F) -> F:
            prompt_name = name or fn.__name__
            self.prompts[prompt_name] = Prompt(
                name=prompt_name,
                handler=fn,
                description=description if description is not None else _doc(fn),
                arguments=tuple(arguments),
                title=title,
            )
            return fn

        return register

    def completion(self, fn: F) -> F:
        """Register the ``completion/complete`` handler: ``fn(context, ref, argument,
        context_arguments)`` returns a list of values (or a whole ``completion`` object)."""
        self.completer = fn
        return fn

    def method(self, name: str) -> Callable[[F], F]:
        """Register the handler of an application request ``name`` (declared in ``methods=``
        as a request the client sends): ``fn(context, params)`` returns the result object
        (``None`` for ``{}``), plain or ``async`` as for tools. Its errors are answered as a
        tool's are not: an :class:`~mcp_sansio.session.McpError` as that error, anything
        else as -32603."""
        known = {spec.method for spec in self.methods}
        if name not in known:
            raise ValueError(f"{name!r} is not one of this server's methods= ({sorted(known)})")

        def register(fn: F) -> F:
            self.handlers[name] = fn
            return fn

        return register

    def find_resource(
        self, uri: str
    ) -> tuple[Callable[..., Any], tuple[Any, ...], str | None] | None:
        """The handler for reading ``uri``, its arguments (after the context), and the
        MIME type declared for it; ``None`` when no resource or template matches."""
        fixed = self.resources.get(uri)
        if fixed is not None:
            return fixed.handler, (uri,), fixed.mime_type
        for template in self.templates:
            variables = template.match(uri)
            if variables is not None:
                return template.handler, (uri, variables), template.mime_type
        return None


def _doc(fn: Callable[..., Any]) -> str | None:
    doc = fn.__doc__
    return " ".join(doc.split()) if doc else None
