import BearingModel
import CBearingSys
import FoundationEssentials
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
    /// The peer's `host:port`, for TCP.
    public var address: String? = nil
    public var description: String {
        if let uid { return "\(listener.rawValue) uid \(uid)" }
        if let address { return "\(listener.rawValue) \(address)" }
        return listener.rawValue
    }
}

/// What the transport reports, on its own thread, in order per connection.
public protocol SocketTransportDelegate: AnyObject, Sendable {
    func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer)
    func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID)
    func transport(_ t: SocketTransport, didClose client: ClientID)
    /// Something to log: refused clients (once per burst), evicted readers (once each), accept failures.
    func transport(_ t: SocketTransport, note: String, warning: Bool)
}

/// The bytes side of the agent's sockets: accepts on every listener, reads, writes, and applies
/// backpressure — nothing about the protocol.
///
/// `send` may be called from any thread (the agent calls it on its pipeline queue) and writes at once,
/// without blocking: a line for a reader whose socket has room costs one `send(2)` and no thread hop.
/// What does not fit waits in the client's bounded queue for the loop thread, which runs `epoll` and writes
/// it when the socket drains; so a slow or stalled client costs the pipeline nothing. When a client's
/// queue is full its lines are dropped and counted, and it gets an `OVERFLOW` object with the count right
/// where the gap is. With a `writeInterval`, lines that come sooner than that after a client's last write
/// wait and go out together in one write.
///
/// Slots: at most `maxClients` clients at once. A reader that takes none of the bytes waiting for it (its
/// kernel buffers are full and it does not read) is stalled; stalled for `evictAfter` it is evicted, and
/// when every slot is taken a new client takes the slot of the reader stalled longest, if that one has been
/// stalled for `yieldAfter`, rather than be refused. So readers that never read cannot lock out one that
/// does. Each eviction is logged and counted; refusals are logged once per burst, their count when the
/// burst's window ends and at stop.
/// Unchecked Sendable: `lock` guards `connections`, their output state, `poller` and the counters; the read buffer and refusal counts are the loop thread's; `delegate` is weak.
public final class SocketTransport: @unchecked Sendable {
    /// What a client is told in its own language, made by the protocol above the transport.
    public struct Notices: Sendable {
        /// The line saying how many lines were lost where the gap is (gpsd's `OVERFLOW`).
        public var overflow: @Sendable (_ dropped: Int) -> String
        /// The line saying why a connection is refused (gpsd's `ERROR`).
        public var refused: @Sendable (_ why: String) -> String

        public init(overflow: @escaping @Sendable (_ dropped: Int) -> String, refused: @escaping @Sendable (_ why: String) -> String) {
            self.overflow = overflow
            self.refused = refused
        }
    }

    public struct Configuration: Sendable {
        public var maxClients: Int = 32
        /// Lines queued per client before lines for that client are dropped.
        public var clientQueue: Int = 256
        /// Least time between two writes to one client, in seconds; lines that come sooner wait and share
        /// the next write. 0: every line is written as it comes.
        public var writeInterval: Double = 0
        /// The lines that tell a client what it lost (`OVERFLOW`) or why it was refused (`ERROR`), in its
        /// readers' language. nil for doors whose readers speak another one (NMEA 0183, Signal K): their
        /// lines are only dropped.
        public var notices: Notices?
        /// After a refusal is logged, further ones are counted for this many seconds; the count is logged
        /// when they have passed (and at stop), so a reconnect storm costs one line per window.
        public var refusalLogInterval: Double = 10
        /// Seconds a reader may take none of the bytes waiting for it before it is evicted.
        public var evictAfter: Double = 15
        /// Seconds a reader must have been stalled before a new client takes its slot when all are taken.
        /// Long enough that a live reader on a lossy link (a retransmission or two) is not the one.
        public var yieldAfter: Double = 3
        public init() {}
    }

