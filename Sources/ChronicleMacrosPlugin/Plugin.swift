import ChronicleMacrosExpansion
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plugin that provides `@CBORCodable`.
@main
struct ChronicleMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [CBORCodable.self]
}

/// The type `#externalMacro` names: the compiler finds a macro by the module its type is declared
/// in, and this executable answers for `ChronicleMacrosPlugin`. The expansion itself is
/// ``CBORCodableMacro`` in the plain library `ChronicleMacrosExpansion` (Package.swift says why).
struct CBORCodable: ExtensionMacro {
  static func expansion(
    of node: AttributeSyntax,
    attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    try CBORCodableMacro.expansion(
      of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
  }
}
