// ACP content blocks (text, image, audio, resource links, embedded resources, unknown).
import { renderRaw } from "./generic.js";
import { renderMarkdown } from "./markdown.js";
import { isHttpUrl } from "./sanitize.js";
import { fmtBytes, h, text } from "./util.js";

const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

/** One content block as DOM. */
export function renderBlock(block) {
  if (!block || typeof block !== "object") return renderRaw("content", block, "acp-block-unknown");
  switch (block.type) {
    case "text":
      return renderMarkdown(text(block.text));
    case "image":
      return renderMedia(block, "image");
    case "audio":
      return renderMedia(block, "audio");
    case "resource_link":
      return renderResourceLink(block);
    case "resource":
      return renderResource(block);
    default:
      return renderRaw(`content: ${text(block.type) || "unknown"}`, block, "acp-block-unknown");
  }
}

function dataUri(block, kind) {
  const mime = typeof block.mimeType === "string" ? block.mimeType.trim().toLowerCase() : "";
  if (!mime.startsWith(`${kind}/`) || !/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(mime)) return null;
  if (typeof block.data !== "string" || !BASE64.test(block.data)) return null;
  return `data:${mime};base64,${block.data.replace(/\s+/g, "")}`;
}

function renderMedia(block, kind) {
  const uri = dataUri(block, kind);
  const size = typeof block.data === "string" ? Math.floor((block.data.length * 3) / 4) : 0;
  const caption = `${kind} · ${text(block.mimeType) || "unknown type"} · ${fmtBytes(size)}`;
  if (!uri) return h("div", { class: "acp-block-media acp-muted" }, `[${caption}]`);
  const media = kind === "image" ? h("img", { class: "acp-image", alt: caption }) : h("audio", { controls: true });
  media.src = uri;
  return h("figure", { class: "acp-block-media" }, media, h("figcaption", { class: "acp-muted" }, caption));
}

function renderResourceLink(block) {
  const name = text(block.title || block.name) || text(block.uri);
  const uri = text(block.uri);
  const label = isHttpUrl(uri)
    ? h("a", { href: uri, target: "_blank", rel: "noopener noreferrer" }, name)
    : h("span", { class: "acp-resource-name" }, name);
  const meta = [block.mimeType, typeof block.size === "number" ? fmtBytes(block.size) : null].filter(Boolean);
  return h(
    "div",
    { class: "acp-block-link" },
    label,
    uri && uri !== name ? h("span", { class: "acp-muted acp-uri" }, uri) : null,
    meta.length ? h("span", { class: "acp-muted" }, meta.map(text).join(" · ")) : null,
  );
}

function renderResource(block) {
  const res = block.resource && typeof block.resource === "object" ? block.resource : {};
  const head = h("div", { class: "acp-block-link" }, h("span", { class: "acp-resource-name" }, text(res.uri) || "resource"));
  if (res.mimeType) head.append(h("span", { class: "acp-muted" }, text(res.mimeType)));
  if (typeof res.text === "string") return h("div", { class: "acp-block-resource" }, head, h("pre", { class: "acp-pre", text: res.text }));
  const size = typeof res.blob === "string" ? fmtBytes(Math.floor((res.blob.length * 3) / 4)) : "no data";
  return h("div", { class: "acp-block-resource" }, head, h("div", { class: "acp-muted" }, `[binary resource · ${size}]`));
}
