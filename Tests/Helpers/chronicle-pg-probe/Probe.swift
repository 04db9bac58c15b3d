import ChroniclePostgres
import Foundation
import PostgresNIO
import ChronicleTestTools

// MARK: - chronicle-pg-probe

/// A shipper in a process of its own, for the tests to kill.
///
/// Usage: `chronicle-pg-probe ship LOG-DIRECTORY PORT DATABASE PASSWORD BATCH-SIZE`: connects to
/// the server on 127.0.0.1:PORT as `postgres`, prints `ready`, ships the log once in batches of
/// BATCH-SIZE entries, prints `shipped N` and exits 0; on an error prints it on standard error and
/// exits 1. A usage error exits 2.
@main struct Probe {
  static func main() async {
    let arguments = CommandLine.arguments
    guard arguments.count == 7, arguments[1] == "ship", let port = Int(arguments[3]), let batch = Int(arguments[6])
    else {
      FileHandle.standardError.write(
        Data("usage: chronicle-pg-probe ship LOG-DIRECTORY PORT DATABASE PASSWORD BATCH-SIZE\n".utf8))
      exit(2)
    }
    var logger = Logger(label: "chronicle-pg-probe")
    logger.logLevel = .critical
    let client = PostgresClient(
      configuration: .init(
        host: "127.0.0.1", port: port, username: "postgres", password: arguments[5], database: arguments[4],
        tls: .disable),
      backgroundLogger: logger)
    let running = Task { await client.run() }
    say("ready")
    do {
      let shipper = LogShipper(client: client, options: .init(batchSize: batch))
      let report = try await shipper.ship(directory: URL(fileURLWithPath: arguments[2]))
      say("shipped \(report.entriesShipped)")
    } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      exit(1)
    }
    running.cancel()
    exit(0)
  }
}
