import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides `@CBORCodable` (``CBORCodable``).
@main
struct ChronicleMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [CBORCodable.self]
}
