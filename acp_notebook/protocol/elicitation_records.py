"""What records keep of an elicitation: its URL as ``scheme://host/path``, never a secret's value.

Traces, saved snapshots, exports and the X-ray keep a URL elicitation's URL only as
``url_view.redacted`` gives it (no query, fragment or user info: the agent may have put a one-time
code there). ``redact_create`` applies that to an ``elicitation/create`` request — its ``url``, and
the same URL wherever else its params quote it (the ``message``) — and ``scrub`` to any JSON-like
value (a view's saved entries) given the full URLs to hide: a string holding one gets its redacted
form, a string holding only its query, fragment or user info loses that part.

The values a user typed into a form are the user's data: records keep them (the decision log does
too), except a field that looks like a secret (``looks_secret``: its name or title names a
password, an API key, an access token, a private key, a recovery code, a card number ...), which
the spec forbids forms to ask for: its value is ``"<redacted>"`` in traces and exports. The
``Redactor`` does both to a connection's entries, in order: it notes the secret-looking fields of
each form it sees asked, and blanks them in the client's answer; once a URL was asked, a later
message quoting it (the agent's text repeating it) is scrubbed too. It copies what it changes: the
client handles the original.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .trace import REDACTED, id_key
from .url_view import redacted

CREATE, COMPLETE = "elicitation/create", "elicitation/complete"
OPEN_KEPT = 1_000  # forms awaiting an answer remembered for their secret fields
URLS_KEPT = 16  # the latest elicitation URLs whose later quotes are scrubbed
# words (of a field's name or title) that name a credential; pairs are read as one word
SECRET_WORDS = frozenset(
    {"password", "passwd", "passphrase", "passcode", "secret", "apikey", "token", "credential",
     "credentials", "privatekey", "recoverycode", "cardnumber", "cvv", "cvc", "pin", "otp", "totp",
     "mfacode", "seedphrase", "mnemonic", "passwords", "secrets", "apikeys", "recoverycodes"}
)  # fmt: skip
_PAIRS = ("api keys?", "private key", "recovery codes?", "card number", "mfa code", "seed phrase")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def words(text: str) -> list[str]:
    """``text`` split into lower-case words (``apiKey``, ``api_key``, ``API key`` alike)."""
    found = " ".join(w.lower() for w in _WORD.findall(text))
    for pair in _PAIRS:
        found = re.sub(rf"\b({pair})\b", lambda m: m.group(1).replace(" ", ""), found)
    return found.split()


def looks_secret(name: str, prop: Any = None, titles: bool = True) -> bool:
    """Whether a form field (its name, its schema's ``title`` unless not ``titles``, a ``password``
    format) asks for a secret."""
    title = prop.get("title") if isinstance(prop, dict) and titles else None
    texts = [name, title if isinstance(title, str) else ""]
    fmt = prop.get("format") if isinstance(prop, dict) else None
    return fmt == "password" or any(w in SECRET_WORDS for t in texts for w in words(t))


def secret_fields(schema: Any, titles: bool = True) -> list[str]:
    """The names of a ``requestedSchema``'s fields that look like secrets (``titles``: read too)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    return [n for n, prop in props.items() if isinstance(n, str) and looks_secret(n, prop, titles)]


def secret_parts(url: str) -> list[str]:
    """The parts of ``url`` a record must not keep: its query, fragment and user info."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0]
    return [p for p in (parts.query, parts.fragment, userinfo) if len(p) >= 3]


def kept_values(elicitation: Any) -> dict[str, Any] | None:
    """The values an accepted form sent, as a log or a table keeps them: a secret-looking field's
    value as ``REDACTED`` (the agent got it; nothing we keep does)."""
    values = elicitation.values
    if not isinstance(values, dict):
        return None
    secret = set(secret_fields(elicitation.schema))
    return {k: REDACTED if k in secret else copy.deepcopy(v) for k, v in values.items()}


def scrub(value: Any, urls: Iterable[str], secrets: Iterable[Any] = ()) -> Any:
    """A copy of ``value`` (JSON-like) where no full URL of ``urls`` nor its secret parts remain,
    nor any of the ``secrets`` (values typed into a secret-looking field); ``value`` itself when
    there is nothing to hide."""
    hidden = [(url, redacted(url), secret_parts(url)) for url in urls if isinstance(url, str) and url]
    hidden = [h for h in hidden if h[0] != h[1]]
    hidden += [(s, REDACTED, []) for s in secrets if isinstance(s, str) and s and s != REDACTED]
    return _scrub(value, hidden) if hidden else value


def scrub_for(value: Any, elicitations: Iterable[Any]) -> Any:
    """``value`` as a record keeps it, given the elicitations it may quote (``Elicitation``s): no
    URL but ``scheme://host/path``, no value of a secret-looking field."""
    urls, secrets = [], []
    for e in elicitations:
        if e.url:
            urls.append(e.url)
        if isinstance(e.values, dict):
            secrets += [e.values.get(name) for name in secret_fields(e.schema)]
    return scrub(value, urls, secrets)


