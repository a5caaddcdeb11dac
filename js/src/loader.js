// The SessionView (and SessionHeaderView) module: tiny. Buffers custom messages until the runtime
// (registered by the Runtime widget's ESM) is available, then hands the view to api.mount (a view
// whose `kind` is "header": api.mountHeader). Sets `data-acp-anchor` from the `anchor` trait.

const WAIT_MS = 1000;
const MAX_QUEUED = 2000;

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  promise.resolve = resolve;
  return promise;
}

/** Import the runtime from the Runtime widget's `_esm` (used when it did not register itself). */
async function loadRuntime(model) {
  const ref = model.get("runtime"); // "IPY_MODEL_<id>" (or the model itself, if a host unpacks it)
  let runtime = ref && typeof ref.get === "function" ? ref : null;
  if (!runtime) {
    const id = typeof ref === "string" ? ref.replace(/^IPY_MODEL_/, "") : "";
    if (!id) throw new Error("no runtime widget");
    runtime = await model.widget_manager.get_model(id);
  }
  const esm = runtime && runtime.get("_esm");
  if (typeof esm !== "string" || !esm) throw new Error("runtime widget has no code");
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  try {
    await import(/* webpackIgnore: true */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

async function runtimeApi(model) {
  const registry = (globalThis.__acpNotebook ??= deferred());
  let timer;
  const timeout = new Promise((r) => (timer = setTimeout(r, WAIT_MS, null)));
  const api = await Promise.race([registry, timeout]);
  clearTimeout(timer);
  if (api) return api;
  await loadRuntime(model);
  return registry;
}

/** Tell the kernel that a view of this widget is on a page (`{"type": "rendered"}`, once per view). */
function rendered(model) {
  try {
    model.send({ type: "rendered" });
  } catch (err) {
    console.warn("acp_notebook: cannot reach the kernel", err);
  }
}

/** Keep `el.dataset.acpAnchor` equal to the `anchor` trait (a turn view: the header's lines find it). */
function anchor(model, el) {
  const set = () => {
    const value = model.get("anchor");
    if (typeof value === "string" && value) el.dataset.acpAnchor = value;
    else delete el.dataset.acpAnchor;
  };
  set();
  model.on("change:anchor", set);
  return () => model.off("change:anchor", set);
}

export default () => {
  let queue = [];
  const onMsg = (msg, buffers) => {
    if (queue && queue.length < MAX_QUEUED) queue.push({ msg, buffers });
  };
  return {
    initialize({ model }) {
      model.on("msg:custom", onMsg);
      return () => model.off("msg:custom", onMsg);
    },
    async render({ model, el }) {
      rendered(model); // at once, before the runtime loads: the kernel learns someone can see and click
      const unanchor = anchor(model, el);
      try {
        const api = await runtimeApi(model);
        const queued = queue || [];
        queue = null; // from now on each mounted view listens itself (and resyncs)
        const mount = model.get("kind") === "header" ? api.mountHeader : api.mount;
        if (typeof mount !== "function") throw new Error("this runtime cannot show this view");
        const cleanup = mount({ model, el, queued });
        return () => {
          unanchor();
          cleanup?.();
        };
      } catch (err) {
        const msg = document.createElement("pre");
        msg.textContent = `acp_notebook: could not load the view runtime (${err && err.message ? err.message : err})`;
        el.append(msg);
      }
    },
  };
};
