#if Macros
@_exported import ChronicleCBOR

/// Generates the type's `CBORCodable` conformance: `encode(to:)` and `init(from:)` that
/// write and read the very bytes its synthesized `Codable` conformance produces through
/// `CBOREncoder`, without `Codable`'s containers.
///
/// Attach it to a struct or an enum that conforms to `Codable` with the synthesized
/// conformance:
///
/// ```swift
/// import ChronicleMacros
///
/// @CBORCodable
/// enum Action: Codable, Sendable {
///   case deposit(String, cents: Int)
///   case close
/// }
/// ```
///
/// Entries written with plain `Codable` read with the generated conformance and back, so adding
/// or removing the macro needs no migration. Structs are written as maps of their stored
/// properties in declaration order, enums as a one-pair map from the case name to a map of its
/// associated values (labelled by name or `_0`, `_1`, …), enums with a raw type as their raw
/// value; `nil` optionals are left out. Scalars, strings, arrays of them and other
/// `@CBORCodable` types are written directly; any other `Codable` value (a `Date`, a nested type
/// without the macro) goes through `Codable` for that value only.
///
/// The macro refuses, with a compile-time error, what it cannot reproduce byte for byte: a
/// class, custom `CodingKeys`, a hand-written `init(from:)` or `encode(to:)`, a `let` with an
/// initial value, lazy or wrapped properties. Write the conformance by hand for those, or keep
/// plain `Codable`.
@attached(extension, conformances: CBORCodable, CBORFieldCodable, names: named(encode(to:)), named(init(from:)))
public macro CBORCodable() = #externalMacro(module: "ChronicleMacrosPlugin", type: "CBORCodable")
#endif  // Macros
