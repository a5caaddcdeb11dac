"""Elicitation forms: the shared case table through the Python validator; fields, content, patterns, URLs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from acp_notebook.protocol import ecma_regex
from acp_notebook.protocol.elicitation_schema import KINDS, content, defaults, fields, read, validate
from acp_notebook.protocol.url_view import redacted, url_view

CASES_FILE = Path(__file__).parent / "fixtures" / "elicitation_cases.json"
TABLE = json.loads(CASES_FILE.read_text())
CASES = TABLE["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_table(case: dict) -> None:
    errors = validate(case["schema"], case["values"])
    assert sorted(errors) == case["errors"], errors
    assert (not errors) == case["valid"]


def test_the_table_is_documented_and_covers_every_kind_and_constraint() -> None:
    assert len(CASES) >= 40 and "_doc" in TABLE
    assert len({c["name"] for c in CASES}) == len(CASES)
    kinds = {f.kind for c in CASES for f in fields(c["schema"])}
    assert kinds == set(KINDS)
    words = json.dumps([c["schema"] for c in CASES])
    constraints = "minLength maxLength pattern email uri date-time minimum maximum minItems maxItems"
    for constraint in [*constraints.split(), "oneOf", "anyOf", "enum", "required", "default", '"date"']:
        assert constraint in words, constraint
    assert any(c["valid"] for c in CASES) and any(not c["valid"] for c in CASES)


def test_fields_describe_what_the_view_renders() -> None:
    schema = CASES[-3]["schema"]  # the whole form
    by_name = {f.name: f for f in fields(schema)}
    assert list(by_name) == ["name", "email", "level", "years", "rate", "remote", "langs"]
    assert by_name["name"].title == "Name" and by_name["name"].required and by_name["name"].min_length == 1
    assert by_name["email"].format == "email" and by_name["email"].format_checked
    assert by_name["level"].kind == "single_select" and [o.value for o in by_name["level"].options] == [
        "junior",
        "senior",
    ]
    assert (by_name["years"].kind, by_name["years"].minimum, by_name["years"].maximum) == ("integer", 0, 60)
    assert by_name["remote"].default is True and defaults(schema) == {"remote": True}
    langs = by_name["langs"]
    assert langs.kind == "multi_select" and langs.min_items == 1
    assert [(o.value, o.title) for o in langs.options] == [
        ("py", "Python"),
        ("js", "JavaScript"),
        ("rs", "Rust"),
    ]
    assert json.loads(json.dumps(langs.to_dict()))["options"][0] == {
        "value": "py",
        "title": "Python",
        "description": None,
    }


def test_unknown_type_and_format_are_kept_not_rendered_as_known() -> None:
    raw = {"type": "_color", "palette": "web"}
    (unsupported,) = fields({"type": "object", "properties": {"x": raw}})
    assert unsupported.kind == "unsupported" and unsupported.raw == raw
    (hint,) = fields({"type": "object", "properties": {"c": {"type": "string", "format": "color"}}})
    assert hint.kind == "string" and hint.format == "color" and not hint.format_checked


def test_malformed_constraints_are_ignored_and_named() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": "3", "default": 4},
            "n": {"type": "integer", "maximum": 1.5},
        },
        "required": ["s", "ghost"],
    }
    found, problems = read(schema)
    assert found[0].min_length is None and found[0].default is None and found[1].maximum is None
    assert any("minLength" in p for p in problems) and any("ghost" in p for p in problems)
    assert any("maximum" in p for p in problems)
    assert validate(schema, {"s": "x"}) == {}
    assert read("nope") == ([], ["requestedSchema is not an object"])


def test_content_is_exactly_the_fields_given_integers_as_integers() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "s": {"type": "string"}},
    }
    sent = content(schema, {"n": 3.0, "x": 2.0, "s": None})
    assert (
        sent == {"n": 3, "x": 2.0} and isinstance(sent["n"], int) and json.dumps(sent) == '{"n": 3, "x": 2.0}'
    )


def test_a_pattern_that_does_not_compile_is_named_not_enforced() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a{$"}}}
    (f,) = fields(schema)
    assert f.pattern_problem is not None and "not checked" in f.pattern_problem
    assert validate(schema, {"s": "b"}) == {}


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"^[\w-]+$", "a_b-c9", True),
        (r"^[^\S]+$", " \u3000", True),
        (r"^[\d]+$", "\u0663", False),
        (r"^[^]$", "\n", True),
        (r"^[]$", "", False),
        (r"\bcat\b", "a cat.", True),
        (r"\Bcat", "concat", True),
        (r"^\uD83D\uDE00$", "\U0001f600", True),
        (r"^\cJ$", "\n", True),
        (r"^a\/b$", "a/b", True),
        (r"^[a&&b]+$", "&&", True),
        (r"^\x41\0$", "A\x00", True),
        (r"^(?<=a)b", "b", False),
        (r"^a{2,}$", "aaa", True),
        (r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$", "x.y@ex.org", True),
        (r"^[\-\]]+$", "-]", True),
        (r"^\f\v\t$", "\f\v\t", True),
        (r"^(a)\1$", "aa", True),
        (r"^\p{L}+$", "h\u00e9llo", True),
        (r"^\p{Lu}$", "a", False),
        (r"^[\p{Script=Greek}\d]+$", "\u03b1\u03b21", True),
        (r"^\P{L}$", "1", True),
        (r"(?<=a+)b", "aab", True),
    ],
)
def test_ecma_patterns_match_as_in_javascript(pattern: str, text: str, matches: bool) -> None:
    assert bool(ecma_regex.compile(pattern).search(text)) is matches


@pytest.mark.parametrize(
    "pattern",
    ["(", r"\p", r"\p{", "a\\", r"\q", r"\A", r"\@", r"a\-b", r"\01", "(?i)a", "(?P<n>a)", "a{", "a}",
     r"[\B]", r"\k", r"\x4", r"\c1"],
)  # fmt: skip
def test_patterns_python_cannot_express_raise(pattern: str) -> None:
    with pytest.raises(ecma_regex.UnsupportedPattern):
        ecma_regex.compile(pattern)


def test_url_view_highlights_the_registrable_domain_and_warns() -> None:
    view = url_view("https://login.example.co.uk/connect?code=secret#x")
    assert (view.host, view.registrable_domain, view.https, view.openable, view.warnings) == (
        "login.example.co.uk",
        "example.co.uk",
        True,
        True,
        (),
    )
    puny = url_view("http://xn--80ak6aa92e.com/")
    assert puny.punycode and not puny.https and len(puny.warnings) == 2
    unicode_host = url_view("https://пример.рф/")
    assert unicode_host.punycode and unicode_host.ascii_host == "xn--e1afmkfd.xn--p1ai"
    assert unicode_host.registrable_domain == "xn--e1afmkfd.xn--p1ai"
    trick = url_view("https://bank.example@evil.example/")
    assert trick.host == "evil.example" and trick.userinfo and any("@" in w for w in trick.warnings)
    assert not url_view("javascript:alert(1)").openable and not url_view("file:///etc/passwd").openable
    assert url_view("https://127.0.0.1:8443/").registrable_domain is None


def test_redacted_keeps_scheme_host_path_only() -> None:
    assert redacted("https://user:pw@Example.org:8443/a/b?token=1#frag") == "https://example.org:8443/a/b"
    assert redacted("https://[::1]/x?y") == "https://[::1]/x"
    assert redacted("mailto:ada@example.org") == "mailto:"
    assert redacted("no scheme") == "<not a URL>" and redacted(None) == "<not a URL>"
    assert not re.search(r"token|pw|frag", redacted("https://h/p?token=1&pw=2#frag"))
