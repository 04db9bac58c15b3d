import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

/// The scenario of two writers through a symbolic link: a second `Store` opened through a link
/// to the first one's log is refused with `logLocked`, and its refusal leaves the first store's
/// lock in place, so another process cannot write meanwhile and no acknowledged action is lost.
@Suite struct SymlinkWriterTests {
  @Test func aSecondStoreThroughALinkIsRefusedAndTheFirstLosesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = dir.url.appendingPathComponent("log")
    let link = dir.url.appendingPathComponent("link")
    try FileManager.default.createDirectory(at: log, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: log)

    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(log))
    for _ in 0..<5 { try store.send(.increment) }
    for path in [link.path, link.path + "/", log.path + "/../log"] {
      #expect {
        _ = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(URL(fileURLWithPath: path)))
      } throws: { error in
        guard case ChronicleError.logLocked = error else { return false }
        return true
      }
    }
    // Another process through the link is refused too: the first store still holds its lock.
    let other = try ChildProcess.run("chronicle-probe", ["store-send", link.path, "3"])
    #expect(other.status != 0, "another process wrote to the log while the store held it")

    for _ in 0..<5 { try store.send(.increment) }
    try store.close()
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(link))
    #expect(reopened.state.count == 10)
    #expect(reopened.lastSeq == 10)
    try reopened.close()
  }
}
