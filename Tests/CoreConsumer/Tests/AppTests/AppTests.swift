import ChronicleTesting
import Testing

@testable import App

@Test func incrementCounts() async {
  let store = TestStore(initialState: Counter.State(), reducer: Counter())
  await store.send(.increment) { $0.count = 1 }
}
