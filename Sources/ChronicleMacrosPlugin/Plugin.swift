import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides `@CBORCodable`.
@main
struct ChronicleMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [CBORCodableMacro.self]
}
