// Where each permission request is drawn, and which tool call it belongs to.
//
// One record per permission entry: {key, element, toolCallId}. `element` is the drawn block (at
// the permission's own place in the list, or inside the card of `toolCallId`); `toolCallId` is the
// entry's `tool_call_id` (string) or null. The reverse index (tool call id → permission keys) is
// derived here from the records and changed only by `place` and `drop`, so it cannot disagree.

export class PermissionLinks {
  constructor() {
    this.records = new Map(); // permission key → {key, element, toolCallId}
    this.byTool = new Map(); // tool call id → Set of permission keys
  }

  /** The element drawn for permission `key`, or undefined. */
  element(key) {
    return this.records.get(key)?.element;
  }

  /** Record that `key` is drawn as `element` and belongs to tool call `toolCallId` (or null). */
  place(key, element, toolCallId = null) {
    const tool = toolCallId == null ? null : String(toolCallId);
    const before = this.records.get(key);
    if (before?.toolCallId !== tool) {
      if (before) this.unlink(before);
      if (tool != null) (this.byTool.get(tool) ?? this.byTool.set(tool, new Set()).get(tool)).add(key);
    }
    this.records.set(key, { key, element, toolCallId: tool });
  }

  /** The records of the permissions that belong to tool call `toolCallId` (a copy: safe to redraw). */
  forCard(toolCallId) {
    return [...(this.byTool.get(String(toolCallId)) ?? [])].map((key) => this.records.get(key));
  }

  /** Forget permission `key`; returns its record (or undefined). */
  drop(key) {
    const rec = this.records.get(key);
    if (!rec) return undefined;
    this.unlink(rec);
    this.records.delete(key);
    return rec;
  }

  unlink(rec) {
    const keys = this.byTool.get(rec.toolCallId);
    if (!keys) return;
    keys.delete(rec.key);
    if (!keys.size) this.byTool.delete(rec.toolCallId);
  }
}
