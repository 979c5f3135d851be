import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingService
import BearingSocketDoor
import BearingLog
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The web door: the page the daemon serves (built into the binary), and the same protocol every socket reader
/// speaks, over HTTP. A page is a hub client like any socket reader: its event stream (`GET /events?watch=…`,
/// Server-Sent Events) is what `?WATCH=…;` gives a socket reader, line for line, with its own chain; its requests
/// (`POST /request`, one request line) are answered by the same `RequestRouter`. What a page may do is decided by
/// `WebAccess` (loopback views freely; everything else and every action needs the credential).
public final class WebDoor: Door, Sendable {
    public let name = "web"
    public let settings: WebSettings
    private let core: PublishingCore
    private let router: RequestRouter
    private let logger: Logger
    public let sessions: WebSessions
    private let server = Mutex<HTTPServer?>(nil)
    private let streams = Mutex<[ClientID: EventStream]>([:])
    /// One-shot requests' replies, collected while the router answers them on the pipeline queue.
    private let collected = Mutex<[ClientID: [String]]>([:])
    private let nextID = Atomic<Int>(0)
    private let counts = Mutex<(pages: Int, dropped: Int, refused: Int)>((0, 0, 0))
    private let refusalLog = Mutex<[String: LogThrottle]>([:])
    /// The port bound (the one asked for, or the kernel's pick for port 0).
    public let port: Int

    /// The web door's pages are hub clients numbered here, apart from the socket door's.
    public static let clientIDs: Range<ClientID> = (1 << 40)..<(1 << 41)

    /// The name (`FileDescriptorName=`) of the listener systemd passes for this door.
    public static let listenerName = "web"

    /// Opens the listener (or takes the one systemd passed, `inherited`) and starts serving; throws (having
    /// opened nothing) when it cannot.
    public init(_ settings: WebSettings, core: PublishingCore, requests: SocketDoor.Requests, logger: Logger,
                inherited: SocketActivation.Inherited? = nil) throws {
        self.settings = settings
        self.core = core
        self.logger = logger
        router = RequestRouter(hub: core.hub, logger: logger, writers: [], namedStore: nil, requests: requests)
        sessions = WebSessions(credentialFile: settings.credentialFile, lifetime: settings.sessionLifetime)
        if !settings.isLoopback && !sessions.hasCredential {
            throw DoorError(message: "web.host \(settings.host) is not loopback, and \(settings.credentialFile) holds no credential: set one with `sudo bearing web-credential` first (every request from the LAN needs it)")
        }
        let fd: Int32
        if let inherited {
            guard case .tcp(let host, _) = inherited.address else {
                throw DoorError(message: "web: systemd passed \(inherited.address) as the web door's listener; it must be a TCP socket")
            }
            if !TCPSocket.isLoopback(host) && !sessions.hasCredential {
                throw DoorError(message: "web: bearing-web.socket listens on \(host), not loopback, and \(settings.credentialFile) holds no credential: set one with `sudo bearing web-credential` first")
            }
            fd = inherited.fd
        } else {
            do { fd = try TCPSocket.listen(host: settings.host, port: settings.port) } catch {
                throw DoorError(message: "web: cannot listen on \(TCPSocket.name(settings.host, settings.port)): \(error) (is another program, or another bearing, on that port?)")
            }
        }
        port = TCPSocket.boundPort(fd) ?? settings.port
        let bounds = HTTPBounds(maxConnections: settings.maxPages + 8, maxBodyBytes: settings.maxRequestBytes, maxHeaders: settings.maxHeaders)
        let server = HTTPServer(bounds: bounds, handler: { [weak self] request in
            self?.handle(request) ?? .text(503, "stopping\n")
        }, refused: { [weak self] reason, peer in self?.refuse(reason, peer: peer) })
        // Lines for the pages: straight from the pipeline queue into their streams (a one-shot request's into its list).
        core.serveClients(in: Self.clientIDs) { [weak self] line, clients in self?.deliver(line, to: clients) }
        do { try server.start(listenFD: fd) } catch {
            Glibc.close(fd)
            throw DoorError(message: "web: \(error)")
        }
        self.server.withLock { $0 = server }
        logger.info("web door listening", metadata: ["on": "http://\(TCPSocket.name(settings.host, port))/", "opened by": "\(inherited == nil ? "bearing" : "systemd")",
                                                      "credential": "\(sessions.hasCredential ? settings.credentialFile : "none set")"])
        if !settings.isLoopback {
            logger.notice("the web door listens on \(settings.host): every request from another host needs the credential")
        }
    }

