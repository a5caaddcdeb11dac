"""Plain-text reports: ``%acp status``, ``list``, ``sessions``, ``config``, ``mode``."""

from __future__ import annotations

from typing import Any

from ..client.registry import Registry


def describe(agent: Any) -> str:
    """``title version (ACP vN, pid P)``."""
    info = agent.info if isinstance(agent.info, dict) else {}
    name = info.get("title") or info.get("name") or agent.process.argv[0]
    version = f" {info['version']}" if isinstance(info.get("version"), str) else ""
    return f"{name}{version} (ACP v{agent.protocol_version}, pid {agent.process.pid})"


def agent_state(agent: Any) -> str:
    """``running`` or ``exited (code N)``."""
    if not agent.closed and agent.returncode is None:
        return "running"
    return f"exited (code {agent.returncode})"


def turn_state(session: Any) -> str:
    """The run state, the last stop reason, and how many prompts wait."""
    state = session.state
    starting = getattr(session, "starting_turns", 0)
    text = "starting a turn" if starting and state.run_state == "idle" else str(state.run_state)
    if state.stop_reason and text == "idle":
        text += f" ({state.stop_reason})"
    queued = session.queued_prompts
    if queued:
        text += f", {queued} queued"
    return text


def agents_report(registry: Registry) -> list[str]:
    """One line per agent."""
    if not registry.agents:
        return ["no agents: start one with %acp start"]
    return [
        f"[{registry.number(a)}] {describe(a)} {agent_state(a)}, {len(a.sessions)} session(s)"
        for a in registry.agents
    ]


def session_line(registry: Registry, session: Any) -> str:
    """One line for a session."""
    names = ", ".join(registry.names_of(session)) or "(unnamed)"
    state = session.state
    return (
        f"{names}: {session.session_id} on agent [{_number(registry, session)}], "
        f"{turn_state(session)}, {_turns(session)}, {len(state.tool_calls)} tool call(s)"
    )


def _turns(session: Any) -> str:
    """How many turns: begun, and those whose prompt has left the queue (not the queued ones)."""
    n = len(session.turns) + getattr(session, "starting_turns", 0)
    return f"{n} turn{'' if n == 1 else 's'}"


def sessions_report(registry: Registry) -> list[str]:
    """One line per session."""
    sessions = registry.sessions()
    if not sessions:
        return ["no sessions"]
    return [session_line(registry, s) for s in sessions]


def permission_lines(session: Any) -> list[str]:
    """The pending permission requests and elicitations of a session."""
    asked = [
        f"    waiting for an answer: {p.key} {p.title!r}, options {', '.join(p.option_ids)}"
        for p in session.pending_permissions
    ]
    return asked + [
        f"    waiting for an answer: {e.key} {e.message!r} ({e.mode})" for e in session.pending_elicitations
    ]


def status_report(registry: Registry, only: Any = None) -> list[str]:
    """Agents, then sessions with their turn state and pending permissions."""
    lines = ["agents:", *("  " + line for line in agents_report(registry)), "sessions:"]
    sessions = [only] if only is not None else registry.sessions()
    if not sessions:
        lines.append("  no sessions")
    for session in sessions:
        lines.append("  " + session_line(registry, session))
        lines += permission_lines(session)
        if session.last_error:
            lines.append(f"    last error: {session.last_error}")
    return lines


def config_report(session: Any) -> list[str]:
    """The advertised config options with their current values and choices."""
    options = [o for o in session.state.config_options or [] if isinstance(o, dict)]
    if not options:
        return ["the agent advertises no config options"]
    lines = []
    for option in options:
        values = [v.get("value") for v in option.get("options") or [] if isinstance(v, dict)]
        choices = f" (choices: {', '.join(map(str, values))})" if values else ""
        current = option.get("currentValue")
        lines.append(f"{option.get('configId')} = {current!r}  {option.get('name')}{choices}")
    return lines


def mode_report(session: Any) -> list[str]:
    """The current mode and the available ones."""
    ids = session.settings.modes
    if not ids:
        return ["the agent advertises no modes"]
    return [f"mode: {session.settings.current_mode} (available: {', '.join(map(str, ids))})"]


def auth_choices(methods: Any) -> str:
    """The method ids one can log in with, as one line."""
    ids = [m.get("methodId") or m.get("id") for m in methods or [] if isinstance(m, dict)]
    return "choose one of " + ", ".join(map(repr, ids)) if ids else "the agent advertises none"


def auth_lines(methods: Any, name: str) -> list[str]:
    """The agent's authentication methods and how to use one."""
    rows = [m for m in methods or [] if isinstance(m, dict)]
    if not rows:
        return ["The agent advertises no authentication methods."]
    lines = ["Authentication methods:"]
    for m in rows:
        ident = m.get("methodId") or m.get("id")
        detail = m.get("description") or ""
        kind = {"terminal": " [runs in a terminal here]", "env_var": " [asks for a key here]"}.get(
            m.get("type"), ""
        )
        lines.append(f"  {ident}  {m.get('name', '')}{kind}" + (f" — {detail}" if detail else ""))
    first = rows[0].get("methodId") or rows[0].get("id")
    lines.append(f"Log in with: %acp login {first}" + ("" if name == "acp" else f" --name {name}"))
    return lines


def _number(registry: Registry, session: Any) -> int | str:
    agent = registry.agent_of(session)
    return registry.number(agent) if agent is not None and agent in registry.agents else "?"
