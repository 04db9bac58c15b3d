// A test store of the counter declared earlier in the same document.
import ChronicleTesting
import Testing

private func snippet(store: TestStore<Counter.State, Counter.Action>) async throws {
// SNIPPET
}
