import BearingCore
import CBearingSys
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A listening socket the transport accepts on.
public struct Listener: Sendable {
    public enum Kind: String, Sendable { case unix, tcp }
    public let fd: Int32
    public let kind: Kind
    /// The socket path or `host:port`, for logs.
    public let name: String
    /// A socket file to remove when the transport stops (nil when systemd owns it).
    public let unlinkPath: String?

    public init(fd: Int32, kind: Kind, name: String, unlinkPath: String?) {
        self.fd = fd
        self.kind = kind
        self.name = name
        self.unlinkPath = unlinkPath
    }
}

/// Who is at the other end of a connection.
public struct Peer: Sendable, Equatable, CustomStringConvertible {
    public let listener: Listener.Kind
    /// The peer process's uid (SO_PEERCRED), for UNIX sockets.
    public let uid: UInt32?
    public var description: String { uid.map { "\(listener.rawValue) uid \($0)" } ?? listener.rawValue }
}

/// What the transport reports, on its own thread, in order per connection.
public protocol SocketTransportDelegate: AnyObject, Sendable {
    func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer)
    func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID)
    func transport(_ t: SocketTransport, didClose client: ClientID)
    /// Something to log: refused clients (once per burst), accept failures.
    func transport(_ t: SocketTransport, note: String, warning: Bool)
}

/// The bytes side of the agent's sockets: accepts on every listener, reads, writes, and applies
/// backpressure — nothing about the protocol.
///
/// One thread runs a `poll(2)` loop. `send` may be called from any thread: it appends to each
/// recipient's bounded queue and wakes the loop, so a slow or stalled client costs the pipeline nothing.
/// When a client's queue is full its lines are dropped and counted, and it gets an `OVERFLOW` object with
/// the count right where the gap is.
public final class SocketTransport: @unchecked Sendable { // `lock` guards `clients`' queues and `stopping`
    public struct Configuration: Sendable {
        public var maxClients: Int = 32
        /// Lines queued per client before lines for that client are dropped.
        public var clientQueue: Int = 256
        public init() {}
    }

    final class Connection {
        let fd: Int32
        let id: ClientID
        var queue: [String] = []
        var dropped = 0
        var output: [UInt8] = []
        var outputOffset = 0
        var closing = false
        /// Close once the queue is written (after a refusal or a fatal ERROR).
        var closeAfterFlush = false
        init(fd: Int32, id: ClientID) { self.fd = fd; self.id = id }
    }

    public let configuration: Configuration
    public let listeners: [Listener]
    public weak var delegate: SocketTransportDelegate?

    private let lock = NSLock()
    private var connections: [ClientID: Connection] = [:]
    private var wakeFD: Int32 = -1
    private var stopping = false
    /// A wake-up is on its way to the loop: further sends need not write the eventfd again, so a burst
    /// of deliveries (one value to a hundred clients) costs one wake-up and one loop turn, not a hundred.
    private var wakePending = false
    private var nextID: ClientID = 1
    private let worker = WorkerThread(name: "bearing.socket")
    /// Refusals since the last one logged, and when that was (monotonic seconds).
    private var refusedUnlogged = 0
    private var refusalLogged = -Double.infinity
    /// A liveness count: bumped each time the loop turns.
    public private(set) var turns = 0

    /// Read into on the transport thread only.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)

    public init(listeners: [Listener], configuration: Configuration) {
        self.listeners = listeners
        self.configuration = configuration
    }

    deinit { readBuffer.deallocate() }

    public func start() throws(SystemError) {
        wakeFD = try Syscall.eventFD()
        worker.start { [self] in loop() }
    }

    /// Writes what is queued (briefly), closes every client and listener, removes socket files.
    public func stop() {
        lock.lock()
        let running = wakeFD >= 0 && !stopping
        stopping = true
        lock.unlock()
        guard running else { return }
        wake()
        worker.stop()
    }

    public var clientCount: Int {
        lock.lock(); defer { lock.unlock() }
        return connections.count
    }

    /// Queues `line` (no newline) for each client in `to`; unknown ids (already gone) are skipped.
    public func send(_ line: String, to clients: [ClientID]) {
        lock.lock()
        var any = false
        for id in clients {
            guard let c = connections[id] else { continue }
            enqueueLocked(c, line)
            any = true
        }
        let wakeNow = any && !wakePending
        if wakeNow { wakePending = true }
        lock.unlock()
        if wakeNow { wake() }
    }

    /// Closes a client once what is queued for it is written.
    public func close(_ client: ClientID) {
        lock.lock()
        connections[client]?.closeAfterFlush = true
        lock.unlock()
        wake()
    }

