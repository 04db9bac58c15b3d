import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

// MARK: - The macro

/// `@CBORCodable`: writes a struct's or an enum's `CBORCodable` conformance, in the bytes its
/// synthesized `Codable` conformance writes through `CBOREncoder`. The compiler finds the macro by
/// this type's name and module (`#externalMacro` in ChronicleMacros).
struct CBORCodable: ExtensionMacro {
  /// The extension holding `encode(to:)` and `init(from:)`, or a diagnostic and nothing.
  static func expansion(
    of node: AttributeSyntax,
    attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    let members: String
    do {
      let access = accessLevel(of: declaration)
      if let structDecl = declaration.as(StructDeclSyntax.self) {
        members = try StructShape(structDecl).members(access: access)
      } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
        members = try EnumShape(enumDecl).members(access: access)
      } else {
        throw Refusal(
          Syntax(node),
          "@CBORCodable applies to structs and enums only: write this type's CBORCodable conformance by hand, "
            + "or keep plain Codable")
      }
    } catch let refusal as Refusal {
      context.diagnose(Diagnostic(node: refusal.node, message: refusal))
      return []
    }
    // Only the protocols the type does not conform to yet, spelled in full so that no name of
    // the app's can shadow them.
    let conformances = protocols.map { "ChronicleCBOR.\($0.trimmedDescription.split(separator: ".").last ?? "")" }
    let clause = conformances.isEmpty ? "" : ": " + conformances.joined(separator: ", ")
    let source: DeclSyntax = "extension \(type.trimmed)\(raw: clause) {\n\(raw: members)\n}"
    guard let extensionDecl = source.as(ExtensionDeclSyntax.self) else { return [] }
    return [extensionDecl]
  }

  /// `public` or `package` when the type is, so that the members satisfy the protocol.
  private static func accessLevel(of declaration: some DeclGroupSyntax) -> String {
    for modifier in declaration.modifiers {
      switch modifier.name.tokenKind {
      case .keyword(.public), .keyword(.open): return "public "
      case .keyword(.package): return "package "
      default: continue
      }
    }
    return ""
  }
}

// MARK: - Refusals

/// A shape the macro cannot write byte for byte as `Codable` does: a compile-time error.
struct Refusal: Error, DiagnosticMessage {
  let node: Syntax
  let message: String

  init(_ node: Syntax, _ message: String) {
    self.node = node
    self.message = message
  }

  var diagnosticID: MessageID { MessageID(domain: "ChronicleMacros", id: "CBORCodable") }
  var severity: DiagnosticSeverity { .error }
}

/// The advice every refusal ends with.
private let byHand = "write the CBORCodable conformance by hand, or keep plain Codable"

/// Refuses members that change what the synthesized conformance writes.
private func checkNoCustomCoding(_ members: MemberBlockSyntax) throws {
  for member in members.members {
    let decl = member.decl
    if let nested = decl.as(EnumDeclSyntax.self), nested.name.text.hasSuffix("CodingKeys") {
      throw Refusal(Syntax(nested.name), "@CBORCodable does not follow custom coding keys (\(nested.name.text)): \(byHand)")
    }
    if let nested = decl.as(StructDeclSyntax.self), nested.name.text.hasSuffix("CodingKeys") {
      throw Refusal(Syntax(nested.name), "@CBORCodable does not follow custom coding keys (\(nested.name.text)): \(byHand)")
    }
    if let alias = decl.as(TypeAliasDeclSyntax.self), alias.name.text.hasSuffix("CodingKeys") {
      throw Refusal(Syntax(alias.name), "@CBORCodable does not follow custom coding keys (\(alias.name.text)): \(byHand)")
    }
    if let function = decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
      let first = function.signature.parameterClause.parameters.first, first.firstName.text == "to",
      first.type.trimmedDescription.contains("Encoder")
    {
      throw Refusal(Syntax(function.name), "@CBORCodable cannot follow a hand-written encode(to:): \(byHand)")
    }
    if let initializer = decl.as(InitializerDeclSyntax.self),
      let first = initializer.signature.parameterClause.parameters.first, first.firstName.text == "from",
      first.type.trimmedDescription.contains("Decoder")
    {
      throw Refusal(Syntax(initializer.initKeyword), "@CBORCodable cannot follow a hand-written init(from:): \(byHand)")
    }
    if decl.is(IfConfigDeclSyntax.self) {
      throw Refusal(Syntax(decl), "@CBORCodable cannot read members under #if: \(byHand)")
    }
  }
}

