import Foundation

// MARK: - The tree's lines of expected.jsonl

/// The line of a fixture's `expected.jsonl` that describes its Merkle tree and identity.
public struct FixtureTreeLine: Codable, Sendable {
  /// The tree's size (entries it covers).
  public var tree: UInt64
  /// The root of the whole tree in lower-case hexadecimal.
  public var rootHex: String
  /// The meta `log-id` in lower-case hexadecimal.
  public var logIDHex: String
  /// The checkpoint origin.
  public var origin: String
  /// The anchor's sequence number (meta `anchor`).
  public var anchorSeq: UInt64
  /// The anchor's hash in lower-case hexadecimal.
  public var anchorHashHex: String
  /// The verifier keys (`name+id+base64`) of the public test keys that signed the checkpoints.
  public var verifierKeys: [String]

  /// A line.
  public init(
    tree: UInt64, rootHex: String, logIDHex: String, origin: String, anchorSeq: UInt64, anchorHashHex: String,
    verifierKeys: [String]
  ) {
    self.tree = tree
    self.rootHex = rootHex
    self.logIDHex = logIDHex
    self.origin = origin
    self.anchorSeq = anchorSeq
    self.anchorHashHex = anchorHashHex
    self.verifierKeys = verifierKeys
  }
}

/// One stored checkpoint of a fixture: its tree size, root and the signed note's exact text.
public struct FixtureCheckpointLine: Codable, Sendable {
  /// The checkpoint's tree size (its key in the `checkpoints` database).
  public var checkpoint: UInt64
  /// The root hash it signs, in lower-case hexadecimal.
  public var rootHex: String
  /// The stored note (body, blank line, signature lines), as UTF-8 text.
  public var note: String

  /// A line.
  public init(checkpoint: UInt64, rootHex: String, note: String) {
    self.checkpoint = checkpoint
    self.rootHex = rootHex
    self.note = note
  }
}

/// A proof the fixture's log produced: an inclusion proof (`seq` in `size`) or a consistency proof
/// (`from` → `size`), each hash in lower-case hexadecimal.
public struct FixtureProofLine: Codable, Sendable {
  /// `inclusion` or `consistency`.
  public var proof: String
  /// The entry, for an inclusion proof.
  public var seq: UInt64?
  /// The older tree size, for a consistency proof.
  public var from: UInt64?
  /// The tree size the proof is for.
  public var size: UInt64
  /// The proof's hashes.
  public var hashes: [String]

  /// A line.
  public init(proof: String, seq: UInt64? = nil, from: UInt64? = nil, size: UInt64, hashes: [String]) {
    self.proof = proof
    self.seq = seq
    self.from = from
    self.size = size
    self.hashes = hashes
  }
}
