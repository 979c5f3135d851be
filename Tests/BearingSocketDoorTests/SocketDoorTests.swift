import BearingModel
import BearingWire
import BearingPublishing
import BearingSocketDoor
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The publishing server over real UNIX sockets: bad input, stalled readers, the socket file itself.
final class SocketDoorTests: XCTestCase {
    var dir: URL!
    override func setUp() { dir = temporaryDirectory("server") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func makeServer(queue: Int = 256, maxClients: Int = 64, path: String? = nil) -> SocketDoor {
        var socket = SocketSettings()
        socket.path = path ?? dir.appendingPathComponent("s.sock").path
        socket.clientQueue = queue
        socket.maxClients = maxClients
        var passthrough: [StreamKey: [OperatorSpec]] = [:]
        for key in StreamKey.all { passthrough[key] = [] }
        let server = SocketDoor(configuration: .init(socket: socket), core: PublishingCore(defaults: passthrough, release: Release.wireRelease), logger: testLogger())
        server.core.publishState(source: "gpsd", line: #"{"class":"STATE","source":"gpsd","state":"connected"}"#)
        return server
    }

    func watching(_ server: SocketDoor, _ extra: String = "") throws -> SocketClient {
        let c = try SocketClient(path: server.socketPath)
        XCTAssertEqual(c.collect(timeout: 5) { _ in true }.first.map(cls), "VERSION")
        c.watch(extra)
        let replies = c.collect(timeout: 5) { cls($0) == "STATE" }
        XCTAssertEqual(replies.map(cls), ["DEVICES", "WATCH", "STATE"], "WATCH replies, then the current state replayed")
        return c
    }

    /// A TPV of about 1 kB whose time says which one it is.
    func tpv(_ i: Int) -> Report {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_700_000_000 + Int64(i)), latitude: 50, longitude: -1)
        f.device = String(repeating: "x", count: 900)
        return Report(.fix(f))
    }

    func seq(_ o: [String: Any]) -> Int? {
        (o["time"] as? String).flatMap(GPSTimestamp.init(iso8601:)).map { Int($0.seconds - 1_700_000_000) }
    }

    func testStalledClientLosesOnlyItsOwnMessagesAndIsToldHowMany() throws {
        let server = makeServer(queue: 64)
        try server.start()
        defer { server.stop() }
        let good = try watching(server)
        let stalled = try watching(server)
        let total = 3000
        var received = 0
        // Publish in bursts and let the good client read each burst: it must get every message,
        // while the stalled one (never reading) overflows.
        for burst in 0..<(total / 50) {
            for i in 0..<50 { server.publish(tpv(burst * 50 + i), from: .gpsd) }
            let got = good.collect(timeout: 10) { _ in received += 1; return received % 50 == 0 }
            XCTAssertFalse(got.contains { cls($0) == "OVERFLOW" }, "a client that keeps up must not overflow")
        }
        XCTAssertEqual(received, total)

        // Now the stalled client reads: what it got plus what it was told it lost is everything.
        var data = 0
        var dropped = 0
        func tally(_ o: [String: Any]) {
            if cls(o) == "TPV" { data += 1 }
            if cls(o) == "OVERFLOW" { dropped += o["dropped"] as? Int ?? 0 }
        }
        for o in stalled.collect(timeout: 3, until: { _ in false }) { tally(o) }
        server.publish(tpv(total), from: .gpsd)
        _ = stalled.collect(timeout: 10) { o in
            tally(o)
            return seq(o) == total
        }
        XCTAssertGreaterThan(dropped, 0, "the stalled client was never told about drops")
        XCTAssertEqual(data + dropped, total + 1, "received (\(data)) + dropped (\(dropped)) must account for every message")
    }

    func testBadRequestsGetErrorsAndOthersKeepReceiving() throws {
        let server = makeServer()
        try server.start()
        defer { server.stop() }
        let good = try watching(server)

        func errorFor(_ bytes: [UInt8]) throws -> String? {
            let c = try SocketClient(path: server.socketPath)
            _ = c.collect(timeout: 5) { _ in true }   // VERSION
            c.send(String(decoding: bytes, as: UTF8.self))
            return c.collect(timeout: 5) { cls($0) == "ERROR" }.last?["message"] as? String
        }
        let garbage: [UInt8] = [0x00, 0xff, 0xfe, 0x1b, 0x5b, 0x41, 0x0a]
        XCTAssertNotNil(try errorFor(garbage))
        XCTAssertEqual(try errorFor(Array("?WATCH={\"enable\":tru\n".utf8)), "WATCH: invalid JSON: unexpected end of input at byte 10")
        XCTAssertEqual(try errorFor(Array("?SELFDESTRUCT;\n".utf8)), "Unrecognized request 'SELFDESTRUCT'")
        XCTAssertEqual(try errorFor(Array("?WATCH={\"enable\":true,\"raw\":2}\n".utf8)), "WATCH: raw output is not available from bearing; use \"json\":true")

        // A 1 MB line: an ERROR, the rest of the line discarded, and the connection still usable.
        let big = try SocketClient(path: server.socketPath)
        _ = big.collect(timeout: 5) { _ in true }
        big.send(String(repeating: "A", count: 1_000_000) + "\n?VERSION;\n")
        let replies = big.collect(timeout: 10) { cls($0) == "VERSION" }
        XCTAssertEqual(replies.map(cls), ["ERROR", "VERSION"])
        XCTAssertTrue((replies.first?["message"] as? String ?? "").contains("too long"))

        // A client that connects and never reads or writes.
        let silent = try SocketClient(path: server.socketPath)
        _ = silent

        for i in 0..<20 { server.publish(tpv(i), from: .gpsd) }
        let got = good.collect(timeout: 10) { seq($0) == 19 }
        XCTAssertEqual(got.filter { cls($0) == "TPV" }.count, 20, "the watching client kept receiving")
    }

