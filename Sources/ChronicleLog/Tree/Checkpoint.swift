import Foundation

/// A C2SP tlog-checkpoint body: the origin line, the tree size in decimal, the base64 root hash,
/// and optional extension lines, each ending in a newline.
///
/// ```swift
/// let checkpoint = Checkpoint(origin: "chronicle/ledger/00ff…", size: 5, rootHash: root)
/// checkpoint.text   // "chronicle/ledger/00ff…\n5\n<base64 root>\n"
/// let parsed = try Checkpoint(parsing: checkpoint.text)
/// ```
public struct Checkpoint: Sendable, Hashable, CustomStringConvertible {
  /// The log's unique name (for Chronicle: `chronicle/<app>/<log id in hex>`).
  public var origin: String
  /// The number of leaves (entries) the tree covers.
  public var size: UInt64
  /// The 32-byte root hash of the tree of ``size`` leaves.
  public var rootHash: [UInt8]
  /// Lines after the root hash, without their newlines (none in the checkpoints Chronicle signs).
  public var extensions: [String]

  /// Creates a checkpoint.
  public init(origin: String, size: UInt64, rootHash: [UInt8], extensions: [String] = []) {
    self.origin = origin
    self.size = size
    self.rootHash = rootHash
    self.extensions = extensions
  }

  /// Parses a checkpoint body strictly: every line ends in a newline; a non-empty origin; the size
  /// in decimal without leading zeros; the root as padded standard base64 of exactly 32 bytes;
  /// non-empty extension lines.
  ///
  /// - Throws: ``TreeError/malformedCheckpoint(_:)`` naming the line that is wrong.
  public init(parsing text: String) throws {
    guard text.hasSuffix("\n") else { throw TreeError.malformedCheckpoint("the text does not end with a newline") }
    let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard lines.count >= 3 else {
      throw TreeError.malformedCheckpoint("\(lines.count) lines; a checkpoint has an origin, a size and a root hash")
    }
    guard !lines[0].isEmpty else { throw TreeError.malformedCheckpoint("the origin (line 1) is empty") }
    let sizeText = lines[1]
    guard !sizeText.isEmpty, sizeText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      sizeText == "0" || !sizeText.hasPrefix("0"), let size = UInt64(sizeText)
    else {
      throw TreeError.malformedCheckpoint("the size (line 2) '\(sizeText.prefix(40))' is not a decimal number")
    }
    guard let root = Data(base64Encoded: lines[2]), root.count == MerkleHash.size,
      root.base64EncodedString() == lines[2]
    else {
      throw TreeError.malformedCheckpoint("the root hash (line 3) is not the base64 of 32 bytes")
    }
    for (offset, line) in lines.dropFirst(3).enumerated() where line.isEmpty {
      throw TreeError.malformedCheckpoint("extension line \(offset + 4) is empty")
    }
    self.init(origin: lines[0], size: size, rootHash: Array(root), extensions: Array(lines.dropFirst(3)))
  }

  /// The body's text: `origin\nsize\nbase64(root)\n` and the extension lines.
  public var text: String {
    var out = "\(origin)\n\(size)\n\(Data(rootHash).base64EncodedString())\n"
    for line in extensions { out += line + "\n" }
    return out
  }

  /// `origin @ size: root (hex)`.
  public var description: String { "\(origin) @ \(size): \(rootHash.hex)" }
}
