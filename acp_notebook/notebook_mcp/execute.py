"""``run_code``: run an agent's code in the user's namespace, on the kernel's loop; collect it all.

The code runs like a cell (the last expression's value is the result; top-level ``await``
works) with IPython's ``capture_output``, so its prints and ``display()`` calls come back here
instead of landing in whatever cell is running. Figures it leaves open in matplotlib come back
as PNG images (and are closed, so they do not also appear in the user's cell). An exception comes
back as its traceback, limited to the agent's own lines. Everything is capped.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import inspect
import io
import linecache
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from .describe import clip

FILENAME = "<agent code>"
STREAM_CHARS = 20_000
RESULT_CHARS = 10_000
MAX_IMAGES = 4
IMAGE_BYTES = 2 * 1024 * 1024


@dataclass
class Outcome:
    """What one ``run_code`` call printed, returned, raised and drew."""

    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: str | None = None
    images: list[bytes] = field(default_factory=list)
    duration: float = 0.0
    dropped_images: int = 0

    @property
    def ok(self) -> bool:
        """True when the code ran without raising."""
        return self.error is None

    def text(self) -> str:
        """The text part of the answer (sections only when they have something)."""
        parts = []
        for label, value in (("stdout", self.stdout), ("stderr", self.stderr), ("result", self.result)):
            if value:
                parts.append(f"[{label}]\n{value}")
        if self.error:
            parts.append(f"[error]\n{self.error}")
        if self.images or self.dropped_images:
            parts.append(
                f"[images] {len(self.images)} PNG"
                + (f" ({self.dropped_images} dropped)" if self.dropped_images else "")
            )
        return "\n".join(parts) if parts else "(no output)"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (images as base64) for logs and views."""
        out = {k: getattr(self, k) for k in ("stdout", "stderr", "result", "error", "duration")}
        out["images"] = [base64.b64encode(png).decode("ascii") for png in self.images]
        return out


async def run_code(code: str, namespace: dict[str, Any]) -> Outcome:
    """Run ``code`` in ``namespace`` (the user's), as a cell would."""
    started, out = time.monotonic(), Outcome()
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    figures_before = _open_figures()
    with _capture() as captured:
        try:
            value = await _run(code, namespace)
            if value is not None:
                _result(out, value)
        except BaseException as exc:  # the agent's error is an answer, not our failure
            if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
                out.error = f"{type(exc).__name__} (the code stopped)"
            else:
                out.error = _traceback(exc)
    out.stdout, out.stderr = clip(captured.stdout, STREAM_CHARS), clip(captured.stderr, STREAM_CHARS)
    for png in [*captured.images, *_new_figures(figures_before)]:
        _add_image(out, png)
    out.duration = round(time.monotonic() - started, 4)
    return out


async def _run(code: str, namespace: dict[str, Any]) -> Any:
    tree = ast.parse(code, FILENAME, "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, FILENAME, "exec", flags=flags)
    await _maybe_await(eval(body, namespace))  # the user allowed run_code
    if last is None:
        return None
    expr = compile(ast.Expression(last.value), FILENAME, "eval", flags=flags)
    return await _maybe_await(eval(expr, namespace))


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.iscoroutine(value) else value


def _result(out: Outcome, value: Any) -> None:
    png = _png_of(value)
    if png is not None:
        out.images.append(png)
    try:
        out.result = clip(repr(value), RESULT_CHARS)
    except Exception as exc:
        out.result = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"


def _png_of(value: Any) -> bytes | None:
    """A figure's (or any object's ``_repr_png_``) PNG bytes."""
    if hasattr(value, "savefig") and hasattr(value, "canvas"):
        buf = io.BytesIO()
        value.savefig(buf, format="png")
        return buf.getvalue()
    render = getattr(value, "_repr_png_", None)
    data = render() if callable(render) else None
    return data if isinstance(data, bytes) else None


def _add_image(out: Outcome, png: bytes) -> None:
    if len(out.images) >= MAX_IMAGES or len(png) > IMAGE_BYTES or png in out.images:
        out.dropped_images += png not in out.images
        return
    out.images.append(png)


def _traceback(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    own = traceback.StackSummary.from_list([f for f in frames if f.filename == FILENAME])
    lines = ["Traceback (most recent call last):\n", *own.format()] if own else []
    lines += traceback.format_exception_only(type(exc), exc)
    return clip("".join(lines).rstrip(), STREAM_CHARS)


# -- capture ---------------------------------------------------------------------------------------
class _Captured:
    stdout = ""
    stderr = ""
    images: list[bytes] = []  # noqa: RUF012  (replaced per capture)


@contextlib.contextmanager
def _capture():
    captured = _Captured()
    captured.images = []
    try:
        from IPython.utils.capture import capture_output
    except ImportError:  # no IPython: plain streams
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield captured
        captured.stdout, captured.stderr = out.getvalue(), err.getvalue()
        return
    with capture_output(stdout=True, stderr=True, display=True) as io_:
        yield captured
    captured.stdout, captured.stderr = io_.stdout, io_.stderr
    for shown in io_.outputs:
        data = getattr(shown, "data", None) or {}
        if "image/png" in data:
            raw = data["image/png"]
            captured.images.append(base64.b64decode(raw) if isinstance(raw, str) else raw)
        elif "text/plain" in data:
            captured.stdout += str(data["text/plain"]) + "\n"


def _open_figures() -> set[int]:
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt is not None else set()


def _new_figures(before: set[int]) -> list[bytes]:
    """PNGs of the figures the code opened (closed afterwards: the answer carries them)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    pngs = []
    for number in sorted(set(plt.get_fignums()) - before):
        figure = plt.figure(number)
        pngs.append(_png_of(figure) or b"")
        plt.close(figure)
    return [p for p in pngs if p]
