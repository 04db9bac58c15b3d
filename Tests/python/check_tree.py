#!/usr/bin/env python3
"""Checks a log's Merkle tree, proofs and a signed checkpoint, from docs/log-format.md §9 alone.

Usage: check_tree.py LOG INPUT.json
INPUT holds: "checkpoint" (the signed note's text), "verifierKey" (name+id+base64 key),
"inclusion": {"seq", "treeSize", "proof": [hex…]}, "consistency": {"from", "to", "proof": [hex…]}.
Prints "ok" and exits 0 when everything verifies; otherwise prints what failed and exits 1.
"""

import base64, json, os, struct, sys
from merkle import sha, leaf_hash, node, split, mth, verify_inclusion, verify_consistency
import lmdb
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature


# docs/log-format.md §9: complete subtrees of 2^4 = 16 leaves and more are stored.
STORED_LEVEL = 4


def main():
    path, input_path = sys.argv[1], sys.argv[2]
    spec = json.load(open(input_path))
    failures = []
    lock = os.path.exists(os.path.join(path, "lock.mdb")) or os.access(path, os.W_OK)
    env = lmdb.open(path, readonly=True, lock=lock, max_dbs=8, subdir=True)
    entries = env.open_db(b"entries", create=False)
    meta = env.open_db(b"meta", create=False)
    tree = env.open_db(b"tree", create=False)
    with env.begin() as txn:
        values = {struct.unpack(">Q", k)[0]: bytes(v) for k, v in txn.cursor(db=entries)}
        log_id = bytes(txn.get(b"log-id", db=meta))
        app = bytes(txn.get(b"app", db=meta))
        anchor_value = txn.get(b"anchor", db=meta)
        anchor = struct.unpack(">Q", bytes(anchor_value)[:8])[0] if anchor_value else 0
        stored = {(k[0], struct.unpack(">Q", k[1:])[0]): bytes(v) for k, v in txn.cursor(db=tree)}
    leaves = [leaf_hash(seq, values[seq]) for seq in sorted(values)]
    end = anchor + len(leaves)
    if anchor != 0 or sorted(values) != list(range(1, end + 1)):
        failures.append("this check reads uncompacted, gapless logs only")
    # What is stored: exactly the complete subtrees of level >= STORED_LEVEL within the tree.
    expected = {(level, index) for level in range(STORED_LEVEL, 64) for index in range(end >> level)}
    if set(stored) != expected:
        failures.append(f"stored subtrees {sorted(set(stored) ^ expected)} are not those the format stores")
    for (level, index), value in stored.items():
        if value != mth(leaves[index << level:(index + 1) << level]):
            failures.append(f"stored subtree {level}/{index} differs")

    def subtree(level, index):
        """A complete subtree's hash as a reader finds it: stored at level >= 4, else from its entries."""
        if level >= STORED_LEVEL:
            return stored[(level, index)]
        return mth([leaf_hash(seq, values[seq]) for seq in range((index << level) + 1, ((index + 1) << level) + 1)])

    def tree_root(size):
        """RFC 9162's recursion, each node a complete subtree or split at the largest power of two below."""
        def node_hash(start, stop):
            count = stop - start
            if count & (count - 1) == 0 and start % count == 0:
                return subtree(count.bit_length() - 1, start // count)
            k = split(count)
            return node(node_hash(start, start + k), node_hash(start + k, stop))
        return node_hash(0, size) if size else sha(b"")

    # The signed checkpoint: note text, blank line, signature lines.
    note = spec["checkpoint"]
    text, _, signatures = note.rpartition("\n\n")
    text += "\n"
    origin, size_line, root_line = text.split("\n")[:3]
    size, root = int(size_line), base64.b64decode(root_line)
    unreserved = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    app_text = "".join(chr(b) if b in unreserved else "%%%02X" % b for b in app)
    if origin != f"chronicle/{app_text}/{log_id.hex()}":
        failures.append(f"origin {origin} is not the log's")
    if mth(leaves[:size]) != root:
        failures.append("the entries do not reproduce the checkpoint's root")
    if tree_root(size) != root:
        failures.append("the stored subtrees and the entries do not reproduce the checkpoint's root")
    name, key_id_hex, key_b64 = spec["verifierKey"].split("+", 2)
    key = base64.b64decode(key_b64)
    assert key[0] == 1
    key_id = sha(name.encode() + b"\n" + key)[:4]
    if key_id.hex() != key_id_hex:
        failures.append("the verifier key's ID does not match its key")
    verified = False
    for line in signatures.strip("\n").split("\n"):
        dash, signer, blob = line.split(" ")
        raw = base64.b64decode(blob)
        if dash == "\u2014" and signer == name and raw[:4] == key_id:
            try:
                Ed25519PublicKey.from_public_bytes(key[1:]).verify(raw[4:], text.encode())
                verified = True
            except InvalidSignature:
                failures.append("the checkpoint signature does not verify")
    if not verified:
        failures.append("no valid signature by the verifier key")

    inc = spec["inclusion"]
    seq, tree_size = inc["seq"], inc["treeSize"]
    if not verify_inclusion(leaves[seq - 1], seq - 1, tree_size, [bytes.fromhex(h) for h in inc["proof"]], tree_root(tree_size)):
        failures.append(f"the inclusion proof of entry {seq} in {tree_size} does not verify")
    con = spec["consistency"]
    a, b = con["from"], con["to"]
    if not verify_consistency(a, b, tree_root(a), tree_root(b), [bytes.fromhex(h) for h in con["proof"]]):
        failures.append(f"the consistency proof {a} -> {b} does not verify")
    print("\n".join(failures) if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
