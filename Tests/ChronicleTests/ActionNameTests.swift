@testable import Chronicle
import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// A composed app: each feature's actions nested in the app's, as TCA apps are built.
struct NamingApp: Reducer {
  struct State: Codable, Sendable, Equatable { var items: [String] = []; var theme = ""; var count = 0 }
  enum TodoAction: Codable, Sendable, Equatable {
    case add(String)
    case toggle(index: Int)
    case edit(EditAction)
  }
  enum EditAction: Codable, Sendable, Equatable { case rename(String), clear }
  enum SettingsAction: Codable, Sendable, Equatable { case theme(String), reset }
  /// A struct whose only property is a map: encodes like a nested case, yet is no enum.
  struct Batch: Codable, Sendable, Equatable { var counts: [String: Int] }
  enum Action: Codable, Sendable, Equatable {
    case todos(TodoAction)
    case settings(SettingsAction)
    case move(TodoAction, to: Int)
    case labelled(action: TodoAction)
    case batch(Batch)
    case set(Int)
    case tick
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .todos(.add(let title)): state.items.append(title)
    case .settings(.theme(let theme)): state.theme = theme
    default: state.count += 1
    }
    return .none
  }
}

@Suite struct ActionNameTests {
  /// The actions sent and the type name each must be recorded with.
  static let expected: [(NamingApp.Action, String)] = [
    (.todos(.add("milk")), "todos.add"),
    (.todos(.toggle(index: 2)), "todos.toggle"),
    (.todos(.edit(.rename("bread"))), "todos.edit.rename"),
    (.todos(.edit(.clear)), "todos.edit.clear"),
    (.settings(.theme("dark")), "settings.theme"),
    (.settings(.reset), "settings.reset"),
    // Two associated values, a labelled one, a struct: only the case itself.
    (.move(.add("x"), to: 1), "move"),
    (.labelled(action: .add("y")), "labelled"),
    (.batch(.init(counts: ["a": 1])), "batch"),
    (.set(5), "set"),
    (.tick, "tick"),
  ]

  /// Sends with `send` to a new store in `codec`, and returns the type names the log recorded.
  static func recordedNames(codec: PayloadCodec, _ send: (Store<NamingApp.State, NamingApp.Action>) throws -> Void)
    throws -> [String]
  {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store(
      initialState: NamingApp.State(), reducer: NamingApp(), log: .directory(directory.url),
      options: StoreOptions(codec: codec))
    try send(store)
    try store.close()
    let log = try ActionLog(directory: directory.url, access: .readOnly)
    defer { try? log.close() }
    return try log.records(in: 1...log.lastSeq).map(\.typeName)
  }

  @Test(arguments: [PayloadCodec.json, .cbor])
  func nestedCasesAreRecordedAsPaths(codec: PayloadCodec) throws {
    let names = try Self.recordedNames(codec: codec) { store in
      // Twice: the second time the nesting is known (cached), the first time it is found out.
      for _ in 0..<2 {
        for (action, _) in Self.expected { try store.send(action) }
      }
      try store.send(contentsOf: Self.expected.map(\.0))
    }
    #expect(names == Array(repeating: Self.expected.map(\.1), count: 3).flatMap { $0 })
  }

  /// A large batch (its payloads encoded, and its actions read back, on the helper's path) records
  /// the same names as actions sent one by one.
  @Test(arguments: [PayloadCodec.json, .cbor])
  func aLargeBatchIsNamedAsSingleSends(codec: PayloadCodec) throws {
    let batch = Array(repeating: Self.expected, count: 10).flatMap { $0 }
    let names = try Self.recordedNames(codec: codec) { try $0.send(contentsOf: batch.map(\.0)) }
    #expect(names == batch.map(\.1))
  }

  /// The namer keeps the case names it read; past ``ActionNamer/maxCaseNames`` distinct ones it
  /// builds each again, and a name that is not UTF-8 falls back to the action's case.
  @Test func caseNamesBeyondTheKeptOnesAndInvalidTextAreStillRight() {
    var namer = ActionNamer<NamingApp.Action>()
    let count = ActionNamer<NamingApp.Action>.maxCaseNames * 2
    // `{"cN": 0}` in CBOR: a map of one pair, a text key, the integer 0.
    func payload(_ key: [UInt8]) -> [UInt8] { [0xA1, 0x60 + UInt8(key.count)] + key + [0x00] }
    for round in 0..<2 {
      for index in 0..<count {
        let key = "c\(index)"
        let name = namer.name(of: .tick, payload: payload(Array(key.utf8)), codec: .cbor)
        #expect(name == key, "round \(round), case \(index)")
      }
    }
    #expect(namer.caseNames.count == ActionNamer<NamingApp.Action>.maxCaseNames)
    // Not UTF-8: the action's own case (a case without associated values falls back to its description).
    #expect(namer.name(of: .set(1), payload: payload([0xFF, 0xFE]), codec: .cbor) == "set")
    #expect(namer.name(of: .tick, payload: payload([0xFF, 0xFE]), codec: .cbor) == "tick")
  }

  /// A nested path is cut at four names.
  @Test func pathsAreBoundedInDepth() throws {
    indirect enum Deep: Codable, Sendable, Equatable { case level(Deep), end }
    struct DeepApp: Reducer {
      struct State: Codable, Sendable, Equatable { var count = 0 }
      func reduce(into state: inout State, action: Deep) -> Effect<Deep> {
        state.count += 1
        return .none
      }
    }
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store(initialState: DeepApp.State(), reducer: DeepApp(), log: .directory(directory.url))
    try store.send(.level(.level(.level(.level(.level(.end))))))
    try store.send(.level(.end))
    try store.close()
    let log = try ActionLog(directory: directory.url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.records(in: 1...2).map(\.typeName) == ["level.level.level.level", "level.end"])
  }
}
