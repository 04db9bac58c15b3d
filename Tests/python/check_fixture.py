#!/usr/bin/env python3
"""Checks a committed fixture log against its expected.jsonl, from docs/log-format.md alone.

Usage: check_fixture.py FIXTURE_DIR

FIXTURE_DIR holds data.mdb (opened read-only; without lock.mdb, without LMDB's locking, creating
nothing) and expected.jsonl (fixtures/README.md). The script checks:

* meta: format 1 (2 for an encrypted fixture), app, anchor (40 bytes), log-id when the fixture has a tree;
* an encrypted fixture (format 2, §10): every entry and snapshot has layout 2 and is decrypted with
  AES-256-GCM under the key its key id names, from the key file FIXTURE_DIR/test-keys.txt, with the
  associated data of §10; the chain, the tree and the checksums are checked over the stored bytes
  (ciphertext included), the decrypted fields as for layout 1;
* every entry: gapless keys from anchor.seq + 1, the layout of §3 (layout byte, kind, codec, exact
  length, metadata keys strictly ascending), the SHA-256 chain from the anchor's hash, every field
  and the payload bytes as expected.jsonl lists them; a payload is exactly one JSON text or CBOR
  item; restore, undo and redo payloads are {"target": t} with 0 <= t < seq;
* every snapshot: layout, checksum, seq equal to its key, chain hash (the anchor's hash at the
  anchor), every field as listed; non-empty auxiliary data is {"undo": [...], "redo": [...]} of
  sequence numbers below the snapshot's;
* the Merkle tree (§9), when the fixture has one: every stored subtree over entries the log holds
  equals the one recomputed from them; the root of every checkpoint's size, found by §9's rules
  (left of the anchor from the stored hashes), equals the checkpoint's root; the stored
  checkpoints are exactly the listed notes; every signature line verifies with its listed
  verifier key (Ed25519, key IDs as §9 computes them); the listed proofs verify (RFC 9162).

Prints "ok: <fixture>: N entries, M snapshots, K checkpoints" and exits 0, or prints the
problems found and exits 1.
"""

import base64, json, os, struct, sys
from merkle import sha, leaf_hash, node, split, verify_inclusion, verify_consistency

try:
    import cbor2
    import lmdb
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
except ImportError as error:  # pragma: no cover - reported to the caller
    print(f"error: {error}; install with: python3 -m pip install lmdb cbor2 cryptography", file=sys.stderr)
    sys.exit(2)

KINDS = {1: "action", 2: "restore", 3: "undo", 4: "redo", 5: "marker"}
CODECS = {1: "json", 2: "cbor"}
STORED_LEVEL = 4


def decode_payload(codec, data):
    """One JSON text or one CBOR data item filling all of `data` (§6)."""
    if codec == 1:
        return json.loads(bytes(data).decode("utf-8"))
    return cbor2.loads(bytes(data))  # cbor2 refuses extra data after the item


def key_ring(directory):
    """§10: a key file holds one key per line as 64 hex digits; key id = u32be(SHA-256("chronicle-key-id" ‖ key)[:4])."""
    ring = {}
    with open(os.path.join(directory, "test-keys.txt"), encoding="ascii") as file:
        for line in file:
            line = line.strip()
            if line and not line.startswith("#"):
                key = bytes.fromhex(line)
                ring[struct.unpack(">I", sha(b"chronicle-key-id" + key)[:4])[0]] = key
    return ring


def open_sealed(ring, key_id, nonce, sealed, ad):
    """AES-256-GCM of §10: `sealed` is ciphertext ‖ 16-byte tag."""
    if key_id not in ring:
        raise ValueError(f"sealed with key {key_id:08x}, which the key file does not hold")
    return AESGCM(ring[key_id]).decrypt(nonce, sealed, ad)


def parse_sealed_entry(value, seq, ring, log_id):
    """An entry of layout 2 (§10), decrypted: the same fields as parse_entry's."""
    layout, kind, codec, flags, schema, timestamp, key_id = struct.unpack(">BBBBIqI", value[:20])
    if layout != 2:
        raise ValueError(f"layout {layout} in an encrypted log")
    nonce = value[20:32]
    (t,) = struct.unpack(">H", value[32:34])
    clear_name = value[34:34 + t]
    (c,) = struct.unpack(">I", value[34 + t:38 + t])
    if 38 + t + c + 16 + 32 != len(value):
        raise ValueError(f"{len(value)} bytes, the header says {38 + t + c + 16 + 32}")
    ad = b"chronicle-entry" + log_id + struct.pack(">Q", seq) + value[:38 + t]
    body = open_sealed(ring, key_id, nonce, value[38 + t:38 + t + c + 16], ad)
    t2, m, p = struct.unpack(">HHI", body[:8])
    if t and t2:
        raise ValueError("a type name both in the clear and sealed")
    entry = parse_fields(body, 8, t2, m, p, len(body), layout, kind, codec, flags, schema, timestamp)
    if t:
        entry["typeName"] = clear_name.decode("utf-8")
    entry["body"], entry["hash"], entry["keyID"] = value[:-32], value[-32:], key_id
    return entry


