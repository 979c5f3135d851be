import BearingModel
import BearingWire
import BearingPOSIX
import BearingDaemon
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The transport's slots with real clients: refusals logged when their window ends and at stop, readers
/// that never read evicted (after `evictAfter`, or at once for a new client when every slot is taken),
/// each eviction logged once and counted; on TCP (the doors' and the TCP door's listeners) and on the UNIX socket.
final class SocketTransportSlotsTests: XCTestCase {
    var dir: URL!
    override func setUp() {
        dir = temporaryDirectory("slots")
        Syscall.ignoreSIGPIPE()
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// Records the notes the transport logs.
    final class Notes: SocketTransportDelegate, @unchecked Sendable { // `condition` guards `lines`
        let condition = NSCondition()
        var lines: [String] = []

        func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer) {}
        func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID) {}
        func transport(_ t: SocketTransport, didClose client: ClientID) {}
        func transport(_ t: SocketTransport, note: String, warning: Bool) {
            condition.lock(); lines.append(note); condition.broadcast(); condition.unlock()
        }

        var all: [String] { condition.withLock { lines } }
        func matching(_ text: String) -> [String] { all.filter { $0.contains(text) } }

        /// Waits up to `timeout` s for a note containing `text`.
        func wait(for text: String, timeout: Double = 5) -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock(); defer { condition.unlock() }
            while true {
                if let l = lines.first(where: { $0.contains(text) }) { return l }
                if !condition.wait(until: deadline) { return lines.first { $0.contains(text) } }
            }
        }
    }

    /// Waits up to `timeout` s for `check` to hold, looking every 10 ms.
    func eventually(_ timeout: Double = 5, _ check: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !check() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    func unixTransport(_ configure: (inout SocketTransport.Configuration) -> Void) throws -> (SocketTransport, Notes, String) {
        let path = dir.appendingPathComponent("t.sock").path
        let fd = try UnixSocket.listen(path: path, mode: 0o600)
        var c = SocketTransport.Configuration()
        c.notices = .gpsdJSON
        configure(&c)
        let t = SocketTransport(listeners: [Listener(fd: fd, kind: .unix, name: path, unlinkPath: path)], configuration: c)
        let notes = Notes()
        t.delegate = notes
        try t.start()
        return (t, notes, path)
    }

    /// A transport configured as a door's (16 readers, 64 lines each, no JSON notices) on a loopback port.
    func doorTransport(_ configure: (inout SocketTransport.Configuration) -> Void) throws -> (SocketTransport, Notes, Int) {
        let port = freePort()
        let fd = try TCPSocket.listen(host: "127.0.0.1", port: port)
        var c = SocketTransport.Configuration()
        c.maxClients = 16
        c.clientQueue = 64
        configure(&c)
        let t = SocketTransport(listeners: [Listener(fd: fd, kind: .tcp, name: TCPSocket.name("127.0.0.1", port), unlinkPath: nil)], configuration: c)
        let notes = Notes()
        t.delegate = notes
        try t.start()
        return (t, notes, port)
    }

    /// A TCP reader that never reads, with the smallest receive buffer (set before connecting, so the window
    /// it offers is small from the start). Returns the socket and its `127.0.0.1:PORT`, as logs name it.
    func stalledReader(port: Int) throws -> (fd: Int32, name: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var small: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { close(fd); throw SystemError("connect", "127.0.0.1:\(port)") }
        return (fd, "127.0.0.1:\(UInt16(bigEndian: addr.sin_port))")
    }

    /// Broadcasts NMEA-sized lines on its own thread (every 2 ms) until stopped.
    final class Sender: @unchecked Sendable { // `condition` guards `running` and `done`
        let condition = NSCondition()
        var running = true
        var done = false

        init(_ t: SocketTransport) {
            Thread { [self] in
                var n = 0
                while condition.withLock({ running }) {
                    n += 1
                    t.broadcast("$HCHDT,\(n % 360).0,T*00 " + String(repeating: "x", count: 60))
                    usleep(2_000)
                }
                condition.withLock { done = true; condition.broadcast() }
            }.start()
        }

        func stop() {
            condition.lock()
            running = false
            while !done { condition.wait() }
            condition.unlock()
        }
    }

    // MARK: - Item 8: refusals

    func testARefusalCountIsLoggedWhenItsWindowEndsWithoutAnotherRefusal() throws {
        let (t, notes, path) = try unixTransport { $0.maxClients = 1; $0.refusalLogInterval = 0.5 }
        defer { t.stop() }
        let held = try SocketClient(path: path)
        XCTAssertTrue(eventually { t.clientCount == 1 })
        // Four over the limit: each is told why and closed. The first is logged at once, the rest are counted.
        for _ in 0..<4 {
            let refused = try SocketClient(path: path)
            XCTAssertEqual(refused.message(timeout: 5)?.object["class"]?.string, "ERROR")
        }
        XCTAssertNotNil(notes.wait(for: "refused a client: too many clients (max 1); further refusals are counted for 0.5 s"))
        // No further refusal comes, yet the count of the burst is logged when its window ends.
        let count = notes.wait(for: "refused 3 clients in the last")
        XCTAssertNotNil(count, "the count of the burst is logged when its window ends: \(notes.all)")
        XCTAssertEqual(t.statistics.refused, 4)
        _ = held
    }

    func testRefusalsNotYetLoggedAreLoggedAtStop() throws {
        let (t, notes, path) = try unixTransport { $0.maxClients = 1; $0.refusalLogInterval = 600 }
        let held = try SocketClient(path: path)
        XCTAssertTrue(eventually { t.clientCount == 1 })
        for _ in 0..<43 {
            let refused = try SocketClient(path: path)
            XCTAssertEqual(refused.message(timeout: 5)?.object["class"]?.string, "ERROR")
        }
        XCTAssertNotNil(notes.wait(for: "refused a client"))
        XCTAssertEqual(notes.matching("refused 42").count, 0, "the count waits for its window")
        t.stop()
        XCTAssertEqual(notes.matching("refused 42 clients in the last").count, 1, "what was counted is logged at stop: \(notes.all)")
        _ = held
    }

    // MARK: - Item 11: readers that never read

    func testFiftyStalledReadersCannotLockANewReaderOutOfADoor() throws {
        // Eviction by time is far off here: only a newcomer taking a stalled reader's slot lets it in.
        let (t, notes, port) = try doorTransport { $0.evictAfter = 600; $0.yieldAfter = 0.3 }
        defer { t.stop() }
        var stalled: [(fd: Int32, name: String)] = []
        defer { for s in stalled { close(s.fd) } }
        for _ in 0..<50 { stalled.append(try stalledReader(port: port)) }
        XCTAssertTrue(eventually { t.clientCount == 16 && t.statistics.refused == 34 }, "16 slots taken, 34 refused: \(t.clientCount), \(t.statistics.refused)")
        let sender = Sender(t)
        defer { sender.stop() }

        // A new reader gets lines within a few seconds: it may be refused while the readers holding the
        // slots still take bytes, and tries again as a plotter does.
        let start = Date()
        var attempts = 0
        var line: String?
        while line == nil && Date().timeIntervalSince(start) < 10 {
            attempts += 1
            if attempts > 1 { usleep(20_000) }   // a refused reader tries again shortly, as a plotter does
            let reader = try SocketClient(tcpPort: port)
            line = reader.readLine(timeout: 1)
        }
        let waited = Date().timeIntervalSince(start)
        XCTAssertNotNil(line, "a new reader gets lines while 50 stalled ones are connected (\(attempts) attempts, \(t.statistics))")
        XCTAssertLessThan(waited, 5, "within a few seconds")
        XCTAssertTrue(line?.hasPrefix("$HCHDT,") ?? false, line ?? "")
        print("a new reader got lines after \(String(format: "%.2f", waited)) s, \(attempts) attempts; \(t.statistics)")

        // The reader it replaced was the one stalled longest, logged once with who it was, and counted.
        let evictions = notes.matching("evicted a reader that stopped reading")
        XCTAssertGreaterThanOrEqual(t.statistics.evicted, 1)
        XCTAssertEqual(evictions.count, t.statistics.evicted)
        XCTAssertTrue(evictions.allSatisfy { $0.contains("to make room for a new client (max 16)") }, "\(evictions)")
        let names = evictions.compactMap { e in stalled.first { e.contains("(tcp \($0.name))") }?.name }
        XCTAssertEqual(names.count, evictions.count, "each eviction names the reader's address: \(evictions)")
        XCTAssertEqual(Set(names).count, names.count, "each reader's eviction is logged once")
    }

    func testAReaderThatStopsReadingIsEvictedAfterTheBoundAndOneThatReadsIsNot() throws {
        let (t, notes, port) = try doorTransport { $0.evictAfter = 0.5; $0.yieldAfter = 600 }
        defer { t.stop() }
        var stalled: [(fd: Int32, name: String)] = []
        defer { for s in stalled { close(s.fd) } }
        for _ in 0..<5 { stalled.append(try stalledReader(port: port)) }
        let reader = try SocketClient(tcpPort: port)
        XCTAssertTrue(eventually { t.clientCount == 6 })
        let sender = Sender(t)
        defer { sender.stop() }
        // The live reader reads all along; the stalled ones are evicted without any newcomer.
        var read = 0
        let deadline = Date().addingTimeInterval(10)
        while t.statistics.evicted < 5 && Date() < deadline {
            if reader.readLine(timeout: 1) != nil { read += 1 }
        }
        XCTAssertEqual(t.statistics.evicted, 5, "\(t.statistics)")
        XCTAssertTrue(eventually { t.clientCount == 1 })
        for _ in 0..<50 { if reader.readLine(timeout: 1) != nil { read += 1 } }
        XCTAssertGreaterThan(read, 50, "the reader that reads keeps its slot and its lines")
        let evictions = notes.matching("evicted a reader that stopped reading")
        XCTAssertEqual(evictions.count, 5, "\(evictions)")
        XCTAssertTrue(evictions.allSatisfy { $0.contains("after 0.5 s") }, "\(evictions)")
        XCTAssertEqual(Set(stalled.compactMap { s in evictions.first { $0.contains("(tcp \(s.name))") }.map { _ in s.name } }).count, 5,
                       "one line for each stalled reader, with its address: \(evictions)")
        // An evicted reader's connection is reset: what it never read is gone with it.
        var buffer = [UInt8](repeating: 0, count: 65536)
        var n = 0
        repeat { n = recv(stalled[0].fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) } while n > 0
        XCTAssertTrue(n == 0 || errno == ECONNRESET, "the evicted reader's connection ends (\(n), errno \(errno))")
    }

    func testTheUNIXSocketEvictsAStalledReaderForANewClient() throws {
        let (t, notes, path) = try unixTransport { $0.maxClients = 2; $0.clientQueue = 8; $0.evictAfter = 600; $0.yieldAfter = 0.3 }
        defer { t.stop() }
        let a = try SocketClient(path: path), b = try SocketClient(path: path)
        XCTAssertTrue(eventually { t.clientCount == 2 })
        // Neither reads: lines until both sockets take no more (a UNIX socket shows a stall once it is full).
        let pad = String(repeating: "x", count: 4000)
        for i in 0..<200 { t.broadcast(#"{"class":"TPV","n":\#(i),"pad":"\#(pad)"}"#) }
        XCTAssertGreaterThan(t.statistics.dropped, 0)
        var client: SocketClient?
        var first: WireMessage?
        let deadline = Date().addingTimeInterval(10)
        while first?.object["class"]?.string != "TPV" && Date() < deadline {
            // Connects, and is sent a line every 50 ms (once accepted it gets the next) until it hears something.
            let c = try SocketClient(path: path)
            client = c
            first = nil
            for _ in 0..<20 where first == nil {
                t.broadcast(#"{"class":"TPV","n":-1}"#)
                first = c.message(timeout: 0.05)
            }
        }
        XCTAssertEqual(first?.object["class"]?.string, "TPV", "the new client is served, not told \(first?.object["message"]?.string ?? "nothing")")
        XCTAssertEqual(t.statistics.evicted, 1)
        let eviction = notes.matching("evicted a reader that stopped reading")
        XCTAssertEqual(eviction.count, 1)
        XCTAssertTrue(eviction.first?.contains("(unix uid \(getuid()))") ?? false, "\(eviction)")
        _ = (a, b, client)
    }
}
