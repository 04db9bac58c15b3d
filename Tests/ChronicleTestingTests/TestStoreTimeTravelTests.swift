import Chronicle
import ChronicleTestSupport
import ChronicleTesting
import Synchronization
import Testing

/// Undo, redo and restore asserted like any other action.
@Suite struct TestStoreTimeTravelTests {
  @Test func undoRedoAndRestoreAreAsserted() async throws {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.increment) { $0.count = 1 }
    await store.send(.set(10)) { $0.count = 10 }
    let undo = await store.undo(metadata: ["user": "alice"]) { $0.count = 1 }
    #expect(undo == 3)
    await store.redo { $0.count = 10 }
    await store.restore(to: 0) { $0.count = 0 }
    await store.undo { $0.count = 10 }
    await store.finish()
    store.assertReplayMatches()
    let history = try store.store.history
    #expect(history.map(\.kind) == [.action, .action, .undo, .redo, .restore, .undo])
    #expect(history[2].metadata == ["user": "alice"])
  }

  /// The store's default metadata goes with the test store's jumps too.
  @Test func jumpsCarryDefaultMetadata() async throws {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    store.store.defaultMetadata = ["user": "bob"]
    await store.send(.increment) { $0.count = 1 }
    await store.undo(metadata: ["reason": "typo"]) { $0.count = 0 }
    let history = try store.store.history
    #expect(history.map(\.metadata) == [["user": "bob"], ["user": "bob", "reason": "typo"]])
  }

  /// A wrong expectation, an unasserted change and nothing to undo fail the test with a clear message.
  @Test func failuresAreReported() async {
    let messages = Mutex<[String]>([])
    await withKnownIssue {
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.undo()
      await store.send(.increment) { $0.count = 1 }
      await store.undo { $0.count = 5 }
      await store.redo()
    } matching: { issue in
      messages.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
      return true
    }
    let texts = messages.withLock { $0 }
    #expect(texts.count == 3, "\(texts)")
    #expect(texts.first?.contains("Undoing failed: there is nothing to undo") == true, "\(texts)")
    #expect(texts.dropFirst().first?.contains("The state after undoing is not the expected one") == true, "\(texts)")
    #expect(
      texts.last?.contains("The state changed after redoing, but no change was asserted") == true, "\(texts)")
  }
}
