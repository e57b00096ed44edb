"""The rule table cites the text: every rule names the sentences it rests on, its level is
the keyword those sentences use, its code is one the text names, and the docs page of rules
is generated from it (``docs/make_rules.py``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._rule_model import JSONRPC, MCP, Citation, Rule, keyword_level
from mcp_sansio.testing._rules import PROBE_RULES, RULES

DOCS = Path(__file__).parent.parent / "docs"
ALL = [*RULES.values(), *PROBE_RULES.values()]
NAMES = [r.name for r in ALL]

#: The keyword of each level, as a whole word ("MUST" is not "MUST NOT").
KEYWORD = {
    "MUST": r"\bMUST\b(?! NOT)",
    "MUST NOT": r"\bMUST NOT\b",
    "SHOULD": r"\bSHOULD\b(?! NOT)",
    "SHOULD NOT": r"\bSHOULD NOT\b",
}

#: Versions a rule applies to where no sentence with the rule's keyword exists, and why.
KEYWORD_GAPS = {
    ("capability.undeclared-server-capability", "2024-11-05"): (
        "2024-11-05 has no completion utility, the one place the text says SHOULD -32601 for "
        "an undeclared server capability; there the rule rests on JSON-RPC's -32601 alone"
    ),
}

#: Citations of versions the rule does not apply to: one version's text about others.
ABOUT_OTHERS = {
    ("envelope.batch-not-allowed", "This also permits backwards compatibility"): (
        "2025-03-26's lifecycle says that the versions before it do not support batches"
    ),
}

#: The names of the codes the rules name, as the text writes them.
CODE_NAMES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32022: "UnsupportedProtocolVersion",
}


def _make_rules() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_rules", DOCS / "make_rules.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids(rules: list[Rule]) -> list[str]:
    return [r.name for r in rules]


# ---------------------------------------------------------------------------- names


def test_names_are_unique_dotted_and_lower_case() -> None:
    assert len(NAMES) == len(set(NAMES))
    assert not set(RULES) & set(PROBE_RULES)
    for name in NAMES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*\.[a-z]+(-[a-z]+)*", name), name


def test_the_initialize_window_rules() -> None:
    """The window after the initialize result is open to the client's requests; only the
    server waits for notifications/initialized."""
    assert "lifecycle.request-before-initialized" not in RULES
    window = RULES["lifecycle.request-in-initialize-window"]
    assert (window.reply, window.code, window.binds, window.roles) == (
        "result",
        None,
        "receiver",
        frozenset({Role.SERVER}),
    )
    server = RULES["lifecycle.server-request-before-initialized"]
    assert (server.level, server.binds, server.reply, server.code, server.roles) == (
        "SHOULD NOT",
        "sender",
        "error",
        None,
        frozenset({Role.CLIENT}),
    )
    assert server.severity == "note"
    assert server.sent_severity("2025-11-25") == "warning"
    assert RULES["lifecycle.request-before-initialize"].code is None


# ---------------------------------------------------------------------------- citations


@pytest.mark.parametrize("r", ALL, ids=_ids(ALL))
def test_every_rule_of_the_text_cites_it(r: Rule) -> None:
    if r.level == "ours":
        assert not r.citations, "a rule of ours rests on no sentence: the text is silent"
    else:
        assert r.citations, f"{r.name} ({r.level}) cites nothing"


@pytest.mark.parametrize(
    "r", [r for r in ALL if r.level in KEYWORD], ids=_ids([r for r in ALL if r.level in KEYWORD])
)
def test_the_level_is_the_keyword_of_a_sentence_cited(r: Rule) -> None:
    """Each version the rule applies to has a cited sentence with the rule's keyword."""
    pattern = KEYWORD[r.level]
    assert any(re.search(pattern, c.text) for c in r.citations), (r.name, r.level)
    for version in r.versions:
        if (r.name, version) in KEYWORD_GAPS:
            continue
        assert any(c.covers(version) and re.search(pattern, c.text) for c in r.citations), (
            f"{r.name} is {r.level}, but no sentence cited for {version} says it"
        )


def test_the_keyword_gaps_are_real() -> None:
    for (name, version), _why in KEYWORD_GAPS.items():
        r = RULES[name]
        assert version in r.versions
        pattern = KEYWORD[r.level]
        assert not any(c.covers(version) and re.search(pattern, c.text) for c in r.citations)


def _all_citations() -> list[tuple[Rule, Citation]]:
    return [(r, c) for r in ALL for c in (*r.citations, *r.sent_citations)]


