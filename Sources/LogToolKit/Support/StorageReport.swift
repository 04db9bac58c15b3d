#if LogTool
import ChronicleLog

/// The reader table and free pages as `info` and `stats` print them.
struct StorageReport {
  let status: StorageStatus

  init(_ log: ActionLog) throws { status = try log.storageStatus() }

  /// `readers` and `free pages` lines: a summary, then one line per slot.
  func addFields(to fields: inout FieldList) {
    if !status.hasReaderTable {
      fields.add("readers", "no reader table (no lock.mdb: no process has the log open)")
    } else if status.readers.isEmpty {
      fields.add("readers", "none in a transaction (table of \(Format.grouped(status.maxReaders)) slots)")
    } else {
      let stale = status.staleReaders.count
      var summary = "\(status.readers.count) of \(Format.grouped(status.maxReaders)) slots: "
      summary += "\(status.liveReaders.count) live, \(stale) stale"
      if stale > 0 { summary += " (pinning pages until the writer clears them)" }
      fields.add("readers", summary)
      for reader in status.readers { fields.add("", Self.describe(reader)) }
    }
    let percent = status.usedPages > 0 ? Double(status.freePages) * 100 / Double(status.usedPages) : 0
    fields.add(
      "free pages",
      "\(Format.grouped(status.freePages)) of \(Format.grouped(status.usedPages)) used pages "
        + "(\(Format.decimal(percent, digits: 1))%, \(Format.grouped(status.pageSize)) bytes each)")
  }

  /// `pid 1234  stale  reading txn 812 (3 behind)`.
  static func describe(_ reader: StorageStatus.Reader) -> String {
    var text = "pid \(reader.pid)  \(reader.isStale ? "stale" : "live ")"
    if let id = reader.transactionID {
      text += "  reading txn \(id)"
      if let behind = reader.transactionsBehind { text += " (\(Format.grouped(behind)) behind)" }
    } else {
      text += "  idle"
    }
    if reader.isThisProcess { text += "  (this process)" }
    return text
  }

  /// `"readers": {…}, "pages": {…}` as two fields of an open JSON object.
  func writeJSON(into json: inout JSONWriter) {
    json.key("readers")
    json.beginObject()
    json.field("table", status.hasReaderTable)
    json.field("maxReaders", status.maxReaders)
    json.field("live", status.liveReaders.count)
    json.field("stale", status.staleReaders.count)
    json.key("slots")
    json.beginArray()
    for reader in status.readers {
      json.beginObject()
      json.field("pid", Int(reader.pid))
      json.key("transactionID")
      if let id = reader.transactionID { json.field(id) } else { json.null() }
      json.field("stale", reader.isStale)
      json.key("transactionsBehind")
      if let behind = reader.transactionsBehind { json.field(behind) } else { json.null() }
      json.endObject()
    }
    json.endArray()
    json.endObject()
    json.key("pages")
    json.beginObject()
    json.field("pageSize", status.pageSize)
    json.field("used", status.usedPages)
    json.field("free", status.freePages)
    json.field("lastTransactionID", status.lastTransactionID)
    json.endObject()
  }
}

extension JSONWriter {
  /// An integer value (after a ``key(_:)``).
  fileprivate mutating func field(_ value: Int) { raw(String(value)) }
}
#endif  // LogTool
