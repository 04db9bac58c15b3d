import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

/// The engine on an encrypted log: the key ring goes through `StoreOptions`, sends are sealed,
/// snapshots too, and reopening replays through the decryption.
@Suite struct EncryptedStoreTests {
  @Test func aStoreWithAKeyRingWritesAnEncryptedLogAndReplaysIt() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var options = StoreOptions(snapshotEvery: 7)
    options.keyRing = try KeyRing([.random()])
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    for _ in 0..<20 { try store.send(.increment) }
    try store.send(.set(424_242), metadata: ["who": "auditor-zed"])
    try store.send(.increment)
    try store.close()

    let file = try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
    #expect(file.range(of: Data("auditor-zed".utf8)) == nil)
    #expect(file.range(of: Data("424242".utf8)) == nil)

    let reopened = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    #expect(reopened.state.count == 424_243)
    _ = try reopened.undo()
    #expect(reopened.state.count == 424_242)
    try reopened.close()
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(log.isEncrypted)
    #expect(try log.verify().isValid)
    try log.close()

    // Without the ring the store does not open, and says why.
    #expect(throws: ChronicleError.self) {
      try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    }
    var wrong = options
    wrong.keyRing = try KeyRing([.random()])
    #expect(throws: ChronicleError.self) {
      try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: wrong)
    }
  }
}
