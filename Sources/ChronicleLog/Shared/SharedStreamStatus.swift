import ChronicleCBOR
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a device's copy of a shared stream stands: what the stream confirmed, what the device
/// sent that is still pending, what the stream refused, and what the sync last heard from the
/// server. It is read from the device's directory without the app's types, read-only, so it works
/// while the app writes (see ``SharedStreamLayout``).
///
/// ```swift
/// if let status = try SharedStreamStatus.read(directory: url) {
///   print(status.streamName, status.confirmedHead, status.pendingCount)
///   for action in status.pending { print(action.seq, action.typeName) }
/// }
/// ```
///
/// An encrypted stream read without its key ring reports what its clear headers say (sequence
/// numbers, kinds, times, and type names unless they are sealed too); ``encrypted`` then says that
/// some of it could not be read.
public struct SharedStreamStatus: Sendable, Hashable {
  /// The stream's name: the app identifier of the device's copy.
  public var streamName: String
  /// The device that sent the outbox's actions, from their metadata; `nil` when it has sent nothing
  /// yet, or when its actions are encrypted and no key was given.
  public var deviceName: String?
  /// The sequence number of the last entry the device's copy holds: the stream's confirmed head.
  public var confirmedHead: UInt64
  /// The sequence number of the outbox's last entry (0 when it holds none).
  public var outboxHead: UInt64
  /// The outbox's last resolved marker, `nil` when the stream has settled none of its actions yet.
  public var resolved: Resolution?
  /// How many outbox actions are pending: those after the resolved marker's ``Resolution/through``.
  public var pendingCount: Int
  /// The first pending actions, oldest first, at most as many as asked for.
  public var pending: [PendingAction]
  /// How many of the stream's rejection markers record actions of this device.
  public var rejectionCount: Int
  /// The last of those rejections, oldest first, at most as many as asked for.
  public var recentRejections: [Rejection]
  /// Markers of the stream that could not be read without the key: some may be rejections of this device.
  public var sealedMarkers: Int
  /// What the sync loop last recorded in `pending/sync.json`; `nil` when it has not written it yet.
  public var syncState: SyncState?
  /// Whether some entries could not be read without the key (their type, metadata or payload show as encrypted).
  public var encrypted: Bool

  /// The outbox actions up to ``through`` are settled, as the outbox's resolved marker records.
  public struct Resolution: Sendable, Hashable {
    /// The marker's sequence number in the outbox.
    public var markerSeq: UInt64
    /// The last settled outbox action; `nil` when the marker is encrypted and no key was given.
    public var through: UInt64?
    /// The stream entry that settled it; `nil` when the marker is encrypted or does not say.
    public var streamSeq: UInt64?

    /// Creates a resolution.
    public init(markerSeq: UInt64, through: UInt64?, streamSeq: UInt64?) {
      self.markerSeq = markerSeq
      self.through = through
      self.streamSeq = streamSeq
    }
  }

  /// An action of the outbox that the stream has not settled yet.
  public struct PendingAction: Sendable, Hashable {
    /// Its sequence number in the outbox.
    public var seq: UInt64
    /// Its type name (empty when it is encrypted with its type name).
    public var typeName: String
    /// When the device sent it, in microseconds since 1970.
    public var timestamp: Int64
    /// Its metadata (empty when it is encrypted).
    public var metadata: [String: String]
    /// The key that sealed it, when it is encrypted and no key was given to read it.
    public var sealedKeyID: UInt32?

    /// Creates a pending action.
    public init(seq: UInt64, typeName: String, timestamp: Int64, metadata: [String: String], sealedKeyID: UInt32? = nil) {
      self.seq = seq
      self.typeName = typeName
      self.timestamp = timestamp
      self.metadata = metadata
      self.sealedKeyID = sealedKeyID
    }

    /// ``timestamp`` as a `Date`.
    public var date: Date { Date(microsecondsSince1970: timestamp) }
  }

  /// An action of this device that the stream refused: its rejection marker.
  public struct Rejection: Sendable, Hashable {
    /// The marker's sequence number in the stream.
    public var streamSeq: UInt64
    /// When the marker was appended, in microseconds since 1970.
    public var timestamp: Int64
    /// The refused action's type name.
    public var typeName: String
    /// The validator's reason.
    public var reason: String
    /// The refused action's sequence number in the device's outbox, when the marker records it.
    public var outboxSeq: UInt64?

