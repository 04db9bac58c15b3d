#if Inspector
import ChronicleCBOR
import ChronicleLog
import Foundation
import LogToolKit

// MARK: - A shared stream's device copy

extension Inspector {
  /// What the inspector keeps to show a shared stream's device copy: the outbox, opened read-only
  /// once it exists, and the count of the device's rejections, carried on as the stream grows.
  struct SharedStreamState: Sendable {
    var outbox: ActionLog?
    var rejections = RejectionTally(keep: 5)
  }

  /// The served log's directory.
  var directory: URL { URL(fileURLWithPath: path, isDirectory: true) }

  /// Whether the served log is a shared stream's device copy (it has a `pending/` outbox), looked
  /// at again by every request: an outbox made after the server started is shown too.
  var isSharedStream: Bool { SharedStreamStatus.isDeviceCopy(directory) }

  /// `GET /api/sync?limit=N`: `{"shared": false}` for an ordinary log; for a shared stream's
  /// device copy `{"shared": true, …}` with `sync-status --json`'s fields: the confirmed head, the
  /// device's pending actions (the first N, 1…1000, default 100, and their count), its rejections,
  /// and what the sync last recorded.
  func syncStatus(_ query: Query) throws -> String {
    let limit = try query.int("limit", in: 1...Self.maxPage) ?? 100
    var out = JSONWriter()
    out.beginObject()
    guard isSharedStream else {
      out.field("shared", false)
      out.endObject()
      return out.text
    }
    let status = try sharedStream.withLock { state -> SharedStreamStatus in
      if state.outbox == nil {
        state.outbox = try SharedStreamStatus.openOutbox(of: directory, keyRing: log.options.keyRing)
      }
      return try SharedStreamStatus.read(
        stream: log, outbox: state.outbox, directory: directory, pendingLimit: limit, rejections: &state.rejections)
    }
    out.field("shared", true)
    status.writeJSONFields(into: &out)
    out.endObject()
    return out.text
  }

  /// Closes the outbox, if it was opened.
  func closeSharedStream() {
    sharedStream.withLock { state in
      try? state.outbox?.close()
      state.outbox = nil
    }
  }

  /// Writes what an entry of a shared stream's device copy is into an open object: `"sync":
  /// "confirmed"`, or `"sync": "rejected"` with the refused action's `rejectedType` and the
  /// `reason` (`null` when the marker is encrypted); nothing for another marker.
  static func writeRole(of record: StoredEntry, into out: inout JSONWriter) {
    switch SharedStreamStatus.role(of: record) {
    case .confirmed:
      out.field("sync", "confirmed")
    case .rejected(let typeName, let reason):
      out.field("sync", "rejected")
      out.key("rejectedType")
      if let typeName { out.string(typeName) } else { out.null() }
      out.key("reason")
      if let reason { out.string(reason) } else { out.null() }
    case .other:
      break
    }
  }
}
#endif  // Inspector