    /// What the transport has done so far.
    public struct Statistics: Sendable, Equatable {
        /// `send(2)` calls that wrote to clients.
        public var writes = 0
        /// Lines dropped for clients whose queue was full.
        public var dropped = 0
        /// Turns of the loop thread: a liveness count.
        public var turns = 0
        /// Clients refused because every slot was taken.
        public var refused = 0
        /// Readers closed because they stopped reading (after `evictAfter`, or to make room for a new client).
        public var evicted = 0
        public init() {}
    }

    final class Connection {
        let fd: Int32
        let id: ClientID
        /// CRLF-ended lines not yet written; the first `written` bytes are.
        var output: [UInt8] = []
        var written = 0
        /// Offsets in `output` just past each queued line, from `firstEnd` on: what the bound counts.
        var ends: [Int] = []
        var firstEnd = 0
        var dropped = 0
        /// The socket took less than offered: nothing more is written until epoll says it is writable.
        var blocked = false
        /// Waiting for `nextWrite` (monotonic seconds) under a write interval.
        var deferred = false
        var nextWrite = 0.0
        /// A write failed (the reader went away): the loop removes it.
        var failed = false
        /// Close once the queue is written (after a refusal or a fatal ERROR).
        var closeAfterFlush = false
        let peer: Peer
        /// Bytes handed to the socket so far (wrapping), and this and the socket's unread bytes at the last
        /// look: the reader took some since when the socket holds fewer than it held plus what was written.
        var sent = 0
        var sampledSent = 0
        var sampledWaiting = 0
        /// Since when (monotonic seconds) bytes have waited in the socket with the reader taking none; nil
        /// when none wait.
        var stalledSince: Double?
        init(fd: Int32, id: ClientID, peer: Peer) { self.fd = fd; self.id = id; self.peer = peer }

        var queued: Int { ends.count - firstEnd }
        var isDrained: Bool { written == output.count }

        func append(_ line: UnsafeBufferPointer<UInt8>) {
            output.append(contentsOf: line)
            // CRLF, as gpsd ends its lines: Python's gps module only unpacks lines ending in "}\r\n".
            output.append(UInt8(ascii: "\r"))
            output.append(UInt8(ascii: "\n"))
            ends.append(output.count)
        }

        func consumed(_ n: Int) {
            written += n
            while firstEnd < ends.count && ends[firstEnd] <= written { firstEnd += 1 }
            if isDrained {
                output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
                ends.removeAll(keepingCapacity: true)
                written = 0
                firstEnd = 0
            } else if written > 1 << 16 && written * 2 > output.count {
                output.removeFirst(written)
                ends = ends[firstEnd...].map { $0 - written }
                written = 0
                firstEnd = 0
            }
        }
    }

    public let configuration: Configuration
    public let listeners: [Listener]
    public weak var delegate: SocketTransportDelegate?

    private let lock = ConditionLock()
    private var connections: [ClientID: Connection] = [:]
    private var poller: EventPoll?
    private var wakeFD: Int32 = -1
    private var stopping = false
    /// A wake-up is on its way to the loop: further calls need not write the eventfd again.
    private var wakePending = false
    private var nextID: ClientID = 1
    private var stats = Statistics()
    private let worker = WorkerThread(name: "bearing.socket")
    /// Refusals since the last one logged, and when that was (monotonic seconds); transport thread only.
    private var refusedUnlogged = 0
    private var refusalLogged = -Double.infinity
    /// When the loop next looks at whether readers take their bytes (monotonic seconds).
    private var nextStallCheck = 0.0

    /// Read into on the transport thread only.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)

    private static let wakeTag: UInt64 = 0
    private static let listenerTag: UInt64 = 1 << 62

    public init(listeners: [Listener], configuration: Configuration) {
        self.listeners = listeners
        self.configuration = configuration
    }

    deinit { readBuffer.deallocate() }

