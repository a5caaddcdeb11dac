"""Authentication methods as the agent advertised them, read into one shape for both versions.

Types (the schemas' ``AuthMethod``): ``agent`` (the default; the agent logs in through
``authenticate``/``auth/login``), ``terminal`` (the client runs the agent's own command with
``args`` appended and ``env`` added, in an interactive terminal — never sent to
``authenticate``), and ``env_var`` (an unstable extension codex-acp uses: ``vars`` to set in the
agent's environment before ``authenticate``). claude-agent-acp also gives a complete command in
``_meta["terminal-auth"]`` (``command``, ``args``, ``label``), which wins when present; Gemini CLI
marks an ``agent`` method ``_meta["api-key"]``: the key travels in ``authenticate``'s
``_meta["api-key"]``. Unknown
types are kept and shown. v1 spells the id ``id`` and ``env`` as a map; v2 ``methodId`` and a
list of ``{name, value}``. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AuthMethod:
    """One way to log in."""

    id: str
    name: str
    type: str = "agent"
    description: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    vars: tuple[dict[str, Any], ...] = ()
    command: tuple[str, ...] | None = None  # a complete command (``_meta["terminal-auth"]``)
    label: str | None = None
    key_provider: str | None = None  # ``_meta["api-key"]``: the key goes in ``authenticate``'s ``_meta``
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def runs_in_terminal(self) -> bool:
        """True for a method the client runs itself (``terminal``, or a ``terminal-auth`` command)."""
        return self.type == "terminal" or (self.type == "agent" and self.command is not None)


def read_method(raw: Any, id_key: str, env_as_list: bool) -> AuthMethod | None:
    """The method ``raw`` describes, or None when it has no usable id."""
    if not isinstance(raw, dict) or not isinstance(raw.get(id_key) or raw.get("id"), str):
        return None
    method_id = raw.get(id_key) or raw["id"]
    kind = raw.get("type") if isinstance(raw.get("type"), str) else "agent"
    name = raw.get("name") if isinstance(raw.get("name"), str) else method_id
    description = raw.get("description") if isinstance(raw.get("description"), str) else None
    vars_ = tuple(
        v for v in _items(raw.get("vars")) if isinstance(v, dict) and isinstance(v.get("name"), str)
    )
    command, label = _terminal_auth(raw.get("_meta"))
    return AuthMethod(
        id=method_id,
        name=name,
        type=kind,
        description=description,
        args=_strings(raw.get("args")),
        env=_env(raw.get("env"), env_as_list),
        vars=vars_,
        command=command,
        label=label,
        key_provider=_key_provider(raw.get("_meta")),
        raw=raw,
    )


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(a for a in _items(value) if isinstance(a, str))


def _key_provider(meta: Any) -> str | None:
    entry = meta.get("api-key") if isinstance(meta, dict) else None
    if not isinstance(entry, dict):
        return None
    provider = entry.get("provider")
    return provider if isinstance(provider, str) else "api"


def _env(value: Any, as_list: bool) -> tuple[tuple[str, str], ...]:
    if as_list and isinstance(value, list):
        pairs = [(e.get("name"), e.get("value")) for e in value if isinstance(e, dict)]
    elif not as_list and isinstance(value, dict):
        pairs = list(value.items())
    else:
        return ()
    return tuple((k, v) for k, v in pairs if isinstance(k, str) and isinstance(v, str))


def _terminal_auth(meta: Any) -> tuple[tuple[str, ...] | None, str | None]:
    entry = meta.get("terminal-auth") if isinstance(meta, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None, None
    args = (
        [a for a in entry.get("args") or [] if isinstance(a, str)]
        if isinstance(entry.get("args"), list)
        else []
    )
    label = entry.get("label") if isinstance(entry.get("label"), str) else None
    return (entry["command"], *args), label
