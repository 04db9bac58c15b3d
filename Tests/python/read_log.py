#!/usr/bin/env python3
"""Reads and verifies a Chronicle log using nothing but docs/log-format.md.

Usage:

    python3 read_log.py LOG_DIR EXPECTED_JSON

LOG_DIR is a log directory (``data.mdb``, optionally ``lock.mdb``). It is
opened read-only; without ``lock.mdb`` it is opened without LMDB's locking
(no writer can be active then) and nothing is created.

The script checks, from the format specification alone:

* meta: ``format`` is u32 1; ``app`` is UTF-8; ``schema`` is a u32;
  ``created`` an i64; ``anchor`` 40 bytes (u64 seq, 32-byte hash);
* the three databases exist with default flags (no DUPSORT, no INTEGERKEY);
* ``entries``: 8-byte big-endian keys, gapless from ``anchor.seq + 1``; each
  value's layout byte, kind, codec, exact length and field layout; metadata
  keys unique and strictly ascending bytewise; UTF-8 texts; the SHA-256 chain
  from the anchor; restore/undo/redo payloads hold ``"target"``, a seq below their own;
* ``snapshots``: 8-byte keys; layout byte, codec (the reserved bytes are
  ignored), the stored seq equals the key, exact length, checksum, and the chain hash equals
  the stored hash of entry ``seq`` (or ``anchor.hash`` when ``seq`` is the
  anchor's);

and then compares what it read with EXPECTED_JSON.

EXPECTED_JSON is one UTF-8 JSON object:

    {
      "entries": [                      every entry of the log, in seq order
        {
          "seq": 1,                     int
          "kind": "action",             "action" | "restore" | "undo" | "redo" | "marker"
          "typeName": "increment",      str
          "metadata": {"user": "ann"},  object of str -> str (pairs in any order)
          "payload": {"increment": {}}, the payload's JSON view (below)
          "codec": "json",              optional: "json" | "cbor"
          "flags": 0,                   optional: int, the raw flags byte
          "schemaVersion": 1,           optional: int
          "timestamp": 1767225600000000,  optional: int, microseconds since 1970
          "hash": "<64 hex digits>"     optional: the entry's stored chain hash
        }
      ],
      "snapshots": [                    optional: if present, every snapshot, in seq order
        {
          "seq": 100,                   int
          "codec": "cbor",              "json" | "cbor"
          "schemaVersion": 1,           int
          "state": {"count": 3},        the state's JSON view (below)
          "chainHash": "<hex>",         optional
          "auxiliaryHex": ""            optional: the auxiliary bytes in hex
        }
      ],
      "app": "ledger",                  optional: the meta `app` value
      "head": "<64 hex digits>"         the hash of the last entry (the anchor's if none)
    }

The JSON view of a payload or state:

* codec 1 (JSON): the value Python's ``json`` module parses from the text
  (NaN and the infinities are rejected, as JSON has none);
* codec 2 (CBOR): the value ``cbor2`` decodes (with cbor2 6 or later,
  indefinite lengths and duplicate map keys are rejected), with
  - byte strings as standard base64 text with padding (RFC 4648 section 4),
  - tag 1 (epoch time) as a float of seconds since 1970,
  - tag 1001 (RFC 9581 extended time) holding ``{5: [e, m]}``, exactly
    m * 2**e seconds since 1970 (``m`` an integer or a tag 2/3 bignum), as
    the nearest float of seconds since 1970; any other content is an error,
  - tag 37 (UUID) as the lower-case 8-4-4-4-12 string (``str(uuid.UUID)``),
  - tag 32 (URL) as the URL string,
  - any other tag as ``{"tag": N, "value": <view of the content>}``;
  map keys must be text strings, as the specification says.

Values compare as JSON values: objects ignore member order, numbers compare
by value (``1`` equals ``1.0``), booleans are not numbers.

Exit status 0 prints ``ok: N entries, M snapshots, head <hex>``; exit status 1
prints the first problem, naming the entry's or snapshot's seq; exit status 2
is a usage or environment error.
"""

import base64
import datetime
import fractions
import hashlib
import json
import math
import os
import struct
import sys
import urllib.parse
import uuid
from collections.abc import Mapping

try:
  import cbor2
  import lmdb
