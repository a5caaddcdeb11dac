"""The agent's authentication status, as its status notifications report it — without identities.

Two shapes, both agent-wide (no ``sessionId``): claude-agent-acp's and codex-acp's extension
``_auth/status_update`` ``{"authStatus": {"kind", "label", "detail"?, "account"?}}`` (``kind``
e.g. ``account``, ``api_key``, ``gateway``, ``external``, ``none``), and the unstable schema's
``auth/status_update`` ``{"state", "accounts": [{"label", "active"?, "name"?, "email"?,
"organization"?}]}`` (``state``: ``authenticated``, ``unauthenticated``, ``not_required``,
``unknown`` or another). Only a kind and a label are kept: ``detail``, ``account``, ``name``,
``email``, ``organization`` and ``_meta`` may name a person and are never read, and a label that
looks like an e-mail address (an ``@``) or runs over ``LABEL_CHARS`` is dropped too. The label of
the unstable shape joins the labels of the active accounts (all of them when none is marked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LABEL_CHARS = 120


@dataclass(frozen=True, slots=True)
class AuthStatus:
    """What the agent says about its login: a ``kind`` and a display ``label``, nothing else."""

    kind: str
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"kind", "label"}``."""
        return {"kind": self.kind, "label": self.label}


def read_auth_status(params: Any) -> AuthStatus | None:
    """The status a notification's params report (either shape), or None when malformed."""
    params = params if isinstance(params, dict) else {}
    if "authStatus" in params:
        status = params.get("authStatus")
        status = status if isinstance(status, dict) else {}
        return _status(status.get("kind"), _safe(status.get("label")))
    accounts = [a for a in _list(params.get("accounts")) if isinstance(a, dict)]
    active = [a for a in accounts if a.get("active") is True] or accounts
    labels = [label for label in (_safe(a.get("label")) for a in active) if label]
    return _status(params.get("state"), _safe(", ".join(labels)) or None)


def _status(kind: Any, label: str | None) -> AuthStatus | None:
    safe = _safe(kind)
    return AuthStatus(safe, label) if safe else None


def _safe(text: Any) -> str | None:
    """``text`` when it is a short string that names no e-mail address, else None."""
    if not isinstance(text, str) or "@" in text or len(text) > LABEL_CHARS:
        return None
    return text.strip() or None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
