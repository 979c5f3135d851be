import BearingCore
import BearingIO
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// What the server needs from the agent to answer requests: the current source states (replayed to
/// each client that starts watching) and the latest published objects (for `?POLL;`).
public struct ServerSnapshot: Sendable {
    public var stateLines: [String]
    public var lastTPV: String?
    public var lastSKY: String?
    public var lastATT: String?
    /// The CALIBRATION object, replayed to clients that start watching.
    public var calibrationLine: String?
    public var devices: [String]
    public init(stateLines: [String] = [], lastTPV: String? = nil, lastSKY: String? = nil, devices: [String] = []) {
        self.stateLines = stateLines
        self.lastTPV = lastTPV
        self.lastSKY = lastSKY
        self.devices = devices
    }
}

/// The local UNIX-socket server: newline-delimited JSON in gpsd's dialect for any number of clients.
///
/// One thread runs a `poll(2)` loop over the listener and every client. `publish` may be called from
/// any thread: it only appends to each watching client's bounded queue and wakes the loop, so a slow or
/// stalled client costs the pipeline nothing. When a client's queue is full its messages are dropped and
/// counted, and the client gets an `OVERFLOW` object with the count once it catches up.
public final class SocketServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var path: String
        public var mode: UInt32 = 0o660
        public var maxClients: Int = 64
        public var clientQueue: Int = 256
        /// Longest request line accepted; longer lines get an ERROR and are discarded.
        public var maxRequestBytes: Int = 4096
        public var release: String = "bearing"
        public init(path: String) { self.path = path }
    }

    final class Client {
        let fd: Int32
        let id: Int
        var watch = WatchOptions()
        var input: [UInt8] = []
        var discardingLongLine = false
        /// Lines waiting to be written; bounded by `clientQueue`.
        var queue: [String] = []
        var dropped = 0
        var output: [UInt8] = []
        var outputOffset = 0
        var closing = false
        init(fd: Int32, id: Int) { self.fd = fd; self.id = id }
    }

    public let configuration: Configuration
    private let logger: Logger
    private let snapshot: @Sendable () -> ServerSnapshot

    private let lock = NSLock()
    private var clients: [Int32: Client] = [:]
    private var listenFD: Int32 = -1
    private var wakeFD: Int32 = -1
    private var stopping = false
    private var nextID = 1
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// Answers `?CALIBRATION;` (false) and `?CALIBRATION={"reload":true};` (true) with a CALIBRATION
    /// object, or an error message; nil when there is no magnetometer.
    public var calibrationRequest: (@Sendable (_ reload: Bool) -> Result<String, ClientRequestError>)?

    public init(configuration: Configuration, logger: Logger, snapshot: @escaping @Sendable () -> ServerSnapshot) {
        self.configuration = configuration
        self.logger = logger
        self.snapshot = snapshot
    }

    /// Binds the socket and starts serving. Throws when the path is taken by a live server.
    public func start() throws {
        try UnixSocket.ensureParentDirectory(of: configuration.path)
        listenFD = try UnixSocket.listen(path: configuration.path, mode: mode_t(configuration.mode))
        wakeFD = try Syscall.eventFD()
        let t = Thread { [self] in
            loop()
            finished.signal()
        }
        t.name = "bearing.socket"
        thread = t
        t.start()
    }

    /// Closes every client and the listener and removes the socket file.
    public func stop() {
        lock.lock()
        let wasRunning = thread != nil && !stopping
        stopping = true
        lock.unlock()
        guard wasRunning else { return }
        wake()
        finished.wait()
    }

    public var clientCount: Int {
        lock.lock(); defer { lock.unlock() }
        return clients.count
    }

    /// Whether any client is watching `className` (so the caller can skip formatting objects nobody reads).
    public func hasWatchers(_ className: String) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return clients.values.contains { $0.watch.wants(className) }
    }

    /// Queues `line` (one JSON object, no newline) for every client watching `className`.
    public func publish(className: String, line: String) {
        lock.lock()
        var any = false
        for client in clients.values where client.watch.wants(className) {
            enqueueLocked(client, line)
            any = true
        }
        lock.unlock()
        if any { wake() }
    }

    private func enqueueLocked(_ client: Client, _ line: String) {
        let limit = configuration.clientQueue
        if client.dropped > 0 && client.queue.count < limit {
            client.queue.append(GPSDDialect.overflow(dropped: client.dropped))
            client.dropped = 0
        }
        if client.queue.count < limit {
            client.queue.append(line)
        } else {
            client.dropped += 1
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: - The poll loop (server thread only)

    private func loop() {
        var fds: [pollfd] = []
        while true {
            lock.lock()
            if stopping { lock.unlock(); break }
            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for client in clients.values {
                var events = Int16(POLLIN)
                if !client.queue.isEmpty || client.outputOffset < client.output.count { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: client.fd, events: events, revents: 0))
            }
            lock.unlock()

            let n = poll(&fds, nfds_t(fds.count), 1000)
            if n < 0 {
                if errno == EINTR { continue }
                logger.error("socket server poll failed", metadata: ["error": "\(SystemError("poll"))"])
                usleep(100_000)
                continue
            }
            if fds[1].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
            if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
            for p in fds.dropFirst(2) where p.revents != 0 {
                lock.lock()
                let client = clients[p.fd]
                lock.unlock()
                guard let client else { continue }
                if p.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(client) }
                if !client.closing, p.revents & Int16(POLLOUT) != 0 { flush(client) }
                if client.closing { remove(client, reason: nil) }
            }
        }
        lock.lock()
        let all = Array(clients.values)
        lock.unlock()
        for client in all {
            flush(client)
            remove(client, reason: "server stopping")
        }
        close(listenFD)
        close(wakeFD)
        unlink(configuration.path)
    }

    private func acceptClients() {
        while true {
            let fd: Int32
            do {
                guard let accepted = try Syscall.acceptNonBlocking(listenFD, configuration.path) else { return }
                fd = accepted
            } catch {
                // EMFILE and friends: log and try again on the next wake-up rather than spin.
                logger.warning("accept failed", metadata: ["error": "\(error)"])
                usleep(50_000)
                return
            }
            lock.lock()
            let full = clients.count >= configuration.maxClients
            let client = Client(fd: fd, id: nextID)
            nextID += 1
            if !full {
                clients[fd] = client
                enqueueLocked(client, GPSDDialect.version(release: configuration.release))
            }
            lock.unlock()
            if full {
                let line = GPSDDialect.error("too many clients (max \(configuration.maxClients))") + "\n"
                _ = line.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                close(fd)
                logger.warning("refused a client: too many clients", metadata: ["max": "\(configuration.maxClients)"])
                continue
            }
            logger.debug("client connected", metadata: ["client": "\(client.id)"])
            flush(client)
        }
    }

    private func readFrom(_ client: Client) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Read what is there now, bounded, so one chatty client cannot starve the others.
        for _ in 0..<16 {
            let n = buffer.withUnsafeMutableBytes { read(client.fd, $0.baseAddress, $0.count) }
            if n == 0 { client.closing = true; return }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { client.closing = true }
                return
            }
            consume(client, buffer[0..<n])
            if client.closing { return }
        }
    }

    private func consume(_ client: Client, _ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        while let nl = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let piece = rest[rest.startIndex..<nl]
            rest = rest[(nl + 1)...]
            if client.discardingLongLine {
                client.discardingLongLine = false
                continue
            }
            client.input.append(contentsOf: piece)
            if client.input.count > configuration.maxRequestBytes {
                client.input.removeAll()
                reply(client, GPSDDialect.error("request too long (more than \(configuration.maxRequestBytes) bytes)"))
                continue
            }
            let line = client.input
            client.input.removeAll(keepingCapacity: true)
            handle(client, line)
        }
        guard !client.discardingLongLine else { return }
        client.input.append(contentsOf: rest)
        if client.input.count > configuration.maxRequestBytes {
            client.input.removeAll()
            client.discardingLongLine = true
            reply(client, GPSDDialect.error("request too long (more than \(configuration.maxRequestBytes) bytes)"))
        }
    }

    private func handle(_ client: Client, _ bytes: [UInt8]) {
        // Requests may be separated by ';' as well as newlines, as gpsd allows.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            reply(client, GPSDDialect.error("request is not valid UTF-8"))
            return
        }
        for part in Self.splitRequests(text) {
            lock.lock()
            let current = client.watch
            lock.unlock()
            do throws(ClientRequestError) {
                switch try ClientRequest.parse(part, current: current) {
                case .watch(nil):
                    reply(client, current.replyJSON)
                case .watch(let options?):
                    let starting = options.enable && !current.enable
                    // The switch to watching, the reply and the replayed STATE are queued under one lock, so
                    // no published object can overtake them (or a replayed state overtake a newer one).
                    // Lock order: this lock, then the snapshot's (the agent never publishes holding its own).
                    lock.lock()
                    client.watch = options
                    let snap = snapshot()
                    enqueueLocked(client, devicesJSON(snap))
                    enqueueLocked(client, options.replyJSON)
                    if starting {
                        for line in snap.stateLines where options.wants("STATE") { enqueueLocked(client, line) }
                        if let line = snap.calibrationLine, options.wants("CALIBRATION") { enqueueLocked(client, line) }
                    }
                    lock.unlock()
                    flush(client)
                case .version:
                    reply(client, GPSDDialect.version(release: configuration.release))
                case .devices:
                    reply(client, devicesJSON(snapshot()))
                case .poll:
                    reply(client, pollJSON(snapshot()))
                case .calibration(let reload):
                    guard let handler = calibrationRequest else {
                        throw ClientRequestError(message: "CALIBRATION: no magnetometer is configured")
                    }
                    switch handler(reload) {
                    case .success(let line): reply(client, line)
                    case .failure(let e): throw e
                    }
                }
            } catch {
                reply(client, GPSDDialect.error(error.message))
            }
        }
    }

    /// Splits `?A;?B={…};` into requests, keeping `;` inside JSON strings.
    static func splitRequests(_ text: String) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var inString = false
        var escaped = false
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == ";" {
                parts.append(text[start..<i])
                start = text.index(after: i)
            }
            i = text.index(after: i)
        }
        parts.append(text[start...])
        return parts.filter { !$0.allSatisfy(\.isWhitespace) }
    }

    private func devicesJSON(_ snap: ServerSnapshot) -> String {
        var w = JSONObjectWriter(class: "DEVICES")
        let list = snap.devices.map { path -> String in
            var d = JSONObjectWriter(class: "DEVICE")
            d.string("path", path)
            return d.finished()
        }
        w.raw("devices", "[" + list.joined(separator: ",") + "]")
        return w.finished()
    }

    private func pollJSON(_ snap: ServerSnapshot) -> String {
        var w = JSONObjectWriter(class: "POLL")
        let now = Syscall.wallClock()
        w.string("time", GPSTimestamp(seconds: now.seconds, nanoseconds: now.nanoseconds).iso8601)
        w.int("active", snap.lastTPV == nil ? 0 : 1)
        w.raw("tpv", "[" + (snap.lastTPV ?? "") + "]")
        w.raw("sky", "[" + (snap.lastSKY ?? "") + "]")
        if let att = snap.lastATT { w.raw("att", "[" + att + "]") }
        return w.finished()
    }

    private func reply(_ client: Client, _ line: String) {
        lock.lock()
        enqueueLocked(client, line)
        lock.unlock()
        flush(client)
    }

    /// Writes as much queued output as the socket takes without blocking.
    private func flush(_ client: Client) {
        while !client.closing {
            if client.outputOffset >= client.output.count {
                lock.lock()
                var lines = client.queue
                client.queue.removeAll(keepingCapacity: true)
                // Messages were dropped after these: say so right where the gap is.
                if client.dropped > 0 {
                    lines.append(GPSDDialect.overflow(dropped: client.dropped))
                    client.dropped = 0
                }
                lock.unlock()
                if lines.isEmpty { return }
                client.output.removeAll(keepingCapacity: true)
                client.outputOffset = 0
                for line in lines {
                    client.output.append(contentsOf: line.utf8)
                    client.output.append(UInt8(ascii: "\n"))
                }
            }
            let n = client.output.withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a client that went away is an EPIPE here, never a SIGPIPE for the process.
                send(client.fd, raw.baseAddress! + client.outputOffset, raw.count - client.outputOffset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { client.closing = true }
                return
            }
            client.outputOffset += n
        }
    }

    private func remove(_ client: Client, reason: String?) {
        lock.lock()
        clients[client.fd] = nil
        lock.unlock()
        close(client.fd)
        logger.debug("client disconnected", metadata: ["client": "\(client.id)", "reason": "\(reason ?? "closed")"])
    }
}
