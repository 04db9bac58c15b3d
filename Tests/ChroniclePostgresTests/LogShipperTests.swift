import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing

// MARK: - Shipping against a real server

@Suite(.needsPostgres) struct LogShipperTests {
  @Test func shipsEveryEntryInBatchesAndReshippingIsANoOp() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(2_500)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 1_000))
      let report = try await shipper.ship(directory: device.url)
      #expect(report.entriesShipped == 2_500)
      #expect(report.batches == 3)
      #expect(report.serverHead == 2_500)

      let id = try #require(try device.withLog { try $0.logID() })
      #expect(report.logID == (try device.withLog { try hexID($0) }))
      let deviceHead = try device.withLog { try $0.head() }
      let row = try await client.query(
        "SELECT head_seq, head_hash, origin, app FROM chronicle.logs WHERE log_id = \(bytea(id))", logger: quietLogger)
      var heads = 0
      for try await (seq, hash, origin, app) in row.decode((Int64, ByteBuffer, String, String).self) {
        heads += 1
        #expect(UInt64(seq) == deviceHead.seq)
        #expect(Array(hash.readableBytesView) == deviceHead.hash)
        #expect(origin == (try device.withLog { try $0.origin() }))
        #expect(app == "ledger")
      }
      #expect(heads == 1)
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self) == 2_500)

      // Each stored entry is the device's: its bytes and hash are the stored value, field by field.
      for seq in [1, 999, 1_000, 1_001, 2_500] as [UInt64] {
        let (stored, entry) = try device.withLog { log in (try log.storedValue(seq: seq)!, try log.record(at: seq)!) }
        let rows = try await client.query(
          """
          SELECT body || hash, type_name, metadata->>'user', payload_json->>'amount', kind, codec,
            (extract(epoch FROM "timestamp") * 1000000)::bigint
          FROM chronicle.entries WHERE log_id = \(bytea(id)) AND seq = \(Int64(seq))
          """, logger: quietLogger)
        var found = 0
        for try await (bytes, type, user, amount, kind, codec, micros) in rows.decode(
          (ByteBuffer, String, String, String, String, String, Int64).self)
        {
          found += 1
          #expect(Array(bytes.readableBytesView) == stored)
          #expect(type == "deposit")
          #expect(user == entry.metadata["user"])
          #expect(amount == "\(seq)")
          #expect(kind == "action")
          #expect(codec == "json")
          #expect(micros == entry.timestamp)
        }
        #expect(found == 1)
      }

      // Shipping again sends nothing and changes nothing.
      let again = try await shipper.ship(directory: device.url)
      #expect(again.entriesShipped == 0)
      #expect(again.batches == 0)
      #expect(again.serverHead == 2_500)
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self) == 2_500)
    }
  }

  @Test func resumesFromTheServersHead() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(130)
    let earlier = try device.copy(named: "earlier")  // the device's log when the first ship ran
    try device.append(170)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 64))
      let first = try await shipper.ship(directory: earlier)
      #expect(first.entriesShipped == 130)
      #expect(first.batches == 3)
      let second = try await shipper.ship(directory: device.url)
      #expect(second.entriesShipped == 170)
      #expect(second.batches == 3)
      #expect(second.serverHead == 300)
      let seqs = try await column(client, "SELECT seq FROM chronicle.entries ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...300))
    }
  }

  @Test func aForkIsRefusedAndNothingOfItIsStored() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(30)
    let rewritten = try device.copy(named: "rewritten")
    let shorter = try device.copy(named: "shorter")
    try device.append(20)
    try device.append(25, at: rewritten, TestLog.withdrawal)  // entries 31…55 differ
    try device.append(5, at: shorter, TestLog.withdrawal)  // entries 31…35 differ, ends before the server
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 8))
      #expect(try await shipper.ship(directory: device.url).serverHead == 50)
      let id = try device.withLog { try hexID($0) }
      let before = try await serverHashes(client)

      for copy in [rewritten, shorter] {
        let error = await #expect(throws: ShipError.self) { try await shipper.ship(directory: copy) }
        #expect(error == .fork(logID: id, seq: 31))
        #expect(error?.description.hasPrefix("fork in log \(id) at entry 31") == true)
      }
      #expect(try await serverHashes(client) == before)
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 50)
    }
  }

  @Test func aShorterDeviceLogIsReportedAsTruncated() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(30)
    let older = try device.copy(named: "older")
    try device.append(20)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client)
      _ = try await shipper.ship(directory: device.url)
      let id = try device.withLog { try hexID($0) }
      let error = await #expect(throws: ShipError.self) { try await shipper.ship(directory: older) }
      #expect(error == .truncated(logID: id, deviceHead: 30, serverHead: 50))
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self) == 50)
    }
  }

  @Test func aServerWithoutTheSchemaIsReportedAndNothingIsWritten() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(3)
    try await withDatabase(migrated: false) { client, _ in
      let error = await #expect(throws: ShipError.self) { try await LogShipper(client: client).ship(directory: device.url) }
      guard case .noSchema = error else {
        Issue.record("expected noSchema, got \(String(describing: error))")
        return
      }
      let schemas = try await column(
        client, "SELECT nspname FROM pg_namespace WHERE nspname = 'chronicle'", as: String.self)
      #expect(schemas.isEmpty)
    }
  }
}