except ImportError as error:  # pragma: no cover - reported to the caller
  print(f"error: {error}; install with: python3 -m pip install lmdb cbor2", file=sys.stderr)
  sys.exit(2)

KINDS = {1: "action", 2: "restore", 3: "undo", 4: "redo", 5: "marker"}
CODECS = {1: "json", 2: "cbor"}
ENTRY_HEADER = 24
HASH_SIZE = 32
SNAPSHOT_HEADER = 60


class Mismatch(Exception):
  """The first problem found; its text names where it is."""


def fail(where, message):
  raise Mismatch(f"{where}: {message}")


# MARK: - Payload views


def utf8(data, where, what):
  try:
    return bytes(data).decode("utf-8")
  except UnicodeDecodeError as error:
    fail(where, f"{what} is not UTF-8: {error}")


def json_view(data, where):
  def reject_constant(name):
    raise ValueError(f"{name} is not JSON")

  def unique_members(pairs):
    result = {}
    for key, value in pairs:
      if key in result:
        raise ValueError(f"duplicate member {key!r}")
      result[key] = value
    return result

  try:
    return json.loads(
      utf8(data, where, "JSON payload"), parse_constant=reject_constant, object_pairs_hook=unique_members)
  except ValueError as error:
    fail(where, f"not valid JSON: {error}")


def cbor_view(data, where):
  def epoch_time(value, *_):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
      raise ValueError(f"tag 1 around {type(value).__name__}")
    return float(value)

  def uuid_text(value, *_):
    if not isinstance(value, (bytes, bytearray)) or len(value) != 16:
      raise ValueError("tag 37 must hold a 16-byte byte string")
    return str(uuid.UUID(bytes=bytes(value)))

  def url_text(value, *_):
    if not isinstance(value, str):
      raise ValueError("tag 32 must hold a text string")
    return value

  def other_tag(*arguments):
    tag = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], cbor2.CBORTag) else arguments[0]
    if tag.tag == 1001:
      return extended_time(tag.value)
    return {"tag": tag.tag, "value": tag.value}

  def extended_time(content):
    # cbor2 may hand tag contents over immutable: a frozendict and tuples.
    pair = content.get(5) if isinstance(content, Mapping) and len(content) == 1 else None
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in pair)):
      raise ValueError(f"tag 1001 must hold {{5: [e, m]}}, found {content!r}")
    exponent, mantissa = pair
    return float(fractions.Fraction(mantissa) * fractions.Fraction(2) ** exponent)

  data = bytes(data)
  options = {"allow_indefinite": False, "allow_duplicate_keys": False}
  try:
    try:
      # cbor2 6 lets these tags be decoded exactly (seconds as the stored float).
      decoded = cbor2.loads(
        data, tag_hook=other_tag, semantic_decoders={1: epoch_time, 37: uuid_text, 32: url_text}, **options)
    except TypeError:
      # Older cbor2: its own datetime / UUID / URL objects are converted by `plain` below.
      decoded = cbor2.loads(data, tag_hook=other_tag)
  except Exception as error:  # cbor2 raises several types for malformed input
    fail(where, f"not valid CBOR: {error}")
  return plain(decoded, where)


def plain(value, where):
  """Converts what cbor2 produced into JSON-like Python values."""
  if value is None or isinstance(value, (bool, int, str)):
    return value
  if isinstance(value, float):
    return value
  if isinstance(value, (bytes, bytearray)):
    return base64.b64encode(bytes(value)).decode("ascii")
  if isinstance(value, (list, tuple)):
    return [plain(item, where) for item in value]
  if isinstance(value, Mapping):
    result = {}
    for key, item in value.items():
      if not isinstance(key, str):
        fail(where, f"CBOR map key {key!r} is not a text string")
      result[key] = plain(item, where)
    return result
  if isinstance(value, datetime.datetime):
    return value.timestamp()
  if isinstance(value, uuid.UUID):
    return str(value)
  if isinstance(value, urllib.parse.ParseResult):
    return value.geturl()
  fail(where, f"CBOR value of type {type(value).__name__} has no JSON view")


def view(codec, data, where):
  return json_view(data, where) if codec == 1 else cbor_view(data, where)


