/// A type-erased, sendable effect identifier.
struct EffectID: Hashable, @unchecked Sendable {
  // Sound: `AnyHashable` is not `Sendable` as a type, but the only way to
  // build an `EffectID` is from a value that is `Hashable & Sendable`.
  let base: AnyHashable
  init(_ base: some Hashable & Sendable) { self.base = AnyHashable(base) }
}
