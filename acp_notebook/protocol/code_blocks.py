"""Code blocks in agent messages: what ``%acp cell`` copies into a new cell.

A message's text is parsed as CommonMark (``markdown-it-py``, raw HTML off as in the view), so a
block is what the view shows as one: backtick or tilde fences (with or without a language, inside
lists and quotes, a longer fence around a shorter one) and indented code (no language). Messages
and blocks are numbered from 1, in first-seen order, as ``%acp cell K --message N`` counts them;
negative numbers count from the end (-1: the last).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from .messages import Message

_parser = MarkdownIt("commonmark", {"html": False})


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One code block of an agent message (``message``/``block`` numbered from 1)."""

    language: str  # the first word of the fence's info string; "" when none
    code: str  # the block's text, without its final newline
    message: int  # which agent message (1 = the first)
    message_id: str
    block: int  # which block of that message (1 = the first)


def parse(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each code block of markdown ``text``, in order."""
    found = []
    for token in _parser.parse(text):
        if token.type == "fence":
            language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
            found.append((language, _strip_newline(token.content)))
        elif token.type == "code_block":
            found.append(("", _strip_newline(token.content)))
    return found


def agent_messages(messages: Iterable[Message]) -> list[Message]:
    """The agent's messages (no user messages, no thoughts), in first-seen order."""
    return [m for m in messages if m.role == "agent"]


def code_blocks(messages: Iterable[Message], message: int | None = None) -> list[CodeBlock]:
    """Every code block of the agent's messages, or of agent message number ``message``."""
    agent = agent_messages(messages)
    numbered = list(enumerate(agent, 1))
    if message is not None:
        numbered = [numbered[_position(message, len(agent), f"no agent message {message}")]]
    return [
        CodeBlock(language, code, number, msg.message_id, block)
        for number, msg in numbered
        for block, (language, code) in enumerate(parse(msg.text), 1)
    ]


def pick(messages: Iterable[Message], block: int | None = None, message: int | None = None) -> CodeBlock:
    """Block ``block`` (default: the last) of agent message ``message`` (default: the last agent
    message that has a code block); ``LookupError`` says what there is instead."""
    agent = agent_messages(messages)
    if not agent:
        raise LookupError("the agent has not written any message yet")
    if message is None:
        with_code = code_blocks(agent)
        if not with_code:
            raise LookupError(f"none of the agent's {len(agent)} message(s) has a code block")
        message = with_code[-1].message
    blocks = code_blocks(agent, message)
    number = message if message > 0 else len(agent) + message + 1
    if not blocks:
        raise LookupError(f"agent message {number} has no code block{_elsewhere(agent)}")
    chosen = (
        -1
        if block is None
        else _position(block, len(blocks), f"no code block {block} in agent message {number}")
    )
    return blocks[chosen]


def listing(messages: Iterable[Message], message: int | None = None) -> list[str]:
    """One line per code block: message, block, language, first line (``%acp cell --list``)."""
    blocks = code_blocks(messages, message)
    if not blocks:
        return ["no code blocks in the agent's messages"]
    return [f"message {b.message} block {b.block} {_kind(b)}: {_first_line(b.code)}" for b in blocks]


def _kind(block: CodeBlock) -> str:
    count = block.code.count("\n") + 1
    return f"[{block.language or 'text'}, {count} line{'s' if count != 1 else ''}]"


def _first_line(code: str, width: int = 60) -> str:
    first = code.strip().splitlines()[0] if code.strip() else ""
    return first if len(first) <= width else first[: width - 1] + "…"


def _position(number: int, count: int, missing: str) -> int:
    """The list index of 1-based (or negative) ``number`` among ``count`` items."""
    if number == 0 or not -count <= number <= count:
        raise LookupError(f"{missing}: there {'is' if count == 1 else 'are'} {count}")
    return number - 1 if number > 0 else number


def _elsewhere(agent: list[Message]) -> str:
    messages = sorted({b.message for b in code_blocks(agent)})
    if not messages:
        return " (no agent message has one)"
    return f" (messages with code blocks: {', '.join(map(str, messages))}; use --message N)"


def _strip_newline(code: str) -> str:
    return code[:-1] if code.endswith("\n") else code