    /// Creates a rejection.
    public init(streamSeq: UInt64, timestamp: Int64, typeName: String, reason: String, outboxSeq: UInt64?) {
      self.streamSeq = streamSeq
      self.timestamp = timestamp
      self.typeName = typeName
      self.reason = reason
      self.outboxSeq = outboxSeq
    }
  }

  /// What an entry of a device's copy of a stream is.
  public enum EntryRole: Sendable, Hashable {
    /// An entry the server ordered into the stream: an action (or restore, undo, redo) of some device.
    case confirmed
    /// A marker recording a refused action, with the action's type name and the validator's reason
    /// (`nil` when the marker is encrypted and no key was given).
    case rejected(typeName: String?, reason: String?)
    /// Another marker, or a marker whose type name is encrypted.
    case other
  }

  /// Creates a status.
  public init(
    streamName: String, deviceName: String?, confirmedHead: UInt64, outboxHead: UInt64, resolved: Resolution?,
    pendingCount: Int, pending: [PendingAction], rejectionCount: Int, recentRejections: [Rejection],
    sealedMarkers: Int = 0, syncState: SyncState?, encrypted: Bool = false
  ) {
    self.streamName = streamName
    self.deviceName = deviceName
    self.confirmedHead = confirmedHead
    self.outboxHead = outboxHead
    self.resolved = resolved
    self.pendingCount = pendingCount
    self.pending = pending
    self.rejectionCount = rejectionCount
    self.recentRejections = recentRejections
    self.sealedMarkers = sealedMarkers
    self.syncState = syncState
    self.encrypted = encrypted
  }
}

// MARK: - Reading

extension SharedStreamStatus {
  /// The status of the device's copy of a stream in `directory`, or `nil` when the directory is
  /// an ordinary log without a `pending/` outbox (no shared stream's device copy).
  ///
  /// Both logs are opened read-only, beside a live app that may be writing them.
  ///
  /// - Parameters:
  ///   - directory: the device's directory (the stream's log).
  ///   - keyRing: the keys of an encrypted stream; without them its sealed entries show as encrypted.
  ///   - pendingLimit: the most pending actions to list (all are counted).
  ///   - rejectionLimit: the most recent rejections to list (all are counted).
  /// - Throws: ``LogError`` naming the path when `directory` or its outbox is no readable log, or
  ///   when `pending/sync.json` is not what the sync writes.
  public static func read(
    directory: URL, keyRing: KeyRing? = nil, pendingLimit: Int = 100, rejectionLimit: Int = 5
  ) throws -> SharedStreamStatus? {
    let options = ActionLog.Options(keyRing: keyRing, returnsSealedEntries: true)
    let stream = try ActionLog(directory: directory, access: .readOnly, options: options)
    defer { try? stream.close() }
    guard isDeviceCopy(directory) else { return nil }
    let outbox = try openOutbox(of: directory, keyRing: keyRing)
    defer { try? outbox?.close() }
    var rejections = RejectionTally(keep: rejectionLimit)
    return try read(stream: stream, outbox: outbox, directory: directory, pendingLimit: pendingLimit, rejections: &rejections)
  }

  /// Whether `directory` has a `pending/` outbox directory beside its entries: whether it is a
  /// device's copy of a shared stream.
  public static func isDeviceCopy(_ directory: URL) -> Bool {
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: outboxDirectory(of: directory).path, isDirectory: &isDirectory)
    return exists && isDirectory.boolValue
  }

  /// The outbox's directory inside the device's `directory`.
  public static func outboxDirectory(of directory: URL) -> URL {
    directory.appendingPathComponent(SharedStreamLayout.pendingDirectory, isDirectory: true)
  }

  /// The outbox of the device's copy in `directory`, opened read-only; `nil` when its directory
  /// holds no log yet (the device has sent nothing).
  package static func openOutbox(of directory: URL, keyRing: KeyRing?) throws -> ActionLog? {
    let outbox = outboxDirectory(of: directory)
    guard FileManager.default.fileExists(atPath: outbox.appendingPathComponent("data.mdb").path) else { return nil }
    return try ActionLog(
      directory: outbox, access: .readOnly, options: .init(keyRing: keyRing, returnsSealedEntries: true))
  }

  /// The status from the stream's and the outbox's open logs (read-only, with sealed entries
  /// returned), the rejections counted on from where `rejections` stopped: the inspector keeps one
  /// tally and scans only the entries appended since.
  package static func read(
    stream: ActionLog, outbox: ActionLog?, directory: URL, pendingLimit: Int, rejections: inout RejectionTally
  ) throws -> SharedStreamStatus {
    let summary = try outbox.map { try OutboxSummary($0, pendingLimit: pendingLimit) } ?? OutboxSummary()
    try rejections.advance(over: stream, device: summary.device)
    let head = try stream.head().seq
    return SharedStreamStatus(
      streamName: try stream.meta().appID, deviceName: summary.device, confirmedHead: head, outboxHead: summary.head,
      resolved: summary.resolved, pendingCount: summary.pendingCount, pending: summary.pending,
      rejectionCount: rejections.count, recentRejections: rejections.recent, sealedMarkers: rejections.sealedMarkers,
      syncState: try SyncState.read(from: directory), encrypted: summary.encrypted || rejections.sealedMarkers > 0)
  }

  /// What an entry of a device's copy of a stream is: a confirmed entry, a rejection marker (with
  /// the refused action's type name and the reason), or another marker. It reads only the entry.
  public static func role(of entry: StoredEntry) -> EntryRole {
    guard entry.kind == .marker else { return .confirmed }
    guard entry.typeName == SharedStreamLayout.rejectedTypeName else { return .other }
    guard entry.sealedKeyID == nil else { return .rejected(typeName: nil, reason: nil) }
    return .rejected(
      typeName: entry.metadata[SharedStreamLayout.typeKey] ?? "",
      reason: entry.metadata[SharedStreamLayout.reasonKey] ?? "")
  }
}

