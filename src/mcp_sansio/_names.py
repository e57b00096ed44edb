"""Every wire constant of the core, named once: the ``_meta`` keys of MCP, the method names
the state machine reads, and the listen opt-in flags.

Method *tables* (who sends what, gated by what) are in :mod:`mcp_sansio._versions`; these
are the names the code itself compares against.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CANCELLED",
    "COMPLETION_COMPLETE",
    "ELICITATION_CREATE",
    "INITIALIZE",
    "INITIALIZED",
    "LISTEN",
    "LISTEN_FLAGS",
    "LISTEN_RESOURCES",
    "LOGGING_SET_LEVEL",
    "LOG_MESSAGE",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION",
    "META_VERSION",
    "PING",
    "PROGRESS",
    "PROMPTS_LIST_CHANGED",
    "RESOURCES_LIST_CHANGED",
    "RESOURCES_SUBSCRIBE",
    "RESOURCES_UNSUBSCRIBE",
    "RESOURCES_UPDATED",
    "ROOTS_LIST",
    "SAMPLING_CREATE_MESSAGE",
    "SERVER_DISCOVER",
    "SUBSCRIPTIONS_ACKNOWLEDGED",
    "TOOLS_LIST_CHANGED",
]

# ---------------------------------------------------------------- _meta keys (2026-07-28)
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

# ---------------------------------------------------------------- methods the core reads
INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"
PING: Final = "ping"
SERVER_DISCOVER: Final = "server/discover"
CANCELLED: Final = "notifications/cancelled"
PROGRESS: Final = "notifications/progress"
LOG_MESSAGE: Final = "notifications/message"
LOGGING_SET_LEVEL: Final = "logging/setLevel"
RESOURCES_SUBSCRIBE: Final = "resources/subscribe"
RESOURCES_UNSUBSCRIBE: Final = "resources/unsubscribe"
RESOURCES_UPDATED: Final = "notifications/resources/updated"
ELICITATION_CREATE: Final = "elicitation/create"
SAMPLING_CREATE_MESSAGE: Final = "sampling/createMessage"
ROOTS_LIST: Final = "roots/list"
COMPLETION_COMPLETE: Final = "completion/complete"
LISTEN: Final = "subscriptions/listen"
SUBSCRIPTIONS_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
PROMPTS_LIST_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_LIST_CHANGED: Final = "notifications/resources/list_changed"

# ---------------------------------------------------------------- listen (2026-07-28)
#: Listen opt-in flag → the notification it admits.
LISTEN_FLAGS: Final = {
    "toolsListChanged": TOOLS_LIST_CHANGED,
    "promptsListChanged": PROMPTS_LIST_CHANGED,
    "resourcesListChanged": RESOURCES_LIST_CHANGED,
}
#: The listen opt-in key for resource URIs (a list, not a flag).
LISTEN_RESOURCES: Final = "resourceSubscriptions"
