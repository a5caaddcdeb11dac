// xterm.js colours and font from the JupyterLab theme (CSS variables), with fallbacks.

const DARK_ANSI = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
  "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#e5e5e5"];
const LIGHT_ANSI = ["#000000", "#cd3131", "#00bc00", "#949800", "#0451a5", "#bc05bc", "#0598bc", "#555555",
  "#666666", "#cd3131", "#14ce14", "#b5ba00", "#0451a5", "#bc05bc", "#0598bc", "#a5a5a5"];
const NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

/** Resolve a CSS colour expression (may use var()) to "rgb(...)" in el's context. */
function resolve(el, expr, prop = "color") {
  const probe = document.createElement("span");
  probe.style.cssText = `position:absolute;visibility:hidden;${prop}:${expr}`;
  (el.isConnected ? el : document.body).append(probe);
  const value = getComputedStyle(probe)[prop === "color" ? "color" : "backgroundColor"];
  probe.remove();
  return value;
}

function luminance(rgb) {
  const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(rgb);
  if (!m) return 1;
  return (0.2126 * +m[1] + 0.7152 * +m[2] + 0.0722 * +m[3]) / 255;
}

/** An xterm ITheme derived from the page's theme at the time of the call. */
export function terminalTheme(el) {
  const background = resolve(el, "var(--jp-cell-editor-background, var(--jp-layout-color1, #f7f7f7))", "background-color");
  const foreground = resolve(el, "var(--jp-content-font-color1, var(--jp-ui-font-color1, #1f1f1f))");
  const dark = luminance(background) < 0.5;
  const ansi = dark ? DARK_ANSI : LIGHT_ANSI;
  const theme = {
    background, foreground, cursor: foreground, cursorAccent: background,
    selectionBackground: dark ? "rgba(120,160,255,0.35)" : "rgba(40,100,220,0.25)",
  };
  NAMES.forEach((n, i) => {
    theme[n] = ansi[i];
    theme[`bright${n[0].toUpperCase()}${n.slice(1)}`] = ansi[i + 8];
  });
  return theme;
}

let fontCache = null;

/** The code font (family, px size) of the page, cached once per page. */
export function termFont(el) {
  if (fontCache) return fontCache;
  const cs = getComputedStyle(el.isConnected ? el : document.documentElement);
  const family = cs.getPropertyValue("--jp-code-font-family").trim() || "Menlo, Consolas, 'DejaVu Sans Mono', monospace";
  const size = parseFloat(cs.getPropertyValue("--jp-code-font-size")) || 13;
  const font = { family, size: Math.max(9, Math.min(size, 20)) };
  if (el.isConnected) fontCache = font;
  return font;
}