def same(a, b):
  """JSON value equality: numbers by value, booleans apart from numbers, objects unordered."""
  if isinstance(a, bool) or isinstance(b, bool):
    return isinstance(a, bool) and isinstance(b, bool) and a == b
  if isinstance(a, (int, float)) and isinstance(b, (int, float)):
    if isinstance(a, float) and math.isnan(a):
      return isinstance(b, float) and math.isnan(b)
    return a == b
  if isinstance(a, dict) and isinstance(b, dict):
    return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
  if isinstance(a, list) and isinstance(b, list):
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
  return type(a) is type(b) and a == b


def show(value):
  return json.dumps(value, ensure_ascii=False, sort_keys=True)


# MARK: - The log


class Reader:
  """Walks a log read-only, checking every byte the specification describes."""

  def __init__(self, txn, dbs):
    self.txn = txn
    self.entries_db, self.snapshots_db, self.meta_db = dbs

  def meta(self):
    def get(name):
      value = self.txn.get(name.encode("ascii"), db=self.meta_db)
      if value is None:
        fail("meta", f"'{name}' is missing")
      return bytes(value)

    def integer(name, fmt):
      value = get(name)
      if len(value) != struct.calcsize(fmt):
        fail("meta", f"'{name}' has {len(value)} bytes, expected {struct.calcsize(fmt)}")
      return struct.unpack(fmt, value)[0]

    format_version = integer("format", ">I")
    if format_version != 1:
      fail("meta", f"format {format_version}, this reader reads format 1")
    app = utf8(get("app"), "meta", "'app'")
    schema = integer("schema", ">I")
    created = integer("created", ">q")
    anchor = get("anchor")
    if len(anchor) != 8 + HASH_SIZE:
      fail("meta", f"'anchor' has {len(anchor)} bytes, expected 40")
    anchor_seq = struct.unpack(">Q", anchor[:8])[0]
    return {"app": app, "schema": schema, "created": created, "anchorSeq": anchor_seq, "anchorHash": anchor[8:]}

  def entries(self, anchor_seq, anchor_hash):
    """Yields (seq, fields) for every entry, checking the chain."""
    previous_seq, previous_hash = anchor_seq, anchor_hash
    for key, value in self.txn.cursor(db=self.entries_db):
      key, value = bytes(key), bytes(value)
      expected_seq = previous_seq + 1
      if len(key) != 8:
        fail(f"entry {expected_seq}", f"a key of {len(key)} bytes, expected 8")
      seq = struct.unpack(">Q", key)[0]
      if seq != expected_seq:
        fail(f"entry {expected_seq}", f"missing: the next key is {seq}")
      where = f"entry {seq}"
      fields = parse_entry(value, where)
      computed = hashlib.sha256(previous_hash + struct.pack(">Q", seq) + value[:-HASH_SIZE]).digest()
      if computed != fields["hash"]:
        fail(where, f"chain hash mismatch: stored {fields['hash'].hex()}, computed {computed.hex()}")
      if fields["kind"] in ("restore", "undo", "redo"):
        target = fields["payload"]
        # Other keys are ignored; the target is before the entry (0: the initial state).
        if not (isinstance(target, dict) and "target" in target and isinstance(target["target"], int)
                and not isinstance(target["target"], bool) and 0 <= target["target"] < seq):
          fail(where, f"a {fields['kind']} payload must be {{\"target\": <earlier seq>}}, found {show(target)}")
      previous_seq, previous_hash = seq, fields["hash"]
      yield seq, fields

  def snapshots(self, anchor_seq, anchor_hash, entry_hashes):
    for key, value in self.txn.cursor(db=self.snapshots_db):
      key, value = bytes(key), bytes(value)
      if len(key) != 8:
        fail("snapshot", f"a key of {len(key)} bytes ({key.hex()}), expected 8")
      seq = struct.unpack(">Q", key)[0]
      where = f"snapshot {seq}"
      fields = parse_snapshot(value, where)
      if fields["seq"] != seq:
        fail(where, f"records seq {fields['seq']} but is stored under key {seq}")
      expected = anchor_hash if seq == anchor_seq else entry_hashes.get(seq)
      if expected is None:
        fail(where, f"the log holds no entry {seq}")
      if fields["chainHash"] != expected:
        fail(where, f"chain hash {fields['chainHash'].hex()} differs from entry {seq}'s hash {expected.hex()}")
      yield seq, fields