// MARK: - The outbox

/// What the outbox says: the device, the last resolved marker, and the actions after it.
struct OutboxSummary {
  var device: String?
  var head: UInt64 = 0
  var resolved: SharedStreamStatus.Resolution?
  var pendingCount = 0
  var pending: [SharedStreamStatus.PendingAction] = []
  var encrypted = false

  /// Entries read per read transaction.
  static let chunk = 1024

  /// An outbox that holds nothing.
  init() {}

  /// Reads `outbox`: backwards to its last resolved marker, then forwards over the pending actions.
  init(_ outbox: ActionLog, pendingLimit: Int) throws {
    guard let bounds = try outbox.bounds() else { return }
    head = bounds.upperBound
    let marker = try Self.lastResolvedMarker(in: outbox, bounds: bounds)
    var start = bounds.lowerBound
    if let marker {
      if marker.sealedKeyID != nil {
        resolved = .init(markerSeq: marker.seq, through: nil, streamSeq: nil)
        encrypted = true
        start = marker.seq + 1
      } else {
        struct Payload: Decodable {
          var through: UInt64
          var stream: UInt64?
        }
        guard let payload = try? marker.codec.decode(Payload.self, from: marker.payload) else {
          throw LogError.corruptEntry(
            path: outbox.path, seq: marker.seq,
            reason: "its \(SharedStreamLayout.resolvedTypeName) marker's payload is not {\"through\": n, \"stream\": m}")
        }
        resolved = .init(markerSeq: marker.seq, through: payload.through, streamSeq: payload.stream)
        start = payload.through == .max ? .max : max(start, payload.through + 1)
      }
    }
    var position = start
    while position <= bounds.upperBound {
      let records = try outbox.records(in: position...bounds.upperBound, reverse: false, limit: Self.chunk)
      guard let last = records.last else { break }
      // Actions, and undos and redos (reverts), are pending; the outbox's own markers are not.
      for record in records where record.kind != .marker || record.typeName == SharedStreamLayout.revertTypeName {
        pendingCount += 1
        if record.sealedKeyID != nil { encrypted = true }
        if device == nil, record.sealedKeyID == nil { device = record.metadata[SharedStreamLayout.deviceKey] }
        if pending.count < pendingLimit {
          pending.append(
            .init(
              seq: record.seq, typeName: record.typeName, timestamp: record.timestamp, metadata: record.metadata,
              sealedKeyID: record.sealedKeyID))
        }
      }
      guard last.seq < bounds.upperBound else { break }
      position = last.seq + 1
    }
    if device == nil {
      // The device that sent the settled actions: the first of them that says.
      for record in try outbox.records(in: bounds, reverse: false, limit: Self.chunk) where record.kind != .marker {
        if record.sealedKeyID != nil {
          encrypted = true
        } else if let name = record.metadata[SharedStreamLayout.deviceKey] {
          device = name
          break
        }
      }
    }
  }

  /// The last marker of the outbox that records settled actions (a sealed marker whose type name
  /// is sealed too counts: the outbox holds no other markers), read backwards in short transactions.
  static func lastResolvedMarker(in outbox: ActionLog, bounds: ClosedRange<UInt64>) throws -> StoredEntry? {
    var position = bounds.upperBound
    while true {
      let records = try outbox.records(in: bounds.lowerBound...position, reverse: true, limit: chunk)
      for record in records where record.kind == .marker {
        if record.typeName == SharedStreamLayout.resolvedTypeName || (record.sealedKeyID != nil && record.typeName.isEmpty) {
          return record
        }
      }
      guard let last = records.last, last.seq > bounds.lowerBound else { return nil }
      position = last.seq - 1
    }
  }
}

