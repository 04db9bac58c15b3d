import ChronicleLog
import Foundation
import Synchronization

@usableFromInline struct Recovered<State> {
  @usableFromInline var cursor: UndoCursor<State>
  @usableFromInline var report: RecoveryReport

  @usableFromInline init(cursor: UndoCursor<State>, report: RecoveryReport) {
    self.cursor = cursor
    self.report = report
  }
}
