"""The elicitation scenario: the agent asks the user (`elicitation/create`), by ACP v2 and v1 alike.

Elicitation is the same in both versions; only where the client advertises it differs
(`capabilities.elicitation` in v2, `clientCapabilities.elicitation` in v1 — the agent keeps whichever
the version uses as `em.client`). A mode is used only when the client advertised it (present and not
null); without any, the turn says so and goes on with defaults.

1. At `session/new` (``--scenario elicitation`` only) a **request-scoped** form whose `requestId`
   is the client's pending `session/new` request: the session's profile. The answer (or the default,
   on decline / cancel / error) shapes the session's turns.
2. In a turn, a **form** tied to a tool call with every kind of field (`forms.RELEASE`; over v1
   without its custom string `format`, which v1's closed `StringFormat` does not allow); the agent
   checks the accepted values again and echoes them, or says what did not fit; decline and cancel
   leave the release unprepared. The session reports `requires_action` while it waits (v2).
3. A **URL** elicitation (session-scoped): after the user's consent the demo pretends the sign-in
   happened and sends `elicitation/complete` with the same `elicitationId` a moment later.
4. A **withdrawn** form: the agent finds the answer itself after a moment and withdraws the question
   with `$/cancel_request`; the client answers it (`cancel`, or an error) and the agent goes on.
5. (v2) A **subagent's** question: a child session (`children.open_child`) asks a yes/no form under
   its own `sessionId`; it and its parent report `requires_action` while it waits.

A cancelled turn withdraws its pending question with `$/cancel_request` too (the turn's scope alone
does not answer an elicitation).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from . import children, forms
from .emitter import TurnCancelled, text_item
from .wire import RpcError

CONNECT_URL = "https://login.example.com/acp-demo/connect?elicitation={}"
WITHDRAW_AFTER = 1.5  # seconds (scaled by --speed) the agent waits before it withdraws
COMPLETE_AFTER = 3.0  # seconds (scaled) between the user's consent and `elicitation/complete`
ANSWER_BOUND = 5.0  # seconds (unscaled) the agent waits for the answer to a withdrawn question
NO_MODES = [
    "This client advertises no elicitation modes, so I cannot ask you anything. ",
    "I'll go on with my defaults.",
]


def modes(client: dict) -> set[str]:
    """The elicitation modes the client advertised (`form`, `url`): present and not null."""
    caps = client.get("elicitation")
    return {m for m in ("form", "url") if isinstance(caps, dict) and caps.get(m) is not None}


def answer_of(result: Any) -> tuple[str, dict]:
    """The action (`accept`, `decline`, `cancel`; anything else counts as `cancel`) and the content."""
    action = result.get("action") if isinstance(result, dict) else None
    content = result.get("content") if isinstance(result, dict) else None
    if action not in ("accept", "decline", "cancel"):
        action = "cancel"
    return action, content if isinstance(content, dict) else {}


# -- request-scoped, at session/new ----------------------------------------------------------------


async def ask_at_new(wire: Any, client: dict, req_id: Any) -> dict:
    """Ask for the session's profile while `session/new` (`req_id`) waits; the settings to use."""
    settings = {"profile": "careful", "verbose": False, "asked": "not asked"}
    if "form" not in modes(client):
        return settings
    params = {"requestId": req_id, "mode": "form", "message": "Which profile should this session use?"}
    try:
        result = await wire.request("elicitation/create", {**params, "requestedSchema": forms.PROFILE})
    except RpcError as exc:
        return {**settings, "asked": f"refused ({exc.code})"}
    action, content = answer_of(result)
    if action == "accept" and not forms.problems(forms.PROFILE, content):
        return {**settings, **content, "asked": "accepted"}
    return {**settings, "asked": action if action != "accept" else "accepted, but did not fit"}


# -- asking in a turn --------------------------------------------------------------------------


async def ask(em: Any, params: dict, withdraw_after: float | None = None) -> tuple[str, dict]:
    """Send a session-scoped `elicitation/create` and wait for the answer, reporting
    `requires_action` meanwhile (v2). With `withdraw_after`, withdraw it after that many (scaled)
    seconds unless answered: ('withdrawn', {}) or what the client answered first."""
    params = {"sessionId": em.session.session_id, **params}
    req_id, future = em.out.start_request("elicitation/create", params)
    blocked(em, True)
    try:
        withdrawn = await _wait(em, req_id, future, withdraw_after)
    finally:
        blocked(em, False)
    try:
        result = future.result() if future.done() else None
    except RpcError as exc:
        return ("withdrawn" if withdrawn else f"error {exc.code}"), {}
    return ("withdrawn", {}) if withdrawn else answer_of(result)


