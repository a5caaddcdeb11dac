// Shared observers for a view's terminals: create xterm when a host nears the viewport, dispose
// it (after a grace period) when the host is far away, refit columns on resize.
import { viewsByHost } from "./terminal.js";

const NEAR = "400px 0px";
const FAR = "2500px 0px";
const DISPOSE_AFTER_MS = 3000;

export class TerminalObservers {
  constructor() {
    this.timers = new Map();
    this.ready = typeof IntersectionObserver !== "undefined";
    if (!this.ready) return;
    this.near = new IntersectionObserver((es) => es.forEach((e) => e.isIntersecting && this.show(e.target)), { rootMargin: NEAR });
    this.far = new IntersectionObserver((es) => es.forEach((e) => this.farChange(e)), { rootMargin: FAR });
    this.resize = typeof ResizeObserver !== "undefined" ? new ResizeObserver((es) => this.refit(es)) : null;
  }

  observe(view) {
    if (!this.ready) return void queueMicrotask(() => view.ensure());
    this.near.observe(view.el);
    this.far.observe(view.el);
    this.resize?.observe(view.screen);
  }

  unobserve(view) {
    if (!this.ready) return;
    this.near.unobserve(view.el);
    this.far.unobserve(view.el);
    this.resize?.unobserve(view.screen);
    clearTimeout(this.timers.get(view));
    this.timers.delete(view);
  }

  show(el) {
    const view = viewsByHost.get(el);
    if (!view) return;
    clearTimeout(this.timers.get(view));
    this.timers.delete(view);
    view.ensure();
  }

  farChange(e) {
    const view = viewsByHost.get(e.target);
    if (!view) return;
    clearTimeout(this.timers.get(view));
    this.timers.delete(view);
    if (!e.isIntersecting && view.term) {
      this.timers.set(view, setTimeout(() => (this.timers.delete(view), view.dispose()), DISPOSE_AFTER_MS));
    }
  }

  refit(entries) {
    for (const e of entries) {
      const view = viewsByHost.get(e.target.parentElement);
      if (view && view.term && e.contentRect.width > 0) view.fitCols();
    }
  }

  disconnect() {
    this.near?.disconnect();
    this.far?.disconnect();
    this.resize?.disconnect();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
