"""The stateless family: ``meta.*`` (what every 2026-07-28 request carries in its
``_meta``: the protocol version, the client's capabilities)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

import attrs
from hypothesis import strategies as st

from mcp_sansio._connection import META_CAPABILITIES, META_VERSION
from mcp_sansio._versions import ALL_VERSIONS
from mcp_sansio.testing._faults._ground import Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._wire import refusal

_NO_META: Final = "only 2026-07-28 has request _meta"


def _base(g: Ground) -> tuple[Any, dict[str, Any]]:
    """A valid request of the sender's (the client's) and its id."""
    method, params = g.some_request()
    rid = g.fresh_id()
    return rid, g.request(rid, method, copy.deepcopy(params))


_MISSING: Final = (
    "no _meta",
    "no params",
    "no version",
    "version 42",
    "a _meta that is not an object",
    "a protocolVersion of another type",
)


def missing_meta(g: Ground, draw: Draw) -> Fault | str:
    if not g.stateless:
        return _NO_META
    rid, base = _base(g)
    variant = draw(st.sampled_from(_MISSING), "no _meta")
    message = copy.deepcopy(base)
    params = message["params"]
    if variant == "no params":
        del message["params"]
    elif variant == "no _meta":
        del params["_meta"]
    elif variant == "no version":
        del params["_meta"][META_VERSION]
    elif variant == "version 42":
        params["_meta"][META_VERSION] = 42
    elif variant == "a _meta that is not an object":
        params["_meta"] = draw(st.sampled_from(["x", [], 1, None, True]), "x")
    else:
        params["_meta"][META_VERSION] = draw(st.sampled_from([20260728, None, [], {}, True]), None)
    due = refusal("meta.missing", (rid,))
    if variant in ("no params", "no _meta"):
        # Without _meta the request names no era: a server that speaks the initialize era
        # too may take it as that era's request before initialize, which it may refuse with
        # any error.
        due = attrs.evolve(due, codes=())
    return Fault(
        "meta.missing",
        message,
        due,
        f"{base['method']} with {variant}",
        repaired=base if g.repairs else None,
    )


_UNKNOWN_VERSIONS: Final = ("1999-01-01", "2099-12-31", "2026-07-29", "latest")


def unsupported_version(g: Ground, draw: Draw) -> Fault | str:
    if not g.stateless:
        return _NO_META
    spoken = g.receiver_versions()
    options = [*_UNKNOWN_VERSIONS]
    if spoken is not None:
        options += [v for v in ALL_VERSIONS if v not in spoken]
    version = draw(st.sampled_from(options), options[0])
    rid, base = _base(g)
    message = copy.deepcopy(base)
    message["params"]["_meta"][META_VERSION] = version

    def check(answer: Mapping[str, Any]) -> str | None:
        data = answer["error"].get("data")
        if not isinstance(data, dict) or not isinstance(data.get("supported"), list):
            return "the -32022 error lacks data.supported (a list of versions)"
        if data.get("requested") != version:
            return f"data.requested is {data.get('requested')!r}, not {version!r}"
        return None

    return Fault(
        "meta.unsupported-version",
        message,
        refusal("meta.unsupported-version", (rid,), check),
        f"a request for protocol version {version!r}",
        repaired=base if g.repairs else None,
        data={"requested": version},
        data_keys=("supported",),
    )


#: What replaces the client's capabilities in ``_meta`` (``"removed"``: nothing).
_CAPABILITIES: Final[list[tuple[str, Any]]] = [
    ("removed", None),
    ("replaced", "none"),
    ("replaced", []),
    ("replaced", "x"),
    ("replaced", 1),
    ("replaced", True),
    ("replaced", None),
]


def missing_capabilities(g: Ground, draw: Draw) -> Fault | str:
    if not g.stateless:
        return _NO_META
    rid, base = _base(g)
    how, value = draw(st.sampled_from(_CAPABILITIES), _CAPABILITIES[0])
    message = copy.deepcopy(base)
    meta = message["params"]["_meta"]
    del meta[META_CAPABILITIES]
    if how == "replaced":
        meta[META_CAPABILITIES] = value
    return Fault(
        "meta.capabilities-missing",
        message,
        refusal("meta.capabilities-missing", (rid,)),
        "a request without clientCapabilities in _meta",
        repaired=base if g.repairs else None,
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "meta.missing": missing_meta,
    "meta.unsupported-version": unsupported_version,
    "meta.capabilities-missing": missing_capabilities,
}
