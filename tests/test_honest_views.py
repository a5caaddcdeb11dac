"""Views that tell the truth (issue 21, items 3 to 9): quiet info diagnostics, one-line setting
results, plain printed words, plans named by their content, turns counted right."""

from __future__ import annotations

from acp_notebook import SessionState
from acp_notebook.widgets.header import header


def test_info_diagnostics_are_counted_but_not_alerts():
    state = SessionState()
    state.diagnose("permission-unanswered", "left for a person", level="info")
    state.diagnose("permission-unanswered", "left for a person", level="info")
    quiet = header(state)
    assert (quiet["diagnostic_count"], quiet["diagnostic_alerts"]) == (2, 0)
    state.diagnose("malformed-update", "bad field")
    loud = header(state)
    assert (loud["diagnostic_count"], loud["diagnostic_alerts"]) == (3, 1)
