#!/usr/bin/env python3
"""Writes a small seed corpus for fuzz_idx into the directory given: raw and gzip idx3/idx1 files
and image/label pairs, in the harness's input format (mode byte first)."""
import gzip, os, struct, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

def idx(dims, payload):
    return struct.pack(">I", 0x800 | len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + payload

def put(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

img = idx([3, 4, 5], bytes((i * 7) % 256 for i in range(60)))
lab = idx([3], bytes([0, 1, 2]))
for tag, conv in (("raw", lambda b: b), ("gz", lambda b: gzip.compress(b, mtime=0))):
    i, l = conv(img), conv(lab)
    put(f"img_{tag}", b"\x00" + i)
    put(f"lab_{tag}", b"\x01" + l)
    put(f"pair_{tag}", b"\x02" + struct.pack(">H", len(i)) + i + l)
