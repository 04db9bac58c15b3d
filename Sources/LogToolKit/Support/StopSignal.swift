#if LogTool
import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Turns SIGINT and SIGTERM into a flag that a polling loop checks, so that the loop
/// ends cleanly (and the process exits 0) instead of being killed mid-write.
final class StopSignal: @unchecked Sendable {
  // Sound: `sources` is assigned once in `init` and never mutated afterwards;
  // the flag is an `Atomic`, written by the signal handlers' queue and read by the loop.
  private let requested = Atomic<Bool>(false)
  private var sources: [any DispatchSourceSignal] = []

  /// Starts catching `signals` (their default action is disabled while this lives).
  init(_ signals: [Int32] = [SIGINT, SIGTERM]) {
    for number in signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "logtool.signals"))
      source.setEventHandler { [weak self] in self?.requested.store(true, ordering: .relaxed) }
      source.resume()
      sources.append(source)
    }
  }

  deinit {
    for source in sources { source.cancel() }
  }

  /// Whether one of the signals arrived.
  var isRequested: Bool { requested.load(ordering: .relaxed) }
}
#endif  // LogTool
