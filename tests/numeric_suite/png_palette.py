#!/usr/bin/env python3
"""Rewrites an RGB screenshot as a palette PNG when it has at most 256 colours (lossless; a report screenshot has
about 250, since charts use few flat colours), with zlib level 9 and per-row filter choice (standard library only).

    python3 png_palette.py IN.png OUT.png

Used for docs/report.png: bash tests/numeric_suite/render_report_test.sh build/release/tests/render_report \
tests/data/numeric_suite/sample_report.json /tmp/report.png && python3 tests/numeric_suite/png_palette.py \
/tmp/report.png docs/report.png
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_decode import read_png  # noqa: E402


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def main():
    source, target = sys.argv[1], sys.argv[2]
    width, height, rows = read_png(source)
    palette = {}
    indexed = []
    for row in rows:
        line = bytearray(width)
        for x in range(width):
            pixel = row[3 * x:3 * x + 3]
            index = palette.get(pixel)
            if index is None:
                if len(palette) == 256:
                    sys.exit(f"{source} has more than 256 colours; left as it is")
                index = palette[pixel] = len(palette)
            line[x] = index
        indexed.append(bytes(line))
    # Filter 0 (none) or 2 (up) per row, whichever compresses the row smaller on its own.
    raw = bytearray()
    prior = bytes(width)
    for line in indexed:
        up = bytes((a - b) & 0xFF for a, b in zip(line, prior))
        raw += b"\x02" + up if len(zlib.compress(up, 9)) < len(zlib.compress(line, 9)) else b"\x00" + line
        prior = line
    plte = b"".join(sorted(palette, key=palette.get))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)) +
            chunk(b"PLTE", plte) + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))
    with open(target, "wb") as f:
        f.write(data)
    print(f"{target}: {width}x{height}, {len(palette)} colours, {len(data)} bytes "
          f"(from {os.path.getsize(source)})")


if __name__ == "__main__":
    main()
