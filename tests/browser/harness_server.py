"""The render harness's localhost server and Chromium flags, shared by the harness tests and the
browser benchmarks (``bench/_browser.py``): ``/static/`` is the esbuild output, ``/harness/`` the
fake-anywidget page (``tests/browser/harness/``); anything else is 404. No pytest here."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "acp_notebook" / "static"
HARNESS = Path(__file__).resolve().parent / "harness"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-dev-shm-usage",
    "--enable-precise-memory-info",
    "--js-flags=--expose-gc",
]


class HarnessHandler(SimpleHTTPRequestHandler):
    """Serves /static/ and /harness/ only; everything else is 404."""

    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".json": "application/json",
    }

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, base in (("/static/", STATIC), ("/harness/", HARNESS)):
            if path.startswith(prefix):
                target = (base / path[len(prefix) :]).resolve()
                if target.is_relative_to(base.resolve()):
                    return str(target)
        return str(HARNESS / "__missing__")

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve() -> Iterator[str]:
    """The harness on a free localhost port; yields its base URL, shut down on exit."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(HarnessHandler, directory=str(HARNESS)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
