// A block that takes a log directory `url` for granted.
import Foundation

private func snippet(url: URL) async throws {
// SNIPPET
}
