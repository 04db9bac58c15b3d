import Synchronization

/// A view of part of a store: it reads a child of the parent's state and sends
/// its actions through the parent, so everything lands in the root's one log.
///
/// ```swift
/// let settings = store.scope(state: \.settings, action: App.Action.settings)
/// try settings.send(.toggleDarkMode)      // logged as .settings(.toggleDarkMode)
/// settings.state.isDarkMode
/// ```
public final class ScopedStore<State: Sendable, Action: Sendable>: Sendable {
  private let read: @Sendable () -> State
  private let write: @Sendable (Action, [String: String]) throws(ChronicleError) -> UInt64
  private let observe: @Sendable (@escaping @Sendable (State, State) -> Void) -> Subscription
  /// The root store: undo and redo act on its one log.
  private let root: any UndoRedoRoot

  init(
    read: @escaping @Sendable () -> State,
    write: @escaping @Sendable (Action, [String: String]) throws(ChronicleError) -> UInt64,
    observe: @escaping @Sendable (@escaping @Sendable (State, State) -> Void) -> Subscription,
    root: any UndoRedoRoot
  ) {
    self.read = read
    self.write = write
    self.observe = observe
    self.root = root
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
  public var state: State { read() }

  /// Sends a child action through the parent; returns the root log's sequence number.
  @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) throws -> UInt64 {
    try write(action, metadata)
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
    let observe = self.observe
    let root = self.root
    return ScopedStore<Child, ChildAction>(
      read: { read()[keyPath: toChild] },
      write: { action, metadata throws(ChronicleError) in try write(fromChild(action), metadata) },
      observe: { observer in observe { new, old in observer(new[keyPath: toChild], old[keyPath: toChild]) } },
      root: root)
  }
}

extension Store {
  /// A store of a part of this store's state and actions (one log per root store).
  public func scope<Child: Sendable, ChildAction: Sendable>(
    state toChild: KeyPath<State, Child> & Sendable, action fromChild: @escaping @Sendable (ChildAction) -> Action
  ) -> ScopedStore<Child, ChildAction> {
    ScopedStore<Child, ChildAction>(
      read: { [self] in state[keyPath: toChild] },
      write: { [self] action, metadata throws(ChronicleError) in try commit(CollectionOfOne(fromChild(action)), metadata: metadata, fromEffect: false).lowerBound },
      observe: { [self] observer in
        subscribe { new, old in observer(new[keyPath: toChild], old[keyPath: toChild]) }
      }, root: self)
  }

  /// A read-only value computed from the state that notifies only when it changes.
  ///
  /// ```swift
  /// let total = store.derive { state in state.balances.values.reduce(0, +) }
  /// let token = total.subscribe { new, old in print("total", old, "→", new) }
  /// ```
  public func derive<Value: Equatable & Sendable>(_ transform: @escaping @Sendable (State) -> Value)
    -> DerivedValue<Value>
  {
    DerivedValue(initial: transform(state)) { [self] onChange in
      subscribe { new, _ in onChange(transform(new)) }
    }
  }
}

/// A value derived from a store's state; observers hear only real changes (`!=`).
public final class DerivedValue<Value: Equatable & Sendable>: Sendable {
  private struct Storage {
    var value: Value
    var observers: [Int: @Sendable (Value, Value) -> Void] = [:]
    var nextID = 0
  }

  private let storage: Mutex<Storage>
  private let upstream = Mutex<Subscription?>(nil)

  init(initial: Value, connect: (@escaping @Sendable (Value) -> Void) -> Subscription) {
    storage = Mutex(Storage(value: initial))
    let subscription = connect { [weak self] value in self?.update(value) }
    upstream.withLock { $0 = subscription }
  }

  private func update(_ value: Value) {
    let change = storage.withLock { storage -> (Value, [@Sendable (Value, Value) -> Void])? in
      guard storage.value != value else { return nil }
      let old = storage.value
      storage.value = value
      return (old, storage.observers.sorted { $0.key < $1.key }.map(\.value))
    }
    guard let (old, observers) = change else { return }
    for observer in observers { observer(value, old) }
  }

  /// The current value.
  public var value: Value { storage.withLock { $0.value } }

  /// Calls `observer` with the new and old value whenever the value changes.
  public func subscribe(_ observer: @escaping @Sendable (_ new: Value, _ old: Value) -> Void) -> Subscription {
    let id = storage.withLock { storage in
      defer { storage.nextID += 1 }
      storage.observers[storage.nextID] = observer
      return storage.nextID
    }
    return Subscription { [weak self] in self?.storage.withLock { _ = $0.observers.removeValue(forKey: id) } }
  }

  /// The current value, then each change once.
  public var values: AsyncStream<Value> {
    AsyncStream { continuation in
      continuation.yield(value)
      let subscription = subscribe { new, _ in continuation.yield(new) }
      continuation.onTermination = { _ in subscription.cancel() }
    }
  }
}
