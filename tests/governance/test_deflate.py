"""A page assembled from stored and fresh parts: its gzip is valid, whatever the parts."""

import gzip
import os
import zlib

import pytest

from governance import deflate


@pytest.mark.parametrize("length", [0, 1, 7, 1000, 70_001])
def test_crc32_combine_is_zlibs(length):
    a, b = os.urandom(313), os.urandom(length)
    assert deflate.crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


@pytest.mark.parametrize("level", [1, 4, 6, 9])
def test_an_assembled_page_inflates_to_its_parts(level):
    row = "<tr><td>“Quoted” row with a repeated name</td></tr>".encode()
    stored = deflate.Stored(row * 3000)
    parts = [b"<html><head>", stored, b'<input value="token-1">', stored, b"", b"</html>"]
    for _ in range(3):
        member = deflate.gzip_parts(parts, level, 100)
        assert gzip.decompress(member) == deflate.content(parts)
        assert member[3] & gzip.FNAME  # Heal-the-BREACH padding
        assert stored.segment(level) in member  # put in as it is, not compressed again
    assert len(member) < len(deflate.content(parts)) / 10


def test_a_page_of_fresh_parts_alone():
    parts = [b"", b"fresh", os.urandom(5000)]
    assert gzip.decompress(deflate.gzip_parts(parts, 1, 1)) == b"".join(parts)
