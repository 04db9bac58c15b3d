import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `logtool serve --key-file` on an encrypted log: without the key its entries show as encrypted,
/// with it in the clear.
@Suite struct EncryptedServeTests {
  @Test func anEncryptedLogWithAndWithoutItsKeyFile() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-encrypted")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    let ring = try KeyRing([EncryptionKey.random()])
    let writer = try ActionLog(directory: directory, options: .init(keyRing: ring))
    for n in 1...3 {
      try writer.append(try NewEntry(encoding: ["secret": "s3cret-\(n)"], typeName: "note", codec: .json))
    }
    try writer.close()
    let keyFile = scratch.child("log.keys")
    try ring.fileText.write(to: keyFile, atomically: true, encoding: .utf8)

    func get(_ url: String) async throws -> [String: Any] {
      let (data, _) = try await URLSession.shared.data(from: try #require(URL(string: url)))
      return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
    }

    let sealed = try RunningServer("logtool", directory)
    let hidden = try await get(sealed.url + "/api/entries/2")
    #expect(hidden["encrypted"] as? Bool == true, "\(hidden)")
    #expect(hidden["payload"] == nil || hidden["payload"] is NSNull, "\(hidden)")
    let page = try await get(sealed.url + "/api/entries?limit=3")
    #expect((page["entries"] as? [[String: Any]])?.allSatisfy { $0["encrypted"] as? Bool == true } == true, "\(page)")
    let verified = try await get(sealed.url + "/api/verify")
    #expect((verified["chain"] as? [String: Any])?["valid"] as? Bool == true, "\(verified)")
    #expect(sealed.stop() == 0)

    let clear = try RunningServer("logtool", directory, ["--key-file", keyFile.path])
    let shown = try await get(clear.url + "/api/entries/2")
    #expect(shown["encrypted"] == nil, "\(shown)")
    #expect(shown["payload"] as? [String: String] == ["secret": "s3cret-2"], "\(shown)")
    let found = try await get(clear.url + "/api/entries?q=s3cret-3")
    #expect((found["entries"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [3], "\(found)")
    #expect(clear.stop() == 0)

    // A key file that holds no key: exit 2 naming it, before serving.
    let garbage = scratch.child("garbage.keys")
    try "not a key\n".write(to: garbage, atomically: true, encoding: .utf8)
    let refused = try ChildProcess.run("logtool", ["serve", directory.path, "--port", "0", "--key-file", garbage.path])
    #expect(refused.status == 2, "\(refused.stderr)")
    #expect(refused.stderr.contains(garbage.standardizedFileURL.path) || refused.stderr.contains(garbage.path), "\(refused.stderr)")
    #expect(refused.stdout.isEmpty)
  }
}