    public func start() throws(SystemError) {
        let poller = try EventPoll()
        wakeFD = try Syscall.eventFD()
        do {
            try poller.add(wakeFD, .readable, tag: Self.wakeTag)
            for (i, l) in listeners.enumerated() { try poller.add(l.fd, .readable, tag: Self.listenerTag | UInt64(i)) }
        } catch {
            Glibc.close(wakeFD)
            wakeFD = -1
            throw error
        }
        self.poller = poller
        worker.start { [self] in loop() }
    }

    /// Writes what is queued (as far as each socket takes it now), closes every client and listener,
    /// removes socket files.
    public func stop() {
        lock.lock()
        let running = wakeFD >= 0 && !stopping
        stopping = true
        if running { wake() }
        lock.unlock()
        if running { worker.stop() }
    }

    public var clientCount: Int {
        lock.lock(); defer { lock.unlock() }
        return connections.count
    }

    public var statistics: Statistics {
        lock.lock(); defer { lock.unlock() }
        return stats
    }

    /// Queues `line` (no newline) for each client in `to` and writes it now where the socket has room
    /// (and no write interval holds it back); unknown ids (already gone) are skipped.
    public func send(_ line: String, to clients: [ClientID]) {
        var line = line
        line.withUTF8 { bytes in
            lock.lock()
            let now = configuration.writeInterval > 0 ? Syscall.monotonicSeconds() : 0
            var attention = false
            for id in clients {
                guard let c = connections[id], !c.failed else { continue }
                enqueueLocked(c, bytes)
                if writeLocked(c, now: now) { attention = true }
            }
            wakeLocked(if: attention)
            lock.unlock()
        }
    }

    /// Queues `line` (no newline) for every client connected now, as `send` does.
    public func broadcast(_ line: String) {
        lock.lock()
        let everyone = Array(connections.keys)
        lock.unlock()
        send(line, to: everyone)
    }

    /// Closes a client once what is queued for it is written.
    public func close(_ client: ClientID) {
        lock.lock()
        connections[client]?.closeAfterFlush = true
        wakeLocked(if: true)
        lock.unlock()
    }

    private func enqueueLocked(_ c: Connection, _ line: UnsafeBufferPointer<UInt8>) {
        let limit = configuration.clientQueue
        if c.dropped > 0 && c.queued < limit {
            if let notices = configuration.notices { appendOverflow(c, notices) } else { c.dropped = 0 }
        }
        if c.queued < limit {
            c.append(line)
        } else {
            c.dropped += 1
            stats.dropped += 1
        }
    }

    /// The OVERFLOW object that tells `c` how many lines it lost, where the gap is.
    private func appendOverflow(_ c: Connection, _ notices: Notices) {
        var line = notices.overflow(c.dropped)
        line.withUTF8 { c.append($0) }
        c.dropped = 0
    }

    /// Writes what `c` has queued, as far as its socket takes it without blocking, unless it waits for
    /// epoll or for its write interval (`force` skips the interval). Returns whether the loop must now
    /// attend to `c`: it failed, it is due to close, or it started waiting for its interval.
    private func writeLocked(_ c: Connection, now: Double, force: Bool = false) -> Bool {
        while true {
            if c.failed || c.blocked {
                c.deferred = false
                return c.failed
            }
            if c.isDrained {
                if c.dropped > 0, let notices = configuration.notices {
                    appendOverflow(c, notices)
                    continue
                }
                return c.closeAfterFlush
            }
            let interval = configuration.writeInterval
            if interval > 0 && !force {
                if now < c.nextWrite {
                    defer { c.deferred = true }
                    return !c.deferred
                }
                c.nextWrite = now + interval
            }
            c.deferred = false
            stats.writes += 1
            let n = c.output.withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a reader that went away is an EPIPE here, never a SIGPIPE for the process.
                Glibc.send(c.fd, raw.baseAddress! + c.written, raw.count - c.written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { block(c); return c.failed }
                c.failed = true
                return true
            }
            c.sent &+= n
            c.consumed(n)
            if !c.isDrained { block(c); return c.failed }
        }
    }

