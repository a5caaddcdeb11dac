// Tiny stroked 16×16 icons (our own constant path data, built with createElementNS).

const NS = "http://www.w3.org/2000/svg";

const PATHS = {
  read: ["M4 1.5h5l3 3v10H4z", "M9 1.5v3h3", "M6 8h4M6 10.5h4"],
  edit: ["M10.5 2.5l3 3-7.5 7.5H3v-3z", "M9 4l3 3"],
  delete: ["M3 4.5h10", "M6.5 4.5V2.5h3v2", "M4.5 4.5l.7 9h5.6l.7-9"],
  move: ["M2 8h10", "M9 4.5L12.5 8 9 11.5", "M14 3v10"],
  search: ["M7 2.5a4.5 4.5 0 1 1 0 9 4.5 4.5 0 0 1 0-9z", "M10.3 10.3L14 14"],
  execute: ["M2 3h12v10H2z", "M4.5 6l2 2-2 2", "M8 10.5h3.5"],
  think: ["M8 1.8a4.2 4.2 0 0 0-2.5 7.6V11h5V9.4A4.2 4.2 0 0 0 8 1.8z", "M6 13.2h4"],
  fetch: ["M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13z", "M1.5 8h13", "M8 1.5c2.2 2.4 2.2 10.6 0 13M8 1.5c-2.2 2.4-2.2 10.6 0 13"],
  switch_mode: ["M2.5 5.5h10l-2.5-2.5", "M13.5 10.5h-10l2.5 2.5"],
  other: ["M8 2.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11z", "M5.5 8h.01M8 8h.01M10.5 8h.01"],
  stop: ["M4 4h8v8H4z"],
  cancel: ["M4 4l8 8M12 4l-8 8"],
  terminal: ["M2 3h12v10H2z", "M4.5 6l2 2-2 2"],
  file: ["M4 1.5h5l3 3v10H4z", "M9 1.5v3h3"],
  plan: ["M6 4h7M6 8h7M6 12h7", "M2.5 4h.01M2.5 8h.01M2.5 12h.01"],
  warn: ["M8 2L14.5 13.5h-13z", "M8 6.5v3.5M8 12h.01"],
  user: ["M8 2.5a2.8 2.8 0 1 1 0 5.6 2.8 2.8 0 0 1 0-5.6z", "M2.8 14c.6-2.9 2.6-4.3 5.2-4.3s4.6 1.4 5.2 4.3"],
  agent: ["M3 5h10v8H3z", "M8 2.5V5", "M6 8.5h.01M10 8.5h.01", "M6 11h4"],
};

/** An inline SVG icon; unknown names fall back to "other". */
export function icon(name, cls = "acp-icon") {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", cls);
  svg.setAttribute("aria-hidden", "true");
  for (const d of PATHS[name] || PATHS.other) {
    const p = document.createElementNS(NS, "path");
    p.setAttribute("d", d);
    svg.append(p);
  }
  return svg;
}
