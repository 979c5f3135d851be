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

/// The transport on a real UNIX socket with real clients: lines written at once and in order, a stalled
/// reader bounded and told what it lost, the write interval, closes from either side.
final class SocketTransportTests: XCTestCase {
    var dir: URL!
    override func setUp() { dir = temporaryDirectory("transport") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// Records what the transport reports.
    final class Recorder: SocketTransportDelegate, @unchecked Sendable { // `condition` guards everything
        let condition = NSCondition()
        var accepted: [ClientID] = []
        var closed: [ClientID] = []
        var received: [ClientID: [UInt8]] = [:]

        func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer) {
            condition.lock(); accepted.append(client); condition.broadcast(); condition.unlock()
        }
        func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID) {
            condition.lock(); received[client, default: []].append(contentsOf: bytes); condition.broadcast(); condition.unlock()
        }
        func transport(_ t: SocketTransport, didClose client: ClientID) {
            condition.lock(); closed.append(client); condition.broadcast(); condition.unlock()
        }
        func transport(_ t: SocketTransport, note: String, warning: Bool) {}

        /// Waits up to 5 s for `check` to hold.
        func wait(_ check: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(5)
            condition.lock(); defer { condition.unlock() }
            while !check() { if !condition.wait(until: deadline) { return check() } }
            return true
        }
    }

    func makeTransport(_ configure: (inout SocketTransport.Configuration) -> Void = { _ in }) throws -> (SocketTransport, Recorder, String) {
        let path = dir.appendingPathComponent("t.sock").path
        let fd = try UnixSocket.listen(path: path, mode: 0o600)
        var c = SocketTransport.Configuration()
        c.notices = .gpsdJSON
        configure(&c)
        let t = SocketTransport(listeners: [Listener(fd: fd, kind: .unix, name: path, unlinkPath: path)], configuration: c)
        let r = Recorder()
        t.delegate = r
        try t.start()
        return (t, r, path)
    }

    /// Connects and returns the client with the id the transport gave it.
    func connect(_ path: String, _ r: Recorder) throws -> (SocketClient, ClientID) {
        let before = r.condition.withLock { r.accepted.count }
        let c = try SocketClient(path: path)
        XCTAssertTrue(r.wait { r.accepted.count > before }, "the transport accepts the client")
        return (c, r.condition.withLock { r.accepted.last! })
    }

    func testLinesGoOutAtOnceInOrderEachInItsOwnWrite() throws {
        let (t, r, path) = try makeTransport()
        defer { t.stop() }
        let (a, ida) = try connect(path, r)
        let (b, idb) = try connect(path, r)
        for i in 0..<20 { t.send(#"{"class":"TPV","n":\#(i)}"#, to: i % 2 == 0 ? [ida, idb] : [idb]) }
        let linesA = (0..<10).compactMap { _ in a.readLine(timeout: 5) }
        let linesB = (0..<20).compactMap { _ in b.readLine(timeout: 5) }
        XCTAssertEqual(linesA, stride(from: 0, to: 20, by: 2).map { #"{"class":"TPV","n":\#($0)}"# })
        XCTAssertEqual(linesB, (0..<20).map { #"{"class":"TPV","n":\#($0)}"# })
        // A socket with room takes each line in the caller's own send(2): 10 to a, 20 to b.
        XCTAssertEqual(t.statistics.writes, 30)
        XCTAssertEqual(t.statistics.dropped, 0)
        // Requests arrive as bytes, per client.
        b.send("?POLL;\n")
        XCTAssertTrue(r.wait { r.received[idb] == Array("?POLL;\n".utf8) })
    }

    func testLinesEndInCRLFAsGpsdWritesThem() throws {
        let (t, r, path) = try makeTransport()
        defer { t.stop() }
        let (c, id) = try connect(path, r)
        t.send(#"{"class":"VERSION"}"#, to: [id])
        var buffer = [UInt8](repeating: 0, count: 64)
        var poller = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&poller, 1, 5000), 1)
        let n = read(c.fd, &buffer, buffer.count)
        XCTAssertEqual(String(decoding: buffer[0..<max(0, n)], as: UTF8.self), "{\"class\":\"VERSION\"}\r\n")
    }

    func testAStalledReaderIsBoundedAndToldHowManyLinesItLost() throws {
        let (t, r, path) = try makeTransport { $0.clientQueue = 8 }
        defer { t.stop() }
        let (stalled, id) = try connect(path, r)
        var small: Int32 = 4096
        setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let pad = String(repeating: "x", count: 4000)
        let total = 400
        for i in 0..<total { t.send(#"{"class":"TPV","n":\#(i),"pad":"\#(pad)"}"#, to: [id]) }
        let dropped = t.statistics.dropped
        XCTAssertGreaterThan(dropped, 0, "a reader that does not read loses lines")
        // Now it reads: everything it was sent is either received or counted in an OVERFLOW at the gap.
        var seen: [Int] = []
        var reported = 0
        while let line = stalled.readLine(timeout: 2) {
            let m = try WireMessage(line: line)
            if let d = m.dropped {
                XCTAssertFalse(seen.isEmpty, "the OVERFLOW comes where the gap is, after what was delivered")
                reported += d
            } else if let n = m.object["n"]?.int {
                seen.append(n)
            }
            if seen.count + reported == total { break }
        }
        XCTAssertEqual(reported, dropped, "the OVERFLOW counts every line dropped")
        XCTAssertEqual(seen.count + reported, total)
        XCTAssertEqual(seen, seen.sorted(), "what arrives keeps its order")
        XCTAssertEqual(seen.first, 0)
    }

    func testAWriteIntervalSendsWhatComesSoonerInOneWrite() throws {
        let (t, r, path) = try makeTransport { $0.writeInterval = 0.3 }
        defer { t.stop() }
        let (c, id) = try connect(path, r)
        t.send(#"{"n":1}"#, to: [id])
        XCTAssertEqual(c.readLine(timeout: 5), #"{"n":1}"#, "the first line after a quiet spell goes out at once")
        for i in 2...5 { t.send(#"{"n":\#(i)}"#, to: [id]) }
        XCTAssertEqual((2...5).compactMap { _ in c.readLine(timeout: 5) }, (2...5).map { #"{"n":\#($0)}"# })
        XCTAssertEqual(t.statistics.writes, 2, "lines 2–5 came within the interval and shared one write")
    }

    func testCloseWritesWhatIsQueuedFirstAndAHangupIsReported() throws {
        let (t, r, path) = try makeTransport()
        defer { t.stop() }
        let (c, id) = try connect(path, r)
        t.send(#"{"class":"ERROR","message":"bye"}"#, to: [id])
        t.close(id)
        XCTAssertEqual(c.readLine(timeout: 5), #"{"class":"ERROR","message":"bye"}"#)
        XCTAssertNil(c.readLine(timeout: 5), "then the connection ends")
        XCTAssertTrue(r.wait { r.closed == [id] })

        let (d, idd) = try connect(path, r)
        close(d.fd)
        XCTAssertTrue(r.wait { r.closed.contains(idd) }, "a reader that hangs up is forgotten")
        t.send("{}", to: [idd])   // a line for a client already gone is skipped
        XCTAssertEqual(t.clientCount, 0)
    }

    func testStopClosesClientsAndRemovesTheSocketFile() throws {
        let (t, r, path) = try makeTransport()
        let (c, id) = try connect(path, r)
        t.send(#"{"n":1}"#, to: [id])
        t.stop()
        XCTAssertEqual(c.readLine(timeout: 5), #"{"n":1}"#)
        XCTAssertNil(c.readLine(timeout: 5))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        t.send(#"{"n":2}"#, to: [id])   // after stop: nothing to write to, nothing breaks
        t.close(id)
    }
}
