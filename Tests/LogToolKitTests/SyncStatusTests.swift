import ChronicleLog
import ChronicleTestTools
import Foundation
import LogToolKit
import Testing

/// A device's copy of the shared stream `expenses`, built by hand as the sync lays it out.
///
/// The stream (the directory itself): 1 `add` of the tablet, 2 `add` of the phone (its outbox
/// action 1), 3 the rejection of the phone's `withdraw` (outbox 2), 4 `add` of the phone (outbox
/// 3), 5 a rejection of the tablet's. The outbox (`pending/`): the phone's actions 1–3, the marker
/// resolving them through 3 by stream entry 4, then `add` (5) and `set` (6), pending. Entries are
/// one second apart from 2026-01-01T00:00:00Z; `sync.json` saw the server at 6, offline.
enum DeviceCopy {
  /// 2026-01-01T00:00:00Z in µs.
  static let start: Int64 = 1_767_225_600_000_000

  static func sent(_ seq: Int, device: String = "phone") -> [String: String] {
    [SharedStreamLayout.deviceKey: device, SharedStreamLayout.pendingKey: String(seq)]
  }

  static func entry(
    _ n: Int, kind: EntryKind = .action, _ type: String, _ metadata: [String: String], payload: String = #"{"amount":5}"#
  ) -> NewEntry {
    NewEntry(
      kind: kind, typeName: type, metadata: metadata, codec: .json, payload: Array(payload.utf8),
      timestamp: start + Int64(n) * 1_000_000)
  }

  static func rejection(_ n: Int, of type: String, reason: String, device: String, outbox: Int) -> NewEntry {
    entry(
      n, kind: .marker, SharedStreamLayout.rejectedTypeName,
      sent(outbox, device: device).merging([
        SharedStreamLayout.typeKey: type, SharedStreamLayout.reasonKey: reason,
      ]) { $1 })
  }

