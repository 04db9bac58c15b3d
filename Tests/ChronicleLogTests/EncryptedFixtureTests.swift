import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

/// The committed encrypted log (`fixtures/v2-encrypted`, format 2) must stay readable byte for
/// byte with its public test keys, and verifiable without them.
@Suite struct EncryptedFixtureTests {
  static let name = "v2-encrypted"

  @Test func readsBackByteForByteWithTheTestKeys() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory(Self.name))
    let copy = try Fixtures.copy(Self.name, into: temporary)
    // The committed key file is the ring the fixture app defines.
    let ring = try KeyRing(contentsOf: copy.appendingPathComponent(EncryptedFixture.keyFileName))
    #expect(ring == (try EncryptedFixture.ring()))
    let log = try ActionLog(directory: copy, access: .readOnly, options: .init(keyRing: ring))
    defer { try? log.close() }

    #expect(log.isEncrypted)
    let meta = try log.meta()
    #expect(meta.formatVersion == 2 && meta.formatVersion == expected.head.formatVersion)
    #expect(meta.appID == expected.head.appID)
    #expect(meta.created == expected.head.created)
    #expect(try log.logID() == EncryptedFixture.logID)
    let report = try log.verify()
    #expect(report.isValid, "verify() found: \(report.problems)")
    #expect(fixtureHex(report.head) == expected.head.head)
    #expect(report.snapshotsChecked == expected.snapshots.count)

    var walked: [StoredEntry] = []
    try log.forEach { walked.append($0) }
    #expect(walked.map(\.seq) == expected.entries.map(\.seq))
    for (record, line) in zip(walked, expected.entries) {
      expectEntry(record, matches: line)
    }
    #expect(try log.snapshots().map(\.seq) == expected.snapshots.map(\.snapshot))
    for line in expected.snapshots {
      let snapshot = try #require(try log.snapshot(at: line.snapshot), "snapshot \(line.snapshot) is missing")
      #expect(snapshot.timestamp == line.timestamp, "snapshot \(line.snapshot): timestamp")
      #expect(fixtureHex(snapshot.state) == line.stateHex, "snapshot \(line.snapshot): state bytes")
      #expect(fixtureHex(snapshot.chainHash) == line.chainHashHex, "snapshot \(line.snapshot): chain hash")
      #expect(fixtureHex(snapshot.auxiliary) == line.auxiliaryHex, "snapshot \(line.snapshot): auxiliary bytes")
    }
    // The folded counter is the recorded one.
    var state = CounterState()
    for record in walked where record.kind == .action {
      state.apply(try record.codec.decode(CounterAction.self, from: record.payload))
    }
    #expect(state.count == expected.head.finalCount)
    let tree = try #require(expected.tree)
    #expect(try log.treeSize == tree.tree)
    #expect(fixtureHex(try log.treeRoot(size: tree.tree)) == tree.rootHex)
  }

  /// Without the keys: the chain, snapshots and tree verify; the sealed type names of the second
  /// part are hidden, the first part's show; reading a payload names the key and the seq.
  @Test func verifiesWithoutTheKeys() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory(Self.name))
    let copy = try Fixtures.copy(Self.name, into: temporary)
    try FileManager.default.removeItem(at: copy.appendingPathComponent(EncryptedFixture.keyFileName))
    let before = try Data(contentsOf: copy.appendingPathComponent("data.mdb"))

    let log = try ActionLog(directory: copy, access: .readOnly, options: .init(returnsSealedEntries: true))
    let report = try log.verify()
    #expect(report.isValid, "verify() without the key found: \(report.problems)")
    #expect(fixtureHex(report.head) == expected.head.head)
    let tree = try #require(expected.tree)
    #expect(fixtureHex(try log.treeRoot(size: tree.tree)) == tree.rootHex)
    var sealed: [StoredEntry] = []
    try log.forEach { sealed.append($0) }
    let first = try EncryptionKey(bytes: EncryptedFixture.firstKeyBytes).id
    let second = try EncryptionKey(bytes: EncryptedFixture.secondKeyBytes).id
    #expect(sealed.allSatisfy { $0.payload.isEmpty && $0.metadata.isEmpty })
    #expect(sealed.prefix(60).allSatisfy { $0.sealedKeyID == first })
    #expect(sealed.dropFirst(60).allSatisfy { $0.sealedKeyID == second && $0.typeName.isEmpty })
    #expect(sealed.prefix(60).map(\.typeName) == expected.entries.prefix(60).map(\.typeName))
    try log.close()

    let strict = try ActionLog(directory: copy, access: .readOnly)
    defer { try? strict.close() }
    let error = #expect(throws: LogError.self) { try strict.record(at: 61) }
    #expect(error?.description == LogError.keyMissing(path: strict.path, seq: 61, keyID: second).description)
    #expect(try Data(contentsOf: copy.appendingPathComponent("data.mdb")) == before)
  }
}
