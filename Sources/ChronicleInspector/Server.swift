#if Inspector
import ChronicleCBOR
import ChronicleLog
import Foundation
import Hummingbird
import LogToolKit
import Logging
import NIOCore
import ServiceLifecycle

// MARK: - Application

extension Inspector {
  /// The HTTP server: the page at `/`, the JSON API under `/api/`, nothing that writes.
  ///
  /// - Parameters:
  ///   - host: the address to bind (`127.0.0.1` for loopback only).
  ///   - port: the port, 0 for any free one.
  ///   - onRunning: called with the bound port once the server accepts connections.
  public func application(
    host: String = "127.0.0.1", port: Int = 8420, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
  ) -> some ApplicationProtocol {
    var logger = Logger(label: "chronicle.inspector")
    logger.logLevel = .error
    return Application(
      router: router(),
      configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
      onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
      logger: logger)
  }

  /// The routes and the middleware every request passes.
  func router() -> Router<BasicRequestContext> {
    let router = Router()
    router.add(middleware: Guard(token: token, writable: { [weak self] path in self?.writable(path) ?? false }))
    let page = Self.page(token: token)
    router.get("/") { _, _ in Self.asset(page, type: "text/html; charset=utf-8") }
    router.get("/inspector.js") { _, _ in Self.asset(Assets.script, type: "text/javascript; charset=utf-8") }
    router.get("/inspector.css") { _, _ in Self.asset(Assets.style, type: "text/css; charset=utf-8") }
    router.get("/api/info") { request, _ in try await self.answer(request) { _ in try self.info() } }
    router.get("/api/entries") { request, _ in try await self.answer(request) { try self.entries($0) } }
    router.get("/api/entries/{seq}") { request, context in
      let seq = try Self.seq(context.parameters.get("seq"))
      return try await self.answer(request) { _ in try self.entry(seq) }
    }
    router.get("/api/state/{seq}") { request, context in
      let seq = try Self.seq(context.parameters.get("seq"))
      return try await self.answer(request) { _ in try self.state(seq) }
    }
    router.get("/api/diff") { request, _ in try await self.answer(request) { try self.diff($0) } }
    router.get("/api/snapshots") { request, _ in try await self.answer(request) { _ in try self.snapshotList() } }
    router.get("/api/stats") { request, _ in try await self.answer(request) { try self.stats($0) } }
    router.get("/api/verify") { request, _ in try await self.answer(request) { _ in try self.verification() } }
    router.get("/api/stream") { request, _ in try await self.stream(request) }
    router.get("/api/sync") { request, _ in try await self.answer(request) { try self.syncStatus($0) } }
    addControlRoutes(to: router)
    return router
  }

  /// A sequence number from the path, or 400.
  static func seq(_ text: String?) throws -> UInt64 {
    guard let text, let seq = UInt64(text) else {
      throw APIError.badRequest("'\(String((text ?? "").prefix(40)))' is not a sequence number")
    }
    return seq
  }

  /// The parameters of a query string as a form sends them (`application/x-www-form-urlencoded`,
  /// what the page's `URLSearchParams` writes): `+` is a space, then percent-escapes are decoded.
  static func formParameters(_ query: String?) -> [(String, String)] {
    guard let query, !query.isEmpty else { return [] }
    func decode(_ part: Substring) -> String {
      let spaced = part.replacingOccurrences(of: "+", with: " ")
      return spaced.removingPercentEncoding ?? spaced
    }
    return query.split(separator: "&").map { pair in
      guard let equals = pair.firstIndex(of: "=") else { return (decode(pair), "") }
      return (decode(pair[..<equals]), decode(pair[pair.index(after: equals)...]))
    }
  }

  /// Runs `body` off the event loop with the request's checked query and answers with its JSON,
  /// or with the error's status and `{"error": message}`.
  func answer(_ request: Request, _ body: @escaping @Sendable (Query) throws -> String) async throws -> Response {
    do {
      let query = try Query(Self.formParameters(request.uri.query))
      let json = try await offload { try body(query) }
      return Self.json(json, status: .ok)
    } catch let error as APIError {
      return Self.json(error.json, status: HTTPResponse.Status(code: error.status))
    } catch {
      let status = LogTool.exitStatus(for: error)
      return Self.json(APIError(status: 500, message: status.message).json, status: .internalServerError)
    }
  }

