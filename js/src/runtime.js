// The runtime bundle (ships once per kernel in the hidden Runtime widget): registers the API that
// SessionView loaders wait for, injects the CSS, and shows nothing itself.
import { debug } from "./debug.js";
import { mountHeader } from "./headerview.js";
import { mount } from "./mount.js";
import { injectStyle } from "./style.js";

const VERSION = "0.1.0";

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  promise.resolve = resolve;
  return promise;
}

const api = { version: VERSION, mount, mountHeader, debug };

globalThis.__acpNotebook ??= deferred();
globalThis.__acpNotebook.resolve(api);
if (typeof document !== "undefined") injectStyle(document);

export default () => ({
  render({ el }) {
    el.style.display = "none";
  },
});