def parse_entry(value, where):
  if len(value) < ENTRY_HEADER + HASH_SIZE:
    fail(where, f"value of {len(value)} bytes, shorter than the {ENTRY_HEADER + HASH_SIZE}-byte minimum")
  layout, kind, codec, flags, schema, timestamp, t, m, p = struct.unpack(">BBBBIqHHI", value[:ENTRY_HEADER])
  if layout != 1:
    fail(where, f"layout byte {layout}, expected 1")
  if kind not in KINDS:
    fail(where, f"unknown kind {kind}")
  if codec not in CODECS:
    fail(where, f"unknown codec {codec}")
  offset = ENTRY_HEADER
  body_end = len(value) - HASH_SIZE

  def take(count, what):
    nonlocal offset
    if offset + count > body_end:
      fail(where, f"{what} of {count} bytes runs past the end of the entry")
    data = value[offset:offset + count]
    offset += count
    return data

  type_name = utf8(take(t, "the type name"), where, "the type name")
  metadata = {}
  previous_key = None
  for index in range(m):
    key_bytes = take(struct.unpack(">H", take(2, f"metadata key length #{index}"))[0], f"metadata key #{index}")
    value_bytes = take(struct.unpack(">I", take(4, f"metadata value length #{index}"))[0], f"metadata value #{index}")
    if previous_key is not None and not previous_key < key_bytes:
      fail(where, f"metadata key {key_bytes!r} does not follow {previous_key!r} in strictly ascending order")
    previous_key = key_bytes
    metadata[utf8(key_bytes, where, "a metadata key")] = utf8(value_bytes, where, "a metadata value")
  payload = take(p, "the payload")
  expected_length = offset + HASH_SIZE
  if len(value) != expected_length:
    fail(where, f"value of {len(value)} bytes, the header says {expected_length}")
  return {
    "kind": KINDS[kind],
    "codec": CODECS[codec],
    "flags": flags,
    "schemaVersion": schema,
    "timestamp": timestamp,
    "typeName": type_name,
    "metadata": metadata,
    "payloadBytes": payload,
    "payload": view(codec, payload, where),
    "hash": value[-HASH_SIZE:],
  }


def parse_snapshot(value, where):
  if len(value) < SNAPSHOT_HEADER + 4 + HASH_SIZE:
    fail(where, f"value of {len(value)} bytes is too short")
  if hashlib.sha256(value[:-HASH_SIZE]).digest() != value[-HASH_SIZE:]:
    fail(where, "checksum mismatch")
  # The two reserved bytes (offset 2) are written as zero and ignored by readers.
  layout, codec, _reserved, schema, seq, timestamp = struct.unpack(">BBHIQq", value[:24])
  if layout != 1:
    fail(where, f"layout byte {layout}, expected 1")
  if codec not in CODECS:
    fail(where, f"unknown codec {codec}")
  chain_hash = value[24:56]
  state_length = struct.unpack(">I", value[56:60])[0]
  state_end = SNAPSHOT_HEADER + state_length
  if state_end + 4 > len(value) - HASH_SIZE:
    fail(where, f"state of {state_length} bytes runs past the end")
  state = value[SNAPSHOT_HEADER:state_end]
  auxiliary_length = struct.unpack(">I", value[state_end:state_end + 4])[0]
  expected_length = state_end + 4 + auxiliary_length + HASH_SIZE
  if len(value) != expected_length:
    fail(where, f"value of {len(value)} bytes, the header says {expected_length}")
  return {
    "codec": CODECS[codec],
    "schemaVersion": schema,
    "seq": seq,
    "timestamp": timestamp,
    "chainHash": chain_hash,
    "state": view(codec, state, where),
    "auxiliary": value[state_end + 4:state_end + 4 + auxiliary_length],
  }


# MARK: - Comparison


def compare_entry(seq, actual, expected):
  where = f"entry {seq}"
  for name in ("kind", "typeName", "codec", "flags", "schemaVersion", "timestamp"):
    if name in expected and expected[name] != actual[name]:
      fail(where, f"{name} is {show(actual[name])}, expected {show(expected[name])}")
  if actual["metadata"] != expected["metadata"]:
    fail(where, f"metadata is {show(actual['metadata'])}, expected {show(expected['metadata'])}")
  if "hash" in expected and expected["hash"] != actual["hash"].hex():
    fail(where, f"hash is {actual['hash'].hex()}, expected {expected['hash']}")
  if not same(actual["payload"], expected["payload"]):
    fail(where, f"payload is {show(actual['payload'])}, expected {show(expected['payload'])}")