    public func run(until shutdown: ShutdownEvent) async throws {
        await shutdown.wait()
        close()
    }

    /// Ends every page's stream, then stops the server (its connection threads end), once.
    public func close() {
        for s in streams.withLock({ Array($0.values) }) { s.end() }
        guard let server = server.withLock({ s -> HTTPServer? in defer { s = nil }; return s }) else { return }
        server.stop()
        let c = counts.withLock { $0 }
        if c.dropped + c.refused > 0 {
            logger.info("web door closed", metadata: ["pages_dropped": "\(c.dropped)", "requests_refused": "\(c.refused)"])
        }
    }

    public var pageCount: Int { streams.withLock { $0.count } }

    public var health: [(String, HealthValue)] {
        let c = counts.withLock { $0 }
        return [("clients", .number(Double(pageCount))), ("dropped", .number(Double(c.dropped))), ("refused", .number(Double(c.refused))),
                ("sessions", .number(Double(sessions.count)))]
    }

    // MARK: Lines out (on the pipeline queue)

    private func deliver(_ line: String, to clients: [ClientID]) {
        var overflowed: [ClientID] = []
        streams.withLock { s in
            for id in clients { if let stream = s[id], !stream.push(line) { overflowed.append(id) } }
        }
        if !collected.withLock({ $0.isEmpty }) {
            collected.withLock { c in for id in clients where c[id] != nil { c[id]!.append(line) } }
        }
        for id in overflowed where streams.withLock({ $0.removeValue(forKey: id) }) != nil {
            counts.withLock { $0.dropped += 1 }
            logger.notice("web: a page stopped reading (\(settings.clientQueue) lines queued): dropped; it reconnects when it reads again")
            // Not inside the hub's delivery: after it.
            core.queue.async { [core] in core.hub.disconnect(id) }
        }
    }

    // MARK: Requests in (each on its connection's thread)

    private func handle(_ r: HTTPRequest) -> HTTPReply {
        let access = WebAccess.Request(method: r.method, peerIsLoopback: r.peerIsLoopback, host: r.header("Host"), origin: r.header("Origin"),
                                       hasSession: sessions.isValid(WebSessions.token(fromCookie: r.header("Cookie"))))
        switch (r.method, r.path) {
        case ("GET", "/"), ("GET", "/index.html"), ("HEAD", "/"):
            // The page itself holds nothing: it says "log in" when its requests need it.
            return .bytes(status: 200, contentType: "text/html; charset=utf-8", body: WebPage.html, headers: [("Cache-Control", "no-cache")])
        case ("GET", "/session"):
            let view = WebAccess.view(access)
            return .json(200, JSONValue.map([("logged_in", .bool(access.hasSession)), ("login_required", .bool(view != .allowed)),
                                             ("remote", .bool(!r.peerIsLoopback)), ("credential_configured", .bool(sessions.hasCredential))]).json,
                         headers: [("Cache-Control", "no-store")])
        case ("GET", "/events"):
            if let refusal = decide(WebAccess.view(access), r) { return refusal }
            return events(r, access)
        case ("POST", "/request"):
            return request(r, access)
        case ("POST", "/login"):
            if let refusal = decide(WebAccess.login(access), r) { return refusal }
            return login(r)
        case ("POST", "/logout"):
            if let refusal = decide(WebAccess.login(access), r) { return refusal }
            sessions.logout(WebSessions.token(fromCookie: r.header("Cookie")))
            return .bytes(status: 204, contentType: "text/plain", body: [], headers: [("Set-Cookie", "\(WebSessions.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict")])
        case (_, "/"), (_, "/events"), (_, "/request"), (_, "/login"), (_, "/logout"), (_, "/session"):
            return refusal(405, "\(r.method) is not allowed on \(r.path)", r)
        default:
            return .json(404, WireEncoding.error("no such page: \(r.path.prefix(100))"))
        }
    }

    private func decide(_ d: WebAccess.Decision, _ r: HTTPRequest) -> HTTPReply? {
        switch d {
        case .allowed: return nil
        case .needsLogin(let why): return refusal(401, why, r)
        case .forbidden(let why): return refusal(403, why, r)
        }
    }

    private func refusal(_ status: Int, _ why: String, _ r: HTTPRequest) -> HTTPReply {
        refuse("\(r.method) \(r.path.prefix(100)): \(why)", peer: r.peer)
        return .json(status, WireEncoding.error(why))
    }

