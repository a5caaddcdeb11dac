"""The update kinds other than tool calls and terminals, as a mixin of ``SessionState``.

Messages and plans follow ``messages``' rules; ``state_update`` sets ``run_state`` (an
unknown state is kept verbatim and is not idle); the session-wide kinds keep their latest
value; ``notice`` and unknown kinds are kept in arrival order.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .changes import Change
from .messages import ROLES, V1_PLAN_ID, Message, Plan
from .patch import patch_fields, patch_meta, type_name

RUN_STATES = frozenset({"idle", "running", "requires_action"})
GENERIC_KINDS = frozenset({"compaction_update", "compaction_summary_chunk"})


class UpdatesMixin:
    """Handlers for messages, plans, run state and session-wide updates."""

    def _init_updates(self) -> None:
        self.run_state = "idle"
        self.stop_reason: str | None = None
        self.stop_error: Any = None
        self.background: list[Any] = []
        self.available_commands: list[Any] = []
        self.config_options: list[Any] = []
        self.current_mode_id: str | None = None
        self.session_info: dict[str, Any] = {}
        self.usage: dict[str, Any] | None = None
        self.notices: list[dict[str, Any]] = []
        self.other_updates: list[dict[str, Any]] = []

    # -- messages --------------------------------------------------------------------------------
    def _message_obj(self, msg_id: str, role: str, synthetic: bool = False) -> tuple[Message, bool]:
        msg = self.messages.get(msg_id)
        created = msg is None
        if msg is None:
            msg = self.messages[msg_id] = Message(msg_id, role, synthetic)
            self._note("message", msg_id)
        self._last_entry = ("message", msg_id)
        return msg, created

    def _synthetic_message(self, role: str) -> tuple[Message, bool]:
        last = self._last_entry
        if last is not None and last[0] == "message":
            msg = self.messages[last[1]]
            if msg.synthetic and msg.role == role:
                return msg, False
        self._synthetic_ids += 1
        return self._message_obj(f"_v1_{role}_{self._synthetic_ids}", role, True)

    def _message_chunk(self, update: dict[str, Any]) -> None:
        role = ROLES[update["sessionUpdate"]]
        if "content" not in update:
            self.diagnose("malformed-update", "message chunk without `content`", update)
            return
        msg_id = update.get("messageId")
        if msg_id is not None and not isinstance(msg_id, str):
            self.diagnose("invalid-field", f"`messageId` is {type_name(msg_id)}", update)
            msg_id = None
        msg, created = self._synthetic_message(role) if msg_id is None else self._message_obj(msg_id, role)
        block = update["content"]
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            self.diagnose("malformed-content", "content block needs a `type` (kept)", block)
        msg.content.append(block)
        if self._observers:
            self._emit(Change("message", msg.message_id, ("content",), created))

    def _message(self, update: dict[str, Any]) -> None:
        msg_id = update.get("messageId")
        if not isinstance(msg_id, str):
            self.diagnose("malformed-update", "message update without string `messageId`", update)
            return
        msg, created = self._message_obj(msg_id, ROLES[update["sessionUpdate"]])
        changed = []
        if "content" in update:
            content = update["content"]
            if content is None or isinstance(content, list):
                msg.content = list(content or [])
                changed.append("content")
            else:
                self.diagnose("invalid-field", f"message `content` is {type_name(content)}", content)
        if "_meta" in update:
            if update["_meta"] is None or isinstance(update["_meta"], dict):
                msg.meta = patch_meta(msg.meta, update["_meta"])
                changed.append("_meta")
            else:
                self.diagnose("invalid-field", f"message `_meta` is {type_name(update['_meta'])}", update)
        if self._observers:
            self._emit(Change("message", msg_id, tuple(changed), created))

    # -- plans -----------------------------------------------------------------------------------
    def _plan_update(self, update: dict[str, Any]) -> None:
        plan = update.get("plan")
        if not isinstance(plan, dict) or not isinstance(plan.get("planId"), str):
            self.diagnose("malformed-update", "plan_update needs a `plan` with a `planId`", update)
            return
        self._set_plan(plan["planId"], plan)

    def _v1_plan(self, update: dict[str, Any]) -> None:
        plan = {"type": "items", "planId": V1_PLAN_ID, "entries": update.get("entries")}
        if "_meta" in update:
            plan["_meta"] = update["_meta"]
        self._set_plan(V1_PLAN_ID, plan)

    def _set_plan(self, plan_id: str, plan: dict[str, Any]) -> None:
        obj = self.plans.get(plan_id)
        created = obj is None
        if obj is None:
            obj = self.plans[plan_id] = Plan(plan_id)
            self._note("plan", plan_id)
        obj.raw = dict(plan)
        obj.type = plan.get("type") if isinstance(plan.get("type"), str) else "items"
        obj.meta = plan.get("_meta") if isinstance(plan.get("_meta"), dict) else None
        entries = plan.get("entries")
        if obj.type == "items":
            if isinstance(entries, list):
                obj.entries = list(entries)
            else:
                self.diagnose("invalid-field", "plan `entries` must be an array", plan)
        if self._observers:
            self._emit(Change("plan", plan_id, ("entries",), created))

    # -- run state and session-wide values -------------------------------------------------------
    def _state_update(self, update: dict[str, Any]) -> None:
        state = update.get("state")
        if not isinstance(state, str):
            self.diagnose("malformed-update", "state_update without string `state`", update)
            return
        if state not in RUN_STATES and not state.startswith("_"):
            self.diagnose("unknown-state", f"unknown run state {state!r} (kept)", update, "info")
        self.run_state = state
        background = update.get("background")
        self.background = list(background) if isinstance(background, list) else []
        if state == "idle":
            reason = update.get("stopReason")
            self.stop_reason = reason if isinstance(reason, str) else None
            self.stop_error = update.get("error") if reason == "error" else None
        if self._observers:
            self._emit(Change("run_state", state, ("state",)))

    def _session_value(self, update: dict[str, Any]) -> None:
        kind = update["sessionUpdate"]
        key, attr = _SESSION_VALUES[kind]
        if kind in ("usage_update", "session_info_update"):
            self._patch_record(attr, update)
        elif kind == "current_mode_update":
            mode = update.get(key, update.get("modeId"))  # `modeId`: the v1 docs' example spelling
            if not isinstance(mode, str):
                self.diagnose("invalid-field", "`currentModeId` must be a string (mode unchanged)", update)
                return
            self.current_mode_id = mode
        elif isinstance(update.get(key), list):
            setattr(self, attr, list(update[key]))
        else:
            self.diagnose("invalid-field", f"`{key}` must be an array", update)
            return
        if self._observers:
            self._emit(Change("session", kind, (attr,)))

    def _patch_record(self, attr: str, update: dict[str, Any]) -> None:
        skip: tuple[str, ...] = ("sessionUpdate",)
        meta = update.get("_meta")
        if meta is not None and not isinstance(meta, dict):
            self.diagnose("invalid-field", "`_meta` is not an object (ignored)", update)
            skip += ("_meta",)
        record = dict(getattr(self, attr) or {})
        patch_fields(record, update, skip=skip)
        setattr(self, attr, record)

    def _notice(self, update: dict[str, Any]) -> None:
        self.notices.append({k: v for k, v in update.items() if k != "sessionUpdate"})
        self._note("notice", len(self.notices) - 1)
        if self._observers:
            self._emit(Change("notice", str(len(self.notices) - 1), (), True))

    def _apply_other(self, kind: Any, update: dict[str, Any]) -> None:
        if not isinstance(kind, str):
            self.diagnose("malformed-update", "update without string `sessionUpdate`", update)
            return
        if kind not in GENERIC_KINDS and not kind.startswith("_"):
            self.diagnose("unknown-update", f"unknown update kind {kind!r} (kept raw)", update, "info")
        self.other_updates.append(update)
        self._note("other", len(self.other_updates) - 1)
        if self._observers:
            self._emit(Change("other", str(len(self.other_updates) - 1), (kind,), True))

    def _v1_tool_call(self, update: dict[str, Any]) -> None:
        self._tool_call(update, replace=True)

    _handlers: ClassVar[dict[str, Any]] = {}


_SESSION_VALUES = {
    "available_commands_update": ("availableCommands", "available_commands"),
    "config_option_update": ("configOptions", "config_options"),
    "session_info_update": ("title", "session_info"),
    "usage_update": ("used", "usage"),
    "current_mode_update": ("currentModeId", "current_mode_id"),
}
