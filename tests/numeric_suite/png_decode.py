"""A minimal PNG decoder (Python standard library only) for the report screenshot check: 8-bit RGB or RGBA,
not interlaced (what headless Chromium writes). Returns width, height and rows of (r, g, b) byte strings."""
import struct
import zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _add_bytes(a, b):
    """(a[i] + b[i]) mod 256 for every byte, using big-integer arithmetic so no byte carries into its neighbour."""
    n = len(a)
    ia, ib = int.from_bytes(a, "little"), int.from_bytes(b, "little")
    low = int.from_bytes(b"\x7f" * n, "little")
    high = int.from_bytes(b"\x80" * n, "little")
    return (((ia & low) + (ib & low)) ^ ((ia ^ ib) & high)).to_bytes(n, "little")


def _unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows = []
    prior = bytes(stride)
    pos = 0
    for _ in range(height):
        kind = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if kind == 0:
            pass
        elif kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:  # Up
            line = bytearray(_add_bytes(bytes(line), prior))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                if i >= bpp:
                    a, c = line[i - bpp], prior[i - bpp]
                else:
                    a = c = 0
                b = prior[i]
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                if pa <= pb and pa <= pc:
                    pred = a
                elif pb <= pc:
                    pred = b
                else:
                    pred = c
                line[i] = (line[i] + pred) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter type {kind}")
        prior = bytes(line)
        rows.append(prior)
    return rows


def read_png(path):
    """Returns (width, height, rows): rows[y] holds width * 3 bytes r, g, b (alpha dropped)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != _SIGNATURE:
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs are supported, got depth {depth} "
                         f"colour type {colour} interlace {interlace}")
    bpp = 3 if colour == 2 else 4
    rows = _unfilter(zlib.decompress(b"".join(idat)), width, height, bpp)
    if bpp == 4:
        rows = [bytes(b for i, b in enumerate(row) if i % 4 != 3) for row in rows]
    return width, height, rows
