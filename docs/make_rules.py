"""Write ``docs/_generated/rules.rst`` from the rule table in ``mcp_sansio.testing._rules``.

Run by ``conf.py`` at every docs build, so the page can never drift from the code: for
every rule, its level, whose duty it is and what a finding counts as, what is due, where it
applies, what the probe does, and the sentences it rests on, quoted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from mcp_sansio.testing._rules import PROBE_RULES, RULES, Citation, Rule

OUT = Path(__file__).parent / "_generated" / "rules.rst"

#: The names of the codes the rules name (JSON-RPC 2.0, 5.1; MCP 2026-07-28, Error Codes).
CODE_NAMES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
    -32022: "UnsupportedProtocolVersion",
}

_GROUPS = {
    "envelope": "Envelope and batches",
    "lifecycle": "Lifecycle",
    "ids": "Ids",
    "response": "Responses",
    "capability": "Capabilities",
    "method": "Methods",
    "params": "Params",
    "progress": "Progress",
    "cancel": "Cancellation",
    "meta": "2026-07-28: ``_meta``",
    "stateless": "2026-07-28: statelessness",
    "input-required": "2026-07-28: multi round-trip requests",
    "subscriptions": "2026-07-28: subscriptions",
    "resources": "Resources",
    "peer": "Anything else",
}


def _escape(text: str) -> str:
    # Markup characters, and what smartquotes would turn into curly quotes and dashes
    # (Sphinx leaves backslash-escaped characters alone): quotes stay as the text has them.
    text = re.sub(r"([\\*_|`\"'])", r"\\\1", text)
    return text.replace("--", "\\-\\-").replace("...", "\\.\\.\\.")


def quote(text: str) -> str:
    """A sentence of the specification as inline reStructuredText: its code spans as
    literals, everything else as plain text (no markup of its own is interpreted)."""
    out = []
    for i, part in enumerate(re.split(r"`([^`]+)`", text)):
        if i % 2:
            out.append(f"``{part}``" if "``" not in part else _escape(part))
        else:
            out.append(_escape(part))
    return "".join(out)


def due(r: Rule) -> str:
    """What the receiver must send back, in words."""
    if r.reply == "error":
        if r.code is None:
            return "an error (any code: the text names none)"
        return f"{r.code} ({CODE_NAMES.get(r.code, 'error')})"
    return {
        "none": "nothing (no reply)",
        "result": "a result",
        "answer": "one answer (a result or an error)",
        "close": "the session closed",
    }[r.reply]


def _by_roles(r: Rule) -> str:
    groups: dict[tuple[str, ...], list[str]] = {}
    for version in r.versions:
        roles = tuple(sorted(role.value for v, role in r.cases if v == version))
        groups.setdefault(roles, []).append(version)
    return "; ".join(
        f"{', '.join(vs)} (receiver: {' or '.join(roles)})" for roles, vs in groups.items()
    )


def _citation(c: Citation) -> str:
    where = c.document if not c.versions else f"{c.document} {', '.join(c.versions)}"
    return f"{where}, {quote(c.section)}: “{quote(c.text)}”"


def _citations(cs: Iterable[Citation], indent: str) -> list[str]:
    return [f"{indent}- {_citation(c)}" for c in cs]


def _binds(r: Rule) -> str:
    if r.level == "ours":
        return "the text is silent: what our Connection does"
    return "the receiver's duty" if r.binds == "receiver" else "the sender's duty"


def _sent(r: Rule) -> list[str]:
    """How a finding counts against the side that sent the offending message."""
    if r.level == "ours" or (r.binds == "receiver" and not r.sent_citations):
        return []
    groups: dict[str, list[str]] = {}
    for version in r.versions:
        level = r.sent_level(version)
        groups.setdefault(f"{level} ({r.sent_severity(version)})", []).append(version)
    text = "; ".join(f"{label} in {', '.join(vs)}" for label, vs in groups.items())
    for method in sorted({m for c in r.sent_citations for m in c.cases}):
        versions = [v for v in r.versions if r.sent_level(v, method) != r.sent_level(v)]
        if versions:
            level = r.sent_level(versions[0], method)
            text += f"; ``{method}``: {level} in {', '.join(versions)}"
    lines = [f"   :Sending it: {text}"]
    if r.binds == "receiver":
        lines += ["", *_citations(r.sent_citations, "      ")]
    return lines


def _entry(r: Rule) -> list[str]:
    lines = [
        f"``{r.name}``",
        f"   **{r.level}** · {_binds(r)} · a finding is a *{r.severity}* · due: {due(r)}",
        "",
        f"   {r.summary}",
        "",
        f"   :Applies to: {_by_roles(r)}",
        f"   :The probe: {r.probed}",
    ]
    scoped = sorted({m for c in r.citations for m in c.cases})
    if scoped:
        said = ", ".join(
            f"{r.level_for(v, m)} for ``{m}`` ({', '.join(vs)})"
            for m in scoped
            for vs in [
                [v for v in r.versions if any(m in c.cases and c.covers(v) for c in r.citations)]
            ]
            for v in vs[:1]
        )
        lines += [
            f"   :Level by method: {said}; implied for any other (no sentence about it has a"
            " keyword): a finding's level is its method's"
        ]
    if r.citations:
        lines += ["   :Rests on:", "", *_citations(r.citations, "      ")]
    else:
        lines += ["   :Rests on: nothing: the text is silent"]
    sent = _sent(r)
    if sent:
        lines += ["", *sent]
    return [*lines, ""]


def render() -> str:
    out = [
        ".. This file is generated by docs/make_rules.py from mcp_sansio.testing._rules. "
        "Do not edit.",
        "",
    ]
    rules = [*RULES.values(), *PROBE_RULES.values()]
    groups: dict[str, list[Rule]] = {}
    for r in rules:
        groups.setdefault(r.name.split(".")[0], []).append(r)
    for prefix, members in groups.items():
        title = _GROUPS.get(prefix, prefix)
        out += [title, "~" * len(title), ""]
        for r in members:
            out += _entry(r)
    return "\n".join(out)


def main() -> None:
    OUT.parent.mkdir(exist_ok=True)
    text = render()
    if not OUT.exists() or OUT.read_text() != text:
        OUT.write_text(text)


if __name__ == "__main__":
    main()
