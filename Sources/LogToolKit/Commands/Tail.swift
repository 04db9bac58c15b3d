#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension LogTool {
  /// `logtool tail LOG`: the last entries and, with `--follow`, every new one as another process writes it.
  public struct Tail: ParsableCommand {
    /// `tail`.
    public static let configuration = CommandConfiguration(
      abstract: "Show the last entries; with --follow, keep showing new ones until interrupted.",
      discussion: "--follow polls every 100 ms and exits 0 on SIGINT or SIGTERM. "
        + "With --json it prints JSON Lines (one entry a line).")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// How many entries to show first.
    @Option(name: [.customShort("n"), .customLong("lines")], help: "How many of the last entries to show.")
    public var count = 10
    /// Whether to keep following.
    @Flag(name: .shortAndLong, help: "Keep printing new entries as they are written.")
    public var follow = false
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Checks the count.
    public func validate() throws {
      if count < 0 { throw ValidationError("-n must not be negative") }
    }

    /// Prints the last entries, then follows.
    public func run() throws {
      var actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      var out = StandardOutput()
      defer { out.flush() }

      // The head first: whatever is appended after it is printed by the follow loop.
      var seen = try actionLog.head().seq
      var last: [StoredEntry] = []
      if count > 0, let bounds = try actionLog.bounds(), bounds.lowerBound <= seen {
        let upper = min(bounds.upperBound, seen)
        let lower = upper >= UInt64(count) ? max(bounds.lowerBound, upper - UInt64(count) + 1) : bounds.lowerBound
        last = try actionLog.records(in: lower...upper)
      }
      var jumps = JumpResolver(actionLog)
      var layout = TableLayout(StoredEntry.tableColumns)
      layout.fit(column: 0, width: 6)
      layout.fit(column: 1, width: 24)
      layout.fit(column: 2, width: 7)
      layout.fit(column: 4, width: 12)
      layout.fit(column: 5, width: 5)
      for record in last { layout.fit(Array(record.rowCells(jump: jumps.resolve(record)).dropLast())) }

      if output.json && !follow {
        var json = JSONWriter()
        json.beginArray()
        for record in last { record.writeJSON(into: &json, jump: jumps.resolve(record)) }
        json.endArray()
        out.line(json.text)
        return
      }
      if !output.json { out.line(layout.header) }
      for record in last { print(record, jump: jumps.resolve(record), layout: layout, to: &out) }
      out.flush()
      guard follow, !out.isClosed else { return }

      // Each poll reads in short transactions of its own and prints outside them: between
      // polls this process holds no reader slot, so it never keeps a writer from reusing pages.
      let stop = StopSignal()
      var identity = LogFileIdentity(path: actionLog.path)
      // A compaction replaces the files in steps: a reopen may fail for a moment, not for 2 s.
      var failedReopens = 0
      while !stop.isRequested, !out.isClosed {
        usleep(100_000)
        let current = LogFileIdentity(path: actionLog.path)
        if current != identity {
          // The data file was replaced (compaction) or a writer appeared: read the new one. A
          // reader without a reader table says so when a writer appeared (a reader is refused).
          _ = try actionLog.head()
          try? actionLog.close()
          do {
            actionLog = try log.openReadOnly()
          } catch {
            failedReopens += 1
            if failedReopens == 20 { throw error }
            continue
          }
          failedReopens = 0
          jumps = JumpResolver(actionLog)
          identity = current
        }
        // An error here (a writer appeared beside a reader without a reader table) ends the command.
        let head = try actionLog.head().seq
        guard head > seen else { continue }
        try RecordWalk.forEach(actionLog, in: (seen + 1)...head) { record in
          print(record, jump: jumps.resolve(record), layout: layout, to: &out)
          return true
        }
        seen = head
        out.flush()
      }
    }

    private func print(
      _ record: StoredEntry, jump: JumpResolution?, layout: TableLayout, to out: inout StandardOutput
    ) {
      if output.json {
        var json = JSONWriter()
        record.writeJSON(into: &json, jump: jump)
        out.line(json.text)
      } else {
        out.line(layout.line(record.rowCells(jump: jump)))
      }
    }
  }
}

/// What identifies the files a reader has open: the data file's inode and whether a
/// reader table exists. A change means the log must be reopened to see new entries.
struct LogFileIdentity: Equatable {
  var dataInode: UInt64?
  var hasLockFile: Bool

  init(path: String) {
    var info = stat()
    dataInode = stat(path + "/data.mdb", &info) == 0 ? UInt64(info.st_ino) : nil
    hasLockFile = access(path + "/lock.mdb", F_OK) == 0
  }
}
#endif  // LogTool
