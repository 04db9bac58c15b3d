import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Readers never run without LMDB's reader table. A reader that found no `lock.mdb` (as
/// after every compaction, before the fix) used to open without locking; a writer that
/// started next did not see it and reused the pages it was reading, so its checks
/// passed or failed falsely.
@Suite(.serialized) struct ReaderLockTests {
  @Test func aReaderThatFoundNoLockFileIsSeenByALaterWriter() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let first = 2_000
    let total = 6_000
    let log = try ActionLog(directory: dir.url, options: .init(durability: .normal, flushInterval: nil))
    _ = try log.append(
      contentsOf: (1...first).map { try NewEntry(encoding: Sample.make($0), typeName: "sample", codec: .cbor) })
    try log.close()
    let lockFile = dir.child("lock.mdb").path
    try FileManager.default.removeItem(atPath: lockFile)

    // The reader process opens first and verifies pass after pass until it sees every entry.
    let watcher = try ChildProcess("chronicle-log-probe", ["watch-verify", dir.path, "\(total)"])
    // It recreates lock.mdb as it opens; without it (the old behaviour) give it a moment to open.
    let deadline = Date().addingTimeInterval(5)
    while !FileManager.default.fileExists(atPath: lockFile), Date() < deadline { usleep(10_000) }
    usleep(200_000)

    // The writer commits one entry per transaction: each frees pages for the next ones to reuse.
    let writer = try ActionLog(directory: dir.url, options: .init(durability: .normal, flushInterval: nil))
    for n in (first + 1)...total {
      _ = try writer.append(try NewEntry(encoding: Sample.make(n), typeName: "sample", codec: .cbor))
    }
    let line = watcher.readLine() ?? "nothing"
    let status = watcher.wait()
    #expect(status == 0 && line.hasPrefix("passes "), "the reader process: \(line), exit \(status)")
    #expect(try writer.verify().isValid)
    try writer.close()
  }
}
