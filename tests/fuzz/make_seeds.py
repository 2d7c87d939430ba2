#!/usr/bin/env python3
"""Writes the binary seed files of the npy and safetensors corpora (the text seeds of the
other targets are written by hand). Run from anywhere; rewrites only these files."""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(descr, shape, data, version=1):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pre = 6 + 2 + (2 if version == 1 else 4)
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    header = (header + " " * pad + "\n").encode()
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header + data


def safetensors(entries, metadata=None):
    header, blob = {}, b""
    for name, (dtype, shape, data) in entries.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blob


def write(target, name, data):
    path = os.path.join(HERE, "corpus", target, name)
    with open(path, "wb") as f:
        f.write(data)


f8 = struct.pack("<6d", 1.0, -2.5, float("inf"), float("nan"), 1e300, 0.0)
write("npy", "f8_2x3.npy", npy("<f8", [2, 3], f8))
write("npy", "f4_4.npy", npy("<f4", [4], struct.pack("<4f", 1, 2, 3, 4)))
write("npy", "i8_scalar.npy", npy("<i8", [], struct.pack("<q", -(2**63))))
write("npy", "b1_3.npy", npy("|b1", [3], b"\x01\x00\x01"))
write("npy", "zero_size.npy", npy("<f8", [0, 5], b""))
write("npy", "v2_header.npy", npy("<i8", [2], struct.pack("<2q", 7, -7), version=2))
# Regressions: bool bytes other than 0 and 1 (undefined behaviour when read), and a
# truncated data section.
write("npy", "b1_bad_byte.npy", npy("|b1", [2], b"\x01\x02"))
write("npy", "truncated.npy", npy("<f8", [2], b"\x00" * 12))

write("safetensors", "mixed.safetensors", safetensors({
    "w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
    "b": ("F64", [2], struct.pack("<2d", 0.5, -0.5)),
    "i": ("I64", [1], struct.pack("<q", 3)),
    "m": ("BOOL", [3], b"\x00\x01\x01"),
}, metadata={"format": "pt"}))
write("safetensors", "half.safetensors", safetensors({
    "h": ("F16", [2], struct.pack("<2H", 0x3C00, 0xFC00)),
    "bf": ("BF16", [2], struct.pack("<2H", 0x3F80, 0x7FC0)),
}))
write("safetensors", "zero_size.safetensors", safetensors({"e": ("F32", [0, 3], b"")}))
write("safetensors", "bad_bool.safetensors", safetensors({"m": ("BOOL", [2], b"\x01\x05")}))
write("safetensors", "empty.safetensors", safetensors({}))

# The differential target reads its bytes as generator choices: any bytes are a graph.
import random  # noqa: E402

rng = random.Random(16)
for i in range(12):
    write("differential", "random_%02d.bin" % i,
          bytes(rng.randrange(256) for _ in range(rng.choice([16, 48, 96, 160]))))
write("differential", "zeros.bin", b"")