def compare_snapshot(seq, actual, expected):
  where = f"snapshot {seq}"
  for name in ("codec", "schemaVersion"):
    if expected[name] != actual[name]:
      fail(where, f"{name} is {show(actual[name])}, expected {show(expected[name])}")
  if "chainHash" in expected and expected["chainHash"] != actual["chainHash"].hex():
    fail(where, f"chain hash is {actual['chainHash'].hex()}, expected {expected['chainHash']}")
  if "auxiliaryHex" in expected and expected["auxiliaryHex"] != actual["auxiliary"].hex():
    fail(where, f"auxiliary is {actual['auxiliary'].hex()}, expected {expected['auxiliaryHex']}")
  if not same(actual["state"], expected["state"]):
    fail(where, f"state is {show(actual['state'])}, expected {show(expected['state'])}")


def check(log_dir, expected):
  if not os.path.isfile(os.path.join(log_dir, "data.mdb")):
    raise Mismatch(f"{log_dir} holds no data.mdb")
  has_lock = os.path.exists(os.path.join(log_dir, "lock.mdb"))
  env = lmdb.open(log_dir, readonly=True, lock=has_lock, max_dbs=4, subdir=True, create=False)
  try:
    with env.begin() as txn:
      dbs = []
      for name in (b"entries", b"snapshots", b"meta"):
        try:
          db = env.open_db(name, txn=txn, create=False)
        except lmdb.NotFoundError:
          fail("meta", f"the database '{name.decode()}' is missing")
        flags = db.flags(txn)
        if flags.get("dupsort") or flags.get("integerkey") or flags.get("reverse_key"):
          fail("meta", f"the database '{name.decode()}' has non-default flags {flags}")
        dbs.append(db)
      reader = Reader(txn, dbs)
      meta = reader.meta()
      if "app" in expected and expected["app"] != meta["app"]:
        fail("meta", f"app is {meta['app']!r}, expected {expected['app']!r}")

      expected_entries = expected["entries"]
      head = meta["anchorHash"]
      entry_hashes = {}
      count = 0
      for seq, fields in reader.entries(meta["anchorSeq"], meta["anchorHash"]):
        if count >= len(expected_entries):
          fail(f"entry {seq}", f"the log holds more than the {len(expected_entries)} expected entries")
        wanted = expected_entries[count]
        if wanted["seq"] != seq:
          fail(f"entry {seq}", f"expected entry {wanted['seq']} here")
        compare_entry(seq, fields, wanted)
        entry_hashes[seq] = fields["hash"]
        head = fields["hash"]
        count += 1
      if count < len(expected_entries):
        fail(f"entry {expected_entries[count]['seq']}", f"missing: the log holds only {count} entries")
      if head.hex() != expected["head"]:
        fail("head", f"the head is {head.hex()}, expected {expected['head']}")

      snapshots = list(reader.snapshots(meta["anchorSeq"], meta["anchorHash"], entry_hashes))
      if "snapshots" in expected:
        wanted_seqs = [item["seq"] for item in expected["snapshots"]]
        found_seqs = [seq for seq, _ in snapshots]
        if wanted_seqs != found_seqs:
          fail("snapshots", f"found snapshots at {found_seqs}, expected {wanted_seqs}")
        for (seq, fields), wanted in zip(snapshots, expected["snapshots"]):
          compare_snapshot(seq, fields, wanted)
      return count, len(snapshots), head.hex()
  finally:
    env.close()


def main(arguments):
  if len(arguments) != 3:
    print("usage: python3 read_log.py LOG_DIR EXPECTED_JSON", file=sys.stderr)
    return 2
  try:
    with open(arguments[2], "rb") as file:
      expected = json.loads(file.read().decode("utf-8"))
  except (OSError, ValueError) as error:
    print(f"error: cannot read {arguments[2]}: {error}", file=sys.stderr)
    return 2
  try:
    entries, snapshots, head = check(arguments[1], expected)
  except Mismatch as problem:
    print(f"mismatch: {problem}")
    return 1
  except lmdb.Error as error:
    print(f"mismatch: LMDB: {error}")
    return 1
  print(f"ok: {entries} entries, {snapshots} snapshots, head {head}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