async def _wait(em: Any, req_id: int, future: asyncio.Future, withdraw_after: float | None) -> bool:
    """Wait for `future`; withdraw it on turn cancel (then raise) or after `withdraw_after`."""
    timeout = None if withdraw_after is None else withdraw_after * em.speed
    waiter = asyncio.ensure_future(em.cancelled.wait())
    try:
        await asyncio.wait({future, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if future.done():
        return False
    em.out.notify("$/cancel_request", {"requestId": req_id})
    if em.cancelled.is_set():
        future.cancel()
        raise TurnCancelled
    with contextlib.suppress(TimeoutError, RpcError):
        await asyncio.wait_for(asyncio.shield(future), ANSWER_BOUND)
    return True


def blocked(em: Any, waiting: bool) -> None:
    """Report `requires_action` while the turn waits for the user, `running` after (v2 only)."""
    if em.version >= 2 and not em.cancelled.is_set():
        em.state("requires_action" if waiting else "running")


# -- the turn ---------------------------------------------------------------------------------


async def play(em: Any) -> None:
    """Ask with every kind of form, a URL and a question withdrawn; use what the user answered."""
    available = modes(em.client)
    if not available:
        await em.stream("agent_message", NO_MODES)
        return
    settings = em.session.settings
    if settings:
        await em.stream(
            "agent_message",
            [
                f"This session uses the **{settings['profile']}** profile ",
                f"({settings['asked']} at session/new). ",
            ],
        )
    if "form" in available:
        await release(em)
    if "url" in available:
        await connect(em)
    if "form" in available:
        await withdrawn(em)
    if "form" in available and em.version >= 2:
        await from_subagent(em)
    missing = {"form", "url"} - available
    if missing:
        skipped = " or ".join(sorted(missing))
        await em.stream(
            "agent_message", [f"You did not advertise {skipped} mode, so I skipped those questions."]
        )


async def release(em: Any) -> None:
    """The form with every field type, tied to a tool call; echo the answer or say what did not fit."""
    call_id = em.sfx("call_release")
    em.tool(call_id, title="Prepare the release", kind="other", status="pending")
    form = forms.release_form(em.version)
    params = {"mode": "form", "toolCallId": call_id, "requestedSchema": form}
    action, content = await ask(em, {**params, "message": "How should I prepare the release?"})
    if action != "accept":
        em.tool(call_id, status="failed", content=[text_item(f"No release settings ({action}).")])
        await em.stream("agent_message", [not_answered(action, "I left the release unprepared.")])
        return
    wrong = forms.problems(form, content)
    if wrong:
        em.tool(
            call_id,
            status="failed",
            content=[text_item("The answer did not fit the form: " + "; ".join(wrong))],
        )
        await em.stream(
            "agent_message", ["Your answer did not fit the form, so I prepared nothing: ", "; ".join(wrong)]
        )
        return
    em.tool(call_id, status="in_progress", raw_input=content)
    await em.pause(0.3)
    em.tool(call_id, status="completed", content=[text_item(json.dumps(content, indent=2, sort_keys=True))])
    await em.stream("agent_message", release_lines(content))


def release_lines(content: dict) -> list[str]:
    """What the agent does with the release settings (it echoes every value it got)."""
    reviewers = forms.titles(forms.REVIEWERS, content.get("reviewers", [])) or ["nobody"]
    lines = [
        f"Release **{content['name']}** {content['version']} ",
        f"with the {content['strategy']} strategy on {', '.join(content['platforms'])}. ",
        f"Reviewers: {', '.join(reviewers)}. ",
    ]
    if content["strategy"] == "aggressive":
        lines.append("Aggressive: I'll skip the slow checks. ")
    rest = {
        k: v for k, v in content.items() if k not in ("name", "version", "strategy", "platforms", "reviewers")
    }
    lines.append(
        "Also: " + (", ".join(f"{k}={v!r}" for k, v in sorted(rest.items())) or "nothing else") + "."
    )
    return lines


async def connect(em: Any) -> None:
    """A URL elicitation; after consent, `elicitation/complete` once the 'sign-in' is done."""
    em.session.elicitations += 1
    elicitation_id = f"elic_{em.session.session_id}_{em.session.elicitations}"
    params = {"mode": "url", "elicitationId": elicitation_id, "url": CONNECT_URL.format(elicitation_id)}
    action, _ = await ask(em, {**params, "message": "Sign in to the demo's release service."})
    if action != "accept":
        await em.stream("agent_message", [not_answered(action, "I did not connect to the release service.")])
        return
    await em.stream("agent_message", ["Thanks: waiting for the sign-in to finish in your browser. "])
    await em.pause(COMPLETE_AFTER)
    em.out.notify("elicitation/complete", {"elicitationId": elicitation_id})
    await em.stream("agent_message", ["Signed in (the demo pretends so): connected to the release service."])


async def withdrawn(em: Any) -> None:
    """A question the agent withdraws once it has found the answer itself."""
    params = {
        "mode": "form",
        "message": "Which test runner does this project use?",
        "requestedSchema": forms.RUNNER,
    }
    action, content = await ask(em, params, withdraw_after=WITHDRAW_AFTER)
    if action == "withdrawn":
        said = "Never mind the test-runner question: pyproject.toml says pytest, so I withdrew it."
    elif action == "accept" and not forms.problems(forms.RUNNER, content):
        said = f"You answered before I found it: {content['runner']}."
    else:
        said = not_answered(action, "pyproject.toml says pytest anyway.")
    await em.stream("agent_message", [said])


async def from_subagent(em: Any) -> None:
    """A child session asks the user whether to tag the release; its report says what it got."""
    child = children.open_child(em, "tagger", "Tag the release", "Asks before it tags", cancel=True)
    children.give_task(em, child, "Ask whether to tag the release, then report.")
    stop, said = await child.run(ask_to_tag)
    em.check()
    await children.report(child, em, said if stop == "end_turn" else ["I was cancelled before I asked."])


async def ask_to_tag(child: Any) -> list[str]:
    """The tagger's turn: one form question under its own session id."""
    params = {"mode": "form", "message": "Tag the release as v-next?", "requestedSchema": forms.TAG}
    action, content = await ask(child, params)
    if action == "accept" and not forms.problems(forms.TAG, content):
        return ["Tagged v-next." if content.get("tag") else "Not tagged, as you said."]
    return [not_answered(action, "I did not tag it.")]


def not_answered(action: str, then: str) -> str:
    """A sentence for a question that got no usable answer."""
    said = {"decline": "You declined", "cancel": "You dismissed the question"}.get(action)
    return f"{said or f'The question failed ({action})'}: {then}"
