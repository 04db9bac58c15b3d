#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool keygen NAME [--out PREFIX] [--witness]`: a new Ed25519 signing key for checkpoints
  /// (or for a witness's cosignatures), as two files.
  public struct Keygen: ParsableCommand {
    /// `keygen`.
    public static let configuration = CommandConfiguration(
      abstract: "Make a new Ed25519 key: PREFIX.key (private, mode 0600) and PREFIX.vkey (verifier key).",
      discussion: """
        The private key file holds the signer key text (PRIVATE+KEY+name+id+key, as Go's \
        golang.org/x/mod/sumdb/note writes it): give it to the app (StoreOptions) or to `checkpoint --key`, \
        and keep it secret. The verifier key file holds name+id+key: send it to auditors and witnesses. \
        Neither file is ever replaced: keygen refuses if either exists. PREFIX defaults to NAME with every \
        character but letters, digits, '.', '-' and '_' turned into '_'.
        """)

    /// The key's name (conventionally the log's or the witness's name, e.g. `ledger.example/log`).
    @Argument(help: "The key's name, e.g. ledger.example/log (no spaces or '+').") public var name: String
    /// Where to write: `PREFIX.key` and `PREFIX.vkey`.
    @Option(name: .long, help: "Write PREFIX.key and PREFIX.vkey (default: from NAME).") public var out: String?
    /// A witness's cosignature key (type 0x04) instead of a checkpoint key (type 0x01).
    @Flag(help: "Make a witness's cosignature key (tlog-cosignature, type 0x04).") public var witness = false
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Makes the key and writes both files.
    public func run() throws {
      let signer: NoteSigner
      do { signer = try NoteSigner.generate(name: name, type: witness ? .cosignatureV1 : .ed25519) } catch {
        throw LogToolError.badInput("cannot make a key named '\(name.prefix(60))': \(error)")
      }
      let prefix = out ?? Self.defaultPrefix(name)
      let privatePath = prefix + ".key"
      let verifierPath = prefix + ".vkey"
      for path in [privatePath, verifierPath] where FileManager.default.fileExists(atPath: path) || isLink(path) {
        throw LogToolError.badInput(
          "cannot create \(TreeFiles.absolute(path)): it already exists (keygen never replaces a key file)")
      }
      try TreeFiles.create(
        privatePath, Array((signer.privateKeyText + "\n").utf8), mode: 0o600, what: "private key file")
      do {
        try TreeFiles.create(verifierPath, Array((signer.verifier.text + "\n").utf8), what: "verifier key file")
      } catch {
        try? FileManager.default.removeItem(atPath: privatePath)
        throw error
      }
      var out = StandardOutput()
      defer { out.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("name", signer.name)
        json.field("keyID", signer.keyID.hex)
        json.field("type", witness ? "cosignature" : "ed25519")
        json.field("privateKeyFile", TreeFiles.absolute(privatePath))
        json.field("verifierKeyFile", TreeFiles.absolute(verifierPath))
        json.field("verifierKey", signer.verifier.text)
        json.endObject()
        out.line(json.text)
        return
      }
      var fields = FieldList()
      fields.add("name", signer.name)
      fields.add("key id", signer.keyID.hex)
      fields.add("type", witness ? "witness cosignature key (0x04)" : "Ed25519 checkpoint key (0x01)")
      fields.add("private key", "\(TreeFiles.absolute(privatePath)) (mode 0600: keep it secret)")
      fields.add("verifier key", "\(TreeFiles.absolute(verifierPath)) (send it to auditors)")
      fields.add("verifier", signer.verifier.text)
      for line in fields.lines { out.line(line) }
    }

    /// `NAME` with every character but `A–Z a–z 0–9 . - _` turned into `_`.
    static func defaultPrefix(_ name: String) -> String {
      String(
        name.unicodeScalars.map { scalar -> Character in
          switch scalar {
          case "A"..."Z", "a"..."z", "0"..."9", ".", "-", "_": Character(scalar)
          default: "_"
          }
        })
    }

    private func isLink(_ path: String) -> Bool {
      (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeSymbolicLink
    }
  }
}
#endif  // LogTool
