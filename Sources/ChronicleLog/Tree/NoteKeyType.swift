import Crypto
import Foundation

/// The signature algorithms of C2SP signed-note keys that Chronicle knows.
public enum NoteKeyType: UInt8, Sendable, Hashable {
  /// Ed25519 note signatures (signed-note `0x01`): the log signs its checkpoints with these.
  case ed25519 = 0x01
  /// Ed25519 cosignatures, C2SP tlog-cosignature v1 (`0x04`): witnesses sign with these.
  case cosignatureV1 = 0x04
}
