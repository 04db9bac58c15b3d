import Foundation

extension Store {
  /// Starts `effect`: `.send` goes through the store at once (flagged as from an
  /// effect), `.run` starts a task tracked for cancellation.
  @usableFromInline
  func start(_ effect: Effect<Action>) { start(effect, ids: []) }

  func start(_ effect: Effect<Action>, ids: [EffectID]) {
    switch effect.operation {
    case .none:
      return
    case .send(let action):
      sendFromEffect(action)
    case .merge(let effects):
      for effect in effects { start(effect, ids: ids) }
    case .cancel(let id):
      cancelEffects(id)
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { cancelEffects(id) }
      start(inner, ids: ids + [id])
    case .run(let priority, let body):
      shared.withLock { shared in
        guard !shared.isClosed else { return }
        let token = shared.nextID
        shared.nextID += 1
        // Created under the lock, so the task cannot finish before it is registered.
        let task = Task(priority: priority) {
          do {
            try await body(Send { [weak self] action in self?.sendFromEffect(action) })
          } catch is CancellationError {
          } catch {
            self.reportEffectError(error)
          }
          self.effectFinished(token)
        }
        shared.effects[token] = (task, ids)
      }
    }
  }

  func sendFromEffect(_ action: Action) {
    if Task.isCancelled { return }
    do {
      _ = try commit(CollectionOfOne(action), metadata: [:], fromEffect: true)
    } catch {
      reportEffectError(error)
    }
  }

  private func effectFinished(_ token: Int) {
    shared.withLock { _ = $0.effects.removeValue(forKey: token) }
  }

  private func cancelEffects(_ id: EffectID) {
    // Cancelled tasks stay registered until they end, so `waitForEffects` waits
    // for one that was already sending when it was cancelled.
    let tasks = shared.withLock { $0.effects.values.filter { $0.ids.contains(id) }.map(\.task) }
    for task in tasks { task.cancel() }
  }

  func reportEffectError(_ error: any Error) {
    if let handler = options.onEffectError {
      handler(error)
    } else {
      FileHandle.standardError.write(Data("Chronicle: effect error: \(error)\n".utf8))
    }
  }

  /// The number of `.run` effects still running.
  public var runningEffects: Int { shared.withLock { $0.effects.count } }

  /// Waits until no `.run` effect is running (effects they start included).
  public func waitForEffects() async {
    while true {
      let tasks = shared.withLock { $0.effects.values.map(\.task) }
      if tasks.isEmpty { return }
      for task in tasks { await task.value }
    }
  }
}
