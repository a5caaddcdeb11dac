"""Terminal text: UTF-8 decoded incrementally, and ECMA-48 control sequences removed from it.

What is removed (7-bit ``ESC`` forms and the 8-bit C1 forms as decoded characters U+0080–U+009F):

- CSI: ``ESC [`` / U+009B, parameter bytes 0x30–0x3F, intermediates 0x20–0x2F, a final 0x40–0x7E;
- control strings: OSC (``ESC ]`` / U+009D, ended by BEL or ST), DCS (``ESC P`` / U+0090), SOS
  (``ESC X`` / U+0098), PM (``ESC ^`` / U+009E), APC (``ESC _`` / U+009F), ended by ST
  (``ESC \\`` / U+009C); an ``ESC`` that does not start ST aborts the string (as terminals do);
- other escapes: ``ESC``, intermediates 0x20–0x2F (charset selection ``ESC ( B``, ``ESC ) 0``,
  ``ESC # 8``), then a final 0x30–0x7E (``ESC 7``, ``ESC 8``, ``ESC =``, ``ESC >``, ``ESC c``...);
- every other C1 control; a malformed sequence loses its introducer and what it consumed.

C0 controls other than ``ESC`` (``\\r``, ``\\n``, ``\\t``, BEL, backspace) are kept. A sequence
cut off by the end of the text is *held back* (``strip_ansi`` says where it starts), so text
received in pieces never shows half a sequence and strips exactly like the whole text.
"""

from __future__ import annotations

import codecs
import re

_SEQUENCE = re.compile(
    r"(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?P<st>\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*(?P<final>[@-~])?"
    r"|\x1b[ -/]*(?P<esc>[0-~])?"
    r"|[\x80-\x9f]"
)
_INTRODUCERS = re.compile(r"[\x1b\x80-\x9f]")


def strip_ansi(text: str) -> tuple[str, int]:
    """``text`` without control sequences, and the index where an unfinished one starts.

    The second value is ``len(text)`` when nothing is held back; the caller passes
    ``text[held:]`` again, with what follows it, once more text has arrived.
    """
    if _INTRODUCERS.search(text) is None:  # the common case: plain output
        return text, len(text)
    parts: list[str] = []
    pos = 0
    for match in _SEQUENCE.finditer(text):
        parts.append(text[pos : match.start()])
        pos = match.end()
        if pos == len(text) and _unfinished(match):
            return "".join(parts), match.start()
    parts.append(text[pos:])
    return "".join(parts), len(text)


def _unfinished(match: re.Match[str]) -> bool:
    """A sequence that reached the end of the text without its terminator or final byte."""
    first = match.group()[0]
    if first == "\x1b" and len(match.group()) > 1:
        second = match.group()[1]
        if second in "]PX^_":
            return match.group("st") is None
        if second == "[":
            return match.group("final") is None
        return match.group("esc") is None
    if first == "\x1b":
        return True  # a lone ESC at the very end
    if first in "\x90\x98\x9d\x9e\x9f":
        return match.group("st") is None
    if first == "\x9b":
        return match.group("final") is None
    return False


class DecodedText:
    """A byte stream from offset ``base`` on, decoded as UTF-8 incrementally, and its plain text.

    A UTF-8 character split across ``feed`` calls comes out whole (invalid bytes become U+FFFD);
    ``plain`` strips control sequences as they complete.
    """

    __slots__ = ("_decoder", "_pieces", "_plain", "_plain_to", "base", "end")

    def __init__(self, base: int = 0) -> None:
        self.base = self.end = base
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pieces: list[str] = []
        self._plain: list[str] = []
        self._plain_to = 0  # characters of ``text`` already stripped into ``_plain``

    def feed(self, data: bytes) -> None:
        """Decode the next bytes of the stream."""
        self._pieces.append(self._decoder.decode(data))
        self.end += len(data)

    @property
    def text(self) -> str:
        """Everything decoded so far (a partial character at the end waits for its bytes)."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    @property
    def plain(self) -> str:
        """``text`` without control sequences; an unfinished one at the end waits for the rest."""
        text = self.text
        if self._plain_to < len(text):
            plain, held = strip_ansi(text[self._plain_to :])
            self._plain[:] = ["".join(self._plain) + plain]
            self._plain_to += held
        return self._plain[0] if self._plain else ""
