"""What the content index keeps of a file's text, and what a pattern needs of it.

A file is kept as a bitmap of its 4-grams (each 4 consecutive bytes of its text, ASCII
letters lowered, as a little-endian int, modulo a prime near twice their number): one hash,
so at most 39% of the bits are set and a needle of ``n`` 4-grams passes a file that lacks
it with a probability under 0.39 ** n (a 12-byte identifier: about 1 in 5,000). Every step
is a C loop but one (``array`` casts, ``set``, ``translate``, ``int(s, 2)``), and the one
Python loop is over distinct 4-grams, not bytes.

The text is what grep searches: without a BOM, CRLF as LF. A needle's 4-grams are taken of
the same lowered bytes, so a case-sensitive needle is found in the lowered text wherever it
is in the text; a case-insensitive one only keeps characters that match nothing but their
ASCII case pair (``regex`` also matches ``k`` with the Kelvin sign, ``s`` with the long s
and ``i`` with the dotted and dotless i, whose bytes differ).
"""

from __future__ import annotations

import re
import sys
import warnings
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import regex

from ..grep import Pattern

__all__ = ["GRAM", "Bitmap", "bitmap", "grams", "holds", "needle_grams", "normalized", "required"]

GRAM = 4
PRIMES = (257, 521, 1031, 2053, 4099, 8209, 16411, 32771, 65537, 131101, 262147)
"""Bitmap sizes in bits: the first at least twice the file's distinct 4-grams."""
MAX_GRAMS = PRIMES[-1] // 2
"""A file with more distinct 4-grams gets no bitmap: it is read by every search."""

_CODE = next(c for c in "ILH" if array(c).itemsize == GRAM)
_SWAP = sys.byteorder != "little"
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_BOM = b"\xef\xbb\xbf"
_CI_UNSAFE = frozenset("iksIKS")

Bitmap = tuple[int, int]
"""(modulus, bits): slot ``g % modulus`` of each 4-gram ``g`` is set; slot ``i`` is bit
``modulus - 1 - i`` of ``bits``."""


def normalized(data: bytes) -> bytes:
    """The bytes of the text grep searches in ``data`` (no BOM, CRLF as LF)."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


def grams(text: bytes) -> set[int]:
    """The distinct 4-grams of ``text`` with ASCII letters lowered."""
    data = text.lower()
    out: set[int] = set()
    n = len(data)
    for start in range(min(GRAM, max(n - GRAM + 1, 0))):
        end = start + (n - start) // GRAM * GRAM
        part = array(_CODE, data[start:end])
        if _SWAP:
            part.byteswap()
        out.update(part)
    return out


def bitmap(found: set[int]) -> Bitmap | None:
    """The bitmap of a file's 4-grams; None when there are too many to filter by."""
    if len(found) > MAX_GRAMS:
        return None
    modulus = next(p for p in PRIMES if p >= 2 * len(found))
    slots = bytearray(modulus)
    for g in found:  # a plain loop: faster than map over bound methods on 3.11
        slots[g % modulus] = 1
    return modulus, int(slots.translate(_DIGITS), 2)


def holds(kept: Bitmap, wanted: Iterable[int]) -> bool:
    """Whether every 4-gram of ``wanted`` may be in the file ``kept`` describes."""
    modulus, bits = kept
    top = modulus - 1
    return all(bits >> (top - g % modulus) & 1 for g in wanted)


def needle_grams(pattern: Pattern) -> frozenset[int] | None:
    """The 4-grams every match of ``pattern`` holds; None when none is sure (read all)."""
    pieces = required(pattern)
    if pieces is None:
        return None
    found: set[int] = set()
    for piece in pieces:
        found |= grams(piece.encode("utf-8", "surrogatepass"))
    return frozenset(found) or None


def required(pattern: Pattern) -> list[str] | None:
    """Strings every match of ``pattern`` contains (None: no analysis trusted)."""
    if pattern.literal is not None:
        return [pattern.literal]
    ci = bool(pattern.compiled.flags & regex.IGNORECASE)
    source = pattern.source
    # ``re`` parses the patterns both modules read alike; what only ``regex`` reads
    # (fuzzy ``{e<=1}``, POSIX classes, nested sets) ``re`` refuses, warns about or takes
    # as literal braces: each of those gives no prefilter.
    if any(s in source for s in ("[:", "[=", "[.")):
        return None
    flags = re.MULTILINE | (re.IGNORECASE if ci else 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = re._parser.parse(source, flags)  # type: ignore[attr-defined]
    except Exception:
        return None
    ci = ci or bool(parsed.state.flags & re.IGNORECASE)
    out: list[str] = []
    if not _collect(list(parsed), ci, out):
        return None
    return out


def _collect(items: Sequence[tuple[Any, Any]], ci: bool, out: list[str]) -> bool:
    """Add the literal runs every match of ``items`` holds to ``out``; False when a part
    is one the analysis does not trust."""
    c = re._constants  # type: ignore[attr-defined]
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append("".join(run))
            run.clear()

    for op, av in items:
        if op is c.LITERAL:
            ch = chr(av)
            if ch == "{":
                return False  # ``regex`` may read a fuzzy match here
            if ci and (not ch.isascii() or ch in _CI_UNSAFE):
                flush()
                continue
            run.append(ch)
            continue
        flush()
        if op is c.SUBPATTERN:
            _, add, _, sub = av
            if not _collect(list(sub), ci or bool(add & re.IGNORECASE), out):
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, _, sub = av
            if low >= 1 and not _collect(list(sub), ci, out):
                return False
        elif op is c.ATOMIC_GROUP and not _collect(list(av), ci, out):
            return False
    flush()
    return True
