"""CLI: `python -m acp_notebook.demo_agent [--protocol 1|2] [--scenario NAME] [--speed F]`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import BinaryIO

from .agent import Agent
from .scenarios import SCENARIOS
from .wire import Wire


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line (ACP_DEMO_SPEED supplies the default speed)."""
    parser = argparse.ArgumentParser(
        prog="python -m acp_notebook.demo_agent",
        description="An offline ACP demo agent speaking JSON-RPC on stdio.",
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        default=None,
        help="always answer this protocol version (default: negotiate)",
    )
    parser.add_argument(
        "--scenario",
        choices=sorted(SCENARIOS),
        default="default",
        help="play this scenario for every prompt (default: choose from each prompt's words)",
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="advertise HTTP (and, in v2, stdio) MCP servers; the data prompts use the `notebook` one",
    )
    parser.add_argument(
        "--speed", type=float, default=None, help="pause multiplier; 0 removes every pause (default 1.0)"
    )
    args = parser.parse_args(argv)
    if args.speed is None:
        args.speed = env_speed()
    args.speed = max(0.0, args.speed)
    return args


def env_speed() -> float:
    """The speed from ACP_DEMO_SPEED, or 1.0."""
    raw = os.environ.get("ACP_DEMO_SPEED", "").strip()
    try:
        return float(raw) if raw else 1.0
    except ValueError:
        print(f"demo agent: ignoring ACP_DEMO_SPEED={raw!r}", file=sys.stderr)
        return 1.0


async def serve(args: argparse.Namespace, stdout: BinaryIO) -> None:
    """Serve one client on stdin/`stdout` until stdin closes."""
    wire = Wire(sys.stdin.buffer, stdout)
    routed = args.scenario == "default"
    agent = Agent(wire, SCENARIOS[args.scenario], args.speed, args.protocol, routed=routed)
    agent.mcp = args.mcp
    await wire.run()


def main(argv: list[str] | None = None) -> int:
    """Entry point; stdout carries JSON-RPC only, so stray prints go to stderr."""
    args = parse_args(argv)
    version = f"v{args.protocol}" if args.protocol else "auto (v1 or v2)"
    print(
        f"demo agent: protocol {version}, scenario {args.scenario}, speed {args.speed:g}",
        file=sys.stderr,
        flush=True,
    )
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        asyncio.run(serve(args, real_stdout.buffer))
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout = real_stdout
    return 0


if __name__ == "__main__":
    sys.exit(main())
