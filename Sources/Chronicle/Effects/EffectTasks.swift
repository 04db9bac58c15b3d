import Foundation
import Synchronization

/// The `.run` effects a store started and has not seen end: started, cancelled by id or all
/// at once, waited for.
final class EffectTasks: Sendable {
  private struct Table {
    var nextID = 0
    var running: [Int: (task: Task<Void, Never>, ids: [EffectID])] = [:]
    var isClosed = false
  }
  private let table = Mutex(Table())

  /// Starts `effect`: `.send` calls `send` at once, `.run` starts a task tracked for cancellation.
  func start<Action: Sendable>(
    _ effect: Effect<Action>, ids: [EffectID] = [], send: @escaping @Sendable (Action) -> Void,
    report: @escaping @Sendable (any Error) -> Void
  ) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      send(action)
    case .merge(let effects):
      for effect in effects { start(effect, ids: ids, send: send, report: report) }
    case .cancel(let id):
      cancel(id)
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { cancel(id) }
      start(inner, ids: ids + [id], send: send, report: report)
    case .run(let priority, let body):
      table.withLock { table in
        guard !table.isClosed else { return }
        let token = table.nextID
        table.nextID += 1
        // Created under the lock, so the task cannot finish before it is registered.
        let task = Task(priority: priority) {
          do {
            try await body(Send(send))
          } catch is CancellationError {
          } catch {
            report(error)
          }
          self.finished(token)
        }
        table.running[token] = (task, ids)
      }
    }
  }

  private func finished(_ token: Int) { table.withLock { _ = $0.running.removeValue(forKey: token) } }

  /// Cancels the running effects marked with `id`; they stay registered until they end.
  func cancel(_ id: EffectID) {
    let tasks = table.withLock { $0.running.values.filter { $0.ids.contains(id) }.map(\.task) }
    for task in tasks { task.cancel() }
  }

  /// Cancels every running effect, forgets them, and starts no new one (the store closed).
  func cancelAll() {
    let tasks = table.withLock { table in
      table.isClosed = true
      defer { table.running.removeAll() }
      return table.running.values.map(\.task)
    }
    for task in tasks { task.cancel() }
  }

  /// The number of effects still running.
  var count: Int { table.withLock { $0.running.count } }

  /// Waits until no effect is running (effects they start included).
  func waitForAll() async {
    while true {
      let tasks = table.withLock { $0.running.values.map(\.task) }
      if tasks.isEmpty { return }
      for task in tasks { await task.value }
    }
  }

  /// Hands an effect's error to the store's handler, or, without one, writes it to standard error.
  static func report(_ error: any Error, to handler: (@Sendable (any Error) -> Void)?) {
    if let handler {
      handler(error)
    } else {
      FileHandle.standardError.write(Data("Chronicle: effect error: \(error)\n".utf8))
    }
  }
}