def parse_entry(value):
    layout, kind, codec, flags, schema, timestamp, t, m, p = struct.unpack(">BBBBIqHHI", value[:24])
    if layout != 1:
        raise ValueError(f"layout {layout}: not format 1's")
    entry = parse_fields(value, 24, t, m, p, len(value) - 32, layout, kind, codec, flags, schema, timestamp)
    entry["body"], entry["hash"] = value[:-32], value[-32:]
    return entry


def parse_fields(value, offset, t, m, p, end, layout, kind, codec, flags, schema, timestamp):
    """Type name, metadata and payload from `offset`, ending exactly at `end` (§3; §10's sealed body)."""
    if kind not in KINDS or codec not in CODECS:
        raise ValueError(f"layout {layout}, kind {kind}, codec {codec}: unknown")
    type_name = value[offset:offset + t].decode("utf-8")
    offset += t
    metadata, previous = {}, None
    for _ in range(m):
        (kl,) = struct.unpack(">H", value[offset:offset + 2])
        key = value[offset + 2:offset + 2 + kl]
        offset += 2 + kl
        (vl,) = struct.unpack(">I", value[offset:offset + 4])
        metadata[key.decode("utf-8")] = value[offset + 4:offset + 4 + vl].decode("utf-8")
        offset += 4 + vl
        if previous is not None and not previous < key:
            raise ValueError("metadata keys are not strictly ascending")
        previous = key
    payload = value[offset:offset + p]
    if offset + p != end:
        raise ValueError(f"{end} bytes of fields, the header says {offset + p}")
    return {"kind": KINDS[kind], "codec": CODECS[codec], "codecByte": codec, "flags": flags, "schemaVersion": schema,
            "timestamp": timestamp, "typeName": type_name, "metadata": metadata, "payload": payload}


def parse_snapshot(value, ring=None, log_id=None):
    """A snapshot of layout 1 (§4), or of layout 2 (§10) when `ring` is given."""
    if sha(value[:-32]) != value[-32:]:
        raise ValueError("checksum mismatch")
    layout, codec, _reserved, schema, seq, timestamp = struct.unpack(">BBHIQq", value[:24])  # reserved: ignored (§4)
    if layout != (1 if ring is None else 2) or codec not in CODECS:
        raise ValueError(f"layout {layout}, codec {codec}: not this format's")
    if ring is None:
        inner, start, end = value, 56, len(value) - 32
    else:
        (key_id,) = struct.unpack(">I", value[56:60])
        (c,) = struct.unpack(">I", value[72:76])
        if 76 + c + 16 + 32 != len(value):
            raise ValueError(f"{len(value)} bytes, the header says {76 + c + 16 + 32}")
        ad = b"chronicle-snapshot" + log_id + value[:76]
        inner, start = open_sealed(ring, key_id, value[60:72], value[76:76 + c + 16], ad), 0
        end = len(inner)
    (s,) = struct.unpack(">I", inner[start:start + 4])
    state = inner[start + 4:start + 4 + s]
    (a,) = struct.unpack(">I", inner[start + 4 + s:start + 8 + s])
    auxiliary = inner[start + 8 + s:start + 8 + s + a]
    if start + 8 + s + a != end:
        raise ValueError(f"{end - start} bytes of state and auxiliary data, the header says {8 + s + a}")
    return {"codec": CODECS[codec], "codecByte": codec, "schemaVersion": schema, "seq": seq, "timestamp": timestamp,
            "chainHash": value[24:56], "state": state, "auxiliary": auxiliary}