    private func enqueueLocked(_ c: Connection, _ line: String) {
        let limit = configuration.clientQueue
        if c.dropped > 0 && c.queue.count < limit {
            c.queue.append(WireEncoding.overflow(dropped: c.dropped))
            c.dropped = 0
        }
        if c.queue.count < limit { c.queue.append(line) } else { c.dropped += 1 }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: - The poll loop (transport thread only)

    private func loop() {
        var fds: [pollfd] = []
        var order: [Connection] = []
        while true {
            lock.lock()
            if stopping { lock.unlock(); break }
            turns &+= 1
            wakePending = false
            fds.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for l in listeners { fds.append(pollfd(fd: l.fd, events: Int16(POLLIN), revents: 0)) }
            for c in connections.values {
                var events = Int16(POLLIN)
                if !c.queue.isEmpty || c.outputOffset < c.output.count || c.closeAfterFlush { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: c.fd, events: events, revents: 0))
                order.append(c)
            }
            lock.unlock()

            let n = poll(&fds, nfds_t(fds.count), 1000)
            if n < 0 {
                if errno == EINTR { continue }
                delegate?.transport(self, note: "socket poll failed: \(SystemError("poll"))", warning: true)
                usleep(100_000)
                continue
            }
            if fds[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
            for (i, l) in listeners.enumerated() where fds[1 + i].revents & Int16(POLLIN) != 0 { accept(l) }
            let base = 1 + listeners.count
            for (i, c) in order.enumerated() {
                let revents = fds[base + i].revents
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(c) }
                // Write what is queued now, including what arrived while polling (the socket is almost
                // always writable; EAGAIN leaves it for POLLOUT): one turn per wake-up, not two.
                if !c.closing { flush(c) }
                if c.closing { remove(c) }
            }
        }
        lock.lock()
        let all = Array(connections.values)
        lock.unlock()
        for c in all {
            flush(c)
            remove(c)
        }
        for l in listeners {
            Glibc.close(l.fd)
            if let path = l.unlinkPath { unlink(path) }
        }
        Glibc.close(wakeFD)
    }

    private func accept(_ listener: Listener) {
        while true {
            let fd: Int32
            do {
                guard let accepted = try Syscall.acceptNonBlocking(listener.fd, listener.name) else { return }
                fd = accepted
            } catch {
                // EMFILE and friends: say so and try again on the next turn rather than spin.
                delegate?.transport(self, note: "accept on \(listener.name) failed: \(error)", warning: true)
                usleep(50_000)
                return
            }
            lock.lock()
            let full = connections.count >= configuration.maxClients
            let id = nextID
            nextID += 1
            var conn: Connection?
            if !full {
                let c = Connection(fd: fd, id: id)
                connections[id] = c
                conn = c
            }
            lock.unlock()
            guard conn != nil else {
                refuse(fd)
                continue
            }
            var uid: UInt32?
            if listener.kind == .unix {
                var u: UInt32 = 0
                if bearing_peer_uid(fd, &u) == 0 { uid = u }
            }
            delegate?.transport(self, didAccept: id, peer: Peer(listener: listener.kind, uid: uid))
        }
    }

    /// Tells a client over the limit why, closes it, and logs refusals once per burst (the first at
    /// once, then a count at most every 10 s), so a reconnect storm cannot flood the journal.
    private func refuse(_ fd: Int32) {
        let line = WireEncoding.error("too many clients (max \(configuration.maxClients))") + "\r\n"
        _ = line.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
        refusedUnlogged += 1
        let now = Syscall.monotonicSeconds()
        if now - refusalLogged >= 10 {
            let n = refusedUnlogged
            refusedUnlogged = 0
            refusalLogged = now
            delegate?.transport(self, note: n == 1 ? "refused a client: too many clients (max \(configuration.maxClients)); further refusals are counted for 10 s"
                                : "refused \(n) clients in the last 10 s: too many clients (max \(configuration.maxClients))", warning: true)
        }
    }

    private func readFrom(_ c: Connection) {
        let raw = readBuffer
        // Read what is there now, bounded, so one chatty client cannot starve the others.
        for _ in 0..<16 {
            let n = read(c.fd, raw.baseAddress, raw.count)
            if n == 0 { c.closing = true; return }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { c.closing = true }
                return
            }
            delegate?.transport(self, didReceive: UnsafeRawBufferPointer(rebasing: raw[0..<n]), from: c.id)
            if n < raw.count || c.closing { return }
        }
    }

    /// Writes as much queued output as the socket takes without blocking.
    private func flush(_ c: Connection) {
        while !c.closing {
            if c.outputOffset >= c.output.count {
                lock.lock()
                var lines: [String] = []
                swap(&lines, &c.queue)
                if c.dropped > 0 {
                    lines.append(WireEncoding.overflow(dropped: c.dropped))
                    c.dropped = 0
                }
                let closeNow = lines.isEmpty && c.closeAfterFlush
                lock.unlock()
                if closeNow { c.closing = true; return }
                if lines.isEmpty { return }
                c.output.removeAll(keepingCapacity: true)
                c.outputOffset = 0
                // CRLF, as gpsd ends its lines: Python's gps module only unpacks lines ending in "}\r\n".
                for line in lines {
                    c.output.append(contentsOf: line.utf8)
                    c.output.append(UInt8(ascii: "\r"))
                    c.output.append(UInt8(ascii: "\n"))
                }
                if c.output.capacity > 1 << 20 && c.output.count < 1 << 16 { c.output = Array(c.output) }
            }
            let n = c.output.withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a client that went away is an EPIPE here, never a SIGPIPE for the process.
                Glibc.send(c.fd, raw.baseAddress! + c.outputOffset, raw.count - c.outputOffset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { c.closing = true }
                return
            }
            c.outputOffset += n
        }
    }

    private func remove(_ c: Connection) {
        lock.lock()
        connections[c.id] = nil
        lock.unlock()
        Glibc.close(c.fd)
        delegate?.transport(self, didClose: c.id)
    }
}