  /// Builds the copy in `directory`, encrypted with `keyRing` when given.
  static func make(at directory: URL, keyRing: KeyRing? = nil, syncState: Bool = true) throws {
    let options = ActionLog.Options(durability: .normal, flushInterval: nil, appID: "expenses", keyRing: keyRing)
    let stream = try ActionLog(directory: directory, options: options)
    try stream.append(contentsOf: [
      entry(1, "add", sent(1, device: "tablet")),
      entry(2, "add", sent(1)),
      rejection(3, of: "withdraw", reason: "balance below zero", device: "phone", outbox: 2),
      entry(4, "add", sent(3)),
      rejection(5, of: "add", reason: "closed", device: "tablet", outbox: 2),
    ])
    try stream.close()
    let outbox = try ActionLog(directory: SharedStreamStatus.outboxDirectory(of: directory), options: options)
    try outbox.append(contentsOf: [
      entry(1, "add", sent(1)),
      entry(2, "withdraw", sent(2), payload: #"{"amount":500}"#),
      entry(3, "add", sent(3)),
      entry(4, kind: .marker, SharedStreamLayout.resolvedTypeName, [:], payload: #"{"through":3,"stream":4}"#),
      entry(5, "add", sent(5).merging(["note": "taxi"]) { $1 }),
      entry(6, "set", sent(6), payload: #"{"total":0}"#),
    ])
    try outbox.close()
    if syncState {
      try SharedStreamStatus.SyncState.write(
        .init(
          serverHead: 6, lastContact: Date(microsecondsSince1970: start + 600_000_000), lastError: "connection refused",
          online: false), to: directory)
    }
  }
}

/// `logtool sync-status` on a device's copy of a shared stream, run in process, and the
/// `SharedStreamStatus` it prints.
@Suite struct SyncStatusTests {
  /// Runs a `logtool` command in this process and captures what it prints.
  static func run(_ arguments: [String]) async -> ChildResult {
    let capture = OutputCapture()
    let status = await OutputCapture.$current.withValue(capture) {
      await LogTool.execute(LogToolCommand.self, arguments: arguments)
    }
    return ChildResult(status: status, stdout: capture.standardOutput, stderr: capture.standardError)
  }

  @Test func textShowsHeadsPendingAndRejections() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    try DeviceCopy.make(at: device)
    let result = await Self.run(["sync-status", device.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    #expect(
      result.stdout.replacingOccurrences(of: scratch.path, with: "$TMP") == """
        path            $TMP/device
        stream          expenses
        device          phone
        confirmed head  5
        server head     6 (1 not pulled yet)
        last contact    2026-01-01T00:10:00.000Z (offline)
        last error      connection refused
        resolved        outbox actions through 3 (by stream entry 4)
        pending         2 actions
        rejections      1 from this device

        pending:
        OUTBOX  TIME                      TYPE  METADATA
             5  2026-01-01T00:00:05.000Z  add   note=taxi
             6  2026-01-01T00:00:06.000Z  set

        rejected:
        SEQ  TIME                      TYPE      OUTBOX  REASON
          3  2026-01-01T00:00:03.000Z  withdraw       2  balance below zero

        """)

    let limited = await Self.run(["sync-status", device.path, "--limit", "1", "--rejections", "0"])
    #expect(limited.status == 0, "\(limited.stderr)")
    #expect(
      limited.stdout.hasSuffix(
        """
        pending:
        OUTBOX  TIME                      TYPE  METADATA
             5  2026-01-01T00:00:05.000Z  add   note=taxi
        … and 1 more (--limit lists more)

        """), "\(limited.stdout)")
  }

  @Test func jsonCarriesEveryField() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    try DeviceCopy.make(at: device)
    let result = await Self.run(["sync-status", device.path, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let expected =
      #"{"path":"$TMP/device","stream":"expenses","device":"phone","confirmedHead":5,"outboxHead":6,"#
      + #""resolved":{"markerSeq":4,"through":3,"streamSeq":4},"pendingCount":2,"pending":["#
      + #"{"seq":5,"timestamp":1767225605000000,"time":"2026-01-01T00:00:05.000000Z","typeName":"add","#
      + #""metadata":{"chronicle.device":"phone","chronicle.pending":"5","note":"taxi"}},"#
      + #"{"seq":6,"timestamp":1767225606000000,"time":"2026-01-01T00:00:06.000000Z","typeName":"set","#
      + #""metadata":{"chronicle.device":"phone","chronicle.pending":"6"}}],"rejectionCount":1,"rejections":["#
      + #"{"seq":3,"timestamp":1767225603000000,"time":"2026-01-01T00:00:03.000000Z","typeName":"withdraw","#
      + #""reason":"balance below zero","outboxSeq":2}],"sealedMarkers":0,"#
      + #""sync":{"serverHead":6,"lastContact":"2026-01-01T00:10:00.000000Z","lastError":"connection refused","#
      + #""online":false},"encrypted":false}"# + "\n"
    #expect(result.stdout.replacingOccurrences(of: scratch.path, with: "$TMP") == expected)
  }

  @Test func withoutSyncStateAndBeforeAnyAction() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    // A copy that has pulled the stream but whose device has sent nothing and never synced.
    let stream = try ActionLog(directory: device, options: .init(flushInterval: nil, appID: "expenses"))
    try stream.append(DeviceCopy.entry(1, "add", DeviceCopy.sent(1, device: "tablet")))
    try stream.close()
    try FileManager.default.createDirectory(
      at: SharedStreamStatus.outboxDirectory(of: device), withIntermediateDirectories: true)
    let result = await Self.run(["sync-status", device.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.replacingOccurrences(of: scratch.path, with: "$TMP") == """
        path            $TMP/device
        stream          expenses
        device          none yet (it has sent nothing)
        confirmed head  1
        sync            not run yet (no pending/sync.json)
        resolved        nothing yet
        pending         0 actions
        rejections      0 from this device

        """)
  }

  @Test func aPlainLogIsRefusedInOneLine() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let plain = scratch.child("plain")
    let log = try ActionLog(directory: plain, options: .init(flushInterval: nil))
    try log.append(DeviceCopy.entry(1, "add", [:]))
    try log.close()
    let result = await Self.run(["sync-status", plain.path])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr == "logtool: \(plain.path) is not a shared stream's device copy: it has no pending/ outbox "
        + "(logtool info describes an ordinary log)\n")
    let missing = await Self.run(["sync-status", scratch.child("nowhere").path])
    #expect(missing.status == 2)
    #expect(missing.errorLines == ["logtool: no log at \(scratch.child("nowhere").path): the path does not exist"])
  }

  @Test func aBadSyncStateFileIsNamed() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    try DeviceCopy.make(at: device, syncState: false)
    let file = SharedStreamStatus.SyncState.fileURL(in: device)
    #expect(try SharedStreamStatus.SyncState.read(from: device) == nil)
    try Data(#"{"serverHead":"six","online":true}"#.utf8).write(to: file)
    let result = await Self.run(["sync-status", device.path])
    #expect(result.status == 2)
    #expect(
      result.errorLines == [
        "logtool: cannot read the sync state file \(file.path): it is not the JSON the sync writes "
          + "(serverHead has the wrong type); remove it and the sync writes it again"
      ])

    // What the sync writes reads back the same, and the file is replaced whole.
    let state = SharedStreamStatus.SyncState(
      serverHead: 42, lastContact: Date(microsecondsSince1970: DeviceCopy.start + 1_500), lastError: nil, online: true)
    try SharedStreamStatus.SyncState.write(state, to: device)
    #expect(try SharedStreamStatus.SyncState.read(from: device) == state)
    #expect(
      try String(contentsOf: file, encoding: .utf8) == """
        {
          "lastContact" : "2026-01-01T00:00:00.001500Z",
          "lastError" : null,
          "online" : true,
          "serverHead" : 42
        }

        """)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
    #expect(!leftovers.contains { $0.contains(".tmp-") }, "\(leftovers)")
  }

  @Test func anEncryptedCopyWithoutItsKeySaysSo() async throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    let ring = try KeyRing([EncryptionKey.random()])
    try DeviceCopy.make(at: device, keyRing: ring)

    let sealed = try #require(try SharedStreamStatus.read(directory: device))
    #expect(sealed.encrypted)
    #expect(sealed.deviceName == nil)
    #expect(sealed.confirmedHead == 5)
    #expect(sealed.resolved == .init(markerSeq: 4, through: nil, streamSeq: nil))
    #expect(sealed.pending.map(\.seq) == [5, 6])
    #expect(sealed.pending.map(\.typeName) == ["add", "set"], "type names are sealed only with sealsTypeNames")
    #expect(sealed.pending.allSatisfy { $0.sealedKeyID == ring.current.id && $0.metadata.isEmpty })
    #expect(sealed.rejectionCount == 0)
    #expect(sealed.sealedMarkers == 2)

    let open = try #require(try SharedStreamStatus.read(directory: device, keyRing: ring))
    #expect(!open.encrypted)
    #expect(open.deviceName == "phone")
    #expect(open.resolved == .init(markerSeq: 4, through: 3, streamSeq: 4))
    #expect(open.rejectionCount == 1)
    #expect(open.recentRejections.map(\.reason) == ["balance below zero"])

    let text = await Self.run(["sync-status", device.path])
    #expect(text.status == 0, "\(text.stderr)")
    #expect(text.stdout.contains("device          encrypted\n"), "\(text.stdout)")
    #expect(text.stdout.contains("resolved        encrypted (marker at outbox entry 4)\n"), "\(text.stdout)")
    #expect(text.stdout.contains("rejections      0 from this device (2 encrypted markers not read)\n"), "\(text.stdout)")
    #expect(text.stdout.contains("encrypted       some entries are encrypted: give --key-file to read them\n"))
  }

  /// A tally kept between reads counts on over the entries appended since, and starts again for
  /// another device.
  @Test func rejectionsAreCountedOnAsTheStreamGrows() throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    try DeviceCopy.make(at: device)
    let stream = try ActionLog(directory: device, options: .init(flushInterval: nil, appID: "expenses"))
    defer { try? stream.close() }
    var tally = RejectionTally(keep: 2)
    try tally.advance(over: stream, device: "phone")
    #expect(tally.count == 1)
    #expect(tally.scanned == 5)
    try stream.append(contentsOf: [
      DeviceCopy.rejection(6, of: "set", reason: "too late", device: "phone", outbox: 6),
      DeviceCopy.entry(7, "add", DeviceCopy.sent(5)),
      DeviceCopy.rejection(8, of: "add", reason: "closed", device: "phone", outbox: 7),
    ])
    try tally.advance(over: stream, device: "phone")
    #expect(tally.count == 3)
    #expect(tally.scanned == 8)
    #expect(tally.recent.map(\.streamSeq) == [6, 8])
    #expect(tally.recent.map(\.outboxSeq) == [6, 7])
    try tally.advance(over: stream, device: "tablet")
    #expect(tally.count == 1)
    #expect(tally.recent.map(\.reason) == ["closed"])
  }

  /// The helper the inspector marks entries with: confirmed, rejected with the reason, or other.
  @Test func entryRoles() throws {
    let scratch = try TemporaryDirectory(prefix: "sync-status")
    defer { scratch.remove() }
    let device = scratch.child("device")
    try DeviceCopy.make(at: device)
    let log = try ActionLog(directory: device, access: .readOnly)
    defer { try? log.close() }
    let roles = try log.records(in: 1...5).map(SharedStreamStatus.role(of:))
    #expect(
      roles == [
        .confirmed, .confirmed, .rejected(typeName: "withdraw", reason: "balance below zero"), .confirmed,
        .rejected(typeName: "add", reason: "closed"),
      ])
    // Another marker: the outbox's resolved marker.
    let outbox = try ActionLog(directory: SharedStreamStatus.outboxDirectory(of: device), access: .readOnly)
    defer { try? outbox.close() }
    let other = try #require(try outbox.record(at: 4))
    #expect(SharedStreamStatus.role(of: other) == .other)
  }
}