def read_expected(directory):
    expected = {"entries": [], "snapshots": [], "checkpoints": [], "proofs": [], "tree": None, "head": None}
    with open(os.path.join(directory, "expected.jsonl"), encoding="utf-8") as file:
        for line in file:
            item = json.loads(line)
            if "seq" in item and "proof" not in item:
                expected["entries"].append(item)
            elif "snapshot" in item:
                expected["snapshots"].append(item)
            elif "checkpoint" in item:
                expected["checkpoints"].append(item)
            elif "proof" in item:
                expected["proofs"].append(item)
            elif "tree" in item:
                expected["tree"] = item
            elif "head" in item:
                expected["head"] = item
    return expected


def check(directory):
    failures = []
    fail = failures.append
    expected = read_expected(directory)
    lock = os.path.exists(os.path.join(directory, "lock.mdb"))
    env = lmdb.open(directory, readonly=True, lock=lock, max_dbs=8, subdir=True, create=False)
    with env.begin() as txn:
        def db(name):
            try:
                return env.open_db(name, txn=txn, create=False)
            except lmdb.NotFoundError:
                return None
        entries_db, snapshots_db, meta_db = db(b"entries"), db(b"snapshots"), db(b"meta")
        meta = {bytes(k).decode("ascii"): bytes(v) for k, v in txn.cursor(db=meta_db)}
        values = {struct.unpack(">Q", bytes(k))[0]: bytes(v) for k, v in txn.cursor(db=entries_db)}
        snapshots = {struct.unpack(">Q", bytes(k))[0]: bytes(v) for k, v in txn.cursor(db=snapshots_db)}
        tree_db, checkpoints_db = db(b"tree"), db(b"checkpoints")
        stored = {} if tree_db is None else {
            (bytes(k)[0], struct.unpack(">Q", bytes(k)[1:])[0]): bytes(v) for k, v in txn.cursor(db=tree_db)}
        notes = {} if checkpoints_db is None else {
            struct.unpack(">Q", bytes(k))[0]: bytes(v) for k, v in txn.cursor(db=checkpoints_db)}
    env.close()

    # Meta (§5).
    head_line = expected["head"]
    format_version = struct.unpack(">I", meta["format"])[0]
    if format_version not in (1, 2) or head_line["formatVersion"] != format_version:
        fail(f"meta: format is {format_version}, expected {head_line['formatVersion']}")
    # An encrypted log (§10): its records are bound to meta log-id and opened with the key file.
    ring = key_ring(directory) if format_version == 2 else None
    log_id = meta.get("log-id", b"")
    app = meta["app"].decode("utf-8")
    if app != head_line["appID"]:
        fail(f"meta: app {app!r}, expected {head_line['appID']!r}")
    if struct.unpack(">q", meta["created"])[0] != head_line["created"]:
        fail("meta: created differs")
    anchor_seq, anchor_hash = struct.unpack(">Q", meta["anchor"][:8])[0], meta["anchor"][8:]
    tree_line = expected["tree"]
    if tree_line is not None and (anchor_seq, anchor_hash.hex()) != (tree_line["anchorSeq"], tree_line["anchorHashHex"]):
        fail(f"meta: anchor {anchor_seq} {anchor_hash.hex()} differs from expected.jsonl's")

    # Entries (§3): gapless from the anchor, the chain, every field.
    seqs = sorted(values)
    if seqs != list(range(anchor_seq + 1, anchor_seq + 1 + len(seqs))):
        fail(f"entries: keys {seqs[:3]}… are not gapless from anchor {anchor_seq} + 1")
    wanted = {line["seq"]: line for line in expected["entries"]}
    if set(wanted) != set(seqs):
        fail(f"entries: the log holds {len(seqs)} entries, expected.jsonl lists {len(wanted)}")
    previous, hashes = anchor_hash, {}
    for seq in seqs:
        where = f"entry {seq}"
        try:
            entry = parse_entry(values[seq]) if ring is None else parse_sealed_entry(values[seq], seq, ring, log_id)
            payload = decode_payload(entry["codecByte"], entry["payload"])
        except Exception as error:  # any malformed field or payload
            fail(f"{where}: {error}")
            continue
        if sha(previous + struct.pack(">Q", seq) + entry["body"]) != entry["hash"]:
            fail(f"{where}: chain hash mismatch")
        previous = hashes[seq] = entry["hash"]
        line = wanted.get(seq, {})
        actual = {"kind": entry["kind"], "codec": entry["codec"], "flags": entry["flags"],
                  "schemaVersion": entry["schemaVersion"], "timestamp": entry["timestamp"], "typeName": entry["typeName"],
                  "metadata": entry["metadata"], "payloadHex": entry["payload"].hex(), "hashHex": entry["hash"].hex()}
        for name, value in actual.items():
            if line.get(name) != value:
                fail(f"{where}: {name} is {value!r}, expected {line.get(name)!r}")
        if entry["kind"] in ("restore", "undo", "redo"):
            target = payload.get("target") if isinstance(payload, dict) else None
            if not (isinstance(target, int) and not isinstance(target, bool) and 0 <= target < seq):
                fail(f"{where}: a {entry['kind']} payload must be {{\"target\": t}} with 0 <= t < {seq}, found {payload!r}")
    head = previous
    if head.hex() != head_line["head"] or len(seqs) != head_line["count"]:
        fail(f"head: {head.hex()} after {len(seqs)} entries, expected {head_line['head']} after {head_line['count']}")

    # Snapshots (§4), auxiliary data included.
    wanted_snapshots = {line["snapshot"]: line for line in expected["snapshots"]}
    if sorted(snapshots) != sorted(wanted_snapshots):
        fail(f"snapshots at {sorted(snapshots)}, expected {sorted(wanted_snapshots)}")
    for seq, value in sorted(snapshots.items()):
        where = f"snapshot {seq}"
        try:
            snapshot = parse_snapshot(value, ring, log_id)
            decode_payload(snapshot["codecByte"], snapshot["state"])
        except Exception as error:
            fail(f"{where}: {error}")
            continue
        if snapshot["seq"] != seq:
            fail(f"{where}: records seq {snapshot['seq']}")
        if snapshot["chainHash"] != (anchor_hash if seq == anchor_seq else hashes.get(seq)):
            fail(f"{where}: its chain hash is not entry {seq}'s")
        line = wanted_snapshots.get(seq, {})
        actual = {"codec": snapshot["codec"], "schemaVersion": snapshot["schemaVersion"],
                  "timestamp": snapshot["timestamp"], "stateHex": snapshot["state"].hex(),
                  "chainHashHex": snapshot["chainHash"].hex(), "auxiliaryHex": snapshot["auxiliary"].hex()}
        for name, item in actual.items():
            if line.get(name) != item:
                fail(f"{where}: {name} is {item!r}, expected {line.get(name)!r}")
        if snapshot["auxiliary"]:
            try:
                stacks = decode_payload(snapshot["codecByte"], snapshot["auxiliary"])
            except Exception as error:
                fail(f"{where}: auxiliary data: {error}")
                continue
            ok = isinstance(stacks, dict) and sorted(stacks) == ["redo", "undo"] and all(
                isinstance(s, list) and all(isinstance(n, int) and 0 <= n < seq for n in s) for s in stacks.values())
            if not ok:
                fail(f"{where}: auxiliary data {stacks!r} is not {{\"undo\": [seq…], \"redo\": [seq…]}} below {seq}")

    # The Merkle tree and checkpoints (§9).
    if tree_line is None:
        if stored or notes:
            fail("the log holds a tree but expected.jsonl describes none")
        return failures, len(seqs), len(snapshots), 0
    log_id = meta.get("log-id", b"")
    if log_id.hex() != tree_line["logIDHex"] or len(log_id) != 16:
        fail(f"meta: log-id {log_id.hex()}, expected {tree_line['logIDHex']}")
    unreserved = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    origin = "chronicle/" + "".join(chr(b) if b in unreserved else "%%%02X" % b for b in meta["app"]) + "/" + log_id.hex()
    if origin != tree_line["origin"]:
        fail(f"origin {origin}, expected {tree_line['origin']}")

    def entries_hash(level, index):
        first = index << level
        return mth([leaf_hash(seq, values[seq]) for seq in range(first + 1, first + (1 << level) + 1)])

    def mth(leaves):
        if len(leaves) == 1:
            return leaves[0]
        k = split(len(leaves))
        return node(mth(leaves[:k]), mth(leaves[k:]))

    def subtree(level, index):
        """§9, finding a subtree's hash: stored at level >= 4; below, from the entries when they are all
        in the log, else stored by compaction or combined from its halves."""
        if level >= STORED_LEVEL:
            if (level, index) not in stored:
                raise KeyError(f"stored subtree {level}/{index} is missing")
            return stored[(level, index)]
        if index << level >= anchor_seq:
            return entries_hash(level, index)
        if (level, index) in stored:
            return stored[(level, index)]
        if level == 0:
            raise KeyError(f"leaf {index} lies before the anchor and nothing stores it")
        return node(subtree(level - 1, 2 * index), subtree(level - 1, 2 * index + 1))

    def root(size):
        def node_hash(start, stop):
            count = stop - start
            if count & (count - 1) == 0 and start % count == 0:
                return subtree(count.bit_length() - 1, start // count)
            k = split(count)
            return node(node_hash(start, start + k), node_hash(start + k, stop))
        return node_hash(0, size) if size else sha(b"")

    # Every stored subtree over entries the log holds equals the one recomputed from them.
    for (level, index), value in sorted(stored.items()):
        if index << level >= anchor_seq and (index + 1) << level <= anchor_seq + len(seqs):
            if entries_hash(level, index) != value:
                fail(f"tree: stored subtree {level}/{index} differs from its entries")
    size = tree_line["tree"]
    try:
        if root(size).hex() != tree_line["rootHex"]:
            fail(f"tree: the root of {size} is not {tree_line['rootHex']}")
    except KeyError as error:
        fail(f"tree: {error}")

    verifiers = {}
    for text in tree_line["verifierKeys"]:
        name, key_id, key = text.split("+", 2)
        key = base64.b64decode(key)
        if key[0] != 1 or sha(name.encode() + b"\n" + key)[:4].hex() != key_id:
            fail(f"verifier key {text}: its key ID does not match")
        verifiers[(name, key_id)] = Ed25519PublicKey.from_public_bytes(key[1:])
    listed = {line["checkpoint"]: line for line in expected["checkpoints"]}
    if sorted(notes) != sorted(listed):
        fail(f"checkpoints stored at sizes {sorted(notes)}, expected {sorted(listed)}")
    roots = {}
    for checkpoint_size, note in sorted(notes.items()):
        where = f"checkpoint {checkpoint_size}"
        line = listed.get(checkpoint_size, {})
        if note.decode("utf-8") != line.get("note"):
            fail(f"{where}: the stored note differs from expected.jsonl's")
        body, _, signatures = note.decode("utf-8").partition("\n\n")
        body += "\n"
        note_origin, note_size, note_root = body.split("\n")[:3]
        roots[checkpoint_size] = base64.b64decode(note_root)
        if note_origin != origin or int(note_size) != checkpoint_size:
            fail(f"{where}: its body names {note_origin} @ {note_size}")
        if roots[checkpoint_size].hex() != line.get("rootHex"):
            fail(f"{where}: root differs from expected.jsonl's")
        try:
            if root(checkpoint_size) != roots[checkpoint_size]:
                fail(f"{where}: the tree's root of {checkpoint_size} is not the signed one")
        except KeyError as error:
            # A checkpoint of a tree that ends before the anchor commits to entries compaction
            # removed: only the subtrees compaction kept can reproduce its root (§9, Compaction).
            if checkpoint_size >= anchor_seq:
                fail(f"{where}: {error}")
        lines = [line for line in signatures.split("\n") if line]
        if not lines:
            fail(f"{where}: no signature")
        for signature_line in lines:
            dash, name, blob = signature_line.split(" ")
            raw = base64.b64decode(blob)
            key = verifiers.get((name, raw[:4].hex()))
            if dash != "\u2014" or key is None:
                fail(f"{where}: a signature by an unlisted key {name}")
                continue
            try:
                key.verify(raw[4:], body.encode("utf-8"))
            except InvalidSignature:
                fail(f"{where}: the signature of {name} does not verify")

    for proof in expected["proofs"]:
        hashes = [bytes.fromhex(h) for h in proof["hashes"]]
        proof_size = proof["size"]
        try:
            if proof["proof"] == "inclusion":
                seq = proof["seq"]
                if not verify_inclusion(leaf_hash(seq, values[seq]), seq - 1, proof_size, hashes, root(proof_size)):
                    fail(f"the inclusion proof of entry {seq} in {proof_size} does not verify")
            elif not verify_consistency(proof["from"], proof_size, root(proof["from"]), root(proof_size), hashes):
                fail(f"the consistency proof {proof['from']} -> {proof_size} does not verify")
        except KeyError as error:
            fail(f"proof {proof}: {error}")
    return failures, len(seqs), len(snapshots), len(notes)


def main(arguments):
    if len(arguments) != 2:
        print("usage: check_fixture.py FIXTURE_DIR", file=sys.stderr)
        return 2
    failures, entries, snapshots, checkpoints = check(arguments[1])
    if failures:
        print("\n".join(failures))
        return 1
    print(f"ok: {os.path.basename(os.path.normpath(arguments[1]))}: {entries} entries, {snapshots} snapshots, "
          f"{checkpoints} checkpoints")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
