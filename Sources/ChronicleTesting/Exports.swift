// A test that imports ChronicleTesting sees the engine too (`Store`,
// `StoreOptions`, `Reducer`, `Effect`, …): one import, as with the app's own.
@_exported import Chronicle
