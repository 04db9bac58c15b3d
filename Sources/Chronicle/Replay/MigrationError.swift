import ChronicleLog
import Foundation
import Synchronization

/// A migration could not turn an old entry into a current action.
struct MigrationError: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}
