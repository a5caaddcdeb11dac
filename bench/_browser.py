"""Shared pieces of the browser benchmarks: Chromium, the render-harness server, a lab server, CDP.

- ``chromium()``: Debian's Chromium through Playwright's sync API (closed on exit).
- ``harness_server()``: a localhost http.server for ``acp_notebook/static/`` and the test harness
  page ``tests/browser/harness/`` (the page the render tests use, without Jupyter).
- ``lab_server()``: ``jupyter lab`` as the browser tests start it (``tests/browser/lab.py``, with
  this tree first on ``PYTHONPATH``);
  on exit it is shut down and every process it started (kernels, agents) is killed by PID.
- ``heap_mb(page)``: JS heap in use after a full garbage collection, and DOM nodes, through CDP.
- ``run_cell(page, i, source)``: run cell ``i`` of the notebook open in Lab and wait for its end.
- ``cpu_by_role()``: CPU seconds used so far by the processes this script started, by role.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.harness_server import ARGS, CHROMIUM, STATIC, serve  # noqa: E402

# Long tasks (main thread busy >= 50 ms) from now on, in window.__longtasks (durations, ms).
LONGTASKS_START_JS = """() => {
  window.__longtasks = [];
  window.__longtaskObserver?.disconnect();
  window.__longtaskObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longtasks.push(e.duration);
  });
  window.__longtaskObserver.observe({ type: 'longtask' });
}"""
LONGTASKS_READ_JS = """() => {
  window.__longtaskObserver?.takeRecords().forEach((e) => window.__longtasks.push(e.duration));
  const d = window.__longtasks || [];
  return { count: d.length, over100: d.filter((x) => x > 100).length, max: d.length ? Math.max(...d) : 0,
           total: d.reduce((a, b) => a + b, 0) };
}"""


# Lab: run cell `index` of the current notebook (new source if given), window.__cellDone when it ends.
RUN_CELL_JS = """({index, source}) => {
  const nb = window.jupyterapp.shell.currentWidget, cell = nb.content.widgets[index];
  if (source !== null) cell.model.sharedModel.setSource(source);
  cell.model.outputs?.clear();
  nb.content.activeCellIndex = index;
  window.__cellDone = false;
  window.jupyterapp.commands.execute('notebook:run-cell')
    .then(() => { window.__cellDone = true; }, (e) => { window.__cellDone = 'error: ' + e; });
}"""

CELL_TEXT_JS = "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].outputArea.node.innerText"
KERNEL_IDLE_JS = (
    "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
)


def require(*paths: Path) -> None:
    """Exit with a one-line reason when Chromium or the JS bundle is missing."""
    for path in (Path(CHROMIUM), *paths):
        if not path.exists():
            raise SystemExit(
                f"missing {path} (Chromium: apt-get install chromium; bundle: cd js && npm run build)"
            )


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium (Playwright sync API), closed on exit."""
    from playwright.sync_api import sync_playwright

    require(STATIC / "runtime.js", STATIC / "loader.js")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def harness_server() -> contextlib.AbstractContextManager[str]:
    """The render harness on a free localhost port (``tests/browser/harness_server``); yields its base URL."""
    return serve()


@contextlib.contextmanager
def lab_server() -> Iterator[object]:
    """A started ``LabServer`` in a temporary directory; stopped, with everything it ran, on exit."""
    from tests.browser.lab import LabServer

    # the kernel (and the agents it starts) import acp_notebook from this tree, whatever pip recorded
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        server = LabServer(Path(tmp))
        try:
            server.start()
            yield server
        finally:
            leftovers = server.stop()
            if leftovers:
                print("killed processes left by the lab server:", *leftovers, sep="\n  ")


ROLES = (  # (role, words that all appear in the command line), first match wins
    ("agent", ("terminal_flood",)),
    ("kernel", ("ipykernel",)),
    ("lab server", ("jupyterlab",)),
    ("chromium renderer", ("chromium", "--type=renderer")),
    ("chromium other", ("chromium",)),
    ("playwright driver", ("run-driver",)),
)


def cpu_by_role() -> dict[str, float]:
    """CPU seconds (user + system) used so far by this script's live descendants, by role (``ROLES``)."""
    from tests.browser.lab import descendants

    out = dict.fromkeys((role for role, _ in ROLES), 0.0)
    for pid, cmd in descendants(os.getpid()).items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        role = next((r for r, words in ROLES if all(w in cmd for w in words)), None)
        if role:
            out[role] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def run_cell(page, index: int, source: str | None, timeout_s: float) -> str:
    """Run one cell (new source if given) and wait for its end; returns its output text."""
    page.evaluate(RUN_CELL_JS, {"index": index, "source": source})
    page.wait_for_function("() => window.__cellDone !== false", timeout=timeout_s * 1000, polling=100)
    done = page.evaluate("() => window.__cellDone")
    if done is not True:
        raise RuntimeError(f"cell {index} did not run: {done}")
    return page.evaluate(CELL_TEXT_JS, index)


def heap_mb(page) -> tuple[float, int]:
    """MiB of JS heap in use after two full garbage collections, and DOM nodes (CDP)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("HeapProfiler.enable")
        cdp.send("HeapProfiler.collectGarbage")
        cdp.send("HeapProfiler.collectGarbage")
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        return metrics["JSHeapUsedSize"] / 2**20, int(metrics["Nodes"])
    finally:
        cdp.detach()