// MARK: - Rejections

/// The rejection markers of one device counted over a stream's entries, kept between reads so
/// that a reader that follows the stream scans only the entries appended since.
package struct RejectionTally: Sendable {
  /// The device whose rejections are counted.
  package private(set) var device: String?
  /// The last stream entry looked at.
  package private(set) var scanned: UInt64 = 0
  /// The rejections of ``device``.
  package private(set) var count = 0
  /// The last rejections, oldest first.
  package private(set) var recent: [SharedStreamStatus.Rejection] = []
  /// Markers that could not be read without the key.
  package private(set) var sealedMarkers = 0
  /// How many of the last rejections to keep.
  package let keep: Int

  /// An empty tally that keeps the last `keep` rejections.
  package init(keep: Int) { self.keep = max(0, keep) }

  /// Counts on over the entries of `stream` appended since the last call; starts again when the
  /// device changed or the stream was replaced by a shorter one.
  package mutating func advance(over stream: ActionLog, device: String?) throws {
    if device != self.device { self = RejectionTally(keep: keep, device: device) }
    guard let bounds = try stream.bounds() else {
      if scanned > 0 { self = RejectionTally(keep: keep, device: device) }
      return
    }
    if bounds.upperBound < scanned { self = RejectionTally(keep: keep, device: device) }
    let lower = max(scanned + 1, bounds.lowerBound)
    guard lower <= bounds.upperBound else { return }
    let ring = stream.options.keyRing
    let rejected = Array(SharedStreamLayout.rejectedTypeName.utf8)
    func mayBeRejection(_ view: EntryView) -> Bool {
      view.kind == .marker && (view.typeNameBytes.isEmpty || view.typeNameBytes.elementsEqual(rejected))
    }
    try stream.scan(
      in: lower...bounds.upperBound,
      opening: { view in
        mayBeRejection(view) && view.sealedKeyID.map { ring?.key(id: $0) != nil } ?? true
      }
    ) { view in
      guard mayBeRejection(view) else { return }
      if view.sealedKeyID != nil {
        sealedMarkers += 1
        return
      }
      guard !view.typeNameBytes.isEmpty, let device else { return }
      let metadata = view.metadata
      guard metadata[SharedStreamLayout.deviceKey] == device else { return }
      count += 1
      guard keep > 0 else { return }
      recent.append(
        .init(
          streamSeq: view.seq, timestamp: view.timestamp, typeName: metadata[SharedStreamLayout.typeKey] ?? "",
          reason: metadata[SharedStreamLayout.reasonKey] ?? "",
          outboxSeq: metadata[SharedStreamLayout.pendingKey].flatMap { UInt64($0) }))
      if recent.count > keep { recent.removeFirst(recent.count - keep) }
    }
    scanned = bounds.upperBound
  }

  private init(keep: Int, device: String?) {
    self.init(keep: keep)
    self.device = device
  }
}

// MARK: - The sync's state file

extension SharedStreamStatus {
  /// What a device's sync loop records after each contact with the server, in `pending/sync.json`
  /// (JSON, `lastContact` as ISO 8601 text in UTC):
  ///
  /// ```json
  /// {"lastContact": "2026-01-01T12:00:00.000000Z", "lastError": null, "online": true, "serverHead": 42}
  /// ```
  public struct SyncState: Codable, Sendable, Hashable {
    /// The stream's head on the server when the sync last saw it.
    public var serverHead: UInt64
    /// When the sync last reached the server; `nil` when it never did.
    public var lastContact: Date?
    /// What went wrong at the last attempt, `nil` when it succeeded.
    public var lastError: String?
    /// Whether the last attempt reached the server.
    public var online: Bool

    /// Creates a state.
    public init(serverHead: UInt64, lastContact: Date?, lastError: String?, online: Bool) {
      self.serverHead = serverHead
      self.lastContact = lastContact
      self.lastError = lastError
      self.online = online
    }

    private enum CodingKeys: String, CodingKey {
      case serverHead, lastContact, lastError, online
    }

