import Foundation
import Testing

@testable import ChronicleLog

/// Published vectors: the example key and note of Go's `golang.org/x/mod/sumdb/note`, and the
/// example of the C2SP tlog-cosignature specification (data only).
private enum Vectors {
  static let signerKey = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
  static let verifierKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
  static let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
  static let signatureLine =
    "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
  static let note = text + "\n" + signatureLine
  static let cosignedCheckpoint = """
    example.com/behind-the-sofa
    20852163
    CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

    \u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
    \u{2014} witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==

    """
}

@Suite struct SignedNoteTests {
  @Test func goNoteVectorParsesVerifiesAndSignsByteForByte() throws {
    let signer = try NoteSigner(parsing: Vectors.signerKey)
    let verifier = try NoteVerifier(parsing: Vectors.verifierKey)
    #expect(signer.verifier == verifier)
    #expect(verifier.keyID.hex == "c74f20a3")
    #expect(verifier.text == Vectors.verifierKey)
    #expect(signer.privateKeyText == Vectors.signerKey)
    let note = try SignedNote(parsing: Array(Vectors.note.utf8))
    #expect(note.text == Vectors.text)
    try note.verify(by: verifier)
    // Ed25519 is deterministic (RFC 8032): signing reproduces the published note exactly.
    var signed = SignedNote(text: Vectors.text)
    try signed.sign(with: signer)
    #expect(String(decoding: signed.formatted, as: UTF8.self) == Vectors.note)
  }

  @Test func unknownSignersAreIgnoredAndBadSignaturesNamed() throws {
    let verifier = try NoteVerifier(parsing: Vectors.verifierKey)
    let other = try NoteSigner.generate(name: "other.example/log")
    var note = try SignedNote(parsing: Array(Vectors.note.utf8))
    try note.sign(with: other)
    try note.verify(by: verifier)
    try note.verify(by: other.verifier)
    #expect(note.verifiedSigners(among: [verifier, other.verifier]).count == 2)
    let reparsed = try SignedNote(parsing: note.formatted)
    #expect(reparsed == note)

    var changed = note
    changed.text = changed.text.replacingOccurrences(of: "answer", with: "ANSWER")
    #expect(throws: TreeError.self) { try changed.verify(by: verifier) }
    #expect(changed.verifiedSigners(among: [verifier, other.verifier]).isEmpty)
    let stranger = try NoteSigner.generate(name: "PeterNeumann")
    #expect(throws: TreeError.self) { try note.verify(by: stranger.verifier) }
  }

  @Test func malformedNotesAndKeysAreRefusedWithReasons() throws {
    let cases: [(String, String)] = [
      (Vectors.text + Vectors.signatureLine, "no blank line"),
      (Vectors.text + "\n", "no signature lines"),
      (Vectors.text + "\n" + "- PeterNeumann AAAA\n", "does not start with"),
      (Vectors.text + "\n" + "\u{2014} PeterNeumann !!!\n", "not base64"),
      (Vectors.text + "\n" + "\u{2014} Peter Neumann AAAAAAAA\n", "not '— name signature'"),
      ("tab\there\n\n" + Vectors.signatureLine, "control character"),
      (String(Vectors.note.dropLast()), "does not end with a newline"),
    ]
    for (text, reason) in cases {
      do {
        _ = try SignedNote(parsing: Array(text.utf8))
        Issue.record("accepted a note with \(reason)")
      } catch let error as TreeError {
        #expect("\(error)".contains(reason), "\(error)")
      }
    }
    #expect(throws: TreeError.self) { try SignedNote(parsing: [0xFF, 0x0A, 0x0A]) }
    let tooMany = Vectors.text + "\n" + String(repeating: Vectors.signatureLine, count: 101)
    #expect(throws: TreeError.self) { try SignedNote(parsing: Array(tooMany.utf8)) }

    for key in [
      "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  // wrong id
      "PeterNeumann+c74f20a3+Apc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  // short
      "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  // unknown type
      "PeterNeumann+c74f20a3",
      "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ] {
      #expect(throws: TreeError.self, "\(key)") { try NoteVerifier(parsing: key) }
    }
    #expect(throws: TreeError.self) { try NoteSigner(parsing: "PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz") }
    #expect(throws: TreeError.self) { try NoteSigner(parsing: Vectors.verifierKey) }
    #expect(throws: TreeError.self) { try NoteSigner.generate(name: "has space") }
  }

  @Test func checkpointsParseStrictly() throws {
    let root = [UInt8](repeating: 7, count: 32)
    let checkpoint = Checkpoint(origin: "chronicle/app/00", size: 5, rootHash: root)
    #expect(checkpoint.text == "chronicle/app/00\n5\n\(Data(root).base64EncodedString())\n")
    #expect(try Checkpoint(parsing: checkpoint.text) == checkpoint)
    let extended = checkpoint.text + "extension line\n"
    #expect(try Checkpoint(parsing: extended).extensions == ["extension line"])
    let b64 = Data(root).base64EncodedString()
    for (text, line) in [
      ("o\n5\n\(b64)", "newline"), ("\n5\n\(b64)\n", "origin"), ("o\n05\n\(b64)\n", "size"),
      ("o\n-5\n\(b64)\n", "size"), ("o\n18446744073709551616\n\(b64)\n", "size"), ("o\n5\nAAAA\n", "root"),
      ("o\n5\n\(b64)\n\n", "extension line 4"), ("o\n5\n", "lines"),
    ] {
      do {
        _ = try Checkpoint(parsing: text)
        Issue.record("accepted \(text.debugDescription)")
      } catch let error as TreeError {
        #expect("\(error)".contains(line), "\(error)")
      }
    }
  }

  @Test func cosignatureSpecExampleParsesAndOurCosignaturesVerify() throws {
    let note = try SignedNote(parsing: Array(Vectors.cosignedCheckpoint.utf8))
    let checkpoint = try Checkpoint(parsing: note.text)
    #expect(checkpoint.size == 20_852_163)
    let cosignature = try Cosignature(note.signatures[1])
    #expect(cosignature.name == "witness.example.com/w1")
    #expect(cosignature.timestamp == 1_679_315_147)
    #expect(cosignature.noteSignature == note.signatures[1])

    let witness = try NoteSigner(name: "witness.example/w1", seed: Array(repeating: 3, count: 32), type: .cosignatureV1)
    #expect(witness.verifier.text.hasPrefix("witness.example/w1+"))
    #expect(try NoteVerifier(parsing: witness.verifier.text) == witness.verifier)
    let signed = try Cosignature.sign(checkpointText: note.text, timestamp: 1_700_000_000, with: witness)
    try signed.verify(checkpointText: note.text, by: witness.verifier)
    #expect(
      Cosignature.message(checkpointText: "o\n1\nX\n", timestamp: 12) == Array("cosignature/v1\ntime 12\no\n1\nX\n".utf8))
    var later = signed
    later.timestamp += 1
    #expect(throws: TreeError.self) { try later.verify(checkpointText: note.text, by: witness.verifier) }
    #expect(throws: TreeError.self) { try signed.verify(checkpointText: note.text + "x\n", by: witness.verifier) }
    // A note key cannot cosign.
    #expect(throws: TreeError.self) {
      try Cosignature.sign(checkpointText: note.text, timestamp: 1, with: try NoteSigner.generate(name: "w"))
    }
  }
}
