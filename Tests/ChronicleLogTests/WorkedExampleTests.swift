import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

// MARK: - The page's example

/// The worked example of docs/log-format.md §9 as the page prints it: the `worked-example` block
/// (one `name value…` line each) and the `worked-example-note` block (the signed checkpoint).
struct PrintedExample {
  var fields: [String: String] = [:]
  var inclusion: (seq: UInt64, size: UInt64, hashes: [String])?
  var consistency: (from: UInt64, to: UInt64, hashes: [String])?
  var note = ""

  static let page = Repository.file("docs/log-format.md")

  /// Parses the two blocks of `text` (the page).
  init(text: String) throws {
    func block(_ info: String) throws -> String {
      guard let start = text.range(of: "```\(info)\n"),
        let end = text.range(of: "```", range: start.upperBound..<text.endIndex)
      else { throw FixtureFileError(description: "docs/log-format.md has no ```\(info) block") }
      return String(text[start.upperBound..<end.lowerBound])
    }
    for line in try block("worked-example").split(separator: "\n") {
      let words = line.split(separator: " ").map(String.init)
      switch words.first {
      case "value" where words.count == 3, "leaf" where words.count == 3, "root" where words.count == 3:
        fields["\(words[0]) \(words[1])"] = words[2]
      case "inclusion" where words.count >= 3:
        inclusion = (UInt64(words[1]) ?? 0, UInt64(words[2]) ?? 0, Array(words.dropFirst(3)))
      case "consistency" where words.count >= 3:
        consistency = (UInt64(words[1]) ?? 0, UInt64(words[2]) ?? 0, Array(words.dropFirst(3)))
      case let name? where words.count == 2: fields[name] = words[1]
      default: throw FixtureFileError(description: "the worked example's line '\(line)' is not 'name value'")
      }
    }
    note = try block("worked-example-note")
  }
}

// MARK: - Tests

/// Every number of the worked example in docs/log-format.md §9 is what Chronicle computes for its
/// five entries, so the page cannot drift from the code; a Python script checks the page alone.
@Suite struct WorkedExampleTests {
  static let script = Repository.file("Tests/python/check_worked_example.py")

  @Test func thePageShowsWhatChronicleComputes() throws {
    let printed = try PrintedExample(text: String(contentsOf: PrintedExample.page, encoding: .utf8))
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try WorkedExample.writeLog(to: dir.child("log"))
    defer { try? log.close() }
    let signer = try WorkedExample.signer()

    var expected: [String: String] = [
      "app": WorkedExample.appID, "log-id": fixtureHex(WorkedExample.logID), "origin": try log.origin(),
      "signer": signer.privateKeyText, "verifier": signer.verifier.text,
    ]
    let size = try log.treeSize
    #expect(size == 5)
    for seq in 1...size {
      let value = try #require(try log.storedValue(seq: seq))
      expected["value \(seq)"] = fixtureHex(value)
      expected["leaf \(seq)"] = fixtureHex(MerkleHash.leaf(seq: seq, value: value))
      expected["root \(seq)"] = fixtureHex(try log.treeRoot(size: seq))
    }
    #expect(Set(printed.fields.keys) == Set(expected.keys), "the page's lines")
    for (name, value) in expected { #expect(printed.fields[name] == value, "\(name)") }

    let inclusion = try #require(printed.inclusion, "the page shows no inclusion proof")
    #expect((inclusion.seq, inclusion.size) == WorkedExample.inclusion)
    let path = try log.inclusionProof(seq: inclusion.seq, treeSize: inclusion.size)
    #expect(inclusion.hashes == path.map { fixtureHex($0) })
    let consistency = try #require(printed.consistency, "the page shows no consistency proof")
    #expect((consistency.from, consistency.to) == WorkedExample.consistency)
    let proof = try log.consistencyProof(from: consistency.from, to: consistency.to)
    #expect(consistency.hashes == proof.map { fixtureHex($0) })

    // The checkpoint: the same body; a signature that verifies. Ed25519 signs deterministically
    // (RFC 8032) on Linux; CryptoKit on Apple platforms adds randomness, so only the body and the
    // signature's validity are compared there.
    let note = try log.signCheckpoint(with: signer)
    let page = try SignedNote(parsing: Array(printed.note.utf8))
    #expect(page.text == note.text)
    #expect(page.text == Checkpoint(origin: try log.origin(), size: 5, rootHash: try log.treeRoot(size: 5)).text)
    try page.verify(by: signer.verifier)
    #if os(Linux)
      #expect(String(decoding: note.formatted, as: UTF8.self) == printed.note)
    #endif
  }

  @Test(.enabled(if: TreePythonTests.isAvailable, "needs python3 with lmdb and cryptography (tools/setup-tests)"))
  func pythonChecksThePageAlone() throws {
    let result = try PythonReader.python([Self.script.path, PrintedExample.page.path])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output == "ok: 5 entries, roots 1…5, inclusion 3 in 5, consistency 3 → 5, 1 signature\n")

    // The script is no rubber stamp: a page with one changed digit fails it, by name.
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let text = try String(contentsOf: PrintedExample.page, encoding: .utf8)
    let printed = try PrintedExample(text: text)
    let root = try #require(printed.fields["root 4"])
    let changed = String(root.prefix(63)) + (root.hasSuffix("0") ? "1" : "0")
    let copy = dir.child("log-format.md")
    try Data(text.replacingOccurrences(of: "root 4       \(root)", with: "root 4       \(changed)").utf8).write(to: copy)
    let refused = try PythonReader.python([Self.script.path, copy.path])
    #expect(refused.status == 1)
    #expect(refused.output == "root 4: the page shows \(changed), the leaves give \(root)\n")
  }
}
