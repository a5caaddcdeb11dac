"""Session settings the agent advertises: config options (v2 and v1) and modes (v1).

``session/set_config_option`` answers with the complete list of options, which replaces
``state.config_options``; v2 sends the value's shape (``type``: ``id`` or ``boolean``), v1 does
not. v1 modes (``session.modes``, from ``session/new``) change with ``session/set_mode``; a v2
agent offers modes as a config option of category ``mode``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import Session


def config_option(session: Session, config_id: str) -> dict[str, Any] | None:
    """The advertised option ``config_id``, or None."""
    for option in session.state.config_options or []:
        if isinstance(option, dict) and option.get("configId") == config_id:
            return option
    return None


def mode_option(session: Session) -> dict[str, Any] | None:
    """The config option of category ``mode``, if the agent advertises one."""
    for option in session.state.config_options or []:
        if isinstance(option, dict) and option.get("category") == "mode":
            return option
    return None


def v1_modes(session: Session) -> list[dict[str, Any]]:
    """The v1 ``availableModes`` from ``session/new`` (empty if none)."""
    modes = session.modes if isinstance(session.modes, dict) else {}
    available = modes.get("availableModes")
    return [m for m in available if isinstance(m, dict)] if isinstance(available, list) else []


def parse_value(option: dict[str, Any] | None, text: str) -> str | bool:
    """A typed value from text: ``true``/``false`` for a boolean option, else the text."""
    if option is not None and option.get("type") == "boolean":
        lowered = text.strip().lower()
        if lowered not in ("true", "false", "on", "off", "1", "0", "yes", "no"):
            raise ValueError(f"{option.get('configId')!r} is a boolean option: use true or false")
        return lowered in ("true", "on", "1", "yes")
    return text


async def set_config_option(session: Session, config_id: str, value: str | bool) -> list[Any]:
    """Send ``session/set_config_option``; returns (and applies) the agent's complete option list."""
    params: dict[str, Any] = {"sessionId": session.session_id, "configId": config_id}
    if session.protocol_version >= 2:
        params["type"] = "boolean" if isinstance(value, bool) else "id"
    params["value"] = value
    result = await session.agent.connection.request("session/set_config_option", params)
    options = result.get("configOptions") if isinstance(result, dict) else None
    if isinstance(options, list):
        session.state.apply({"sessionUpdate": "config_option_update", "configOptions": options})
    return session.state.config_options


async def set_mode(session: Session, mode_id: str) -> str:
    """Switch mode: the ``mode`` config option if advertised, else v1 ``session/set_mode``."""
    option = mode_option(session)
    if option is not None and isinstance(option.get("configId"), str):
        await set_config_option(session, option["configId"], mode_id)
        return mode_id
    params = {"sessionId": session.session_id, "modeId": mode_id}
    await session.agent.connection.request("session/set_mode", params)
    session.state.apply({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
    if isinstance(session.modes, dict):
        session.modes["currentModeId"] = mode_id
    return mode_id


def current_mode(session: Session) -> str | None:
    """The current mode id (config option value, or the v1 current mode)."""
    option = mode_option(session)
    if option is not None:
        value = option.get("currentValue")
        return value if isinstance(value, str) else None
    return session.state.current_mode_id
