import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

/// The cross-language check of every committed fixture: Tests/python/check_fixture.py, written from
/// docs/log-format.md alone, reads each fixture's log and compares it with its expected.jsonl:
/// entries and chain, snapshots with their auxiliary data, the anchor, the Merkle tree recomputed
/// and the checkpoint signatures verified.
@Suite struct FixturePythonTests {
  static let script = Repository.file("Tests/python/check_fixture.py")
  static let isAvailable: Bool =
    (try? PythonReader.python(["-c", "import lmdb, cbor2, cryptography.hazmat.primitives.asymmetric.ed25519"]).status)
    == 0

  /// Every directory of `fixtures/`.
  static let fixtures: [String] = {
    let root = Repository.file("fixtures")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
    return names.filter { name in
      FileManager.default.fileExists(atPath: root.appendingPathComponent(name).appendingPathComponent("data.mdb").path)
    }.sorted()
  }()

  @Test func everyFixtureIsListed() {
    #expect(Self.fixtures == ["v1-compacted-checkpoints", "v1-counter", "v1-features", "v1-old-state", "v2-encrypted"])
  }

  @Test(
    .enabled(if: isAvailable, "needs python3 with lmdb, cbor2 and cryptography (tools/setup-tests)"),
    arguments: fixtures)
  func pythonReadsTheFixture(_ name: String) throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory(name))
    let copy = try Fixtures.copy(name, into: temporary)
    let result = try PythonReader.python([Self.script.path, copy.path])
    #expect(result.status == 0, "\(result.output)")
    #expect(
      result.output
        == "ok: \(name): \(expected.entries.count) entries, \(expected.snapshots.count) snapshots, \(expected.checkpoints.count) checkpoints\n")
    #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent("lock.mdb").path))
  }

  /// The script is no rubber stamp: a changed expectation, a changed note and a changed byte of the
  /// log are each named.
  @Test(.enabled(if: isAvailable, "needs python3 with lmdb, cbor2 and cryptography (tools/setup-tests)"))
  func pythonNamesWhatDiffers() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let copy = try Fixtures.copy("v1-features", into: temporary)
    let file = copy.appendingPathComponent("expected.jsonl")
    let original = try String(contentsOf: file, encoding: .utf8)
    let expected = try FixtureExpectations(directory: copy)

    // An auxiliary byte the log does not hold.
    let snapshot = try #require(expected.snapshots.last)
    let aux = snapshot.auxiliaryHex
    let changedAux = String(aux.dropLast(2)) + (aux.hasSuffix("5d") ? "7d" : "5d")
    try Data(original.replacingOccurrences(of: aux, with: changedAux).utf8).write(to: file)
    var result = try PythonReader.python([Self.script.path, copy.path])
    #expect(result.status == 1)
    #expect(result.output.hasPrefix("snapshot \(snapshot.snapshot): auxiliaryHex is"), "\(result.output)")

    // A signed note whose root is changed: the stored note differs, its signature no longer verifies.
    try Data(original.utf8).write(to: file)
    let checkpoint = try #require(expected.checkpoints.last)
    try patchValue(sequenceKey(checkpoint.checkpoint), in: "checkpoints", of: copy) { note in
      let text = String(decoding: note, as: UTF8.self)
      let root = text.split(separator: "\n")[2]
      let other = (root.first == "A" ? "B" : "A") + root.dropFirst()
      note = Array(text.replacingOccurrences(of: String(root), with: String(other)).utf8)
    }
    result = try PythonReader.python([Self.script.path, copy.path])
    #expect(result.status == 1)
    let place = "checkpoint \(checkpoint.checkpoint)"
    #expect(result.output.contains("\(place): the stored note differs from expected.jsonl's"), "\(result.output)")
    #expect(result.output.contains("\(place): the tree's root of \(checkpoint.checkpoint) is not the signed one"))
    #expect(result.output.contains("does not verify"), "\(result.output)")
  }
}
