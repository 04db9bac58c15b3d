import Chronicle
import ChronicleNavigation
import ChronicleTestSupport
import ChronicleTesting
import Foundation
import ChronicleTestTools
import Testing

/// Navigation through real stores over LMDB logs: the log, validators, undo and redo, time travel, recovery.
@Suite struct NavigationStoreTests {
  typealias Bank = Store<BankApp.State, BankApp.Action>

  func open(_ dir: TemporaryDirectory, snapshotEvery: Int = 1_000) throws -> Bank {
    try Store(
      initialState: BankApp.State(), reducer: BankApp.reducer, log: .directory(dir.url),
      options: StoreOptions(snapshotEvery: snapshotEvery), validators: [BankApp.signedIn])
  }

  @Test func navigationIsLoggedWithReadableTypeNames() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir)
    try store.send(.signIn("jenny"))
    try store.send(.navigation(.push(.accounts)), metadata: ["user": "jenny"])
    try store.send(.navigation(.push(.account("jenny"))))
    try store.send(.navigation(.present(.settings)))
    try store.send(.navigation(.dismiss))
    #expect(store.state.selectedAccount == "jenny", "the app's reducer saw the navigation action")
    let history = try store.history
    #expect(history.map(\.typeName) == [
      "signIn", "navigation.push", "navigation.push", "navigation.present", "navigation.dismiss",
    ])
    #expect(history[1].metadata == ["user": "jenny"])
    #expect(history[2].action == .navigation(.push(.account("jenny"))))
    try store.close()
  }

  @Test func aScopedNavigationStoreSendsThroughTheAppsStore() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir)
    let navigation = store.scope(state: \.navigation, action: BankApp.Action.navigation)
    let seen = Recorder<Navigation<Screen>>()
    let subscription = navigation.subscribe { new, _ in seen.append(new) }
    try navigation.send(.push(.accounts))
    try navigation.send(.present(.about))
    #expect(throws: ChronicleError.self, "the app's validators apply") { try navigation.send(.push(.account("a"))) }
    try store.send(.signIn("jenny"))
    let seq = try navigation.send(.push(.account("jenny")))
    #expect(navigation.state == Navigation(stack: [.accounts, .account("jenny")], sheet: .about))
    #expect(store.state.selectedAccount == "jenny", "the app's reducer ran")
    #expect(try store.history.last?.seq == seq)
    #expect(try store.history.last?.typeName == "navigation.push")
    #expect(seen.values.last == navigation.state)
    #expect(seen.values.count == 4, "every committed change of the parent, the sign-in included")
    subscription.cancel()
    try store.close()
  }

  @Test func dismissThroughTheStoreClosesTheTopmostLayerFirst() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir)
    try store.send(
      contentsOf: [
        .signIn("jenny"), .navigation(.push(.accounts)), .navigation(.push(.account("jenny"))),
        .navigation(.present(.settings)), .navigation(.fullScreen(.about)),
      ])
    var seen: [Navigation<Screen>] = []
    for _ in 0..<4 {
      try store.send(.navigation(.dismiss))
      seen.append(store.state.navigation)
    }
    #expect(seen == [
      Navigation(stack: [.accounts, .account("jenny")], sheet: .settings),
      Navigation(stack: [.accounts, .account("jenny")]),
      Navigation(stack: [.accounts]),
      Navigation(),
    ])
    try store.close()
  }

  @Test func presentingOverASheetReplacesItInTheStore() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir)
    try store.send(.navigation(.present(.settings)))
    try store.send(.navigation(.present(.about)))
    #expect(store.state.navigation == Navigation(sheet: .about))
    try store.send(.navigation(.dismiss))
    #expect(store.state.navigation.isAtRoot, "the replaced sheet is gone, not waiting underneath")
    try store.close()
  }

  @Test func aValidatorForbidsARouteAndNothingIsLogged() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir)
    try store.send(.navigation(.push(.accounts)))
    let before = store.lastSeq
    for forbidden: NavigationAction<Screen> in [
      .push(.account("jenny")), .present(.transfer(from: "jenny")), .fullScreen(.account("jenny")),
      .replaceStack([.accounts, .account("jenny")]),
    ] {
      #expect(throws: ChronicleError.self) { try store.send(.navigation(forbidden)) }
      do {
        try store.send(.navigation(forbidden))
      } catch ChronicleError.rejected(let reason) {
        #expect(reason == "account screens need a signed-in user")
      }
    }
    #expect(store.lastSeq == before, "a refused route is not logged")
    #expect(store.state.navigation == Navigation(stack: [.accounts]))
    #expect(store.state.selectedAccount == nil)

    try store.send(.signIn("jenny"))
    try store.send(.navigation(.push(.account("jenny"))))
    // Forgetting the user while the account is shown would leave a forbidden screen open.
    #expect(throws: ChronicleError.self) { try store.send(.forgetUser) }
    #expect(store.state.user == "jenny")
    // Signing out navigates to the root in the same action, so it is allowed.
    try store.send(.signOut)
    #expect(store.state.navigation.isAtRoot)
    #expect(store.state.user == nil)
    try store.close()
  }

  @Test func undoOfAPushPopsAndRedoPushesAgainAcrossAReopen() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var store = try open(dir)
    try store.send(.signIn("jenny"))
    try store.send(.navigation(.push(.accounts)))
    try store.send(.navigation(.push(.account("jenny"))))
    try store.undo()
    #expect(store.state.navigation == Navigation(stack: [.accounts]))
    try store.undo()
    #expect(store.state.navigation.isAtRoot)
    try store.redo()
    #expect(store.state.navigation == Navigation(stack: [.accounts]))
    try store.close()

    store = try open(dir)
    #expect(store.state.navigation == Navigation(stack: [.accounts]), "reopened where the user was")
    #expect(store.canRedo)
    try store.redo()
    #expect(store.state.navigation == Navigation(stack: [.accounts, .account("jenny")]))
    #expect(store.state.selectedAccount == "jenny")
    #expect(try store.history.suffix(4).map(\.kind) == [.undo, .undo, .redo, .redo])
    // Undo of a dismiss brings the sheet back.
    try store.send(.navigation(.present(.settings)))
    try store.send(.navigation(.dismiss))
    try store.undo()
    #expect(store.state.navigation == Navigation(stack: [.accounts, .account("jenny")], sheet: .settings))
    try store.close()
  }

  @Test func restoreBringsBackTheWholeNavigation() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir, snapshotEvery: 3)
    try store.send(.signIn("jenny"))
    try store.send(.navigation(.push(.accounts)))
    try store.send(.navigation(.push(.account("jenny"))))
    try store.send(.navigation(.present(.transfer(from: "jenny"))))
    let seq = try store.send(.navigation(.fullScreen(.about)))
    let there = store.state
    try store.send(.navigation(.root))
    try store.send(.navigation(.push(.settings)))
    #expect(try store.state(at: seq).navigation == there.navigation)
    try store.restore(to: seq)
    #expect(store.state == there)
    #expect(store.state.navigation == Navigation(
      stack: [.accounts, .account("jenny")], sheet: .transfer(from: "jenny"), fullScreenCover: .about))
    try store.undo()
    #expect(store.state.navigation == Navigation(stack: [.settings]), "the restore is undoable")
    try store.close()
  }

  @Test func closeAndReopenLandsWhereTheUserWas() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var store = try open(dir, snapshotEvery: 2)
    try store.send(.signIn("jenny"))
    try store.send(.navigation(.replaceStack([.accounts, .account("jenny")])))
    try store.send(.navigation(.present(.transfer(from: "jenny"))))
    let there = store.state
    try store.close()
    store = try open(dir, snapshotEvery: 2)
    #expect(store.state == there)
    #expect(store.recovery.snapshotSeq == 3, "recovered from the snapshot written on close")
    try store.close()
  }

  /// A real process navigates and is killed with SIGKILL; reopening lands on the same screen.
  @Test func aKilledProcessReopensOnTheSameScreen() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let child = try ChildProcess("chronicle-probe", ["store-navigate", dir.url.path], input: true)
    #expect(child.readLine() == "ready 0")
    let actions: [NavigationAction<Screen>] = [
      .push(.accounts), .push(.account("jenny")), .present(.settings), .dismiss, .push(.transfer(from: "jenny")),
      .fullScreen(.about), .dismiss, .present(.signIn), .pop,
    ]
    var expected = Navigation<Screen>()
    for (index, action) in actions.enumerated() {
      child.write(String(decoding: try JSONEncoder().encode(action), as: UTF8.self))
      #expect(child.readLine() == "\(index + 1)", "acknowledged \(action)")
      expected.apply(action)
    }
    // Every action is acknowledged and the child waits for more: kill it without a close.
    child.kill()
    #expect(child.process.terminationReason == .uncaughtSignal)

    let store = try Store(
      initialState: Navigation<Screen>(), reducer: NavigationReducer<Screen>(), log: .directory(dir.url))
    #expect(store.lastSeq == UInt64(actions.count))
    #expect(store.state == expected)
    #expect(store.state == Navigation(stack: [.accounts, .account("jenny")], sheet: .signIn))
    #expect(store.recovery.snapshotSeq == 8, "a snapshot every 4 entries, then a replay of the last one")
    try store.undo()
    #expect(store.state.stack == [.accounts, .account("jenny"), .transfer(from: "jenny")], "undo survives the kill")
    #expect(try ActionLog(directory: dir.url, access: .readOnly).verify().isValid)
    try store.close()
  }

  @Test func aLogWrittenWithNavigationReplaysToTheSameStates() async throws {
    let store = TestStore(initialState: BankApp.State(), reducer: BankApp.reducer, validators: [BankApp.signedIn])
    await store.send(.navigation(.push(.accounts))) { $0.navigation.stack = [.accounts] }
    await store.send(.navigation(.push(.account("jenny"))), rejectedWith: "account screens need a signed-in user")
    await store.send(.signIn("jenny")) { $0.user = "jenny" }
    await store.send(.navigation(.push(.account("jenny")))) {
      $0.navigation.stack.append(.account("jenny"))
      $0.selectedAccount = "jenny"
    }
    await store.send(.navigation(.present(.transfer(from: "jenny")))) { $0.navigation.sheet = .transfer(from: "jenny") }
    await store.send(.navigation(.fullScreen(.about))) { $0.navigation.fullScreenCover = .about }
    await store.send(.navigation(.dismiss)) { $0.navigation.fullScreenCover = nil }
    await store.send(.navigation(.replaceStack([.settings]))) { $0.navigation = Navigation(stack: [.settings]) }
    await store.send(.signOut) {
      $0.user = nil
      $0.navigation = Navigation()
    }
    await store.finish()
    store.assertReplayMatches()
  }
}