    /// Waits for the socket to drain before writing to `c` again.
    private func block(_ c: Connection) {
        c.blocked = true
        do {
            try poller?.modify(c.fd, [.readable, .writable], tag: UInt64(c.id))
        } catch {
            c.failed = true
        }
    }

    /// Wakes the loop unless a wake-up is already on its way; under `lock`, so the eventfd is open.
    private func wakeLocked(if needed: Bool) {
        guard needed && !wakePending && !stopping else { return }
        wakePending = true
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: - The loop (transport thread only)

    private func loop() {
        guard let poller else { return }
        var doomed: [Connection] = []
        var stalled: [Connection] = []
        while true {
            // Attend to what other threads flagged: failed writes, finished closes, due write intervals.
            lock.lock()
            if stopping { lock.unlock(); break }
            stats.turns &+= 1
            wakePending = false
            let now = Syscall.monotonicSeconds()
            var earliest = nextStallCheck
            let checkStalls = now >= nextStallCheck
            if checkStalls {
                sampleStallsLocked(now: now)
                nextStallCheck = now + stallCheckInterval
                earliest = nextStallCheck
            }
            for c in connections.values {
                if c.deferred {
                    if c.nextWrite <= now { _ = writeLocked(c, now: now) }
                    if c.deferred { earliest = min(earliest, c.nextWrite) }
                }
                if c.failed || (c.closeAfterFlush && c.isDrained) {
                    doomed.append(c)
                } else if checkStalls, let since = c.stalledSince, now - since >= configuration.evictAfter {
                    stalled.append(c)
                }
            }
            lock.unlock()
            for c in doomed { remove(c) }
            doomed.removeAll(keepingCapacity: true)
            for c in stalled { evict(c, now: now, makingRoom: false) }
            stalled.removeAll(keepingCapacity: true)
            if refusedUnlogged > 0 {
                let due = refusalLogged + configuration.refusalLogInterval
                if now >= due { logRefusals(now: now) } else { earliest = min(earliest, due) }
            }

            let timeout = Int32(max(0, min(1000, ((earliest - now) * 1000).rounded(.up))))
            do {
                try poller.wait(timeout: timeout) { tag, events in
                    if tag == Self.wakeTag {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                    } else if tag & Self.listenerTag != 0 {
                        accept(listeners[Int(tag & ~Self.listenerTag)])
                    } else {
                        service(ClientID(tag), events)
                    }
                }
            } catch {
                delegate?.transport(self, note: "socket loop: \(error)", warning: true)
                usleep(100_000)
            }
        }
        if refusedUnlogged > 0 { logRefusals(now: Syscall.monotonicSeconds()) }
        lock.lock()
        let all = Array(connections.values)
        for c in all { _ = writeLocked(c, now: 0, force: true) }
        lock.unlock()
        for c in all { remove(c) }
        for l in listeners {
            Glibc.close(l.fd)
            if let path = l.unlinkPath { unlink(path) }
        }
        lock.lock()
        self.poller = nil
        Glibc.close(wakeFD)
        wakeFD = -1
        lock.unlock()
    }

    /// A client's socket is readable, writable again, or gone.
    private func service(_ id: ClientID, _ events: EventPoll.Events) {
        lock.lock()
        let c = connections[id]
        lock.unlock()
        guard let c else { return }
        var gone = false
        if !events.isDisjoint(with: [.readable, .hangup, .error]) { gone = !readFrom(c) }
        lock.lock()
        if events.contains(.writable) && c.blocked && !gone {
            c.blocked = false
            do {
                try poller?.modify(c.fd, .readable, tag: UInt64(c.id))
            } catch {
                c.failed = true
            }
            _ = writeLocked(c, now: Syscall.monotonicSeconds(), force: true)
        }
        if c.failed || (c.closeAfterFlush && c.isDrained) { gone = true }
        lock.unlock()
        if gone { remove(c) }
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
            var uid: UInt32?
            if listener.kind == .unix {
                var u: UInt32 = 0
                if bearing_peer_uid(fd, &u) == 0 { uid = u }
            }
            let peer = Peer(listener: listener.kind, uid: uid, address: listener.kind == .tcp ? Self.peerAddress(fd) : nil)
            lock.lock()
            if connections.count >= configuration.maxClients {
                // Every slot is taken: a reader that stopped reading gives its slot up rather than the newcomer be refused.
                let now = Syscall.monotonicSeconds()
                sampleStallsLocked(now: now)
                let candidate = connections.values.filter { !$0.failed && $0.stalledSince.map { now - $0 >= configuration.yieldAfter } ?? false }
                    .min { ($0.stalledSince!, $0.id) < ($1.stalledSince!, $1.id) }
                if let candidate {
                    lock.unlock()
                    evict(candidate, now: now, makingRoom: true)
                    lock.lock()
                }
            }
            let full = connections.count >= configuration.maxClients
            let id = nextID
            nextID += 1
            var registered: SystemError?
            if !full {
                do {
                    try poller?.add(fd, .readable, tag: UInt64(id))
                    connections[id] = Connection(fd: fd, id: id, peer: peer)
                } catch {
                    registered = error
                }
            } else {
                stats.refused += 1
            }
            lock.unlock()
            if let registered {
                Glibc.close(fd)
                delegate?.transport(self, note: "a client on \(listener.name) was closed: \(registered)", warning: true)
                continue
            }
            guard !full else {
                refuse(fd)
                continue
            }
            delegate?.transport(self, didAccept: id, peer: peer)
        }
    }

