"""Agent-started turns and background work (issue 19, item 6): a ``running`` with no prompt of ours
is a turn (``origin == "agent"``) that prompts queue behind; ``wait_idle(background=True)`` waits
for background subagents at any depth; a background subagent's late writes are its turn's, and the
revert says so. The agent is played in memory (``test_client_framing.Peer``)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acp_notebook import frontend
from acp_notebook.client import headless, quiet
from acp_notebook.client.agent import Agent
from acp_notebook.client.checkpoints.shadow_git import CACHE_ENV
from acp_notebook.client.turns import TurnInterrupted
from acp_notebook.protocol.turn import Turn, agent_starts, origin_kind_of

from .support import until_async, update
from .test_client_framing import Peer, connect
from .test_subagents import announce, ask

CHILD = "child-1"
RUNNING = {"sessionUpdate": "state_update", "state": "running"}
END = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
TASK = {"_claude/origin": {"kind": "task-notification", "producer": "session-task"}}


def state(name: str, background: list[Any] | None = None, **more: Any) -> dict[str, Any]:
    """A ``state_update`` of the root session ``s1``."""
    body = {"sessionUpdate": "state_update", "state": name, **more}
    return update(body if background is None else {**body, "background": background})


def listed(*children: str) -> list[dict[str, Any]]:
    """A ``background`` list naming subagent sessions."""
    return [{"type": "subagent", "sessionId": c} for c in children]


def prompts(peer: Peer) -> list[dict[str, Any]]:
    return [r for r in peer.requests if r["method"] == "session/prompt"]


def turn_changes(session: Any) -> list[tuple[str | None, tuple[str, ...], bool]]:
    """What observers hear about turns (kind ``turn``): (number, fields, created)."""
    seen: list[tuple[str | None, tuple[str, ...], bool]] = []
    session.state.subscribe(lambda c: c.kind == "turn" and seen.append((c.id, c.fields, c.created)))
    return seen


async def held(waiting: Any) -> Any:
    """Await in a task of its own, returning a ``TurnInterrupted`` (raised in a task, a
    ``KeyboardInterrupt`` would stop the loop)."""
    try:
        return await waiting
    except TurnInterrupted as exc:
        return exc


# -- the pure rule ---------------------------------------------------------------------------------
def test_only_foreground_work_with_no_turn_in_progress_starts_an_agent_turn() -> None:
    ours = Turn(ends_on_response=False)
    assert agent_starts(RUNNING, None) and agent_starts({**RUNNING, "state": "requires_action"}, None)
    assert not agent_starts(RUNNING, ours), "ours is in progress: it is ours"
    assert not agent_starts({**RUNNING, "state": "idle"}, None) and not agent_starts(
        {**RUNNING, "state": "unknown"}, None
    )
    ours.abandon("end_turn")
    assert agent_starts(RUNNING, ours)
    turn = Turn.by_agent()
    assert (turn.origin, turn.origin_kind, turn.origin_label, ours.origin) == ("agent", None, None, "user")
    assert turn.on_state(END) and turn.stop_reason == "end_turn", "an agent's turn ends at its idle"


@pytest.mark.parametrize(
    ("meta", "kind"),
    [
        (TASK, "task-notification"),
        ({"_claude/origin": {"kind": "human"}}, "human"),
        ({"_claude/origin": {"kind": 3}}, None),
        ({"_claude/origin": "task"}, None),
        ({"_claude/origin": {"kind": ""}}, None),
        ({}, None),
        (None, None),
    ],
)
def test_where_a_turn_came_from_is_read_tolerantly(meta: Any, kind: str | None) -> None:
    assert origin_kind_of({"sessionUpdate": "usage_update", "_meta": meta}) == kind
    turn = Turn.by_agent()
    turn.origin_kind = "earlier"
    turn.on_update({"sessionUpdate": "usage_update", "_meta": meta})
    assert turn.origin_kind == (kind or "earlier"), "nothing said: as it was"


# -- live: the turn, the queue, the observers ----------------------------------------------------------
async def test_an_agent_started_turn_is_a_turn_and_a_prompt_waits_behind_it() -> None:
    peer, agent, session = await connect(2)
    seen = turn_changes(session)
    peer.send(state("running"))
    await peer.settled()
    (turn,) = session.turns
    assert (turn.origin, turn.number, turn.ended) == ("agent", 1, False)
    assert session.running and session.busy and session.turn is turn
    task = session.prompt_task("hi")
    await peer.settled()
    assert prompts(peer) == [] and session.queued_prompts == 1, "queued behind the agent's turn"
    peer.send(update({"sessionUpdate": "usage_update", "used": 1, "size": 9, "_meta": TASK}))
    peer.send(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "a1",
                "content": {"type": "text", "text": "Done."},
            }
        )
    )
    peer.send(state("idle", stopReason="end_turn"))
    await until_async(lambda: prompts(peer), 5, message="the queued prompt sent after the agent's turn")
    assert (turn.ended, turn.stop_reason, turn.origin_kind, turn.origin_label) == (
        True, "end_turn", "task-notification", "task notification",
    )  # fmt: skip
    assert [t.origin for t in session.turns] == ["agent", "user"] and session.turns[1].number == 2
    peer.reply(prompts(peer)[0]["id"], {})
    peer.send(state("running"))
    peer.send(state("idle", stopReason="end_turn"))
    assert await asyncio.wait_for(task, 5) == "end_turn"
    assert len(session.turns) == 2, "our prompt's running is our turn's, not the agent's"
    assert seen == [
        ("1", ("origin",), True), ("1", ("origin_kind",), False), ("1", ("ended",), False),
        ("2", ("origin",), True), ("2", ("ended",), False),
    ]  # fmt: skip
    assert session.turns[0].timeline_start == 0 and session.turns[1].timeline_start > 0
    await agent.close()


async def test_a_turn_the_agent_starts_blocked_on_the_user_can_be_cancelled() -> None:
    peer, agent, session = await connect(2)
    peer.send(state("requires_action"))
    peer.send(ask(3, "s1"))
    await peer.settled()
    assert session.turns[-1].origin == "agent" and session.busy
    await session.cancel()
    cancels = [m for m in peer.stream.sent if isinstance(m, dict) and m.get("method") == "session/cancel"]
    assert cancels and session.turns[-1].cancel_requested
    assert {"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "cancelled"}}} in peer.answers()
    peer.send(state("idle", stopReason="cancelled"))
    assert await session.wait_idle(5)
    assert session.turns[-1].stop_reason == "cancelled" and not session.busy
    await agent.close()


async def test_a_bare_idle_between_turns_starts_nothing_and_an_exit_ends_the_agents_turn() -> None:
    peer, agent, session = await connect(2)
    peer.send(state("idle", listed()))
    await peer.settled()
    assert session.turns == []
    peer.send(state("running"))
    await peer.settled()
    peer.stream.end(1)  # the agent goes away mid-turn
    assert await session.wait_idle(5)
    assert session.turns[-1].ended and not session.running
    await agent.close()


# -- waiting for background work -----------------------------------------------------------------------
async def test_wait_idle_background_waits_for_subagents_at_any_depth_and_the_turn_that_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(quiet, "SETTLE", 3600.0)  # the agent's follow-up may come any time
    peer, agent, session = await connect(2)
    peer.send(announce(state={"state": "running"}))
    peer.send(announce("grandchild", CHILD, state={"state": "running"}))
    peer.send(state("idle", listed(CHILD), stopReason="end_turn"))
    await peer.settled()
    assert await session.wait_idle(5), "no turn runs: the plain wait is over"
    waiter = asyncio.ensure_future(session.wait_idle(background=True))
    await peer.settled()
    assert not waiter.done()
    peer.send(state("idle", listed()))  # the root lists none; the child is still running
    await peer.settled()
    assert not waiter.done()
    peer.send(announce(state={"state": "idle", "stopReason": "end_turn"}))
    await peer.settled()
    assert not waiter.done(), "the grandchild still works"
    peer.send(announce("grandchild", CHILD, state={"state": "idle"}))
    await peer.settled()
    assert not waiter.done(), "all quiet: the agent may still follow up"
    peer.send(state("running"))  # ... and it does, with a turn of its own
    await peer.settled()
    assert not waiter.done() and session.turns[-1].origin == "agent"
    monkeypatch.setattr(quiet, "SETTLE", 0.01)
    peer.send(state("idle", listed(), stopReason="end_turn"))
    assert await asyncio.wait_for(waiter, 5) is True
    await agent.close()


async def test_after_background_work_a_quiet_session_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quiet, "SETTLE", 0.01)
    peer, agent, session = await connect(2)
    peer.send(announce(state={"state": "running"}))
    peer.send(state("idle", listed(CHILD)))
    await peer.settled()
    waiter = asyncio.ensure_future(session.wait_idle(background=True))
    peer.send(announce(state={"state": "idle"}))
    peer.send(state("idle", listed()))
    assert await asyncio.wait_for(waiter, 5) is True and session.turns == []
    await agent.close()


async def test_wait_idle_background_times_out_and_an_interrupt_leaves_the_work_going() -> None:
    peer, agent, session = await connect(2)
    peer.send(announce(state=None))
    peer.send(update({"sessionUpdate": "state_update", "state": "running"}, CHILD))  # its own word
    peer.send(state("idle", [{"type": "terminal", "terminalId": "t1"}]))
    await peer.settled()
    assert session.subagents[CHILD].run_state == "unknown"
    assert await session.wait_idle(0.05, background=True) is False
    waiter = asyncio.ensure_future(held(session.wait_idle(background=True)))
    await peer.settled()
    waiter.cancel()  # what a kernel interrupt does to the awaiting cell
    interrupted = await waiter
    assert isinstance(interrupted, TurnInterrupted) and "background work, which goes on" in str(interrupted)
    assert not [m for m in peer.stream.sent if isinstance(m, dict) and m.get("method") == "session/cancel"]
    peer.send(state("idle", listed()))
    peer.send(update({"sessionUpdate": "state_update", "state": "idle"}, CHILD))
    await peer.settled()
    assert await session.wait_idle(5, background=True), "unconfirmed by the parent: its own idle counts"
    await agent.close()


async def test_a_background_subagents_request_is_described_while_waiting(capsys, monkeypatch) -> None:
    frontend.reset()
    monkeypatch.setattr(quiet, "SETTLE", 0.01)
    monkeypatch.setattr(headless, "DELAY", 0.05)
    peer, agent, session = await connect(2)
    peer.send(announce(state={"state": "running"}))
    peer.send(state("idle", listed(CHILD), stopReason="end_turn"))
    await peer.settled()
    waiter = asyncio.ensure_future(session.wait_idle(background=True))
    peer.send(ask(4, CHILD))
    await until_async(lambda: "waiting for permission" in capsys.readouterr().out or None, 5)
    session.pending_permissions[0].select("ok")
    peer.send(announce(state={"state": "idle"}))
    peer.send(state("idle", listed()))
    assert await asyncio.wait_for(waiter, 5)
    frontend.reset()
    await agent.close()


# -- checkpoints: a background subagent's late writes are its turn's ----------------------------------
async def test_late_writes_of_a_background_subagent_are_its_turns_and_the_revert_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.txt").write_text("a\n")
    peer = Peer(2)
    agent = Agent(peer.stream)
    await agent.initialize(2)
    session = await agent.new_session(str(project))
    told: list[Any] = []
    session.checkpoints.listeners.append(told.append)
    turn = session.prompt_task("go")
    await until_async(lambda: prompts(peer), 10, message="the prompt")
    peer.reply(prompts(peer)[0]["id"], {})
    peer.send(state("running"))
    peer.send(announce(title="Make a file", state={"state": "running"}))
    await peer.settled()
    (project / "a.txt").write_text("A\n")  # during the turn
    peer.send(state("idle", listed(CHILD), stopReason="end_turn"))
    assert await asyncio.wait_for(turn, 10) == "end_turn"
    first = session.turns[0].checkpoint
    await until_async(lambda: first.ready, 10, message="the turn's end checkpoint")
    assert first.open and [r["path"] for r in first.changes()] == ["a.txt"]
    assert "still working (Make a file)" in first.note()
    with pytest.raises(RuntimeError, match="still working"):
        await first.revert()
    subprocess.run(["sh", "-c", "echo made > child.txt"], cwd=project, check=True)  # the child, late
    peer.send(announce(state={"state": "idle", "stopReason": "end_turn"}))
    peer.send(state("idle", listed()))
    await until_async(lambda: not first.open, 10, message="the open turn closed")
    assert [r["path"] for r in first.changes()] == ["a.txt", "child.txt"] and first.background == [
        "child.txt"
    ]
    late = "1 of these files was changed after the turn ended, while its background subagents worked"
    assert first.note() == late + " (Make a file)"
    peer.send(state("running"))  # the task notification: the agent's own turn writes too
    await until_async(lambda: len(session.turns) == 2 and session.turns[1].checkpoint is not None, 10)
    await until_async(lambda: session.turns[1].checkpoint.before is not None, 10)
    (project / "b.txt").write_text("b\n")
    peer.send(state("idle", listed(), stopReason="end_turn"))
    assert await session.wait_idle(10, background=True)
    second = session.turns[1].checkpoint
    await until_async(lambda: second.ready, 10)
    assert (second.number, [r["path"] for r in second.changes()], second.note()) == (2, ["b.txt"], None)
    assert [r["path"] for r in first.changes()] == ["a.txt", "child.txt"], "nothing more for the first"
    result = await first.revert()
    assert "after the turn ended" in result.note and result.to_dict()["note"] == result.note
    assert not (project / "child.txt").exists() and (project / "a.txt").read_text() == "a\n"
    assert told and all(cp in (first, second) for cp in told)
    await agent.close()


async def test_a_prompt_about_to_start_when_the_agent_starts_a_turn_goes_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    project = tmp_path / "proj"
    project.mkdir()
    peer = Peer(2)
    agent = Agent(peer.stream)
    await agent.initialize(2)
    session = await agent.new_session(str(project))
    repo, gate = session.checkpoints.repo, asyncio.Event()
    snapshot = repo.snapshot

    async def held_snapshot() -> Any:
        await gate.wait()
        return await snapshot()

    monkeypatch.setattr(repo, "snapshot", held_snapshot)
    task = session.prompt_task("hi")  # its checkpoint is being taken ...
    await peer.settled()
    peer.send(state("running"))  # ... when the agent starts a turn of its own
    await peer.settled()
    gate.set()
    await until_async(
        lambda: session.turns[0].checkpoint is not None and session.turns[0].checkpoint.before, 10
    )
    assert [t.origin for t in session.turns] == ["agent"] and prompts(peer) == []
    peer.send(state("idle", stopReason="end_turn"))
    await until_async(lambda: prompts(peer), 10, message="the prompt, after the agent's turn")
    assert [(t.origin, t.number, t.checkpoint.number) for t in session.turns] == [
        ("agent", 1, 1),
        ("user", 2, 2),
    ]
    peer.reply(prompts(peer)[0]["id"], {})
    peer.send(state("running"))
    peer.send(state("idle", stopReason="end_turn"))
    assert await asyncio.wait_for(task, 10) == "end_turn"
    await agent.close()