def _scrub(value: Any, hidden: list[tuple[str, str, list[str]]]) -> Any:
    if isinstance(value, str):
        for url, shown, parts in hidden:
            value = value.replace(url, shown)
            for part in parts:
                value = value.replace(part, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, hidden) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v, hidden) for v in value]
    return value


def redact_create(message: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An ``elicitation/create`` request with its URL as ``scheme://host/path`` everywhere in its
    params, and the paths replaced (``params.url``, ``params.message`` ...)."""
    params = message.get("params")
    url = params.get("url") if isinstance(params, dict) else None
    if not isinstance(params, dict) or not isinstance(url, str) or redacted(url) == url:
        return message, []
    clean = scrub(params, [url])
    paths = [f"params.{k}" for k in params if clean.get(k) != params[k]]
    return {**message, "params": clean}, paths


def redact_answer(message: dict[str, Any], secret: Iterable[str]) -> tuple[dict[str, Any], list[str]]:
    """The client's answer to a form with the values of its ``secret`` fields blanked."""
    result = message.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    names = [n for n in secret if isinstance(content, dict) and content.get(n, REDACTED) != REDACTED]
    if not names:
        return message, []
    message = copy.deepcopy(message)
    for name in names:
        message["result"]["content"][name] = REDACTED
    return message, [f"result.content.{name}" for name in names]


class Redactor:
    """Redacts the elicitations of one connection's entries, in order (see the module docstring)."""

    def __init__(self) -> None:
        self._forms: dict[Any, list[str]] = {}  # the agent's form request id -> its secret fields
        self._urls: list[str] = []  # the latest URLs asked: a later message quoting one is scrubbed

    def entry(self, entry: dict[str, Any]) -> None:
        """Redact one trace entry in place (its ``message`` replaced by a copy when changed; the
        paths added to ``redacted``)."""
        message = entry.get("message")
        if entry.get("kind") != "message" or not isinstance(message, dict | list):
            return
        items = message if isinstance(message, list) else [message]
        clean, paths = [], []
        for i, item in enumerate(items):
            done, found = self._item(entry.get("dir"), item)
            clean.append(done)
            paths += [f"[{i}].{p}" if isinstance(message, list) else p for p in found]
        if paths:
            entry["message"] = clean if isinstance(message, list) else clean[0]
            entry["redacted"] = [*entry.get("redacted", []), *paths]

    def _item(self, direction: Any, item: Any) -> tuple[Any, list[str]]:
        if not isinstance(item, dict):
            return item, []
        if direction == "in" and item.get("method") == CREATE:
            params: dict[str, Any] = item["params"] if isinstance(item.get("params"), dict) else {}
            secret = secret_fields(params.get("requestedSchema"))
            if secret and "id" in item and len(self._forms) < OPEN_KEPT:
                self._forms[id_key(item["id"])] = secret
            if isinstance(params.get("url"), str) and params["url"] not in self._urls:
                self._urls = [*self._urls[-(URLS_KEPT - 1) :], params["url"]]
            return redact_create(item)
        if direction == "out" and "method" not in item and "id" in item:
            secret = self._forms.pop(id_key(item["id"]), [])
            if secret:
                return redact_answer(item, secret)
        return self._quoting(item)

    def _quoting(self, item: dict[str, Any]) -> tuple[Any, list[str]]:
        """A later message quoting a URL asked before (an agent's text repeating it), scrubbed."""
        if not self._urls:
            return item, []
        clean = scrub(item, self._urls)
        return clean, [k for k in clean if clean[k] != item.get(k)]