    /// Tells a client over the limit why, closes it, and logs refusals once per burst: the first at once,
    /// then the count of those that follow when `refusalLogInterval` has passed (the loop wakes for it) or
    /// at stop, so a reconnect storm cannot flood the journal and no refusal goes unlogged.
    private func refuse(_ fd: Int32) {
        if let notices = configuration.notices {
            let line = notices.refused("too many clients (max \(configuration.maxClients))") + "\r\n"
            _ = line.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }
        Glibc.close(fd)
        let now = Syscall.monotonicSeconds()
        if now - refusalLogged >= configuration.refusalLogInterval {
            if refusedUnlogged > 0 { logRefusals(now: now) }
            refusalLogged = now
            delegate?.transport(self, note: "refused a client: too many clients (max \(configuration.maxClients)); further refusals are counted for \(Self.seconds(configuration.refusalLogInterval)) s", warning: true)
        } else {
            refusedUnlogged += 1
        }
    }

    /// Logs the refusals counted since the last line, and opens a new window.
    private func logRefusals(now: Double) {
        let n = refusedUnlogged
        refusedUnlogged = 0
        delegate?.transport(self, note: "refused \(n) client\(n == 1 ? "" : "s") in the last \(Self.seconds(now - refusalLogged)) s: too many clients (max \(configuration.maxClients))", warning: true)
        refusalLogged = now
    }

    /// How often the loop looks at whether readers take their bytes: often enough that neither bound is
    /// overshot by more than a quarter.
    private var stallCheckInterval: Double { max(0.01, min(1, configuration.evictAfter / 4, configuration.yieldAfter / 4)) }

    /// Looks at what waits unread in each client's socket (SIOCOUTQ) against what was written since the
    /// last look, and so when each reader last took some. Over TCP it counts the bytes not yet acknowledged,
    /// so a reader is seen to stop as soon as its own receive buffer is full, whatever our send buffer
    /// (megabytes on loopback) and queue still hold. A UNIX socket counts the kernel's memory for what is
    /// unread, more than its bytes: there a write since the last look is taken for progress, and a stall
    /// shows once the socket takes no more (its send buffer, ~200 KB, is full).
    private func sampleStallsLocked(now: Double) {
        for c in connections.values {
            let waiting = Self.unreadBytes(c.fd)
            let written = c.sent &- c.sampledSent
            let tookSome = c.peer.listener == .tcp ? waiting < c.sampledWaiting + written : written > 0 || waiting < c.sampledWaiting
            if waiting == 0 {
                c.stalledSince = nil
            } else if c.stalledSince == nil || tookSome {
                c.stalledSince = now
            }
            c.sampledWaiting = waiting
            c.sampledSent = c.sent
        }
    }

