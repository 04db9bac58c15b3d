import Foundation

extension Store {
  /// Starts `effect`: `.send` goes through the store at once (flagged as from an
  /// effect), `.run` starts a task tracked for cancellation.
  @usableFromInline
  func start(_ effect: Effect<Action>) {
    effects.start(
      effect, send: { [weak self] action in self?.sendFromEffect(action) },
      report: { [weak self] error in self?.reportEffectError(error) })
  }

  func sendFromEffect(_ action: Action) {
    if Task.isCancelled { return }
    do {
      _ = try commit(CollectionOfOne(action), metadata: [:], fromEffect: true)
    } catch {
      reportEffectError(error)
    }
  }

  func reportEffectError(_ error: any Error) {
    EffectTasks.report(error, to: options.onEffectError)
  }

  /// The number of `.run` effects still running.
  public var runningEffects: Int { effects.count }

  /// Waits until no `.run` effect is running (effects they start included).
  public func waitForEffects() async { await effects.waitForAll() }
}