    /// Each refusal is logged once: the first of its kind from a peer at once, then at most one line a minute
    /// for that kind and peer, saying how many were not logged.
    private func refuse(_ reason: String, peer: String) {
        counts.withLock { $0.refused += 1 }
        let key = "\(peer) \(reason)"
        let now = Syscall.monotonicSeconds()
        let suppressed = refusalLog.withLock { log -> Int? in
            if log[key] == nil, log.count > 1024 { log = log.filter { !$0.value.isQuiet(at: now) } }
            return log[key, default: LogThrottle(interval: 60)].admit(at: now)
        }
        guard let suppressed else { return }
        logger.notice("web: refused \(reason)", metadata: ["from": "\(peer)"].merging(suppressed > 0 ? ["not_logged_since": "\(suppressed)"] : [:]) { $1 })
    }

    private func newClient() -> ClientID { Self.clientIDs.lowerBound + nextID.add(1, ordering: .relaxed).newValue }

    /// `GET /events?watch=…`: a hub client whose lines become events, with the WATCH the page gave (parsed as a
    /// socket reader's is; a bad one is an ERROR event, then the stream goes on with what is in force).
    private func events(_ r: HTTPRequest, _ access: WebAccess.Request) -> HTTPReply {
        guard streams.withLock({ $0.count }) < settings.maxPages else {
            return refusal(503, "\(settings.maxPages) pages are open (web.max_pages); try again later", r)
        }
        var parsed: ClientRequest?
        if let text = r.query["watch"] {
            do { parsed = try ClientRequest.parse("?WATCH=\(text);"[...]) } catch {
                return .json(400, WireEncoding.error(error.message))
            }
        }
        let watch = parsed
        let id = newClient()
        let stream = EventStream(capacity: settings.clientQueue, writeInterval: settings.writeInterval)
        streams.withLock { $0[id] = stream }
        let caller = Caller.web(address: r.peer, authenticated: access.hasSession)
        core.queue.async { [core, router] in
            core.hub.connect(id)
            if let watch { router.handle(watch, from: id, caller: caller) }
        }
        logger.debug("web: page connected", metadata: ["client": "\(id)", "peer": "\(r.peer)"])
        return .events(stream) { [weak self, core] in
            self?.streams.withLock { $0[id] = nil }
            core.queue.async { core.hub.disconnect(id) }
        }
    }

    /// `POST /request`: one request line, answered as a socket reader's is; the reply lines as NDJSON.
    private func request(_ r: HTTPRequest, _ access: WebAccess.Request) -> HTTPReply {
        let text = String(decoding: r.body, as: UTF8.self)
        let parsed: ClientRequest
        do { parsed = try ClientRequest.parse(text[...]) } catch {
            return .json(200, WireEncoding.error(error.message) + "\n")
        }
        let decision: WebAccess.Decision
        switch parsed {
        case .onlineCalibration, .saveBlackBox, .blackBox: decision = WebAccess.act(access)
        case .swing(let a) where a != .status: decision = WebAccess.act(access)
        default: decision = WebAccess.view(access)
        }
        if let refusal = decide(decision, r) { return refusal }
        let id = newClient()
        collected.withLock { $0[id] = [] }
        let caller = Caller.web(address: r.peer, authenticated: access.hasSession)
        core.queue.sync {
            core.hub.connect(id)
            router.handle(parsed, from: id, caller: caller)
            core.hub.disconnect(id)
        }
        // The VERSION a connection gets first is not a reply.
        let lines = (collected.withLock { $0.removeValue(forKey: id) } ?? []).dropFirst()
        return .bytes(status: 200, contentType: "application/x-ndjson", body: Array(lines.map { $0 + "\n" }.joined().utf8),
                      headers: [("Cache-Control", "no-store")])
    }

    /// `POST /login` with `{"credential":"…"}`: a session cookie when it matches.
    private func login(_ r: HTTPRequest) -> HTTPReply {
        guard let body = try? JSONValue.parse(bytes: r.body), let given = body["credential"]?.string else {
            return refusal(400, "login: expected {\"credential\":\"…\"}", r)
        }
        switch sessions.login(given) {
        case .success(let token):
            logger.notice("web: logged in", metadata: ["from": "\(r.peer)"])
            let secure = ""
            return .bytes(status: 204, contentType: "text/plain", body: [],
                          headers: [("Set-Cookie", "\(WebSessions.cookieName)=\(token); Path=/; Max-Age=\(Int(settings.sessionLifetime)); HttpOnly; SameSite=Strict\(secure)")])
        case .failure(let e):
            return refusal(e == .tooMany ? 429 : 401, "login: \(e)", r)
        }
    }
}
