import ChronicleMacrosExpansion
import Foundation
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@CBORCodable` expands to, and what it refuses at compile time.
@Suite struct MacroExpansionTests {
  private let macros = [
    "CBORCodable": MacroSpec(type: CBORCodableMacro.self, conformances: ["CBORCodable", "CBORFieldCodable"])
  ]

  private func expand(
    _ source: String, _ expanded: String, diagnostics: [DiagnosticSpec] = [], line: UInt = #line
  ) {
    assertMacroExpansion(
      source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros, indentationWidth: .spaces(2),
      failureHandler: { failure in
        Issue.record(
          Comment(rawValue: failure.message),
          sourceLocation: SourceLocation(
            fileID: failure.location.fileID, filePath: failure.location.filePath, line: failure.location.line,
            column: failure.location.column))
      }, line: line)
  }

  @Test func anEnumWithLabelledAndUnlabelledValues() {
    expand(
      """
      @CBORCodable
      public enum Action: Codable {
        case deposit(String, cents: Int?)
        case close
      }
      """,
      """
      public enum Action: Codable {
        case deposit(String, cents: Int?)
        case close
      }

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
      """)
  }

  @Test func aStructSkipsStaticAndComputedProperties() {
    expand(
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
      struct Point: Codable {
        static var origin = Point(x: 0, y: 0)
        var x: Int
        var y: Int? {
          didSet {}
        }
        var sum: Int { x + (y ?? 0) }
      }

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
      """)
  }

  @Test func refusesWhatItCannotWriteAsCodableDoes() {
    let advice = "write the CBORCodable conformance by hand, or keep plain Codable"
    let cases: [(source: String, message: String, line: Int, column: Int)] = [
      ("@CBORCodable\nclass A: Codable {\n  var x = 0\n}",
       "@CBORCodable applies to structs and enums only: write this type's CBORCodable conformance by hand, or keep plain Codable",
       1, 1),
      ("@CBORCodable\nstruct A: Codable {\n  var x: Int\n  enum CodingKeys: String, CodingKey {\n    case x = \"X\"\n  }\n}",
       "@CBORCodable does not follow custom coding keys (CodingKeys): \(advice)", 4, 8),
      ("@CBORCodable\nstruct A: Codable {\n  let x: Int = 1\n}",
       "@CBORCodable does not handle a let with an initial value ('x'), which Codable writes but never reads: make it a var, or \(advice)",
       3, 7),
      ("@CBORCodable\nstruct A: Codable {\n  lazy var x: Int = 1\n}",
       "@CBORCodable does not handle lazy properties: \(advice)", 3, 3),
      ("@CBORCodable\nstruct A: Codable {\n  @Clamped var x: Int\n}",
       "@CBORCodable does not handle property wrappers or attributes on stored properties: \(advice)", 3, 3),
      ("@CBORCodable\nenum A: Codable {\n  case a\n  func encode(to encoder: any Encoder) throws {}\n}",
       "@CBORCodable cannot follow a hand-written encode(to:): \(advice)", 4, 8),
    ]
    for item in cases {
      let expanded = item.source.replacingOccurrences(of: "@CBORCodable\n", with: "")
      expand(
        item.source, expanded,
        diagnostics: [DiagnosticSpec(message: item.message, line: item.line, column: item.column)])
    }
  }
}