  static func json(_ text: String, status: HTTPResponse.Status) -> Response {
    Response(
      status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }

  /// The page, its script's and style's addresses carrying `token` when the server has one: the
  /// token guards every route, the page's own files too.
  static func page(token: String?) -> String {
    guard token != nil else { return Assets.page }
    let query = ServeOptions.tokenQuery(token)
    return Assets.page
      .replacingOccurrences(of: #"href="/inspector.css""#, with: #"href="/inspector.css"# + query + #"""#)
      .replacingOccurrences(of: #"src="/inspector.js""#, with: #"src="/inspector.js"# + query + #"""#)
  }

  static func asset(_ text: String, type: String) -> Response {
    Response(
      status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }
}

// MARK: - Live stream

extension Inspector {
  /// How often the stream looks for new entries.
  static let pollInterval: Duration = .milliseconds(200)

  /// `GET /api/stream?after=SEQ&max=N`: server-sent events, one `entry` event per new entry
  /// (its summary as data, its seq as id), from the entry after `after` (default: the last one
  /// now, or the `Last-Event-ID` header); with `max`, the stream ends after N entries.
  func stream(_ request: Request) async throws -> Response {
    let query: Query
    let start: UInt64
    let max: Int?
    do {
      query = try Query(Self.formParameters(request.uri.query))
      max = try query.int("max", in: 1...1_000_000)
      let lastEventID = request.headers[.init("Last-Event-ID")!].flatMap { UInt64($0) }
      if let after = try query.seq("after") ?? lastEventID {
        start = after
      } else {
        start = try await offload { try self.log.bounds()?.upperBound ?? self.log.head().seq }
      }
    } catch let error as APIError {
      return Self.json(error.json, status: HTTPResponse.Status(code: error.status))
    }
    let headers: HTTPFields = [
      .contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no",
    ]
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        var seen = start
        var sent = 0
        try await writer.write(ByteBuffer(string: ": chronicle inspector stream after \(start)\n\n"))
        // A graceful shutdown (SIGTERM, Ctrl-C, the app's service group stopping) ends the stream:
        // the server waits for open responses, and this one would never end by itself.
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
          let after = seen
          let limit = max.map { $0 - sent } ?? 500
          let (events, last) = try await self.offload { () -> ([String], UInt64) in
            try self.newEvents(after: after, limit: limit)
          }
          if !events.isEmpty {
            try await writer.write(ByteBuffer(string: events.joined()))
            sent += events.count
            if let max, sent >= max { break }
          } else {
            // A comment now and then: a client that went away is noticed.
            try await writer.write(ByteBuffer(string: ": \n\n"))
          }
          seen = last
          if events.isEmpty { try await Task.sleep(for: Self.pollInterval) }
        }
        try await writer.finish(nil)
      })
  }

  /// The events for the entries after `seen` (at most `limit`), and the last one they cover.
  func newEvents(after seen: UInt64, limit: Int) throws -> ([String], UInt64) {
    guard limit > 0, let bounds = try log.bounds(), bounds.upperBound > seen else { return ([], seen) }
    let lower = Swift.max(seen + 1, bounds.lowerBound)
    let upper = Swift.min(bounds.upperBound, lower + UInt64(limit) - 1)
    let snapshots = try snapshotSeqs(last: bounds.upperBound)
    var jumps = JumpResolver(log)
    let shared = isSharedStream
    var events: [String] = []
    for record in try log.records(in: lower...upper) {
      var out = JSONWriter()
      Self.writeSummary(
        record, jump: jumps.resolve(record), snapshot: snapshots.contains(record.seq), shared: shared, into: &out)
      events.append("event: entry\nid: \(record.seq)\ndata: \(out.text)\n\n")
    }
    return (events, upper)
  }
}

// MARK: - Guard

/// What every request passes first: only GET (and POST to the in-app inspector's enabled
/// buttons, with the token in its header and from the server's own origin), the token when one
/// is set, and the headers that keep the page to itself (a strict Content-Security-Policy).
struct Guard<Context: RequestContext>: RouterMiddleware {
  let token: String?
  /// Whether a path is an enabled button's endpoint, which takes POST.
  var writable: @Sendable (String) -> Bool = { _ in false }

