import ChronicleLog
import Foundation

/// Time travel on a log without owning it: opens the log read-only (so it
/// works while an app writes it) and computes states with the app's reducer.
///
/// ```swift
/// let reader = try HistoryReader(directory: url, initialState: Ledger.State(), reducer: Ledger())
/// let then = try reader.state(at: 1_200)
/// let now = try reader.state(at: try reader.lastSeq)
/// ```
///
/// This is what app-specific tools (`state-at`, `replay`, `diff` in LogToolKit)
/// are built on. It never writes a byte.
public final class HistoryReader<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  let replayer: Replayer<State, Action>

  /// Opens the log in `directory` read-only.
  ///
  /// - Parameters:
  ///   - directory: the log's directory, as the app's store opens it.
  ///   - initialState: the app's state before the first entry.
  ///   - reducer: the app's reducer, which replay runs again.
  ///   - options: the app's codec-independent settings that replay
  ///     needs: `schemaVersion`, `stateSchemaVersion`, `migrations`, `undoDepth`.
  public init<R: Reducer>(
    directory: URL, initialState: State, reducer: R, options: StoreOptions = StoreOptions()
  ) throws where R.State == State, R.Action == Action {
    let log: ActionLog
    do { log = try ActionLog(directory: directory, access: .readOnly) } catch { throw ChronicleError(error) }
    replayer = Replayer(
      log: log, initialState: initialState, reducer: AnyReducer(reducer), options: options, keyframes: Keyframes())
  }

  /// The last sequence number the log holds now (another process may be appending).
  public var lastSeq: UInt64 {
    get throws {
      do { return try replayer.log.head().seq } catch { throw ChronicleError(error) }
    }
  }

  /// The first sequence number the log holds (1 unless it was compacted).
  public var firstSeq: UInt64 {
    get throws {
      do { return try replayer.log.meta().anchor.seq + 1 } catch { throw ChronicleError(error) }
    }
  }

  /// The state after entry `seq` (0: the initial state): nearest snapshot or keyframe, then a fold.
  public func state(at seq: UInt64) throws -> State {
    guard seq <= (try lastSeq) else { throw ChronicleError.noSuchEntry(seq: seq) }
    return try replayer.state(at: seq).state
  }

  /// Folds the whole log from the initial state, using no snapshot, calling
  /// `body` with each sequence number and the state after it; return `false` to stop.
  ///
  /// Compare its states with the snapshots to prove that the reducer is deterministic.
  public func replayFromScratch(_ body: (_ seq: UInt64, _ state: State) -> Bool) throws {
    try FreshFold(replayer: replayer).run(through: try lastSeq, body)
  }

  /// The snapshots' sequence numbers, with the state each one holds decoded (or why it cannot be).
  public func snapshotStates() throws -> [(seq: UInt64, state: Result<State, ChronicleError>)] {
    let infos: [SnapshotInfo]
    do { infos = try replayer.log.snapshots() } catch { throw ChronicleError(error) }
    return infos.map { info in
      var warnings: [String] = []
      if let cursor = replayer.loadSnapshot(info, warnings: &warnings) {
        return (info.seq, .success(cursor.state))
      }
      return (info.seq, .failure(.unusableSnapshot(seq: info.seq, reason: warnings.joined(separator: "; "))))
    }
  }

  /// Closes the log.
  public func close() {
    try? replayer.log.close()
  }
}
