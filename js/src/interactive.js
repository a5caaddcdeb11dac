// Which terminals take keystrokes (WIRE.md: Header.interactive_terminals), from live patches
// only: a view drawn from its snapshot alone (a saved notebook reopened without its kernel) stays
// read-only, and snapshot refreshes flip nothing. A terminal that starts or stops taking input
// rebuilds its screen. A view extension; `ctx.interactive` is the set the terminals read.
export class InteractiveTerminals {
  constructor(ctx, terminals) {
    this.ctx = ctx;
    this.terminals = terminals;
    ctx.interactive = new Set();
  }

  onPatch(p, fromSnapshot) {
    if (p.header && !fromSnapshot) this.set(p.header.interactive_terminals);
  }

  set(ids) {
    const now = new Set(Array.isArray(ids) ? ids.map(String) : []);
    const before = this.ctx.interactive;
    this.ctx.interactive = now;
    for (const id of new Set([...before, ...now])) {
      if (before.has(id) !== now.has(id)) for (const v of this.terminals.views(id)) v.setInteractive(now.has(id));
    }
  }
}
