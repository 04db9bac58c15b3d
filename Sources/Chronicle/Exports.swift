// The log's vocabulary (Durability, PayloadCodec, EntryKind, LogError, …) is
// part of the engine's API: `import Chronicle` brings it along.
@_exported import ChronicleLog
