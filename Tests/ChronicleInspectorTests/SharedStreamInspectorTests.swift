import ChronicleInspector
import ChronicleLog
import ChronicleTestTools
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - A device's copy of a shared stream

/// A device's copy of the shared stream `expenses`, built by hand as the sync lays it out: the
/// stream holds 1 `add` of the tablet, 2 `add` of the phone, 3 the rejection of the phone's
/// `withdraw` (its outbox action 2), 4 `add` of the phone, 5 a rejection of the tablet's; the
/// phone's outbox holds its actions 1–3, the marker resolving them through 3 by stream entry 4,
/// then `add` (5) and `set` (6), pending; `sync.json` saw the server at 6, online.
func makeDeviceCopy(at directory: URL, keyRing: KeyRing? = nil) throws {
  let start: Int64 = 1_767_225_600_000_000
  func sent(_ seq: Int, _ device: String = "phone") -> [String: String] {
    [SharedStreamLayout.deviceKey: device, SharedStreamLayout.pendingKey: String(seq)]
  }
  func entry(_ n: Int, kind: EntryKind = .action, _ type: String, _ metadata: [String: String], payload: String = #"{"amount":5}"#)
    -> NewEntry
  {
    NewEntry(
      kind: kind, typeName: type, metadata: metadata, codec: .json, payload: Array(payload.utf8),
      timestamp: start + Int64(n) * 1_000_000)
  }
  func rejection(_ n: Int, _ type: String, _ reason: String, _ device: String, outbox: Int) -> NewEntry {
    entry(
      n, kind: .marker, SharedStreamLayout.rejectedTypeName,
      sent(outbox, device).merging([SharedStreamLayout.typeKey: type, SharedStreamLayout.reasonKey: reason]) { $1 })
  }
  let options = ActionLog.Options(durability: .normal, flushInterval: nil, appID: "expenses", keyRing: keyRing)
  let stream = try ActionLog(directory: directory, options: options)
  try stream.append(contentsOf: [
    entry(1, "add", sent(1, "tablet")), entry(2, "add", sent(1)),
    rejection(3, "withdraw", "balance below zero", "phone", outbox: 2), entry(4, "add", sent(3)),
    rejection(5, "add", "closed", "tablet", outbox: 2),
  ])
  try stream.close()
  let outbox = try ActionLog(directory: SharedStreamStatus.outboxDirectory(of: directory), options: options)
  try outbox.append(contentsOf: [
    entry(1, "add", sent(1)), entry(2, "withdraw", sent(2)), entry(3, "add", sent(3)),
    entry(4, kind: .marker, SharedStreamLayout.resolvedTypeName, [:], payload: #"{"through":3,"stream":4}"#),
    entry(5, "add", sent(5)), entry(6, "set", sent(6)),
  ])
  try outbox.close()
  try SharedStreamStatus.SyncState.write(
    .init(serverHead: 6, lastContact: Date(microsecondsSince1970: start + 600_000_000), lastError: nil, online: true),
    to: directory)
}

// MARK: - Tests

/// The inspector of a shared stream's device copy: `/api/sync` lists the device's pending actions,
/// rejections and sync state, and every entry says whether it is confirmed or a rejection.
@Suite struct SharedStreamInspectorTests {
  @Test func syncAnswerListsPendingActionsAndRejections() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-shared")
    defer { scratch.remove() }
    let directory = scratch.child("device")
    try makeDeviceCopy(at: directory)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      let sync = try await client.get("/api/sync")
      #expect(sync.status == 200)
      #expect(
        sync.text
          == #"{"shared":true,"stream":"expenses","device":"phone","confirmedHead":5,"outboxHead":6,"#
          + #""resolved":{"markerSeq":4,"through":3,"streamSeq":4},"pendingCount":2,"pending":["#
          + #"{"seq":5,"timestamp":1767225605000000,"time":"2026-01-01T00:00:05.000000Z","typeName":"add","#
          + #""metadata":{"chronicle.device":"phone","chronicle.pending":"5"}},"#
          + #"{"seq":6,"timestamp":1767225606000000,"time":"2026-01-01T00:00:06.000000Z","typeName":"set","#
          + #""metadata":{"chronicle.device":"phone","chronicle.pending":"6"}}],"rejectionCount":1,"rejections":["#
          + #"{"seq":3,"timestamp":1767225603000000,"time":"2026-01-01T00:00:03.000000Z","typeName":"withdraw","#
          + #""reason":"balance below zero","outboxSeq":2}],"sealedMarkers":0,"#
          + #""sync":{"serverHead":6,"lastContact":"2026-01-01T00:10:00.000000Z","lastError":null,"online":true},"#
          + #""encrypted":false}"#)
      let one = try await client.get("/api/sync?limit=1")
      #expect((one.object["pending"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [5], "\(one.text)")
      #expect(one.object["pendingCount"] as? Int == 2, "\(one.text)")
      let bad = try await client.get("/api/sync?limit=0")
      #expect(bad.status == 400)
      #expect(bad.error == "'limit' must be a whole number from 1 to 1000, not '0'")

      // Each entry: confirmed, or rejected with the refused action's type and the reason.
      let page = try await client.get("/api/entries")
      #expect(page.entries.map { $0["sync"] as? String } == ["confirmed", "confirmed", "rejected", "confirmed", "rejected"])
      #expect(page.entries[2]["rejectedType"] as? String == "withdraw", "\(page.text)")
      #expect(page.entries[2]["reason"] as? String == "balance below zero", "\(page.text)")
      #expect(page.entries[4]["reason"] as? String == "closed", "\(page.text)")
      let rejected = try await client.get("/api/entries/3")
      #expect(rejected.object["sync"] as? String == "rejected", "\(rejected.text)")
      #expect(rejected.object["reason"] as? String == "balance below zero", "\(rejected.text)")
      #expect(rejected.object["snapshot"] as? Bool == false, "\(rejected.text)")
      let confirmed = try await client.get("/api/entries/4")
      #expect(confirmed.object["sync"] as? String == "confirmed", "\(confirmed.text)")
      #expect(confirmed.text.hasSuffix(#","snapshot":false,"sync":"confirmed"}"#), "\(confirmed.text)")

      // The page has the place it shows them in.
      let html = try await client.get("/")
      #expect(html.text.contains(#"id="pending-badge""#))
      #expect(html.text.contains(#"id="sync-panel""#))
    }
  }

  /// As another process appends to the outbox and to the stream, the answer follows: a new pending
  /// action, a new confirmed head, and new entries (in the list and the live stream) marked confirmed.
  @Test func theAnswerFollowsBothLogsAsTheyGrow() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-shared")
    defer { scratch.remove() }
    let directory = scratch.child("device")
    try makeDeviceCopy(at: directory)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      #expect(try await client.get("/api/sync").object["pendingCount"] as? Int == 2)
      let outbox = SharedStreamStatus.outboxDirectory(of: directory)
      let sent = try ChildProcess.run("chronicle-log-probe", ["append", outbox.path, "1"])
      #expect(sent.status == 0, "\(sent.stderr)")
      let grown = try await client.get("/api/sync")
      #expect(grown.object["pendingCount"] as? Int == 3, "\(grown.text)")
      #expect(grown.object["outboxHead"] as? Int == 7, "\(grown.text)")

      async let events = client.get("/api/stream?after=5&max=2")
      try await Task.sleep(for: .milliseconds(300))
      let pulled = try ChildProcess.run("chronicle-log-probe", ["append", directory.path, "2"])
      #expect(pulled.status == 0, "\(pulled.stderr)")
      let stream = try await events
      #expect(stream.text.contains(#""sync":"confirmed""#), "\(stream.text)")
      let after = try await client.get("/api/sync")
      #expect(after.object["confirmedHead"] as? Int == 7, "\(after.text)")
      #expect(after.object["rejectionCount"] as? Int == 1, "\(after.text)")
      let page = try await client.get("/api/entries?from=6")
      #expect(page.entries.map { $0["sync"] as? String } == ["confirmed", "confirmed"], "\(page.text)")
    }
  }

  /// An encrypted copy served without its key: the rejections are marked, their reasons are not
  /// known, and the answer says that some of it is encrypted.
  @Test func anEncryptedCopyWithoutItsKey() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-shared")
    defer { scratch.remove() }
    let directory = scratch.child("device")
    let ring = try KeyRing([EncryptionKey.random()])
    try makeDeviceCopy(at: directory, keyRing: ring)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      let sync = try await client.get("/api/sync")
      #expect(sync.object["encrypted"] as? Bool == true, "\(sync.text)")
      #expect(sync.object["device"] is NSNull, "\(sync.text)")
      #expect(sync.object["pendingCount"] as? Int == 2, "\(sync.text)")
      #expect(sync.object["sealedMarkers"] as? Int == 2, "\(sync.text)")
      let page = try await client.get("/api/entries")
      #expect(page.entries[2]["sync"] as? String == "rejected", "\(page.text)")
      #expect(page.entries[2]["reason"] is NSNull, "\(page.text)")
    }
    let clear = try Inspector(directory: directory, keyRing: ring)
    defer { clear.close() }
    try await serving(clear) { client in
      let sync = try await client.get("/api/sync")
      #expect(sync.object["encrypted"] as? Bool == false, "\(sync.text)")
      #expect(sync.object["rejectionCount"] as? Int == 1, "\(sync.text)")
    }
  }

  /// An ordinary log shows nothing new: `/api/sync` says it is not shared, and no entry carries `sync`.
  @Test func anOrdinaryLogShowsNothingNew() async throws {
    try await servingInspectedLog(count: 5) { client in
      let sync = try await client.get("/api/sync")
      #expect(sync.status == 200)
      #expect(sync.text == #"{"shared":false}"#)
      let page = try await client.get("/api/entries")
      #expect(page.entries.count == 5)
      #expect(page.entries.allSatisfy { $0["sync"] == nil }, "\(page.text)")
      let one = try await client.get("/api/entries/1")
      #expect(one.object["sync"] == nil, "\(one.text)")
      #expect(one.text.hasSuffix(#","snapshot":false}"#), "\(one.text)")
    }
  }
}
