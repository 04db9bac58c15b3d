import Foundation
import Testing

/// What `@CBORCodable` expands to, and what it refuses at compile time: the Swift compiler run
/// with the built plugin on sources that use the macro (see ``Compiler``).
@Suite struct MacroExpansionTests {
  /// Sources that use the macro, each with the extension the compiler must add for it.
  private static let expansions: [(source: String, expanded: String)] = [
    (
      """
      @CBORCodable
      public enum Action: Codable {
        case deposit(String, cents: Int?)
        case close
      }
      """,
      """
      extension Action: ChronicleCBOR.CBORCodable, ChronicleCBOR.CBORFieldCodable {
        public func encode(to writer: inout ChronicleCBOR.CBORWriter) {
          writer.encodeMapHeader(count: 1)
          switch self {
          case .deposit(let v0, let v1):
            writer.encode("deposit")
            writer.encodeMapHeader(count: ChronicleCBOR.CBORWriter.pairs(v0) + ChronicleCBOR.CBORWriter.pairs(v1))
            writer.encodeField("_0", v0)
            writer.encodeField("cents", v1)
          case .close:
            writer.encode("close")
            writer.encodeMapHeader(count: 0)
          }
        }

        public init(from reader: inout ChronicleCBOR.CBORReader) throws {
          try reader.expectMap(count: 1)
          switch try reader.decode(String.self) {
          case "deposit":
            var remaining = try reader.decodeMapHeader()
            let v0: String = try reader.decodeField("_0", &remaining)
            let v1: Int? = try reader.decodeField("cents", &remaining)
            try reader.expectEnd(ofMap: remaining)
            self = .deposit(v0, cents: v1)
          case "close":
            try reader.expectMap(count: 0)
            self = .close
          case let other:
            throw reader.error("unknown case \\(other) of \\(Self.self)")
          }
        }
      }
      """
    ),
    (
      """
      @CBORCodable
      struct Point: Codable {
        static var origin = Point(x: 0, y: 0)
        var x: Int
        var y: Int? {
          didSet {}
        }
        var sum: Int { x + (y ?? 0) }
      }
      """,
      """
      extension Point: ChronicleCBOR.CBORCodable, ChronicleCBOR.CBORFieldCodable {
        func encode(to writer: inout ChronicleCBOR.CBORWriter) {
          writer.encodeMapHeader(count: ChronicleCBOR.CBORWriter.pairs(self.x) + ChronicleCBOR.CBORWriter.pairs(self.y))
          writer.encodeField("x", self.x)
          writer.encodeField("y", self.y)
        }

        init(from reader: inout ChronicleCBOR.CBORReader) throws {
          var remaining = try reader.decodeMapHeader()
          self.x = try reader.decodeField("x", &remaining)
          self.y = try reader.decodeField("y", &remaining)
          try reader.expectEnd(ofMap: remaining)
        }
      }
      """
    ),
    (
      """
      @CBORCodable
      enum Level: String, Codable {
        case low, high
        case `default`
      }
      """,
      """
      extension Level: ChronicleCBOR.CBORCodable, ChronicleCBOR.CBORFieldCodable {
        func encode(to writer: inout ChronicleCBOR.CBORWriter) {
          self.rawValue.encode(to: &writer)
        }

        init(from reader: inout ChronicleCBOR.CBORReader) throws {
          let raw = try RawValue(from: &reader)
          guard let value = Self(rawValue: raw) else {
            throw reader.error("no case of \\(Self.self) has the raw value \\(raw)")
          }
          self = value
        }
      }
      """
    ),
    (
      """
      @CBORCodable
      package struct Box<Content: Codable>: Codable {
        package var `default`: Content
        var all: [Content]
      }
      """,
      """
      extension Box: ChronicleCBOR.CBORCodable, ChronicleCBOR.CBORFieldCodable {
        package func encode(to writer: inout ChronicleCBOR.CBORWriter) {
          writer.encodeMapHeader(count: ChronicleCBOR.CBORWriter.pairs(self.`default`) + ChronicleCBOR.CBORWriter.pairs(self.all))
          writer.encodeField("default", self.`default`)
          writer.encodeField("all", self.all)
        }

        package init(from reader: inout ChronicleCBOR.CBORReader) throws {
          var remaining = try reader.decodeMapHeader()
          self.`default` = try reader.decodeField("default", &remaining)
          self.all = try reader.decodeField("all", &remaining)
          try reader.expectEnd(ofMap: remaining)
        }
      }
      """
    ),
  ]

