"""``export_html``: one self-contained page drawing the session view, with no kernel and no network.

The page holds the browser runtime once (an inline module), the view snapshot (``js/WIRE.md``,
its inline form) and the terminal bytes (base64; the newest ``saved_terminal_bytes`` of each, as a
saved notebook keeps them, the page marking "earlier output trimmed") as inert
``application/json`` data, and a bootstrap that mounts the view on a read-only stand-in for the
widget model (as ``tests/browser/harness`` does): the buttons send nowhere. Agent text stays
data: the runtime inserts it as text or sanitised HTML.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from pathlib import Path
from typing import Any

from ..widgets.runtime import static_file
from ..widgets.snapshot import SAVED_TERMINAL_BYTES, snapshot_of
from ..widgets.subtree import ViewTree
from .json_export import source_of
from .xray_export import xray_data

_SCRIPT_BREAKERS = re.compile(r"<(?=/?script|!--)", re.IGNORECASE)

BOOTSTRAP = """
const read = (id) => document.getElementById(id).textContent;
const snapshot = JSON.parse(read("acp-export-snapshot"));
const raw = atob(JSON.parse(read("acp-export-bytes")));
const bytes = new Uint8Array(raw.length);
for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
const traits = { snapshot, terminal_bytes: new DataView(bytes.buffer) };
const model = {
  get: (name) => traits[name], set() {}, save_changes() {}, on() {}, off() {}, send() {},
  widget_manager: { get_model: async () => null },
};
const api = await globalThis.__acpNotebook;
api.mount({ model, el: document.getElementById("acp-export"), queued: [] });
document.documentElement.dataset.acpExport = "mounted";
"""

STYLE = """:root { --jp-code-font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace;
  --jp-code-font-size: 13px; --jp-ui-font-family: system-ui, "DejaVu Sans", sans-serif;
  --jp-ui-font-size1: 13px; }
body { margin: 0; background: #fff; color: rgba(0, 0, 0, 0.87); font-family: var(--jp-ui-font-family); }
#acp-export { max-width: 960px; margin: 12px auto; padding: 0 12px; }
#acp-export:has(.acp-with-xray) { max-width: 1500px; }"""


def script_safe(js: str) -> str:
    """JS text that cannot end (or re-open) its ``<script>`` element: ``<`` before ``/script``,
    ``script`` or ``!--`` becomes ``\\x3C`` (the bundle has them only in strings and regexes)."""
    return _SCRIPT_BREAKERS.sub(r"\\x3C", js)


def json_data(value: Any) -> str:
    """JSON for an ``application/json`` script element: no ``<``, ``>`` or ``&`` left raw."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(
    source: Any, title: str | None = None, xray: bool = True, saved_terminal_bytes: int = SAVED_TERMINAL_BYTES
) -> str:
    """The page for ``source`` (a Session, SessionState or Replay); ``xray``: with its X-ray panel
    (when the source has traffic); at most ``saved_terminal_bytes`` of each terminal (the newest)."""
    src = source_of(source)
    tree = ViewTree(src.state, source if src.state is getattr(source, "state", None) else None)
    snapshot, blob = snapshot_of(tree, src.summary, title, cap=saved_terminal_bytes)
    inlined = xray_data(source, src.state, snapshot["order"]) if xray else None
    if inlined is not None:
        snapshot["xray"], snapshot["xray_data"] = inlined
    page_title = html.escape(str(snapshot["header"].get("title") or "ACP session"))
    terminal_bytes = json_data(base64.b64encode(blob).decode("ascii"))
    bundle = script_safe(static_file("runtime.js").read_text(encoding="utf-8"))
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data:; font-src data:\">",
            f"<title>{page_title}</title>",
            '<link rel="icon" href="data:,">',
            f"<style>{STYLE}</style></head>",
            '<body><main id="acp-export" class="jp-OutputArea-output"></main>',
            f'<script type="application/json" id="acp-export-snapshot">{json_data(snapshot)}</script>',
            f'<script type="application/json" id="acp-export-bytes">{terminal_bytes}</script>',
            f'<script type="module" id="acp-export-runtime">{bundle}</script>',
            f'<script type="module">{BOOTSTRAP}</script>',
            "</body></html>",
            "",
        ]
    )


def export_html(
    source: Any,
    path: str | os.PathLike,
    title: str | None = None,
    xray: bool = True,
    saved_terminal_bytes: int = SAVED_TERMINAL_BYTES,
) -> Path:
    """Write the self-contained page of ``source`` to ``path`` (``xray``: with the X-ray; at most
    ``saved_terminal_bytes`` of each terminal); returns it."""
    out = Path(path)
    out.write_text(render_html(source, title, xray, saved_terminal_bytes), encoding="utf-8")
    return out
