#if LogTool
import ArgumentParser
import ChronicleCBOR
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool sync-status DIR`: where a device's copy of a shared stream stands: its confirmed
  /// head, what the sync last heard from the server, the actions still pending in its outbox, and
  /// the actions of the device the stream refused.
  public struct SyncStatus: ParsableCommand {
    /// `sync-status`.
    public static let configuration = CommandConfiguration(
      commandName: "sync-status",
      abstract: "Show a shared stream's device copy: confirmed head, server head, pending actions, rejections.",
      discussion: "DIR is the device's directory: the stream's confirmed entries, with the device's outbox in "
        + "DIR/pending and the sync's last contact in DIR/pending/sync.json. Both logs are opened read-only, "
        + "so it works while the app syncs.")

    /// The device's directory.
    @OptionGroup public var log: LogOptions
    /// How many pending actions to list.
    @Option(help: "List at most this many pending actions (all are counted).") public var limit = 20
    /// How many of the last rejections to list.
    @Option(help: "List at most this many of the device's last rejected actions (all are counted).")
    public var rejections = 5
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Checks the counts.
    public func validate() throws {
      if limit < 0 { throw ValidationError("--limit must not be negative") }
      if rejections < 0 { throw ValidationError("--rejections must not be negative") }
    }

    /// Prints the status.
    public func run() throws {
      guard
        let status = try SharedStreamStatus.read(
          directory: log.url, keyRing: try log.keyRing(), pendingLimit: limit, rejectionLimit: rejections)
      else {
        throw LogToolError.badInput(
          "\(log.path) is not a shared stream's device copy: it has no \(SharedStreamLayout.pendingDirectory)/ "
            + "outbox (logtool info describes an ordinary log)")
      }
      var out = StandardOutput()
      defer { out.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", log.path)
        status.writeJSONFields(into: &json)
        json.endObject()
        out.line(json.text)
        return
      }
      for line in status.textLines(path: log.path) { out.line(line) }
    }
  }
}

extension SharedStreamStatus {
  /// Writes the status's fields into an open JSON object: `stream`, `device`, `confirmedHead`,
  /// `outboxHead`, `resolved`, `pendingCount`, `pending`, `rejectionCount`, `rejections`,
  /// `sealedMarkers`, `sync` and `encrypted` (what `sync-status --json` and the inspector's
  /// `/api/sync` print).
  package func writeJSONFields(into json: inout JSONWriter) {
    json.field("stream", streamName)
    json.key("device")
    if let deviceName { json.string(deviceName) } else { json.null() }
    json.field("confirmedHead", confirmedHead)
    json.field("outboxHead", outboxHead)
    json.key("resolved")
    if let resolved {
      json.beginObject()
      json.field("markerSeq", resolved.markerSeq)
      json.key("through")
      if let through = resolved.through { json.uint(through) } else { json.null() }
      json.key("streamSeq")
      if let seq = resolved.streamSeq { json.uint(seq) } else { json.null() }
      json.endObject()
    } else {
      json.null()
    }
    json.field("pendingCount", pendingCount)
    json.key("pending")
    json.beginArray()
    for action in pending {
      json.beginObject()
      json.field("seq", action.seq)
      json.field("timestamp", Int(action.timestamp))
      json.field("time", Format.time(action.timestamp))
      json.field("typeName", action.typeName)
      json.key("metadata")
      json.beginObject()
      for (key, value) in action.metadata.sorted(by: { $0.key < $1.key }) { json.field(key, value) }
      json.endObject()
      if let keyID = action.sealedKeyID {
        json.field("encrypted", true)
        json.field("keyID", EncryptionKey.idText(keyID))
      }
      json.endObject()
    }
    json.endArray()
    json.field("rejectionCount", rejectionCount)
    json.key("rejections")
    json.beginArray()
    for rejection in recentRejections {
      json.beginObject()
      json.field("seq", rejection.streamSeq)
      json.field("timestamp", Int(rejection.timestamp))
      json.field("time", Format.time(rejection.timestamp))
      json.field("typeName", rejection.typeName)
      json.field("reason", rejection.reason)
      json.key("outboxSeq")
      if let seq = rejection.outboxSeq { json.uint(seq) } else { json.null() }
      json.endObject()
    }
    json.endArray()
    json.field("sealedMarkers", sealedMarkers)
    json.key("sync")
    if let syncState {
      json.beginObject()
      json.field("serverHead", syncState.serverHead)
      json.key("lastContact")
      if let date = syncState.lastContact { json.string(Format.time(date.microsecondsSince1970)) } else { json.null() }
      json.key("lastError")
      if let error = syncState.lastError { json.string(error) } else { json.null() }
      json.field("online", syncState.online)
      json.endObject()
    } else {
      json.null()
    }
    json.field("encrypted", encrypted)
  }

  /// `sync-status`'s text: the fields, then the pending actions and the last rejections as tables.
  func textLines(path: String) -> [String] {
    var fields = FieldList()
    fields.add("path", path)
    fields.add("stream", streamName.isEmpty ? "(none)" : streamName)
    fields.add("device", deviceName ?? (outboxHead == 0 ? "none yet (it has sent nothing)" : "encrypted"))
    fields.add("confirmed head", String(confirmedHead))
    if let syncState {
      let behind = syncState.serverHead > confirmedHead ? syncState.serverHead - confirmedHead : 0
      fields.add(
        "server head",
        String(syncState.serverHead) + (behind > 0 ? " (\(Format.grouped(Int(clamping: behind))) not pulled yet)" : ""))
      fields.add(
        "last contact",
        (syncState.lastContact.map { Format.shortTime($0.microsecondsSince1970) } ?? "never")
          + (syncState.online ? " (online)" : " (offline)"))
      fields.add("last error", syncState.lastError.map { Self.oneLine($0) } ?? "-")
    } else {
      fields.add("sync", "not run yet (no \(SharedStreamLayout.pendingDirectory)/\(SharedStreamLayout.syncStateFile))")
    }
    if let resolved {
      if let through = resolved.through {
        fields.add(
          "resolved",
          "outbox actions through \(through)" + (resolved.streamSeq.map { " (by stream entry \($0))" } ?? ""))
      } else {
        fields.add("resolved", "encrypted (marker at outbox entry \(resolved.markerSeq))")
      }
    } else {
      fields.add("resolved", "nothing yet")
    }
    fields.add("pending", Format.grouped(pendingCount) + (pendingCount == 1 ? " action" : " actions"))
    fields.add(
      "rejections",
      Format.grouped(rejectionCount) + " from this device"
        + (sealedMarkers > 0 ? " (\(Format.grouped(sealedMarkers)) encrypted markers not read)" : ""))
    if encrypted { fields.add("encrypted", "some entries are encrypted: give --key-file to read them") }
    var lines = fields.lines

    if !pending.isEmpty {
      lines += ["", "pending:"]
      var table = Table([("OUTBOX", .right), ("TIME", .left), ("TYPE", .left), ("METADATA", .left)])
      for action in pending {
        let shown = action.metadata.filter {
          $0.key != SharedStreamLayout.deviceKey && $0.key != SharedStreamLayout.pendingKey
        }
        table.append([
          String(action.seq), Format.shortTime(action.timestamp),
          action.sealedKeyID != nil && action.typeName.isEmpty ? "encrypted" : action.typeName,
          action.sealedKeyID.map { "encrypted (key \(EncryptionKey.idText($0)))" } ?? Format.metadata(shown),
        ])
      }
      lines += table.lines
      if pendingCount > pending.count {
        lines.append("… and \(Format.grouped(pendingCount - pending.count)) more (--limit lists more)")
      }
    }
    if !recentRejections.isEmpty {
      lines += ["", recentRejections.count < rejectionCount ? "rejected (the last \(recentRejections.count)):" : "rejected:"]
      var table = Table([
        ("SEQ", .right), ("TIME", .left), ("TYPE", .left), ("OUTBOX", .right), ("REASON", .left),
      ])
      for rejection in recentRejections {
        table.append([
          String(rejection.streamSeq), Format.shortTime(rejection.timestamp), rejection.typeName,
          rejection.outboxSeq.map(String.init) ?? "-", Self.oneLine(rejection.reason),
        ])
      }
      lines += table.lines
    }
    return lines
  }

  /// `text` on one line: line breaks and other control characters as escapes.
  static func oneLine(_ text: String) -> String { LogTool.oneLine(text) }
}
#endif  // LogTool
