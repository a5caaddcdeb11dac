"""``%%acp --agents a,b,c``: the cell's prompt on several agents, in a grid of their views.

The agents start (each in its own copy of ``--cwd``, ``acp_notebook.compare``), the grid shows, and
the prompt runs on all of them as a task, so the cell returns at once and the buttons work;
``--wait`` waits for every turn (an interrupt cancels them). The ``Comparison`` is bound to
``--name`` when one is given, else to ``comparison``; running the cell again closes the one the
name held. A blocking ``--wait`` (the cell could not be made awaiting) cancels a turn whose
permission request no ``--permissions`` policy answers, as a blocking ``%%acp --wait`` does.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from IPython.display import display

from ..comparison.core import Comparison, compare
from ..policies import named
from . import waiting
from .errors import MagicError
from .parser import DEFAULT_NAME

DEFAULT_BINDING = "comparison"


def binding(args: argparse.Namespace) -> str:
    """The user-namespace name the comparison gets."""
    return args.name if args.name and args.name != DEFAULT_NAME else DEFAULT_BINDING


async def compare_cell(commands: Any, args: argparse.Namespace, text: str, blocking: bool) -> None:
    """Start the agents of ``--agents``, show their grid, send them ``text``."""
    if not text:
        raise MagicError("the cell has no prompt: write it below the %%acp line", "UsageError")
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not agents:
        raise MagicError("--agents takes agents separated by commas, e.g. claude,codex,demo", "UsageError")
    policy = waiting.policy_named(args.permissions, commands.shell.user_ns)
    if policy is None and blocking and args.wait:
        policy = named("cancel")  # a blocked cell gets no click
    name = binding(args)
    await _replace(commands.shell.user_ns, name)
    try:
        comparison = await compare(agents, cwd=args.cwd, permissions=policy, keep=args.keep)
    except (OSError, ValueError, TypeError) as exc:
        raise MagicError(f"compare: {exc}", "UsageError") from None
    commands.shell.user_ns[name] = comparison
    print(_started(comparison, name))
    display(comparison.view(title=args.title))
    task = comparison.prompt_task(text, args.timeout)
    if args.wait:
        try:
            reasons = await asyncio.shield(task)
        except asyncio.CancelledError:  # an interrupt: every turn is cancelled
            task.cancel()
            raise
        print("turns ended: " + ", ".join(f"{k} ({v})" for k, v in reasons.items()))


async def _replace(namespace: dict[str, Any], name: str) -> None:
    old = namespace.get(name)
    if isinstance(old, Comparison) and not old.closed:
        await old.close()
        print(f"Closed the previous comparison {name}.")


def _started(comparison: Comparison, name: str) -> str:
    lines = [f"Comparing {', '.join(comparison.labels)} in copies of {comparison.source}; this is {name}"]
    for entry in comparison.entries:
        lines.append(f"  {entry.label}: {entry.error or entry.path}")
    lines.append(f"({name}.frame() compares them; {name}.close() stops the agents and removes the copies)")
    return "\n".join(lines)
