@testable import Chronicle
import ChronicleTestSupport
import ChronicleTesting
import Foundation
import ChronicleTestTools
import Testing

/// `Ledger.Action` coded by hand: the same bytes as its `Codable` conformance.
struct FastLedgerAction: CBORCodable, Sendable, Equatable {
  var action: Ledger.Action

  init(_ action: Ledger.Action) { self.action = action }

  init(from decoder: any Decoder) throws { action = try Ledger.Action(from: decoder) }
  func encode(to encoder: any Encoder) throws { try action.encode(to: encoder) }

  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 1)
    switch action {
    case .open(let account):
      writer.encode("open")
      writer.encodeMapHeader(count: 1)
      writer.encode("_0")
      writer.encode(account)
    case .deposit(let account, let cents), .withdraw(let account, let cents):
      if case .deposit = action { writer.encode("deposit") } else { writer.encode("withdraw") }
      writer.encodeMapHeader(count: 2)
      writer.encode("_0")
      writer.encode(account)
      writer.encode("cents")
      writer.encode(cents)
    case .transfer(let from, let to, let cents):
      writer.encode("transfer")
      writer.encodeMapHeader(count: 3)
      writer.encode("from")
      writer.encode(from)
      writer.encode("to")
      writer.encode(to)
      writer.encode("cents")
      writer.encode(cents)
    }
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 1)
    switch try reader.decode(String.self) {
    case "open":
      try reader.expectMap(count: 1)
      try reader.expectKey("_0")
      action = .open(try reader.decode(String.self))
    case let name where name == "deposit" || name == "withdraw":
      try reader.expectMap(count: 2)
      try reader.expectKey("_0")
      let account = try reader.decode(String.self)
      try reader.expectKey("cents")
      let cents = try reader.decode(Int.self)
      action = name == "deposit" ? .deposit(account, cents: cents) : .withdraw(account, cents: cents)
    case "transfer":
      try reader.expectMap(count: 3)
      try reader.expectKey("from")
      let from = try reader.decode(String.self)
      try reader.expectKey("to")
      let to = try reader.decode(String.self)
      try reader.expectKey("cents")
      action = .transfer(from: from, to: to, cents: try reader.decode(Int.self))
    case let other:
      throw reader.error("unknown ledger action \(other)")
    }
  }
}

/// A struct would be logged under its type name: name it after the case, as the enum is.
extension FastLedgerAction: NamedAction {
  var actionTypeName: String {
    switch action {
    case .open: "open"
    case .deposit: "deposit"
    case .withdraw: "withdraw"
    case .transfer: "transfer"
    }
  }
}

/// The ledger's rules over hand-coded actions.
struct FastLedger: Reducer {
  func reduce(into state: inout Ledger.State, action: FastLedgerAction) -> Effect<FastLedgerAction> {
    _ = Ledger().reduce(into: &state, action: action.action)
    return .none
  }
}

@Suite struct CBORCodableStoreTests {
  static let actions: [Ledger.Action] = [
    .open("cash"), .deposit("cash", cents: 500), .open("Épargne 🐷"), .transfer(from: "cash", to: "Épargne 🐷", cents: 120),
    .deposit("cash", cents: -30),
  ]

  @Test func handCodedActionsMatchCodable() {
    expectCBORCodingMatchesCodable(Self.actions.map(FastLedgerAction.init) + [FastLedgerAction(.open(""))])
  }

  /// Every periodic snapshot carries the undo and redo stacks, written directly: the bytes the
  /// synthesized `Codable` conformance writes, which older snapshots hold.
  @Test func undoStacksAreWrittenAsCodableWritesThem() {
    expectCBORCodingMatchesCodable([
      UndoStacks(undo: [], redo: []), UndoStacks(undo: [1, 23, 24, 255, 256, 1 << 40], redo: [.max]),
      UndoStacks(undo: Array(1...100), redo: Array(101...150)),
    ])
  }

  /// A log written through `CBORCodable` reopens with a Codable-only action
  /// type and the other way round: adding or removing the conformance needs no migration.
  @Test func logsReadAlikeWithAndWithoutTheConformance() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    // Each open uses another state schema, so the snapshot written on close is skipped and every entry replays.
    func options(_ stateSchema: UInt32) -> StoreOptions { StoreOptions(stateSchemaVersion: stateSchema) }

    let fast = try Store(initialState: Ledger.State(), reducer: FastLedger(), log: .directory(dir.url), options: options(1))
    for action in Self.actions.prefix(3) { try fast.send(FastLedgerAction(action)) }
    try fast.close()

    let codable = try Store(initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url), options: options(2))
    #expect(codable.recovery.entriesReplayed == 3)
    for action in Self.actions.dropFirst(3) { try codable.send(action) }
    let expected = codable.state
    try codable.close()

    let reopened = try Store(
      initialState: Ledger.State(), reducer: FastLedger(), log: .directory(dir.url), options: options(3))
    defer { try? reopened.close() }
    #expect(reopened.recovery.entriesReplayed == Self.actions.count)
    #expect(reopened.state == expected)
    #expect(expected.balances == ["cash": 350, "Épargne 🐷": 120])
    let names = try reopened.entries(in: 1...reopened.lastSeq).map(\.typeName)
    #expect(names == ["open", "deposit", "open", "transfer", "deposit"])
  }
}