/// A name as the coding key spells it: without backticks.
private func keyName(_ token: TokenSyntax) -> String {
  token.text.trimmingCharacters(in: "`")
}

extension String {
  fileprivate func trimmingCharacters(in character: Character) -> String {
    var text = Substring(self)
    while text.first == character { text = text.dropFirst() }
    while text.last == character { text = text.dropLast() }
    return String(text)
  }

  /// The text as a Swift string literal.
  fileprivate var literal: String {
    "\"" + replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"") + "\""
  }

  fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
  }
}

// MARK: - Structs

/// A struct's stored properties, in declaration order: its map's keys.
struct StructShape {
  /// The property names as written (backticks kept) and as keys.
  let fields: [(name: String, key: String)]

  init(_ decl: StructDeclSyntax) throws {
    try checkNoCustomCoding(decl.memberBlock)
    var fields: [(name: String, key: String)] = []
    for member in decl.memberBlock.members {
      guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
      if variable.modifiers.contains(where: {
        $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
      }) {
        continue
      }
      // An array of the bindings themselves: `filter` on the syntax collection would build a new,
      // detached collection, and a refusal pointing into it would reach the compiler without a position.
      let stored = Array(variable.bindings).filter { Self.isStored($0) }
      guard !stored.isEmpty else { continue }
      if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
        throw Refusal(Syntax(variable), "@CBORCodable does not handle lazy properties: \(byHand)")
      }
      if let attribute = variable.attributes.first {
        throw Refusal(
          Syntax(attribute), "@CBORCodable does not handle property wrappers or attributes on stored properties: \(byHand)")
      }
      for binding in stored {
        guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
          throw Refusal(Syntax(binding.pattern), "@CBORCodable needs one name per stored property: \(byHand)")
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let), binding.initializer != nil {
          throw Refusal(
            Syntax(binding),
            "@CBORCodable does not handle a let with an initial value ('\(pattern.identifier.text)'), which Codable "
              + "writes but never reads: make it a var, or \(byHand)")
        }
        fields.append((pattern.identifier.text, keyName(pattern.identifier)))
      }
    }
    self.fields = fields
  }

  /// Whether a binding stores a value (no accessors, or only observers).
  private static func isStored(_ binding: PatternBindingSyntax) -> Bool {
    guard let accessors = binding.accessorBlock else { return true }
    switch accessors.accessors {
    case .getter: return false
    case .accessors(let list):
      return list.allSatisfy {
        $0.accessorSpecifier.tokenKind == .keyword(.willSet) || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
      }
    }
  }

  /// `encode(to:)` and `init(from:)`.
  func members(access: String) throws -> String {
    let count = fields.isEmpty ? "0" : fields.map { "ChronicleCBOR.CBORWriter.pairs(self.\($0.name))" }.joined(separator: " + ")
    var encode = "  \(access)func encode(to writer: inout ChronicleCBOR.CBORWriter) {\n"
    encode += "    writer.encodeMapHeader(count: \(count))\n"
    for field in fields { encode += "    writer.encodeField(\(field.key.literal), self.\(field.name))\n" }
    encode += "  }\n"
    var decode = "  \(access)init(from reader: inout ChronicleCBOR.CBORReader) throws {\n"
    if fields.isEmpty {
      decode += "    try reader.expectMap(count: 0)\n"
    } else {
      decode += "    var remaining = try reader.decodeMapHeader()\n"
      for field in fields { decode += "    self.\(field.name) = try reader.decodeField(\(field.key.literal), &remaining)\n" }
      decode += "    try reader.expectEnd(ofMap: remaining)\n"
    }
    decode += "  }"
    return encode + "\n" + decode
  }
}

// MARK: - Enums

