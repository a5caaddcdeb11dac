"""Notebook views over the session state (anywidget), coalesced by one kernel-wide scheduler."""

from .header_view import SessionHeaderView
from .runtime import Runtime, get_runtime
from .scheduler import Scheduler, default_scheduler
from .secret_form import SecretForm
from .session_view import SessionView

__all__ = [
    "Runtime",
    "Scheduler",
    "SecretForm",
    "SessionHeaderView",
    "SessionView",
    "default_scheduler",
    "get_runtime",
]
