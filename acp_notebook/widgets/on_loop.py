"""A widget's messages from the page, handled on the kernel's event loop.

Comm messages may be delivered on another thread than the loop's (a kernel whose shell runs in a
thread); a handler that touches the session must run on the loop, so it is handed over there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def on_loop(handle: Callable[[Any], None]) -> Callable[[Any, Any, Any], None]:
    """An ``on_msg`` callback: ``handle(content)`` on the loop running now (at once on the main thread)."""
    loop = running_loop()

    def received(_widget: Any, content: Any, _buffers: Any) -> None:
        if loop is not None and threading.current_thread() is not threading.main_thread():
            loop.call_soon_threadsafe(handle, content)
        else:
            handle(content)

    return received