@pytest.mark.parametrize(("r", "c"), _all_citations(), ids=lambda v: getattr(v, "name", ""))
def test_citations_are_well_formed(r: Rule, c: Citation) -> None:
    assert c.document in (MCP, JSONRPC)
    if c.document == JSONRPC:
        assert c.versions == (), "JSON-RPC 2.0 has no MCP versions"
        assert re.match(r"\d(\.\d)? \w", c.section), c.section
    else:
        assert c.versions, "an MCP sentence names the versions whose text has it"
        assert set(c.versions) <= set(VERSIONS), c.versions
        assert list(c.versions) == sorted(set(c.versions), reverse=True), "newest first, once"
    assert c.section
    assert c.text
    for text in (c.section, c.text):
        assert text == " ".join(text.split()), "whitespace is normalized"
        assert "**" not in text, "bold is removed"
        assert "](" not in text, "links are reduced to their text"
    assert c.text.replace(" … ", "").count("…") == 0, "an ellipsis stands between parts: ' … '"


@pytest.mark.parametrize(("r", "c"), _all_citations(), ids=lambda v: getattr(v, "name", ""))
def test_citations_are_of_the_versions_the_rule_applies_to(r: Rule, c: Citation) -> None:
    if c.document != MCP:
        return
    if set(c.versions) <= set(r.versions):
        return
    about = [
        why
        for (name, start), why in ABOUT_OTHERS.items()
        if name == r.name and c.text.startswith(start)
    ]
    assert about, f"{r.name} applies to {r.versions}, the sentence is of {c.versions}"
    assert not set(c.versions) & set(r.versions), "then of other versions only"


def test_about_others_are_used() -> None:
    for name, start in ABOUT_OTHERS:
        assert any(c.text.startswith(start) for c in RULES[name].citations), (name, start)


# ---------------------------------------------------------------------------- what is due


@pytest.mark.parametrize("r", ALL, ids=_ids(ALL))
def test_a_code_is_one_the_text_names(r: Rule) -> None:
    if r.reply != "error":
        assert r.code is None, "only an error reply has a code"
        return
    if r.code is None or r.level == "ours":
        return  # any error, or the code of our Connection where the text is silent
    names = (str(r.code), CODE_NAMES.get(r.code, str(r.code)))
    assert any(name in c.text for c in r.citations for name in names), (
        f"{r.name} wants {r.code}, which no sentence cited names"
    )


@pytest.mark.parametrize("r", ALL, ids=_ids(ALL))
def test_the_rule_says_what_the_probe_does(r: Rule) -> None:
    assert r.summary
    assert r.probed
    assert r.summary == " ".join(r.summary.split())
    assert r.probed == " ".join(r.probed.split())


# ---------------------------------------------------------------------------- severity


@pytest.mark.parametrize("r", ALL, ids=_ids(ALL))
def test_severity_follows_level_and_binds(r: Rule) -> None:
    if r.level == "ours" or r.binds == "sender":
        expected = "note"
    elif r.level in ("MUST", "MUST NOT"):
        expected = "failure"
    else:
        expected = "warning"
    assert r.severity == expected


@pytest.mark.parametrize("r", ALL, ids=_ids(ALL))
def test_sent_severity_follows_the_senders_sentences(r: Rule) -> None:
    if r.binds == "sender":
        assert not r.sent_citations, "the rule's own sentences state the sender's duty"
    methods = [None, *sorted({m for c in r.sent_citations for m in c.cases})]
    for version in r.versions:
        for method in methods:
            level = r.sent_level(version, method)
            if r.level == "ours":
                assert level == "ours"
            elif r.binds == "sender":
                assert level == r.level
            else:
                levels = [
                    keyword_level(c.text)
                    for c in r.sent_citations
                    if c.covers(version) and (not c.cases or method in c.cases)
                ]
                strong = [lv for lv in levels if lv in ("MUST", "MUST NOT")]
                weak = [lv for lv in levels if lv in ("SHOULD", "SHOULD NOT")]
                assert level == (strong or weak or ["implied"])[0]
            expected = {"MUST": "failure", "MUST NOT": "failure", "ours": "note"}.get(
                level, "warning"
            )
            assert r.sent_severity(version, method) == expected


def test_sending_an_undeclared_capability_is_a_must_from_2025_06_18() -> None:
    r = RULES["capability.undeclared-client-capability"]
    assert [r.sent_level(v) for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")] == [
        "SHOULD",
        "SHOULD",
        "MUST",
        "MUST",
    ]
    assert r.sent_severity("2025-03-26") == "warning"
    assert r.sent_severity("2025-06-18") == "failure"


