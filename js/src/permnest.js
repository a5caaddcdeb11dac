// Which tool call each permission request belongs to: the entry model's nesting (a permission is a
// child of its tool call's entry). Keys only: what is drawn where is the entry list's business.
//
// `toolOf` maps a permission key to its entry's `tool_call_id` (a string) or null; the reverse
// index (tool call id → permission keys, in arrival order) is changed only by `set` and `drop`, so
// the two cannot disagree.

export class PermissionNesting {
  constructor() {
    this.tools = new Map(); // permission key → tool call id (string) or null
    this.children = new Map(); // tool call id → Set of permission keys
  }

  /** The tool call id permission `key` belongs to (null: none, undefined: not known). */
  toolOf(key) {
    return this.tools.get(key);
  }

  /** Permission `key` now belongs to tool call `toolCallId` (or null); returns the one before. */
  set(key, toolCallId) {
    const tool = toolCallId == null ? null : String(toolCallId);
    const before = this.tools.get(key);
    if (before !== tool) {
      this.unlink(key, before);
      if (tool != null) (this.children.get(tool) ?? this.children.set(tool, new Set()).get(tool)).add(key);
    }
    this.tools.set(key, tool);
    return before;
  }

  /** The permission keys of tool call `toolCallId`, in arrival order (a copy). */
  childrenOf(toolCallId) {
    return [...(this.children.get(String(toolCallId)) ?? [])];
  }

  /** Forget permission `key`; returns the tool call id it belonged to (or null/undefined). */
  drop(key) {
    const tool = this.tools.get(key);
    this.unlink(key, tool);
    this.tools.delete(key);
    return tool;
  }

  unlink(key, tool) {
    const keys = tool != null ? this.children.get(tool) : null;
    if (!keys) return;
    keys.delete(key);
    if (!keys.size) this.children.delete(tool);
  }
}
