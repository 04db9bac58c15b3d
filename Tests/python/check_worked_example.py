#!/usr/bin/env python3
"""Checks the worked example of docs/log-format.md §9 from the page alone.

Usage: check_worked_example.py LOG_FORMAT_MD

Reads the page's ```worked-example block (one "name value…" line each) and its
```worked-example-note block (the signed checkpoint), then recomputes, with nothing but the
page's rules: each stored value's fields (§3) and hash chain from 32 zero bytes; each leaf hash;
the root of every tree size shown; the inclusion and consistency proofs (RFC 9162 PATH and
PROOF, and their verification); the origin from the app and the log id; the signer's public key,
key ID and verifier key from its seed; the checkpoint body; and its Ed25519 signature, verified
and signed again (Ed25519 is deterministic).

Prints "ok: …" and exits 0, or one line per number that differs and exits 1.
"""

import base64, struct, sys

from merkle import sha, node, split, mth, verify_inclusion, verify_consistency

try:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
except ImportError as error:  # pragma: no cover - reported to the caller
    print(f"error: {error}; install with: python3 -m pip install cryptography", file=sys.stderr)
    sys.exit(2)


def path(m, leaves):
    """RFC 9162 §2.1.3.1 PATH(m, D[n])."""
    n = len(leaves)
    if n == 1:
        return []
    k = split(n)
    if m < k:
        return path(m, leaves[:k]) + [mth(leaves[k:])]
    return path(m - k, leaves[k:]) + [mth(leaves[:k])]


def proof(m, leaves):
    """RFC 9162 §2.1.4.1 PROOF(m, D[n])."""
    def subproof(m, leaves, complete):
        n = len(leaves)
        if m == n:
            return [] if complete else [mth(leaves)]
        k = split(n)
        if m <= k:
            return subproof(m, leaves[:k], complete) + [mth(leaves[k:])]
        return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]
    return [] if m in (0, len(leaves)) else subproof(m, leaves, True)


def block(text, info):
    start = text.index(f"```{info}\n") + len(info) + 4
    return text[start:text.index("```", start)]


def main(arguments):
    if len(arguments) != 2:
        print("usage: check_worked_example.py LOG_FORMAT_MD", file=sys.stderr)
        return 2
    text = open(arguments[1], encoding="utf-8").read()
    fields, proofs = {}, {}
    for line in block(text, "worked-example").splitlines():
        words = line.split()
        if words[0] in ("value", "leaf", "root"):
            fields[f"{words[0]} {words[1]}"] = words[2]
        elif words[0] in ("inclusion", "consistency"):
            proofs[words[0]] = (int(words[1]), int(words[2]), [bytes.fromhex(h) for h in words[3:]])
        else:
            fields[words[0]] = words[1]
    note = block(text, "worked-example-note")
    failures = []

    def same(name, computed):
        if fields.get(name) != computed:
            failures.append(f"{name}: the page shows {fields.get(name)}, the {source} give {computed}")

    # §3: every value's layout, and the hash chain from 32 zero bytes.
    values = []
    seq, previous = 1, bytes(32)
    while f"value {seq}" in fields:
        value = bytes.fromhex(fields[f"value {seq}"])
        layout, kind, codec, _flags, _schema, _time, t, m, p = struct.unpack(">BBBBIqHHI", value[:24])
        offset = 24 + t
        for _ in range(m):
            offset += 2 + struct.unpack(">H", value[offset:offset + 2])[0]
            offset += 4 + struct.unpack(">I", value[offset:offset + 4])[0]
        if layout != 1 or kind not in range(1, 6) or codec not in (1, 2) or offset + p + 32 != len(value):
            failures.append(f"value {seq}: not an entry of layout 1")
        if sha(previous + struct.pack(">Q", seq) + value[:-32]) != value[-32:]:
            failures.append(f"value {seq}: its chain hash does not follow entry {seq - 1}'s")
        values.append(value)
        previous = value[-32:]
        seq += 1

    # §9: leaves, roots, proofs.
    source = "values"
    leaves = [sha(b"\x00" + struct.pack(">Q", seq) + value) for seq, value in enumerate(values, start=1)]
    for seq, leaf in enumerate(leaves, start=1):
        same(f"leaf {seq}", leaf.hex())
    source = "leaves"
    roots = {size: mth(leaves[:size]) for size in range(1, len(leaves) + 1)}
    for size, root in roots.items():
        same(f"root {size}", root.hex())
    seq, size, hashes = proofs["inclusion"]
    if hashes != path(seq - 1, leaves[:size]) or not verify_inclusion(leaves[seq - 1], seq - 1, size, hashes, roots[size]):
        failures.append(f"inclusion {seq} {size}: not PATH({seq - 1}, D[{size}]) or does not verify")
    first, second, hashes = proofs["consistency"]
    if hashes != proof(first, leaves[:second]) or not verify_consistency(first, second, roots[first], roots[second], hashes):
        failures.append(f"consistency {first} {second}: not PROOF({first}, D[{second}]) or does not verify")

    # §9: origin, keys, the signed checkpoint.
    source = "rules"
    unreserved = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    app = "".join(chr(b) if b in unreserved else "%%%02X" % b for b in fields["app"].encode("utf-8"))
    same("origin", f"chronicle/{app}/{fields['log-id']}")
    prefix, key_word, name, key_id, blob = fields["signer"].split("+", 4)
    raw = base64.b64decode(blob)
    seed = raw[1:]
    signer = Ed25519PrivateKey.from_private_bytes(seed)
    public = signer.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    computed_id = sha(name.encode("utf-8") + b"\n\x01" + public)[:4]
    if (prefix, key_word) != ("PRIVATE", "KEY") or raw[0] != 1 or key_id != computed_id.hex():
        failures.append("signer: not PRIVATE+KEY+name+<key ID>+base64(0x01 ‖ seed)")
    verifier_key = base64.b64encode(bytes([1]) + public).decode()
    same("verifier", f"{name}+{computed_id.hex()}+{verifier_key}")
    body, _, signatures = note.partition("\n\n")
    body += "\n"
    expected_body = f"{fields['origin']}\n{len(leaves)}\n{base64.b64encode(roots[len(leaves)]).decode()}\n"
    if body != expected_body:
        failures.append(f"checkpoint: the body is {body!r}, the rules give {expected_body!r}")
    lines = [line for line in signatures.split("\n") if line]
    signature = base64.b64encode(computed_id + signer.sign(body.encode("utf-8"))).decode()
    if lines != [f"\u2014 {name} {signature}"]:
        failures.append(f"checkpoint: the signature lines are {lines}, the key signs {signature}")
    if failures:
        print("\n".join(failures))
        return 1
    print(f"ok: {len(values)} entries, roots 1…{len(roots)}, inclusion {proofs['inclusion'][0]} in "
          f"{proofs['inclusion'][1]}, consistency {first} → {second}, {len(lines)} signature")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