    /// Closes a reader that stopped reading, resetting the connection so the kernel drops what it holds for
    /// it; logs it (once: it is gone) and counts it.
    private func evict(_ c: Connection, now: Double, makingRoom: Bool) {
        lock.lock()
        let known = connections[c.id] === c
        if known { stats.evicted += 1 }
        let stalledFor = now - (c.stalledSince ?? now)
        let dropped = c.dropped
        lock.unlock()
        guard known else { return }
        let why = makingRoom ? "to make room for a new client (max \(configuration.maxClients))" : "after \(Self.seconds(configuration.evictAfter)) s"
        let lost = dropped > 0 ? "; \(dropped) line\(dropped == 1 ? "" : "s") dropped for it" : ""
        delegate?.transport(self, note: "evicted a reader that stopped reading (\(c.peer)) \(why): it took nothing written to it for \(Self.seconds(stalledFor)) s\(lost)", warning: true)
        var reset = linger(l_onoff: 1, l_linger: 0)
        setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
        remove(c)
    }

    /// What was written to `fd` and its reader has not taken (SIOCOUTQ, which is TIOCOUTQ): bytes over TCP,
    /// the kernel's memory for them over a UNIX socket; 0 when it cannot be told.
    private static func unreadBytes(_ fd: Int32) -> Int {
        var n: Int32 = 0
        return ioctl(fd, UInt(TIOCOUTQ), &n) == 0 ? Int(n) : 0
    }

    /// A TCP peer's `host:port`; nil when it cannot be told.
    private static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) } }
        guard got == 0 else { return nil }
        /// The numeric text of an address (`in_addr` or `in6_addr`) of `family`.
        func numeric(_ family: Int32, _ address: UnsafeRawPointer) -> String? {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(family, address, &text, socklen_t(text.count)) != nil else { return nil }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        switch Int32(storage.ss_family) {
        case AF_INET:
            var a = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            return numeric(AF_INET, &a.sin_addr).map { TCPSocket.name($0, Int(UInt16(bigEndian: a.sin_port))) }
        case AF_INET6:
            var a = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            return numeric(AF_INET6, &a.sin6_addr).map { TCPSocket.name($0, Int(UInt16(bigEndian: a.sin6_port))) }
        default:
            return nil
        }
    }

    /// Seconds for a log line: whole from 10 on or when whole, else to a tenth.
    static func seconds(_ s: Double) -> String {
        let tenths = Int((s * 10).rounded())
        return tenths >= 100 || tenths % 10 == 0 ? "\(Int(s.rounded()))" : "\(tenths / 10).\(tenths % 10)"
    }

    /// Reads what is there now, bounded, so one chatty client cannot starve the others. Returns false
    /// when the client has gone.
    private func readFrom(_ c: Connection) -> Bool {
        let raw = readBuffer
        for _ in 0..<16 {
            let n = read(c.fd, raw.baseAddress, raw.count)
            if n == 0 { return false }
            if n < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK
            }
            delegate?.transport(self, didReceive: UnsafeRawBufferPointer(rebasing: raw[0..<n]), from: c.id)
            if n < raw.count { return true }
        }
        return true
    }

    /// Forgets a client and closes its socket (which also takes it out of the epoll set).
    private func remove(_ c: Connection) {
        lock.lock()
        let known = connections.removeValue(forKey: c.id) != nil
        if known { Glibc.close(c.fd) }
        lock.unlock()
        if known { delegate?.transport(self, didClose: c.id) }
    }
}
