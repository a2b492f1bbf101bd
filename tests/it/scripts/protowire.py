"""Protobuf wire-format pieces encoded by hand, shared by the attack scripts
beside this file and fuzz/make_seeds.py: they need nothing but Python."""


def varint(n):
    """n as a protobuf base-128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
