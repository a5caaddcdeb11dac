"""v1 host capabilities: the file sandbox and PTY terminals, directly and through a peer."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from acp_notebook import SessionState, start_agent
from acp_notebook.client.errors import RpcError
from acp_notebook.client.host import FilePolicy, Host
from acp_notebook.client.host.fs import FS_DENIED

from .support import INIT_V1, INIT_V2, NEW, Peer, until_async


@pytest.fixture
def root(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "outside.txt").write_text("secret")
    os.symlink(tmp_path / "outside.txt", tmp_path / "proj" / "link.txt")
    return tmp_path


def host(root, **policy):
    state = SessionState()
    return Host(state, [str(root / "proj")], FilePolicy(**policy)), state


async def test_read_inside_roots_with_line_and_limit(root):
    h, _ = host(root)
    path = str(root / "proj" / "a.txt")
    assert await h.serve("fs/read_text_file", {"path": path}) == {"content": "one\ntwo\nthree\nfour\n"}
    assert await h.serve("fs/read_text_file", {"path": path, "line": 2, "limit": 2}) == {
        "content": "two\nthree\n"
    }


@pytest.mark.parametrize(
    ("name", "code"),
    [("outside.txt", FS_DENIED), ("proj/link.txt", FS_DENIED), ("proj/missing.txt", -32002), ("rel", -32602)],
)
async def test_read_refusals(root, name, code):
    h, _ = host(root)
    path = "proj/a.txt" if name == "rel" else str(root / name)
    with pytest.raises(RpcError) as info:
        await h.serve("fs/read_text_file", {"path": path})
    assert info.value.code == code and info.value.message


async def test_write_is_recorded_as_a_diff_and_notebooks_are_refused(root):
    h, state = host(root)
    path = str(root / "proj" / "a.txt")
    await h.serve("fs/write_text_file", {"path": path, "content": "ONE\n"})
    assert (root / "proj" / "a.txt").read_text() == "ONE\n"
    assert state.file_writes == [{"path": path, "oldText": "one\ntwo\nthree\nfour\n", "newText": "ONE\n"}]
    assert state.timeline[-1] == ("file_write", 0)
    with pytest.raises(RpcError, match="notebooks"):
        await h.serve("fs/write_text_file", {"path": str(root / "proj" / "x.ipynb"), "content": "{}"})
    assert not (root / "proj" / "x.ipynb").exists()


async def test_policy_read_only_extra_roots_and_callback(root):
    h, _ = host(root, read_only=True, extra_roots=[str(root)])
    assert (await h.serve("fs/read_text_file", {"path": str(root / "outside.txt")}))["content"] == "secret"
    with pytest.raises(RpcError, match="read-only"):
        await h.serve("fs/write_text_file", {"path": str(root / "proj" / "b.txt"), "content": "x"})
    h, _ = host(root, check=lambda op, path: not path.endswith("a.txt"))
    with pytest.raises(RpcError, match="policy"):
        await h.serve("fs/read_text_file", {"path": str(root / "proj" / "a.txt")})


async def test_terminal_streams_bytes_keeps_them_after_release(root):
    h, state = host(root)
    script = "printf 'a\\342\\234'; sleep 0.2; printf '\\223 %s %s' \"$PAGER\" \"$TERM\"; exit 3"
    created = await h.serve(
        "terminal/create", {"command": "sh", "args": ["-c", script], "cwd": str(root / "proj")}
    )
    tid = created["terminalId"]
    assert await h.serve("terminal/wait_for_exit", {"terminalId": tid}) == {"exitCode": 3, "signal": None}
    out = await h.serve("terminal/output", {"terminalId": tid})
    assert out == {
        "output": "a✓ cat xterm-256color",
        "truncated": False,
        "exitStatus": {"exitCode": 3, "signal": None},
    }
    await h.serve("terminal/release", {"terminalId": tid})
    term = state.terminals[tid]
    assert term.text == "a✓ cat xterm-256color" and term.exit_status == {"exitCode": 3, "signal": None}
    assert term.command.startswith("sh -c") and term.cwd == str(root / "proj")
    with pytest.raises(RpcError):
        await h.serve("terminal/output", {"terminalId": tid})


async def test_output_byte_limit_truncates_on_a_character_boundary(root):
    h, _ = host(root)
    created = await h.serve("terminal/create", {"command": "printf 'xx✓✓✓'", "outputByteLimit": 7})
    await h.serve("terminal/wait_for_exit", created)
    out = await h.serve("terminal/output", created)
    assert out["truncated"] and out["output"] == "✓✓"  # 8 bytes of ✓✓✓ do not fit; a split ✓ is dropped


async def test_kill_reports_the_signal_and_release_leaves_no_process(root):
    h, _ = host(root)
    created = await h.serve("terminal/create", {"command": "sleep", "args": ["30"]})
    pid = h.terminals.processes[created["terminalId"]]._proc.pid
    await h.serve("terminal/kill", created)
    assert await asyncio.wait_for(h.serve("terminal/wait_for_exit", created), 5) == {
        "exitCode": None,
        "signal": "SIGTERM",
    }
    await h.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_v1_agent_gets_host_methods_and_v2_agent_gets_method_not_found(tmp_path):
    (tmp_path / "f.txt").write_text("hello")
    read = {
        "jsonrpc": "2.0",
        "id": 50,
        "method": "fs/read_text_file",
        "params": {"sessionId": "s1", "path": str(tmp_path / "f.txt")},
    }
    for init, expect in ((INIT_V1, {"result": {"content": "hello"}}), (INIT_V2, {"error": -32601})):
        sub = tmp_path / init["reply"]["protocolVersion"].__str__()
        sub.mkdir()
        peer = Peer(sub, [init, NEW, read, {"await_response": True}])
        agent = await start_agent(peer.command, protocol_version=init["reply"]["protocolVersion"])
        await agent.new_session(str(tmp_path))
        await until_async(peer.responses, 10, message="the answer to fs/read_text_file")
        await agent.close()
        (reply,) = peer.responses()
        if "result" in expect:
            assert reply["result"] == expect["result"]
        else:
            assert reply["error"]["code"] == expect["error"]
        assert (
            json.loads(peer.log.read_text().splitlines()[0])["params"]["clientCapabilities"]["terminal"]
            is True
        )


async def test_v1_demo_runs_its_tests_in_a_client_pty(tmp_path):
    agent = await start_agent(
        [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--protocol", "1"]
    )
    session = await agent.new_session(str(tmp_path))
    session.permission_handler = lambda request: "allow-once"
    assert await session.prompt("go") == "end_turn"
    (content,) = session.state.tool_calls["call_test"].content
    term = session.state.terminals[content["terminalId"]]
    assert (
        "✓" in term.text
        and "\x1b[32mPASSED" in term.text
        and term.exit_status == {"exitCode": 0, "signal": None}
    )
    assert session._host.terminals.processes == {}  # the agent released it; the bytes stay
    await agent.close()


async def test_a_blocking_turn_does_not_wait_forever_on_an_async_handler(monkeypatch):
    from acp_notebook.client import policy
    from acp_notebook.protocol import PermissionRequest

    monkeypatch.setattr(policy, "HANDLER_TIMEOUT", 0.1)
    options = [{"optionId": "no", "name": "No", "kind": "reject_once"}]
    request = PermissionRequest("perm_1", 1, {"sessionId": "s", "title": "Go?", "options": options})

    async def waits_for_a_click(_request):
        await asyncio.Event().wait()  # nobody clicks

    notes: list[str] = []
    assert await asyncio.wait_for(policy.decide(request, "reject", waits_for_a_click, notes), 5) == "no"
    assert "no answer within 0.1 s" in notes[0]