def test_an_undeclared_log_message_is_a_must_in_every_version() -> None:
    """The logging page: "Servers that emit log message notifications MUST declare the
    logging capability": a MUST where the negotiated-capabilities sentence is a SHOULD
    (2024-11-05, 2025-03-26) or absent (2026-07-28); any other undeclared notification
    keeps that sentence's level."""
    r = RULES["capability.undeclared-notification"]
    for version in r.versions:
        assert r.sent_level(version, "notifications/message") == "MUST", version
    assert r.sent_level("2024-11-05", "notifications/tools/list_changed") == "SHOULD"
    assert r.sent_level("2025-03-26", "notifications/tools/list_changed") == "SHOULD"
    assert r.sent_level("2025-06-18", "notifications/tools/list_changed") == "MUST"
    (logging,) = [c for c in r.sent_citations if c.cases]
    assert logging.versions == tuple(sorted(r.versions, reverse=True))
    assert logging.section == "Server > Utilities > Logging > Capabilities"


def test_params_invalid_levels_per_method() -> None:
    """SHOULD only where a sentence says it: the log level; a prompt's missing arguments
    (a case the probe never makes); every other method implied."""
    r = RULES["params.invalid"]
    assert r.level == "SHOULD"
    for version in r.versions:
        if "logging/setLevel" in VERSIONS[version].methods:
            assert r.level_for(version, "logging/setLevel") == "SHOULD"
        for method in ("tools/call", "resources/subscribe", "prompts/get", "subscriptions/listen"):
            assert r.level_for(version, method) == "implied", (version, method)
            assert r.severity_for(version, method) == "warning"
    assert r.level_for("2025-11-25", None) == "SHOULD"


def test_a_second_answer_breaks_a_sentence_cited() -> None:
    """A second answer to one request has the request's id: the id sentences do not decide
    it; JSON-RPC's one Response per call and cancellation's race do."""
    r = RULES["response.unknown-id"]
    texts = [c.text for c in r.sent_citations]
    assert any("The Response is expressed as a single JSON Object" in t for t in texts)
    for version in r.versions:
        race = [c for c in r.sent_citations if c.covers(version) and "race conditions" in c.text]
        assert race, version
        assert keyword_level(race[0].text) == "MUST", version
        assert r.sent_level(version) == "MUST"


def test_server_discover_is_a_must_of_2026_07_28() -> None:
    r = PROBE_RULES["stateless.discover"]
    assert (r.level, r.reply, r.binds, r.code) == ("MUST", "result", "receiver", None)
    assert r.cases == frozenset({("2026-07-28", Role.SERVER)})
    assert any(c.text.endswith("Servers MUST implement it.") for c in r.citations)


def test_a_reused_id_is_the_senders_failure_and_no_charge_to_the_receiver() -> None:
    r = RULES["ids.duplicate-request-id"]
    assert (r.level, r.binds, r.code) == ("MUST NOT", "sender", None)
    assert r.severity == "note"
    assert all(r.sent_severity(v) == "failure" for v in r.versions)


def test_keyword_level() -> None:
    assert keyword_level("A response MUST NOT set both.") == "MUST NOT"
    assert keyword_level("Either MUST be set. A response MUST NOT set both.") == "MUST"
    assert keyword_level("The client SHOULD NOT send requests") == "SHOULD NOT"
    assert keyword_level("Clients SHOULD return errors; they MUST NOT crash") == "MUST NOT"
    assert keyword_level("This should only be sent if") == "implied"
    assert keyword_level("MUSTARD") == "implied"


# ---------------------------------------------------------------------------- the docs page


def test_the_docs_page_is_generated_from_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_rules = _make_rules()
    text = make_rules.render()
    for r in ALL:
        assert f"``{r.name}``\n   **{r.level}**" in text, r.name
        assert make_rules.due(r) in text
    for r, c in _all_citations():
        assert make_rules.quote(c.text) in text, (r.name, c.text)
    out = tmp_path / "_generated" / "rules.rst"
    monkeypatch.setattr(make_rules, "OUT", out)
    make_rules.main()
    assert out.read_text() == text
    generated = DOCS / "_generated" / "rules.rst"
    table = Path(__file__).parent.parent / "src" / "mcp_sansio" / "testing" / "_rules.py"
    if generated.exists() and generated.stat().st_mtime >= table.stat().st_mtime:
        # written by a docs build since the table last changed
        assert set(re.findall(r"^``([a-z.-]+)``$", generated.read_text(), re.M)) == set(NAMES)


def test_the_probe_page_includes_it() -> None:
    page = (DOCS / "probe.rst").read_text()
    rules = page[page.index("\nThe rules\n") : page.index("\nFindings\n")]
    assert ".. include:: _generated/rules.rst" in rules
    assert "list-table" not in rules, "the hand-written table is gone"
    assert "make_rules.main()" in (DOCS / "conf.py").read_text()


def test_quotes_are_plain_text_in_rst() -> None:
    make_rules = _make_rules()
    assert make_rules.quote("a _request_ | `x`") == r"a \_request\_ \| ``x``"
    assert make_rules.due(RULES["lifecycle.request-before-initialize"]).startswith("an error")
    assert make_rules.due(RULES["envelope.parse-error"]) == "-32700 (Parse error)"
