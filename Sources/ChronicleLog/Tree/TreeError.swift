import Foundation

/// What went wrong with a Merkle proof, a checkpoint, a signed note, a key or a witness.
///
/// Every case carries one sentence that says what was wrong and where:
///
/// ```swift
/// do { _ = try Checkpoint(parsing: text) } catch { print(error) }   // "malformed checkpoint: …"
/// ```
public enum TreeError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
  /// An inclusion or consistency proof does not prove what it claims.
  case invalidProof(String)
  /// A checkpoint body does not follow the C2SP tlog-checkpoint format.
  case malformedCheckpoint(String)
  /// A signed note does not follow the C2SP signed-note format.
  case malformedNote(String)
  /// A signer or verifier key text is malformed.
  case malformedKey(String)
  /// A note carries no valid signature by the expected key, or a signature by it that does not verify.
  case badSignature(String)
  /// A witness refused a checkpoint.
  case witnessRefused(origin: String, reason: String)
  /// A request names a tree size or leaf the tree does not have.
  case outOfRange(String)
  /// The log holds no tree (or cannot hold one): why.
  case noTree(path: String, reason: String)
  /// The log's tree lacks a hash an answer needs (one a compaction did not keep): which, and why.
  case missingHash(path: String, reason: String)

  /// One line that says what and where.
  public var description: String {
    switch self {
    case .invalidProof(let reason): "invalid proof: \(reason)"
    case .malformedCheckpoint(let reason): "malformed checkpoint: \(reason)"
    case .malformedNote(let reason): "malformed signed note: \(reason)"
    case .malformedKey(let reason): "malformed key: \(reason)"
    case .badSignature(let reason): "bad signature: \(reason)"
    case .witnessRefused(let origin, let reason): "the witness refused the checkpoint of '\(origin)': \(reason)"
    case .outOfRange(let reason): reason
    case .noTree(let path, let reason): "\(path) has no Merkle tree: \(reason)"
    case .missingHash(let path, let reason): "the Merkle tree of \(path) lacks a hash: \(reason)"
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}