    func testClassFilterAndUnwatch() throws {
        let server = makeServer()
        try server.start()
        defer { server.stop() }
        let c = try SocketClient(path: server.socketPath)
        _ = c.collect(timeout: 5) { _ in true }
        c.watch(#","classes":["SKY"]"#)
        _ = c.collect(timeout: 5) { cls($0) == "WATCH" }
        server.publish(tpv(1), from: .gpsd)
        server.publish(Report(.sky(SkyView())), from: .gpsd)
        XCTAssertEqual(c.collect(timeout: 5) { cls($0) == "SKY" }.map(cls), ["SKY"])
        c.send("?WATCH={\"enable\":false};\n")
        _ = c.collect(timeout: 5) { cls($0) == "WATCH" }
        server.publish(Report(.sky(SkyView())), from: .gpsd)
        c.send("?VERSION;\n")
        XCTAssertEqual(c.collect(timeout: 5) { cls($0) == "VERSION" }.map(cls), ["VERSION"], "nothing after unwatching")
    }

    func testMaxClients() throws {
        let server = makeServer(maxClients: 1)
        try server.start()
        defer { server.stop() }
        let first = try SocketClient(path: server.socketPath)
        XCTAssertEqual(first.collect(timeout: 5) { _ in true }.map(cls), ["VERSION"])
        let second = try SocketClient(path: server.socketPath)
        let reply = second.collect(timeout: 5) { _ in true }
        XCTAssertEqual(reply.first?["message"] as? String, "too many clients (max 1)")
        XCTAssertNil(second.readLine(timeout: 2), "the refused client is closed")
    }

    func testSocketFileModeStaleAndLive() throws {
        let path = dir.appendingPathComponent("s.sock").path
        // A stale socket: bound, then its owner vanished without unlinking.
        makeStaleSocket(at: path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))

        let first = makeServer(path: path)
        try first.start()
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o660)

        // A live socket is never taken over.
        let second = makeServer(path: path)
        XCTAssertThrowsError(try second.start()) { XCTAssertTrue("\($0)".contains("already listening")) }
        let c = try SocketClient(path: path)
        XCTAssertEqual(c.collect(timeout: 5) { _ in true }.map(cls), ["VERSION"], "the first server still serves")
        first.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "stop removes the socket file")

        // A regular file in the way is never removed.
        _ = FileManager.default.createFile(atPath: path, contents: Data("precious".utf8))
        XCTAssertThrowsError(try makeServer(path: path).start()) { XCTAssertTrue("\($0)".contains("not a socket")) }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "precious")
    }

    /// A prepared door holds its readers in the backlog, unanswered, until it serves: a pipeline another door
    /// puts in force in between is there for the first request. Closed unserved, it leaves no socket file.
    func testAReaderWhoComesBeforeTheDoorServesIsAnsweredOnceItDoes() throws {
        let server = makeServer()
        try server.prepare()
        let early = try SocketClient(path: server.socketPath)
        early.send(#"?WATCH={"enable":true,"json":true,"pipeline":"fleet1"};"# + "\n")
        XCTAssertNil(early.readLine(timeout: 0.5), "nothing is answered before serve()")
        server.queue.sync { server.hub.define(NamedPipeline(name: "fleet1", chains: [.tpv: []], origin: .fleet)) }
        try server.serve()
        defer { server.stop() }
        let replies = early.collect(timeout: 5) { cls($0) == "STATE" || cls($0) == "ERROR" }
        XCTAssertEqual(replies.map(cls), ["VERSION", "DEVICES", "WATCH", "STATE"], "\(replies)")

        let unserved = makeServer(path: dir.appendingPathComponent("u.sock").path)
        try unserved.prepare()
        XCTAssertTrue(FileManager.default.fileExists(atPath: unserved.socketPath))
        unserved.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: unserved.socketPath), "closed before serving, the socket file is removed")
        XCTAssertThrowsError(try SocketClient(path: unserved.socketPath))
    }
}