  /// The compiler expands each source to its extension and compiles it to an object file
  /// without a warning.
  @Test func theCompilerAddsTheExpectedExtensions() throws {
    try #require(Compiler.unavailable == nil, "\(Compiler.unavailable ?? "")")
    let files = Self.expansions.enumerated().map { index, item in
      (name: "Expansion\(index).swift", source: "import ChronicleMacros\n\n" + item.source + "\n")
    }
    let result = try Compiler.compile(files, object: true)
    #expect(result.status == 0, "\(result.output)")
    #expect(result.diagnostics == [], "\(result.output)")
    #expect(result.expansions.count == Self.expansions.count, "\(result.output)")
    for item in Self.expansions {
      #expect(
        result.expansions.contains(item.expanded),
        "no expansion of\n\(item.source)\nis\n\(item.expanded)\namong\n\(result.expansions.joined(separator: "\n\n"))")
    }
  }

  /// The advice every refusal ends with.
  private static let advice = "write the CBORCodable conformance by hand, or keep plain Codable"

  /// Sources the macro refuses (line 1 of each is `import ChronicleMacros`), each with the error
  /// the compiler must report and where.
  private static let refusals: [(source: String, message: String, line: Int, column: Int)] = [
    ("@CBORCodable\nclass A: Codable {\n  var x = 0\n}",
     "@CBORCodable applies to structs and enums only: write this type's CBORCodable conformance by hand, or keep plain Codable",
     2, 1),
    ("@CBORCodable\nactor A {}",
     "@CBORCodable applies to structs and enums only: write this type's CBORCodable conformance by hand, or keep plain Codable",
     2, 1),
    ("@CBORCodable\nstruct A: Codable {\n  var x: Int\n  enum CodingKeys: String, CodingKey {\n    case x = \"X\"\n  }\n}",
     "@CBORCodable does not follow custom coding keys (CodingKeys): \(advice)", 5, 8),
    ("@CBORCodable\nstruct A: Codable {\n  var x: Int\n  typealias CodingKeys = Keys\n  enum Keys: String, CodingKey {\n    case x\n  }\n}",
     "@CBORCodable does not follow custom coding keys (CodingKeys): \(advice)", 5, 13),
    ("@CBORCodable\nstruct A: Codable {\n  let x: Int = 1\n}",
     "@CBORCodable does not handle a let with an initial value ('x'), which Codable writes but never reads: make it a var, or \(advice)",
     4, 7),
    ("@CBORCodable\nstruct A: Codable {\n  var y: Int, x: Int\n  let z: Int = 1, w: Int\n}",
     "@CBORCodable does not handle a let with an initial value ('z'), which Codable writes but never reads: make it a var, or \(advice)",
     5, 7),
    ("@CBORCodable\nstruct A: Codable {\n  var (x, y): (Int, Int)\n}",
     "@CBORCodable needs one name per stored property: \(advice)", 4, 7),
    ("@CBORCodable\nstruct A: Codable {\n  lazy var x: Int = 1\n}",
     "@CBORCodable does not handle lazy properties: \(advice)", 4, 3),
    ("@CBORCodable\nstruct A: Codable {\n  @Clamped var x: Int\n}\n\n@propertyWrapper\nstruct Clamped: Codable {\n  var wrappedValue: Int\n}",
     "@CBORCodable does not handle property wrappers or attributes on stored properties: \(advice)", 4, 3),
    ("@CBORCodable\nenum A: Codable {\n  case a\n  func encode(to encoder: any Encoder) throws {}\n}",
     "@CBORCodable cannot follow a hand-written encode(to:): \(advice)", 5, 8),
    ("@CBORCodable\nstruct A: Codable {\n  var x: Int\n  init(from decoder: any Decoder) throws { x = 0 }\n}",
     "@CBORCodable cannot follow a hand-written init(from:): \(advice)", 5, 3),
    ("@CBORCodable\nstruct A: Codable {\n  #if DEBUG\n  var x: Int\n  #endif\n}",
     "@CBORCodable cannot read members under #if: \(advice)", 4, 3),
  ]

  /// The compiler reports each refusal as an error of the macro's, at its position in the source
  /// and with nothing else wrong: the macro adds nothing for a type it refuses.
  @Test func refusesWhatItCannotWriteAsCodableDoes() throws {
    try #require(Compiler.unavailable == nil, "\(Compiler.unavailable ?? "")")
    // One module of one file per refusal, its type renamed so that the files' types do not clash.
    let files = Self.refusals.enumerated().map { index, item in
      let source = item.source.replacingOccurrences(of: " A", with: " A\(index)")
        .replacingOccurrences(of: "Clamped", with: "Clamped\(index)")
      return (name: "Refusal\(index).swift", source: "import ChronicleMacros\n" + source + "\n")
    }
    let result = try Compiler.compile(files, object: false)
    #expect(result.status != 0)
    for (file, item) in zip(files, Self.refusals) {
      let expected = Compiler.Diagnostic(
        file: file.name, line: item.line, column: item.column, severity: "error",
        message: item.message + " (from macro 'CBORCodable')")
      #expect(result.errors.filter { $0.file == file.name } == [expected], "\(file.source)\n\(result.output)")
    }
    let elsewhere = result.errors.filter { error in !files.contains { $0.name == error.file } }
    #expect(elsewhere == [], "errors without a position in the sources:\n\(result.output)")
  }
}
