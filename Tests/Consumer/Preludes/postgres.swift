// A block that takes a running PostgreSQL `client`, a log directory `logDirectory` and the
// server's `password` for granted. The blocks of docs/postgres.md are compiled by the
// ChroniclePostgresTests target (it links PostgresNIO), not by this package.
import ChroniclePostgres
import Foundation
import PostgresNIO

private func snippet(client: PostgresClient, logDirectory: URL, password: String) async throws {
// SNIPPET
}
