/// Something that checks a log's new checkpoint against the newest one it holds for the same
/// origin and cosigns it when the log only grew (C2SP tlog-witness's `add-checkpoint`).
///
/// ```swift
/// let cosignature = try witness.add(checkpoint: note, oldSize: lastSize, consistencyProof: proof)
/// ```
public protocol CheckpointWitness: Sendable {
  /// Checks `checkpoint` (a signed note whose text is a ``Checkpoint``) and cosigns it.
  ///
  /// - Parameters:
  ///   - checkpoint: the log's signed checkpoint.
  ///   - oldSize: the size of the checkpoint the caller believes the witness holds (0 for none).
  ///   - consistencyProof: the proof from `oldSize` to the checkpoint's size.
  /// - Returns: the witness's cosignature of the checkpoint.
  /// - Throws: ``TreeError/witnessRefused(origin:reason:)`` when the checkpoint is not signed by
  ///   the log's key, older than or inconsistent with the one held, or `oldSize` is not the held size.
  func add(checkpoint: SignedNote, oldSize: UInt64, consistencyProof: [[UInt8]]) throws -> Cosignature
}
