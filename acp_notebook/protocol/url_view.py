"""What a URL-mode elicitation's card shows of its URL, and what a record keeps of it.

``url_view(url)`` splits the URL the way the page's "URL security" asks a client to show it: the
scheme, the host (lower-cased; a Unicode host also in its ASCII, Punycode form), the registrable
domain to highlight (the public-suffix list's "private suffix": ``example.co.uk`` of
``login.example.co.uk``; None for an IP address, ``localhost`` or a bare suffix), and warnings:
a Punycode (``xn--``) or non-ASCII host, a scheme other than ``https``, a user name in the URL
(``https://bank.com@evil.example``), a URL the client will not open (only ``http``/``https``
open). ``redacted(url)`` is ``scheme://host/path`` — no user info, port kept, no query, no
fragment — for traces, saved snapshots, exports and the X-ray.

The suffix list is ``publicsuffixlist``'s bundled snapshot, read once on first use (package data,
like an import); nothing is ever fetched.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

OPENABLE = ("https", "http")


@dataclass(frozen=True, slots=True)
class UrlView:
    """A URL as the consent card shows it."""

    url: str
    scheme: str
    host: str | None  # as written, lower-cased (Unicode kept)
    ascii_host: str | None  # the host in ASCII (Punycode for a Unicode name)
    registrable_domain: str | None  # the part of ``ascii_host`` to highlight
    punycode: bool  # an ``xn--`` label, or a Unicode host (which is one on the wire)
    https: bool
    userinfo: bool  # ``user@`` before the host: the host is what follows it
    openable: bool  # http or https, with a host: the only URLs the client opens
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly copy (what the view is sent)."""
        return {k: list(v) if k == "warnings" else v for k in self.__slots__ for v in [getattr(self, k)]}


def url_view(url: str) -> UrlView:
    """Split ``url`` for display: host, registrable domain, warnings."""
    parts = _split(url)
    scheme = parts.scheme.lower() if parts is not None else ""
    host = _host(parts)
    ascii_host = _ascii(host)
    punycode = host is not None and (ascii_host != host or any(
        label.startswith("xn--") for label in (ascii_host or "").split(".")
    ))  # fmt: skip
    userinfo = parts is not None and "@" in parts.netloc
    openable = scheme in OPENABLE and bool(host)
    warnings = _warnings(parts, scheme, punycode, userinfo, openable)
    domain = _registrable(ascii_host)
    return UrlView(
        url, scheme, host, ascii_host, domain, punycode, scheme == "https", userinfo, openable, warnings
    )


def redacted(url: Any) -> str:
    """``scheme://host/path`` of ``url`` (no user, query or fragment); ``scheme:`` for an opaque URL."""
    parts = _split(url) if isinstance(url, str) else None
    if parts is None or not parts.scheme:
        return "<not a URL>"
    host = _host(parts)
    if host is None:
        return f"{parts.scheme.lower()}:"
    port = f":{parts.port}" if _port(parts) is not None else ""
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{shown}{port}{parts.path}"


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises for a malformed port
    except ValueError:
        return None
    return parts


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:
        return None


def _host(parts: SplitResult | None) -> str | None:
    host = parts.hostname if parts is not None else None
    return host or None


def _ascii(host: str | None) -> str | None:
    if host is None or host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _warnings(
    parts: SplitResult | None, scheme: str, punycode: bool, userinfo: bool, openable: bool
) -> tuple[str, ...]:
    out = []
    if parts is None or not scheme:
        return ("this is not a URL the client can read",)
    if not openable:
        out.append(f"{scheme}: URLs are not opened (only https and http)")
    elif scheme != "https":
        out.append("not HTTPS: what you type there can be read on the way")
    if punycode:
        out.append("the host has internationalised (Punycode) labels: it may imitate another name")
    if userinfo:
        out.append("the URL holds a user name before the host: the host is the part after '@'")
    return tuple(out)


def _registrable(host: str | None) -> str | None:
    if host is None or host == "localhost" or _is_ip(host):
        return None
    return _suffixes().privatesuffix(host.rstrip("."))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@functools.cache
def _suffixes() -> Any:
    from publicsuffixlist import PublicSuffixList  # a third-party package: loads its bundled list

    return PublicSuffixList()
