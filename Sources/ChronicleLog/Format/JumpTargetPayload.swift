/// The payload of restore, undo and redo entries (see `docs/log-format.md`).
struct JumpTargetPayload: Decodable {
  var target: UInt64
}
