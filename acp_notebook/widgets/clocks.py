"""The time a shown state stands at: a past state's (an X-ray pick, a replay, a saved snapshot) own
"now", by the state's clock, at which the page stops its elapsed-time labels. No I/O."""

from __future__ import annotations

from ..protocol.state import SessionState


def state_time(state: SessionState) -> float | None:
    """When ``state`` last saw something, by its own clock: a past state's "now" (None if empty)."""
    times: list[float | None] = [t for tc in state.tool_calls.values() for t in (tc.updated_at, tc.ended_at)]
    times += [m.last_seen for m in state.messages.values()]
    times += [t for term in state.terminals.values() for t in (term.last_seen, term.exited_at)]
    for asked in (state.permission_times, state.elicitation_times):
        times += [t for pair in asked.values() for t in pair]
    return max((t for t in times if t is not None), default=None)
