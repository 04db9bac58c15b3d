import Chronicle
import ChronicleMacros
import Foundation

// MARK: - Reducers

/// The counter of the guide, with the same state and actions as the test suite's.
struct Counter: Reducer {
  struct State: Codable, Sendable, Equatable {
    var count = 0
    var isLoading = false
  }

  enum Action: Codable, Sendable, Equatable {
    case increment, decrement, reset, set(Int)
    case fetch, loaded(Int)
    case incrementTwiceLater
    case failingEffect
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    case .reset: state.count = 0
    case .set(let value): state.count = value
    case .fetch:
      state.isLoading = true
      return .run { send in
        try await Task.sleep(for: .milliseconds(5))
        send(.loaded(42))
      }
    case .loaded(let value):
      state.isLoading = false
      state.count = value
    case .incrementTwiceLater:
      return .merge(.send(.increment), .send(.increment))
    case .failingEffect:
      return .run { _ in throw BenchError("the network is down") }
    }
    return .none
  }
}

/// A ledger's state: its balances. Each ledger has its own type, conformed as its actions are (by
/// hand, by `@CBORCodable` or through `Codable` only), since an app writes (or generates) its
/// state's conformance as it does its actions': its snapshots encode the state.
protocol LedgerState: Codable, Sendable, Equatable {
  var balances: [String: Int] { get set }
  init(balances: [String: Int])
}

extension LedgerState {
  /// The same balances in another ledger's state type.
  init(_ other: some LedgerState) { self.init(balances: other.balances) }
}

/// The accounts-and-transfers ledger of the demo and the test suite.
struct Ledger: Reducer {
  struct State: LedgerState { var balances: [String: Int] = [:] }

  enum Action: Codable, Sendable, Equatable {
    case open(String)
    case deposit(String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    Self.apply(action, to: &state.balances)
    return .none
  }

  /// The reducer's rules without the effect, for the peers that fold by hand.
  static func apply(_ action: Action, to balances: inout [String: Int]) {
    switch action {
    case .open(let account): balances[account, default: 0] += 0
    case .deposit(let account, let cents): balances[account, default: 0] += cents
    case .transfer(let from, let to, let cents):
      balances[from, default: 0] -= cents
      balances[to, default: 0] += cents
    }
  }
}

/// The ledger as a plain-`Codable` app has it: the same state, rules and
/// bytes on disk, but actions that do not conform to `CBORCodable`, so
/// `PayloadCodec.cbor` encodes and decodes them through `Codable`'s containers.
struct CodableLedger: Reducer {
  /// The ledger's state behind `Codable` only: its snapshots encode through `Codable` too.
  struct State: LedgerState { var balances: [String: Int] = [:] }

  /// A ledger action behind `Codable` only: it encodes and decodes through
  /// `Ledger.Action`'s synthesized conformance, never its `CBORCodable` one.
  /// It names itself as the ledger's enum cases are named (`transfer`), so its
  /// entries match the ledger's byte for byte.
  struct Action: Codable, Sendable, Equatable, NamedAction {
    var action: Ledger.Action

    init(_ action: Ledger.Action) { self.action = action }

    init(from decoder: any Decoder) throws { action = try Ledger.Action(from: decoder) }

    func encode(to encoder: any Encoder) throws { try action.encode(to: encoder) }

    var actionTypeName: String { action.typeName }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    Ledger.apply(action.action, to: &state.balances)
    return .none
  }
}

/// The ledger as an app that lets `@CBORCodable` write its actions' conformance has it: the
/// same state, rules and bytes on disk as `Ledger` and `CodableLedger`.
struct MacroLedger: Reducer {
  /// The ledger's state, conformed to `CBORCodable` by the macro.
  @CBORCodable
  struct State: LedgerState { var balances: [String: Int] = [:] }