  /// The page loads its own script and style only and talks to its own origin only.
  static var contentSecurityPolicy: String {
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
      + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
  }

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    var response: Response
    if request.method == .post, writable(request.uri.path) {
      response = try await guardWrite(request, context: context, next: next)
    } else if request.method != .get {
      response = Inspector.json(
        APIError(status: 405, message: "the inspector is read-only: only GET is served").json,
        status: .methodNotAllowed)
      response.headers[.allow] = "GET"
    } else if token == nil, !Self.isLoopback(authority: request.head.authority) {
      // Without a token, a page of another site that rebinds its name to this address must get nothing.
      response = Inspector.json(
        APIError(
          status: 403,
          message: "this server answers loopback names only (localhost, 127.0.0.1, [::1]), not "
            + "\(String((request.head.authority ?? "no Host").prefix(100))): serve with --token to answer others"
        ).json, status: .forbidden)
    } else if let token, !Self.carries(request, token: token) {
      response = Inspector.json(
        APIError(status: 401, message: "this server needs its token: ?token=… or Authorization: Bearer …").json,
        status: .unauthorized)
    } else if (request.uri.query?.utf8.count ?? 0) > 16_384 {
      response = Inspector.json(
        APIError.badRequest("the query is too long (at most 16384 bytes)").json, status: .badRequest)
    } else {
      do { response = try await next(request, context) } catch let error as APIError {
        response = Inspector.json(error.json, status: HTTPResponse.Status(code: error.status))
      } catch let error as HTTPError where error.status == .notFound {
        response = Inspector.json(
          APIError.notFound("no such page or endpoint: \(request.uri.path.prefix(100))").json, status: .notFound)
      }
    }
    response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
    response.headers[.xContentTypeOptions] = "nosniff"
    response.headers[.init("Referrer-Policy")!] = "no-referrer"
    response.headers[.init("X-Frame-Options")!] = "DENY"
    return response
  }

  /// A button's POST: it must carry the token as a bearer token (a header a page of another
  /// origin cannot send without a preflight, which gets 405), and a browser's `Origin` and
  /// `Sec-Fetch-Site` must name this server itself.
  func guardWrite(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    guard let token, let bearer, Self.equalInConstantTime(bearer, token) else {
      return Inspector.json(
        APIError(status: 401, message: "a button needs the token in its header: Authorization: Bearer …").json,
        status: .unauthorized)
    }
    if let origin = request.headers[.origin], origin != "http://" + (request.head.authority ?? "") {
      return Inspector.json(
        APIError(status: 403, message: "refused: a request from another origin (\(origin.prefix(100)))").json,
        status: .forbidden)
    }
    if let site = request.headers[.init("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
      return Inspector.json(
        APIError(status: 403, message: "refused: a \(site.prefix(40)) request").json, status: .forbidden)
    }
    do { return try await next(request, context) } catch let error as APIError {
      return Inspector.json(error.json, status: HTTPResponse.Status(code: error.status))
    }
  }

  /// Whether `authority` (the request's `Host`: a host and perhaps a port) names this machine's
  /// loopback (``ServeOptions/isLoopback(_:)``). A missing one does not.
  static func isLoopback(authority: String?) -> Bool {
    guard let authority else { return false }
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { return false }
      return ServeOptions.isLoopback(String(authority[...close]))
    }
    let host = authority.lastIndex(of: ":").map { String(authority[..<$0]) } ?? authority
    return ServeOptions.isLoopback(host)
  }

  /// Whether the request carries `token`, in its query or as a bearer token (compared in constant time).
  static func carries(_ request: Request, token: String) -> Bool {
    var given: [String] = Inspector.formParameters(request.uri.query).filter { $0.0 == "token" }.map(\.1)
    if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
      given.append(String(header.dropFirst(7)))
    }
    return given.contains { equalInConstantTime($0, token) }
  }

  static func equalInConstantTime(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
    for index in 0..<max(x.count, y.count) {
      difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0 && x.count == y.count
  }
}
#endif  // Inspector