/// An enum's cases and their associated values, or its raw type.
struct EnumShape {
  struct Case {
    /// The case name as written (backticks kept) and as the key.
    let name: String
    let key: String
    /// Each associated value: its label for the constructor (nil: none), its key, its type.
    let values: [(label: String?, key: String, type: String)]
  }

  let cases: [Case]
  /// Whether the enum has a raw type: `Codable` writes its raw value.
  let hasRawValues: Bool

  /// The raw types `Codable` writes as a single value.
  private static let rawTypes: Set<String> = [
    "String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double",
    "Float", "Swift.String", "Swift.Int",
  ]

  init(_ decl: EnumDeclSyntax) throws {
    try checkNoCustomCoding(decl.memberBlock)
    let first = decl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription
    hasRawValues = first.map { Self.rawTypes.contains($0) } ?? false
    var cases: [Case] = []
    for member in decl.memberBlock.members {
      guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
      for element in caseDecl.elements {
        var values: [(label: String?, key: String, type: String)] = []
        for (index, parameter) in (element.parameterClause?.parameters ?? []).enumerated() {
          let label = parameter.firstName.flatMap { $0.tokenKind == .wildcard ? nil : $0 }
          values.append((label?.text, label.map(keyName) ?? "_\(index)", parameter.type.trimmedDescription))
        }
        cases.append(Case(name: element.name.text, key: keyName(element.name), values: values))
      }
    }
    if hasRawValues, cases.contains(where: { !$0.values.isEmpty }) {
      throw Refusal(Syntax(decl.name), "@CBORCodable: an enum with a raw type cannot have associated values")
    }
    self.cases = cases
  }

  /// `encode(to:)` and `init(from:)`.
  func members(access: String) throws -> String {
    if hasRawValues {
      return """
          \(access)func encode(to writer: inout ChronicleCBOR.CBORWriter) {
            self.rawValue.encode(to: &writer)
          }

          \(access)init(from reader: inout ChronicleCBOR.CBORReader) throws {
            let raw = try RawValue(from: &reader)
            guard let value = Self(rawValue: raw) else {
              throw reader.error("no case of \\(Self.self) has the raw value \\(raw)")
            }
            self = value
          }
        """
    }
    var encode = "  \(access)func encode(to writer: inout ChronicleCBOR.CBORWriter) {\n"
    encode += "    writer.encodeMapHeader(count: 1)\n"
    encode += "    switch self {\n"
    var decode = "  \(access)init(from reader: inout ChronicleCBOR.CBORReader) throws {\n"
    decode += "    try reader.expectMap(count: 1)\n"
    decode += "    switch try reader.decode(String.self) {\n"
    for item in cases {
      let names = item.values.indices.map { "v\($0)" }
      let bindings = names.isEmpty ? "" : "(" + names.map { "let \($0)" }.joined(separator: ", ") + ")"
      encode += "    case .\(item.name)\(bindings):\n"
      encode += "      writer.encode(\(item.key.literal))\n"
      let count = names.isEmpty ? "0" : names.map { "ChronicleCBOR.CBORWriter.pairs(\($0))" }.joined(separator: " + ")
      encode += "      writer.encodeMapHeader(count: \(count))\n"
      for (name, value) in zip(names, item.values) { encode += "      writer.encodeField(\(value.key.literal), \(name))\n" }

      decode += "    case \(item.key.literal):\n"
      if item.values.isEmpty {
        decode += "      try reader.expectMap(count: 0)\n"
        decode += "      self = .\(item.name)\n"
        continue
      }
      decode += "      var remaining = try reader.decodeMapHeader()\n"
      for (name, value) in zip(names, item.values) {
        decode += "      let \(name): \(value.type) = try reader.decodeField(\(value.key.literal), &remaining)\n"
      }
      decode += "      try reader.expectEnd(ofMap: remaining)\n"
      let arguments = zip(names, item.values).map { name, value in value.label.map { "\($0): \(name)" } ?? name }
      decode += "      self = .\(item.name)(\(arguments.joined(separator: ", ")))\n"
    }
    encode += "    }\n  }\n"
    decode += "    case let other:\n"
    decode += "      throw reader.error(\"unknown case \\(other) of \\(Self.self)\")\n"
    decode += "    }\n  }"
    return encode + "\n" + decode
  }
}
