"""A page assembled from parts, some of them stored (a cached register body), compressed
without compressing the stored parts again.

A deflate stream is a sequence of blocks; a block may refer back only to what came before it
in its own compressor's history. So a stored part compressed once by a fresh compressor and
ended with a sync flush (byte-aligned, not final) can be put between the blocks of other
parts, provided those never refer across it: the parts made per request are compressed by one
compressor with a full flush after each (which empties its history). The gzip trailer's CRC-32
of the whole is combined from the stored parts' own CRCs (zlib's `crc32_combine`), so the
stored bytes are neither compressed nor read again. Same Heal-the-BREACH padding as any other
answer; the CSRF token, compressed in a part of its own, shares no history with the page."""

import gzip
import secrets
import struct
import zlib
from dataclasses import dataclass, field

_POLY = 0xEDB88320  # CRC-32, reflected


def _multmodp(a: int, b: int) -> int:
    """a times b modulo the CRC-32 polynomial (zlib's multmodp)."""
    m = 1 << 31
    p = 0
    while True:
        if a & m:
            p ^= b
            if (a & (m - 1)) == 0:
                break
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1
    return p


_X2N = [1 << 30]  # x^(2^k) modulo the polynomial
for _ in range(31):
    _X2N.append(_multmodp(_X2N[-1], _X2N[-1]))


def _x8nmodp(n: int) -> int:
    """x^(8n) modulo the polynomial: the operator that moves a CRC past n bytes."""
    p = 1 << 31  # x^0
    k = 3
    while n:
        if n & 1:
            p = _multmodp(_X2N[k & 31], p)
        n >>= 1
        k += 1
    return p


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of A + B from crc32(A), crc32(B) and len(B)."""
    return _multmodp(_x8nmodp(length2), crc1) ^ crc2


@dataclass
class Stored:
    """Text kept across requests: its UTF-8 bytes, CRC-32, and its deflate segment per level
    (made on first use)."""

    raw: bytes
    crc: int = 0
    shift: int = 0  # _x8nmodp(len(raw))
    segments: dict[int, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.crc = zlib.crc32(self.raw)
        self.shift = _x8nmodp(len(self.raw))

    def segment(self, level: int) -> bytes:
        segment = self.segments.get(level)
        if segment is None:
            compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
            segment = compressor.compress(self.raw) + compressor.flush(zlib.Z_SYNC_FLUSH)
            self.segments[level] = segment
        return segment


Part = bytes | Stored


def content(parts: list[Part]) -> bytes:
    return b"".join(p.raw if isinstance(p, Stored) else p for p in parts)


def gzip_parts(parts: list[Part], level: int, max_random_bytes: int) -> bytes:
    """The gzip member of `content(parts)`, the stored parts' segments put in as they are."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    out = [b"\x1f\x8b\x08", bytes([gzip.FNAME]), b"\x00\x00\x00\x00\x00\xff"]
    out.append(b"a" * secrets.randbelow(max_random_bytes) + b"\x00")  # Heal-the-BREACH
    crc = 0
    size = 0
    for part in parts:
        if isinstance(part, Stored):
            out.append(part.segment(level))
            crc = _multmodp(part.shift, crc) ^ part.crc
            size += len(part.raw)
        elif part:
            out.append(compressor.compress(part))
            out.append(compressor.flush(zlib.Z_FULL_FLUSH))
            crc = zlib.crc32(part, crc)
            size += len(part)
    out.append(compressor.flush(zlib.Z_FINISH))
    out.append(struct.pack("<II", crc, size & 0xFFFFFFFF))
    return b"".join(out)