  /// The ledger's actions, conformed to `CBORCodable` by the macro.
  @CBORCodable
  enum Action: Codable, Sendable, Equatable {
    case open(String)
    case deposit(String, cents: Int)
    case transfer(from: String, to: String, cents: Int)

    init(_ action: Ledger.Action) {
      switch action {
      case .open(let account): self = .open(account)
      case .deposit(let account, let cents): self = .deposit(account, cents: cents)
      case .transfer(let from, let to, let cents): self = .transfer(from: from, to: to, cents: cents)
      }
    }

    /// The action as the ledger's rules take it.
    var ledgerAction: Ledger.Action {
      switch self {
      case .open(let account): .open(account)
      case .deposit(let account, let cents): .deposit(account, cents: cents)
      case .transfer(let from, let to, let cents): .transfer(from: from, to: to, cents: cents)
      }
    }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    Ledger.apply(action.ledgerAction, to: &state.balances)
    return .none
  }
}

extension Ledger.Action {
  /// The type name a hand-written event table stores (Chronicle derives the same name itself).
  var typeName: String {
    switch self {
    case .open: "open"
    case .deposit: "deposit"
    case .transfer: "transfer"
    }
  }
}

// MARK: - Generated input

/// A small deterministic generator (SplitMix64), so every system gets the same actions in every run.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Transfers between the accounts of a ledger of a given size.
struct LedgerWorkload {
  /// The account names, `acct-00000` …
  let accounts: [String]
  private var random: SplitMix64

  init(accounts count: Int, seed: UInt64 = 42) {
    accounts = (0..<count).map { "acct-" + String(repeating: "0", count: max(0, 5 - String($0).count)) + String($0) }
    random = SplitMix64(seed: seed)
  }

  /// The state after opening every account with a starting balance.
  var initialState: Ledger.State {
    Ledger.State(balances: Dictionary(uniqueKeysWithValues: accounts.map { ($0, 1_000_000) }))
  }

  /// The next transfer between two distinct accounts.
  mutating func nextAction() -> Ledger.Action {
    let count = UInt64(accounts.count)
    let from = Int(random.next() % count)
    var to = Int(random.next() % count)
    if to == from { to = (to + 1) % accounts.count }
    return .transfer(from: accounts[from], to: accounts[to], cents: Int(random.next() % 10_000) + 1)
  }

  /// The next `count` transfers.
  mutating func nextActions(_ count: Int) -> [Ledger.Action] {
    (0..<count).map { _ in nextAction() }
  }
}

// MARK: - Hand-written CBOR

/// The ledger's state written and read without `Codable`'s containers: `{"balances": {…}}`.
extension Ledger.State: CBORCodable {
  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 1)
    writer.encode("balances")
    balances.encode(to: &writer)
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 1)
    try reader.expectKey("balances")
    balances = try [String: Int](from: &reader)
  }
}

/// The ledger's actions written and read without `Codable`'s containers: the
/// same bytes (a test in the package checks it), a fraction of the work.
extension Ledger.Action: CBORCodable {
  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 1)
    switch self {
    case .open(let account):
      writer.encode("open")
      writer.encodeMapHeader(count: 1)
      writer.encode("_0")
      writer.encode(account)
    case .deposit(let account, let cents):
      writer.encode("deposit")
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
      self = .open(try reader.decode(String.self))
    case "deposit":
      try reader.expectMap(count: 2)
      try reader.expectKey("_0")
      let account = try reader.decode(String.self)
      try reader.expectKey("cents")
      self = .deposit(account, cents: try reader.decode(Int.self))
    case "transfer":
      try reader.expectMap(count: 3)
      try reader.expectKey("from")
      let from = try reader.decode(String.self)
      try reader.expectKey("to")
      let to = try reader.decode(String.self)
      try reader.expectKey("cents")
      self = .transfer(from: from, to: to, cents: try reader.decode(Int.self))
    case let other:
      throw reader.error("unknown ledger action \(other)")
    }
  }
}
