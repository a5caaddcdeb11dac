"""Text-only turns: help, a recap of the session's tool calls, and answers to questions."""

from __future__ import annotations

import os
from typing import Any

from .data import ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ONCE
from .memory import ToolRecord
from .router import HELP, QUESTION, RECAP, TOPICS, keywords, words
from .scenarios import Scenario

ANSWERS = {ALLOW_ONCE: "allowed once", ALLOW_ALWAYS: "always allowed", REJECT_ONCE: "rejected"}
OFFLINE = "I'm an offline demo agent with no model, so I can only answer from what this session did."
HELP_HINT = "Say `help` to see what I can show."
NEXT = "Say `summary` for a recap of every tool call, or `help` to see what I can show."
STOP_WORDS = keywords(
    "the a an and or of to in on for with about this that there any all did do does why how what which "
    "where when who is are was were it its you your me my i can could would please tell"
)


def stems(text: str) -> set[str]:
    """The telling words of `text`, with a plural or past-tense ending cut off."""
    out = set()
    for word in set(words(text)) - STOP_WORDS:
        for ending in ("ing", "ed", "es", "s"):
            if word.endswith(ending) and len(word) - len(ending) >= 4:
                word = word[: -len(ending)]
                break
        if len(word) >= 3:
            out.add(word)
    return out


def code(text: str) -> str:
    """`text` as a markdown code span (so titles are shown, never rendered)."""
    return "`" + text.replace("`", "'") + "`"


def help_lines() -> list[str]:
    """The help message, one line per chunk."""
    lines = ["I'm the offline ACP demo agent: no model, no network, just scripted turns.\n"]
    lines.append("Here is what I can show, and words that ask for it:\n\n")
    for topic in TOPICS:
        examples = ", ".join(code(e) for e in topic.examples)
        lines.append(f"- **{topic.title}**: {topic.blurb}. Try {examples}.\n")
    lines.append("- **A recap** of this session's tool calls. Try `summarise what you changed`, `recap`.\n")
    lines.append("- **Answers** about this session's tool calls: ask anything ending in `?`.\n")
    return lines


def relative(path: str, cwd: str) -> str:
    """`path` relative to the session's directory when it lies inside it."""
    inside = path == cwd or path.startswith(cwd.rstrip("/") + "/")
    return os.path.relpath(path, cwd) if inside else path


def exit_text(record: ToolRecord) -> str:
    """How a command ended: its exit code, or that it did not run."""
    if record.ran:
        code_ = record.exit_code
        return f"exit code {code_}" if code_ is not None else "killed by a signal"
    return "not run"


def describe(record: ToolRecord, cwd: str) -> str:
    """One line about one tool call: title, kind, status, files, command, permission."""
    parts = [
        f"{code(record.title or record.call_id)} ({record.kind or 'other'}): {record.status or 'unknown'}"
    ]
    if record.paths:
        parts.append("files " + ", ".join(code(relative(p, cwd)) for p in record.paths))
    if record.command:
        parts.append(f"command {code(record.command)}, {exit_text(record)}")
    if record.asked:
        parts.append("permission " + ANSWERS.get(record.permission or "", "not given (cancelled)"))
    if record.error:
        parts.append(f"error: {record.error}")
    return "; ".join(parts)


def totals(records: list[ToolRecord], cwd: str) -> list[str]:
    """The closing lines: every file touched, every command and every permission answer."""
    files = list(dict.fromkeys(relative(p, cwd) for r in records for p in r.paths))
    commands = [f"{code(r.command)} ({exit_text(r)})" for r in records if r.command]
    answers = [ANSWERS.get(r.permission or "", "cancelled") for r in records if r.asked]
    return [
        "\nFiles touched: " + (", ".join(code(f) for f in files) or "none") + ".\n",
        "Commands: " + (", ".join(commands) or "none") + ".\n",
        f"Permissions asked: {len(answers)}" + (f" ({', '.join(answers)})" if answers else "") + ".\n",
    ]


def recap_lines(records: list[ToolRecord], cwd: str) -> list[str]:
    """The recap message, one line per chunk."""
    if not records:
        return ["I have made no tool calls in this session yet, so there is nothing to summarise. ", NEXT]
    turns = sorted({r.turn for r in records})
    where = f" over {len(turns)} turns" if len(turns) > 1 else ""
    lines = [f"Done. Here is what I did in this session: {len(records)} tool calls{where}.\n\n"]
    for number, record in enumerate(records, start=1):
        turn = f" (turn {record.turn})" if where else ""
        lines.append(f"{number}. {describe(record, cwd)}{turn}.\n")
    return lines + totals(records, cwd)


def answer_lines(em: Any, question: str) -> list[str]:
    """The answer to a question, grounded in the session's tool calls."""
    memory = em.session.memory
    if not memory.calls:
        return [
            OFFLINE + " ",
            "I have made no tool calls in this session yet. ",
            "Say `help` to see what I can show.",
        ]
    record = memory.about(stems(question))
    lead = "The tool call closest to your question" if record else "My last tool call"
    record = record or memory.last()
    return [
        OFFLINE + " ",
        f"{lead} was {describe(record, em.cwd)}. ",
        f"This session has {len(memory.calls)} tool calls so far. ",
        NEXT,
    ]


async def play_help(em: Any) -> None:
    """Say what the demo can show."""
    await em.stream("agent_message", help_lines())


async def play_recap(em: Any) -> None:
    """Summarise this session's earlier tool calls."""
    await em.stream("agent_message", recap_lines(em.session.memory.records(), em.cwd))


async def play_answer(em: Any) -> None:
    """Answer a question from what this session did."""
    await em.stream("agent_message", answer_lines(em, em.prompt_text()))


REPLIES: dict[str, Scenario] = {
    HELP: Scenario(play_help),
    RECAP: Scenario(play_recap),
    QUESTION: Scenario(play_answer),
}
