#!/usr/bin/env python3
"""Checks a witness's cosignature of a checkpoint, from the C2SP specifications alone
(signed-note, tlog-checkpoint, tlog-cosignature), with the `cryptography` package.

Usage: check_cosignature.py CHECKPOINT VKEY [LINE]
CHECKPOINT is a signed note (a checkpoint body, a blank line, signature lines); VKEY holds the
witness's verifier key, name+<8 hex digits of key ID>+base64(0x04 || 32-byte Ed25519 key).
LINE, when given, is the cosignature line to check (as the witness printed it: "— name base64");
otherwise every line of CHECKPOINT by the witness's key is checked, and there must be one.
A cosignature line's bytes are key ID (4) || timestamp (8, big-endian) || Ed25519 signature (64),
over "cosignature/v1\\ntime <timestamp>\\n" followed by the checkpoint body.
Prints "ok" and exits 0 when every line checked verifies; otherwise prints what failed and exits 1.
"""

import base64, hashlib, struct, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature

DASH = "\u2014 "


def fail(message):
    print(message)
    sys.exit(1)


def parse_verifier(text):
    name, key_id_hex, key_b64 = text.strip().split("+", 2)
    key = base64.b64decode(key_b64, validate=True)
    if len(key) != 33 or key[0] != 0x04:
        fail("the verifier key is not a cosignature key (type 0x04)")
    key_id = hashlib.sha256(name.encode() + b"\n" + key).digest()[:4]
    if key_id.hex() != key_id_hex:
        fail("the verifier key's ID %s does not match its key (%s)" % (key_id_hex, key_id.hex()))
    return name, key_id, Ed25519PublicKey.from_public_bytes(key[1:])


def parse_line(line):
    if not line.startswith(DASH):
        fail("not a signature line: %r" % line)
    name, encoded = line[len(DASH):].rstrip("\n").split(" ")
    return name, base64.b64decode(encoded, validate=True)


def main():
    note = open(sys.argv[1], "rb").read().decode("utf-8")
    name, key_id, public_key = parse_verifier(open(sys.argv[2]).read())
    text, separator, signature_block = note.rpartition("\n\n")
    if not separator:
        fail("the checkpoint file is not a signed note")
    body = text + "\n"
    lines = body.split("\n")
    if len(lines) < 4 or not lines[1].isdigit() or len(base64.b64decode(lines[2], validate=True)) != 32:
        fail("the note's text is not a checkpoint (origin, size, base64 root)")
    if len(sys.argv) > 3:
        candidates = [parse_line(sys.argv[3])]
    else:
        candidates = [parse_line(line) for line in signature_block.split("\n") if line]
    mine = [(n, b) for n, b in candidates if n == name and b[:4] == key_id]
    if not mine:
        fail("no cosignature by %s (key %s)" % (name, key_id.hex()))
    for _, blob in mine:
        if len(blob) != 4 + 8 + 64:
            fail("the cosignature has %d bytes, not 76" % len(blob))
        (timestamp,) = struct.unpack(">Q", blob[4:12])
        message = ("cosignature/v1\ntime %d\n" % timestamp).encode() + body.encode()
        try:
            public_key.verify(blob[12:], message)
        except InvalidSignature:
            fail("the cosignature by %s at time %d does not verify" % (name, timestamp))
    print("ok")


main()
