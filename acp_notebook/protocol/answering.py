"""Answering one of the agent's questions exactly once: send first, then record.

A question (a ``PermissionRequest``, an ``Elicitation``) holds ``outcome`` (None while pending),
``decided_by``, ``too_late`` (why it can no longer be answered) and an ``on_answer(question,
outcome)`` callback that sends the response. ``give`` hands the outcome to ``on_answer`` and
records it only once that returned: if sending raises, the question stays pending and the caller
gets the exception — an answer is never recorded without being sent. A second answer (or one
given while the first is being sent) raises and sends nothing; so does one after ``withdraw``
(the agent is gone: ended with nothing sent).
"""

from __future__ import annotations

from typing import Any, Protocol


class Question(Protocol):
    """What ``give`` and ``withdraw`` read and write of a question."""

    key: str
    outcome: dict[str, Any] | None
    decided_by: str | None
    too_late: str | None
    answering: bool
    on_answer: Any


def give(
    question: Question,
    outcome: dict[str, Any],
    by: str | None,
    already: type[Exception],
    late: type[Exception],
    what: str,
) -> None:
    """Send ``outcome`` through ``question.on_answer``, then record it (``by``: who decided)."""
    if question.too_late is not None:
        raise late(f"too late to answer {what} {question.key}: {question.too_late}; it was cancelled")
    if question.outcome is not None or question.answering:
        raise already(
            f"{what} {question.key} was already answered: {question.outcome or 'an answer being sent'}"
        )
    question.answering, question.decided_by = True, by  # on_answer may read who decides
    try:
        if question.on_answer is not None:
            question.on_answer(question, outcome)  # sends the response; if it raises, still pending
    except BaseException:
        question.decided_by = None
        raise
    finally:
        question.answering = False
    question.outcome = outcome


def withdraw(question: Question, outcome: dict[str, Any], reason: str, by: str) -> bool:
    """End a pending question with ``outcome`` and nothing sent; False if it was not pending."""
    if question.outcome is not None or question.answering:
        return False
    question.outcome, question.decided_by, question.too_late = outcome, by, reason
    return True
