"""CompareView: the live views of a comparison's sessions in a grid, one column per agent.

Each cell is a header (the agent's label, where its copy is, and how its last prompt went: stop
reason, duration, tool calls, files and lines changed, or its error) above the session's own
``SessionView``; an agent that failed to start shows its error instead. Headers refresh when a
prompt round ends (``Comparison.on_change``). Text from agents is escaped before it is shown.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets

from ..widgets.session_view import SessionView

MAX_COLUMNS = 3


class CompareView(ipywidgets.VBox):
    """A grid of ``SessionView``s with a header naming each agent."""

    def __init__(self, comparison: Any, title: str | None = None) -> None:
        self.comparison = comparison
        self.headers: dict[str, ipywidgets.HTML] = {}
        self.views: dict[str, SessionView] = {}
        cells = [self._cell(entry) for entry in comparison.entries]
        columns = min(len(cells), MAX_COLUMNS)
        grid = ipywidgets.GridBox(
            cells,
            layout=ipywidgets.Layout(
                grid_template_columns=f"repeat({columns}, minmax(0, 1fr))", grid_gap="8px"
            ),
        )
        grid.add_class("acp-compare-grid")
        top = [ipywidgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        super().__init__([*top, grid], layout=ipywidgets.Layout(width="100%"))
        self.add_class("acp-compare")
        comparison.on_change(self.refresh)

    def _cell(self, entry: Any) -> ipywidgets.VBox:
        header = self.headers[entry.label] = ipywidgets.HTML(header_html(entry))
        header.add_class("acp-compare-header")
        body: Any
        if entry.session is not None:
            body = self.views[entry.label] = SessionView(entry.session, title=entry.label)
        else:
            body = ipywidgets.HTML(f"<pre>{html.escape(entry.error or 'not started')}</pre>")
        cell = ipywidgets.VBox([header, body], layout=ipywidgets.Layout(min_width="0"))
        cell.add_class("acp-compare-cell")
        return cell

    def refresh(self) -> None:
        """Rewrite every header from its agent's current row."""
        for entry in self.comparison.entries:
            self.headers[entry.label].value = header_html(entry)


def header_html(entry: Any) -> str:
    """The header of one agent's column (escaped)."""
    row = entry.row()
    facts = [f"<b>{html.escape(entry.label)}</b>"]
    if row["stop_reason"]:
        facts.append(html.escape(str(row["stop_reason"])))
    if row["duration"] is not None:
        facts.append(f"{row['duration']:.1f} s")
    if row["tool_calls"] is not None:
        facts.append(f"{row['tool_calls']} tool calls")
    if row["files_touched"] is not None:
        facts.append(f"{row['files_touched']} files, +{row['lines_added']} −{row['lines_removed']}")
    if row["error"]:
        facts.append(f"<span class='acp-compare-error'>{html.escape(row['error'])}</span>")
    where = f"<div class='acp-compare-copy'>{html.escape(row['copy'] or '')}</div>"
    label = html.escape(entry.label, quote=True)
    return f"<div data-state='{state_of(entry)}' data-agent='{label}'>{' · '.join(facts)}{where}</div>"


def state_of(entry: Any) -> str:
    """``error``, ``finished``, ``running`` or ``ready`` (started, no prompt yet)."""
    if entry.error:
        return "error"
    if entry.ended is not None:
        return "finished"
    return "running" if entry.started is not None else "ready"