    /// Decodes a state, `lastContact` from ISO 8601 text.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      serverHead = try container.decode(UInt64.self, forKey: .serverHead)
      if let text = try container.decodeIfPresent(String.self, forKey: .lastContact) {
        guard let micros = ISOTime.parse(text) else {
          throw DecodingError.dataCorruptedError(
            forKey: .lastContact, in: container, debugDescription: "'\(text.prefix(40))' is not an ISO 8601 time")
        }
        lastContact = Date(microsecondsSince1970: micros)
      } else {
        lastContact = nil
      }
      lastError = try container.decodeIfPresent(String.self, forKey: .lastError)
      online = try container.decode(Bool.self, forKey: .online)
    }

    /// Encodes the state, `lastContact` as ISO 8601 text in UTC with microseconds (`null` when absent).
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(serverHead, forKey: .serverHead)
      if let lastContact {
        let seconds = lastContact.timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) < 9e12 else {
          throw EncodingError.invalidValue(
            lastContact, .init(codingPath: [CodingKeys.lastContact], debugDescription: "a time beyond year 9999"))
        }
        try container.encode(
          ISOTime.string(micros: lastContact.microsecondsSince1970), forKey: .lastContact)
      } else {
        try container.encodeNil(forKey: .lastContact)
      }
      if let lastError { try container.encode(lastError, forKey: .lastError) } else {
        try container.encodeNil(forKey: .lastError)
      }
      try container.encode(online, forKey: .online)
    }

    /// The state file of the device's copy in `directory`: `pending/sync.json`.
    public static func fileURL(in directory: URL) -> URL {
      SharedStreamStatus.outboxDirectory(of: directory).appendingPathComponent(SharedStreamLayout.syncStateFile)
    }

    /// The state the sync last recorded for the device's copy in `directory`; `nil` when it has
    /// written none yet.
    ///
    /// - Throws: ``LogError/io(path:operation:reason:)`` naming the file when it cannot be read or
    ///   is not what the sync writes.
    public static func read(from directory: URL) throws -> SyncState? {
      let url = fileURL(in: directory)
      let path = url.standardizedFileURL.path
      let data: Data
      do { data = try Data(contentsOf: url) } catch {
        if !FileManager.default.fileExists(atPath: path) { return nil }
        throw LogError.io(
          path: path, operation: "read the sync state file",
          reason: "\((error as NSError).localizedDescription); check its permissions")
      }
      do { return try JSONDecoder().decode(SyncState.self, from: data) } catch {
        throw LogError.io(
          path: path, operation: "read the sync state file",
          reason: "it is not the JSON the sync writes (\(Self.describe(error))); remove it and the sync writes it again")
      }
    }

    /// Records `state` for the device's copy in `directory`, atomically: a reader sees the old
    /// file or the new one, never a part (it is written to a temporary file in the same directory,
    /// then renamed over the old one). The outbox's directory must exist.
    ///
    /// - Throws: ``LogError/io(path:operation:reason:)`` naming the file when it cannot be written.
    public static func write(_ state: SyncState, to directory: URL) throws {
      let url = fileURL(in: directory)
      let path = url.standardizedFileURL.path
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      var bytes = Array(try encoder.encode(state))
      bytes.append(UInt8(ascii: "\n"))
      let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
      func failure(_ operation: String, _ target: String) -> LogError {
        .io(path: target, operation: operation, reason: String(cString: strerror(errno)))
      }
      let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      guard descriptor >= 0 else { throw failure("create", temporary) }
      let complete = writeFully(descriptor, bytes)
      if !complete {
        let error = failure("write", temporary)
        _ = close(descriptor)
        unlink(temporary)
        throw error
      }
      _ = close(descriptor)
      guard rename(temporary, path) == 0 else {
        let error = failure("replace", path)
        unlink(temporary)
        throw error
      }
    }

    /// A decoding error in a few words: the field and what is wrong with it.
    private static func describe(_ error: any Error) -> String {
      func field(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
      switch error {
      case DecodingError.keyNotFound(let key, _): return "no \(key.stringValue)"
      case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
        return "\(field(context.codingPath)) has the wrong type"
      case DecodingError.dataCorrupted(let context):
        return context.codingPath.isEmpty ? "not JSON" : "\(field(context.codingPath)): \(context.debugDescription)"
      default: return "\(error)"
      }
    }
  }
}

/// Writes all of `bytes` to `descriptor`, retrying after signals and short writes; `false` (with
/// `errno` set) when a write failed.
private func writeFully(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
  bytes.withUnsafeBytes { buffer in
    var written = 0
    while written < buffer.count {
      let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
      if count < 0 {
        if errno == EINTR { continue }
        return false
      }
      written += count
    }
    return true
  }
}
