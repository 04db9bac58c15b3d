import Chronicle
import ChroniclePostgres
import ChronicleTestSupport
import ChronicleTestTools
import Foundation
import PostgresNIO

// MARK: - chronicle-sync-probe

/// One device of a shared stream in a process of its own, for the tests to take offline and kill.
///
/// Usage: `chronicle-sync-probe DIRECTORY DEVICE PORT DATABASE PASSWORD COUNT OFFLINE-FILE`.
/// Opens the device's copy of the stream `crew` (a ``Ledger`` that refuses overdrafts) in
/// DIRECTORY, connects to the server on 127.0.0.1:PORT as `postgres`, prints `ready PENDING`, and
/// syncs continuously, except while OFFLINE-FILE exists. It sends COUNT actions to the shared
/// account `pool` (three deposits of 10, then a withdrawal of 35), printing `ack SEQ` once each
/// `send` returned, `refused` when a validator refused it at once, and `rejected SEQ` when the
/// stream refused one of its actions. Once nothing is pending and the device holds the server's
/// head, it prints `done HEAD` and exits 0. With COUNT 0 it only catches up. Errors exit 1.
@main struct Probe {
  static func main() async {
    let arguments = CommandLine.arguments
    guard arguments.count == 8, let port = Int(arguments[3]), let count = Int(arguments[6]) else {
      FileHandle.standardError.write(
        Data("usage: chronicle-sync-probe DIRECTORY DEVICE PORT DATABASE PASSWORD COUNT OFFLINE-FILE\n".utf8))
      exit(2)
    }
    let offline = arguments[7]
    var logger = Logger(label: "chronicle-sync-probe")
    logger.logLevel = .critical
    let client = PostgresClient(
      configuration: .init(
        host: "127.0.0.1", port: port, username: "postgres", password: arguments[5], database: arguments[4],
        tls: .disable),
      backgroundLogger: logger)
    let running = Task { await client.run() }
    do {
      let store = try SharedStore(
        initialState: Ledger.State(), reducer: Ledger(), directory: URL(fileURLWithPath: arguments[1]),
        stream: SharedStream("crew"), device: arguments[2], validators: [Ledger.noOverdraft])
      let server = PostgresStreamServer(client: client, stream: SharedStream("crew"))
      let rejections = store.onRejection { rejection in say("rejected \(rejection.pendingSeq)") }
      say("ready \(store.pending.count)")
      let syncing = Task {
        while FileManager.default.fileExists(atPath: offline) { try? await Task.sleep(for: .milliseconds(50)) }
        await store.syncContinuously(with: server)
      }
      for index in 0..<count {
        let action: Ledger.Action = index % 4 == 3 ? .withdraw("pool", cents: 35) : .deposit("pool", cents: 10)
        do {
          say("ack \(try store.send(action))")
        } catch ChronicleError.rejected {
          say("refused")
        }
        try await Task.sleep(for: .milliseconds(5))
      }
      // Caught up: nothing pending, and the server holds nothing after the device's head.
      while true {
        if store.pending.isEmpty, !FileManager.default.fileExists(atPath: offline),
          try await server.records(after: store.head.seq, limit: 1).isEmpty
        {
          break
        }
        try await Task.sleep(for: .milliseconds(50))
      }
      // Lets the main actor deliver the last refusals before the process ends.
      try await Task.sleep(for: .milliseconds(100))
      syncing.cancel()
      await syncing.value
      rejections.cancel()
      say("done \(store.head.seq)")
      try store.close()
      await server.close()
    } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      exit(1)
    }
    running.cancel()
    exit(0)
  }
}
