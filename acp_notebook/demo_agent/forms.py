"""The demo's elicitation forms (restricted JSON Schema, by the ACP schema's `ElicitationSchema`) and
the agent's own check of an answer against them (pure, stdlib only).

The agent validates what a client accepted a second time, as the elicitation page asks: `problems`
lists what does not fit (empty: the answer is good). Patterns are ECMA-262 on the wire; the demo's are
written in the subset where Python's `re` means the same.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

PLATFORMS = ["linux", "macos", "windows"]
REVIEWERS = [
    {"const": "ada", "title": "Ada Lovelace", "description": "Reads every diff"},
    {"const": "grace", "title": "Grace Hopper"},
    {"const": "alan", "title": "Alan Turing", "description": "Only on Fridays"},
]
CHANNELS = [
    {"const": "stable", "title": "Stable", "description": "Everyone gets it"},
    {"const": "beta", "title": "Beta", "description": "Opt-in testers only"},
]

RELEASE = {
    "type": "object",
    "title": "Release settings",
    "description": "How the demo should prepare the next release of demo-app.",
    "properties": {
        "name": {
            "type": "string",
            "title": "Release name",
            "minLength": 3,
            "maxLength": 40,
            "default": "spring",
        },
        "version": {
            "type": "string",
            "title": "Version",
            "description": "Three numbers, like 1.2.3",
            "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$",
            "default": "0.2.0",
        },
        "contact": {"type": "string", "title": "Contact email", "format": "email"},
        "homepage": {"type": "string", "title": "Release notes page", "format": "uri"},
        "day": {"type": "string", "title": "Release day", "format": "date"},
        "announce": {"type": "string", "title": "Announce at", "format": "date-time"},
        "codename": {"type": "string", "title": "Code name", "format": "_demo-codename", "maxLength": 20},
        "strategy": {
            "type": "string",
            "title": "Strategy",
            "enum": ["conservative", "balanced", "aggressive"],
            "default": "balanced",
        },
        "channel": {"type": "string", "title": "Channel", "oneOf": CHANNELS, "default": "stable"},
        "coverage": {
            "type": "number",
            "title": "Minimum coverage (%)",
            "minimum": 0,
            "maximum": 100,
            "default": 80.5,
        },
        "retries": {"type": "integer", "title": "Retries", "minimum": 0, "maximum": 5, "default": 2},
        "notify": {"type": "boolean", "title": "Tell the team", "default": True},
        "platforms": {
            "type": "array",
            "title": "Platforms",
            "items": {"type": "string", "enum": PLATFORMS},
            "minItems": 1,
            "maxItems": 3,
            "default": ["linux"],
        },
        "reviewers": {
            "type": "array",
            "title": "Reviewers",
            "description": "At most two",
            "items": {"anyOf": REVIEWERS},
            "maxItems": 2,
        },
    },
    "required": ["name", "version", "strategy", "platforms"],
}

PROFILE = {
    "type": "object",
    "title": "Session profile",
    "properties": {
        "profile": {
            "type": "string",
            "title": "Profile",
            "oneOf": [
                {"const": "careful", "title": "Careful", "description": "Ask before every change"},
                {"const": "quick", "title": "Quick", "description": "Fewer questions"},
            ],
            "default": "careful",
        },
        "verbose": {"type": "boolean", "title": "Explain each step", "default": False},
    },
    "required": ["profile"],
}

RUNNER = {
    "type": "object",
    "properties": {
        "runner": {"type": "string", "title": "Test runner", "enum": ["pytest", "unittest", "nose"]}
    },
    "required": ["runner"],
}

TAG = {
    "type": "object",
    "properties": {"tag": {"type": "boolean", "title": "Tag it", "default": True}},
    "required": ["tag"],
}

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
INT64 = (-(2**63), 2**63 - 1)


def release_form(version: int) -> dict:
    """The release form for a protocol version: v1's `StringFormat` is closed (the four known
    formats), so a v1 form leaves the code name's custom format out."""
    if version >= 2:
        return RELEASE
    props = dict(RELEASE["properties"])
    props["codename"] = {k: v for k, v in props["codename"].items() if k != "format"}
    return {**RELEASE, "properties": props}


def problems(schema: dict, content: Any) -> list[str]:
    """What in an accepted `content` does not fit `schema` (empty: it fits)."""
    if not isinstance(content, dict):
        return ["the answer has no content object"]
    props = schema.get("properties", {})
    found = [f"{key}: required" for key in schema.get("required", []) if key not in content]
    found += [f"{key}: not in the form" for key in content if key not in props]
    for key, value in content.items():
        if key in props:
            found += [f"{key}: {p}" for p in field_problems(props[key], value)]
    return found


def field_problems(prop: dict, value: Any) -> list[str]:
    """What is wrong with one field's value."""
    kind = prop.get("type")
    if kind == "string":
        return _string(prop, value)
    if kind in ("number", "integer"):
        return _number(prop, value)
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["not a boolean"]
    if kind == "array":
        return _array(prop, value)
    return []  # a type the demo does not ask for: not its business


def _choices(prop: dict) -> list[str] | None:
    """The values a single-select field allows (None: free text)."""
    if "enum" in prop:
        return list(prop["enum"])
    return [o["const"] for o in prop["oneOf"]] if "oneOf" in prop else None


def _string(prop: dict, value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["not a string"]
    choices = _choices(prop)
    if choices is not None:
        return [] if value in choices else [f"{value!r} is not one of {choices}"]
    found = []
    if len(value) < prop.get("minLength", 0) or len(value) > prop.get("maxLength", len(value)):
        found.append(f"length {len(value)} is out of bounds")
    if "pattern" in prop and not re.search(prop["pattern"], value):
        found.append(f"does not match {prop['pattern']}")
    if not _formatted(prop.get("format"), value):
        found.append(f"not a valid {prop['format']}")
    return found


def _formatted(fmt: str | None, value: str) -> bool:
    """Whether `value` fits a known `format` (an unknown format is only a hint)."""
    try:
        if fmt == "date":
            date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.fromisoformat(value.replace("Z", "+00:00"))
            return "T" in value.upper()
    except ValueError:
        return False
    if fmt == "email":
        return bool(EMAIL.match(value))
    return bool(URI.match(value)) if fmt == "uri" else True


def _number(prop: dict, value: Any) -> list[str]:
    integer = prop["type"] == "integer"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return ["not an integer" if integer else "not a number"]
    low, high = prop.get("minimum"), prop.get("maximum")
    if integer and not INT64[0] <= value <= INT64[1]:
        return ["outside int64"]
    if (low is not None and value < low) or (high is not None and value > high):
        return [f"{value} is outside [{low}, {high}]"]
    return []


def _array(prop: dict, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ["not a list of strings"]
    items = prop.get("items", {})
    allowed = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
    found = [f"{v!r} is not one of {allowed}" for v in value if v not in allowed]
    if len(set(value)) != len(value):
        found.append("a choice is repeated")
    if len(value) < prop.get("minItems", 0) or len(value) > prop.get("maxItems", len(value)):
        found.append(f"{len(value)} choices is out of bounds")
    return found


def titles(options: list[dict], chosen: list[str]) -> list[str]:
    """The titles of the chosen titled options, in the form's order."""
    return [o["title"] for o in options if o["const"] in chosen]
