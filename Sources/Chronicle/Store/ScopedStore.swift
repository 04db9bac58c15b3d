import Observation
import Synchronization

/// A view of part of a store: it reads a child of the parent's state and sends
/// its actions through the parent, so everything lands in the root's one log.
///
/// ```swift
/// let settings = store.scope(state: \.settings, action: App.Action.settings)
/// try settings.send(.toggleDarkMode)      // logged as .settings(.toggleDarkMode)
/// settings.state.isDarkMode
/// ```
///
/// A scoped store is `Observable`: a SwiftUI view that reads `settings.state`
/// updates when the settings change, not when another part of the root's state
/// does (for an `Equatable` child state; any other changes with every commit).
/// It is told where the root store delivers (``StoreOptions/observationDelivery``).
public final class ScopedStore<State: Sendable, Action: Sendable>: Sendable {
  private let read: @Sendable () -> State
  private let write: @Sendable (Action, [String: String]) throws(ChronicleError) -> UInt64
  /// The root store's async send (``Store/send(_:metadata:)-4cl6u``) of a child action.
  private let writeSuspending: @Sendable (Action, [String: String]) async throws -> UInt64
  private let observe: @Sendable (@escaping @Sendable (State, State) -> Void) -> Subscription
  /// The root store: undo and redo act on its one log.
  private let root: any UndoRedoRoot
  /// The root store's observable children, this one among them.
  private let children: ObservationChildren
  private let notifier = ObservationNotifier()
  /// The child state as of the last check: announced only when it differs.
  private let lastSeen: Mutex<State>
  private let isEqual: (@Sendable (State, State) -> Bool)?

  /// `read` must not register access to the root store: observers of this
  /// store hear only of changes to its part.
  init(
    read: @escaping @Sendable () -> State,
    write: @escaping @Sendable (Action, [String: String]) throws(ChronicleError) -> UInt64,
    writeSuspending: @escaping @Sendable (Action, [String: String]) async throws -> UInt64,
    observe: @escaping @Sendable (@escaping @Sendable (State, State) -> Void) -> Subscription,
    children: ObservationChildren,
    root: any UndoRedoRoot
  ) {
    self.read = read
    self.write = write
    self.writeSuspending = writeSuspending
    self.observe = observe
    self.root = root
    self.children = children
    lastSeen = Mutex(read())
    isEqual = equality(of: State.self)
    children.add(self)
  }

  /// Undoes the root store's newest undo step (whatever part of the state it changed).
  ///
  /// - Throws: ``ChronicleError/nothingToUndo`` when there is nothing to undo.
  @discardableResult
  public func undo(metadata: [String: String] = [:]) throws -> UInt64 { try root.undo(metadata: metadata) }

  /// Redoes the root store's newest undone step.
  ///
  /// - Throws: ``ChronicleError/nothingToRedo`` when there is nothing to redo.
  @discardableResult
  public func redo(metadata: [String: String] = [:]) throws -> UInt64 { try root.redo(metadata: metadata) }

  /// Whether ``undo(metadata:)`` has a step to undo (the root store's).
  public var canUndo: Bool { root.canUndo }

  /// Whether ``redo(metadata:)`` has a step to redo (the root store's).
  public var canRedo: Bool { root.canRedo }

  /// The child state, read from the parent now.
  public var state: State {
    notifier.access()
    return read()
  }

  /// Sends a child action through the parent; returns the root log's sequence number.
  ///
  /// Blocks the calling thread while the entry is committed, as the root store's
  /// ``Store/send(_:metadata:)-9aphm`` does. From a task or the main actor, use the async form,
  /// `try await send(_:metadata:)`, instead.
  @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) throws -> UInt64 {
    try write(action, metadata)
  }

  /// Sends a child action through the parent, suspending (instead of blocking the thread) while its
  /// entry is committed; returns the root log's sequence number.
  ///
  /// ```swift
  /// let seq = try await settings.send(.toggleDarkMode)   // durable when this returns
  /// ```
  ///
  /// The same as the root store's ``Store/send(_:metadata:)-4cl6u``: with `.full` durability the
  /// commit and its sync run on the store's own thread, shared with other senders (group commit).
  ///
  /// - Throws: what the root store's send throws. Nothing changes then.
  @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) async throws -> UInt64 {
    try await writeSuspending(action, metadata)
  }

  /// Calls `observer` after every committed change of the parent, with the child's new and old state.
  public func subscribe(_ observer: @escaping @Sendable (_ new: State, _ old: State) -> Void) -> Subscription {
    observe(observer)
  }

  /// The current child state, then the child state after every committed change of the parent.
  public var states: AsyncStream<State> {
    AsyncStream { continuation in
      continuation.yield(read())
      let subscription = observe { new, _ in continuation.yield(new) }
      continuation.onTermination = { _ in subscription.cancel() }
    }
  }

  /// A store of a part of this part.
  public func scope<Child: Sendable, ChildAction: Sendable>(
    state toChild: KeyPath<State, Child> & Sendable, action fromChild: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedStore<Child, ChildAction> {
    let read = self.read
    let write = self.write
    let writeSuspending = self.writeSuspending
    let observe = self.observe
    let root = self.root
    return ScopedStore<Child, ChildAction>(
      read: { read()[keyPath: toChild] },
      write: { action, metadata throws(ChronicleError) in try write(fromChild(action), metadata) },
      writeSuspending: { action, metadata in try await writeSuspending(fromChild(action), metadata) },
      observe: { observer in observe { new, old in observer(new[keyPath: toChild], old[keyPath: toChild]) } },
      children: children, root: root)
  }
}

// MARK: - Observation

extension ScopedStore: Observable, ObservationChild {
  /// Announces a change if the child state differs from the last one seen.
  func rootChanged() {
    let new = read()
    let changed = lastSeen.withLock { last in
      defer { last = new }
      return !(isEqual?(last, new) ?? false)
    }
    if changed { notifier.announce() }
  }
}

extension Store {
  /// A store of a part of this store's state and actions (one log per root store).
  public func scope<Child: Sendable, ChildAction: Sendable>(
    state toChild: KeyPath<State, Child> & Sendable, action fromChild: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedStore<Child, ChildAction> {
    ScopedStore<Child, ChildAction>(
      read: { [self] in shared.withLock { $0.state[keyPath: toChild] } },
      write: { [self] action, metadata throws(ChronicleError) in try commit(CollectionOfOne(fromChild(action)), metadata: metadata, fromEffect: false).lowerBound },
      writeSuspending: { [self] action, metadata in
        try await commitSuspending(CollectionOfOne(fromChild(action)), metadata: metadata).lowerBound
      },
      observe: { [self] observer in
        subscribe { new, old in observer(new[keyPath: toChild], old[keyPath: toChild]) }
      },
      children: observation.children, root: self)
  }

  /// A read-only value computed from the state that notifies only when it changes.
  ///
  /// The value is `Observable` too: SwiftUI views that read `value` update only
  /// when it changes, where ``StoreOptions/observationDelivery`` says.
  ///
  /// ```swift
  /// let total = store.derive { state in state.balances.values.reduce(0, +) }
  /// let token = total.subscribe { new, old in print("total", old, "→", new) }
  /// ```
  public func derive<Value: Equatable & Sendable>(_ transform: @escaping @Sendable (State) -> Value)
    -> DerivedValue<Value>
  {
    DerivedValue(initial: transform(shared.withLock { $0.state }), delivery: options.observationDelivery) {
      [self] onChange in
      subscribe { new, _ in onChange(transform(new)) }
    }
  }
}
