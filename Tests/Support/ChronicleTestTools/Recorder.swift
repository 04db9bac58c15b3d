import Synchronization

// MARK: - Collecting values across threads

/// Collects values from any thread, in the order they arrive.
public final class Recorder<Value: Sendable>: Sendable {
  private let storage = Mutex<[Value]>([])

  /// An empty recorder.
  public init() {}

  /// Adds `value` at the end.
  public func append(_ value: Value) { storage.withLock { $0.append(value) } }

  /// Every value so far.
  public var values: [Value] { storage.withLock { $0 } }
}
