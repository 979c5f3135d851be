import BearingModel
import BearingWire
import BearingPOSIX
import BearingPublishing
import BearingSocketDoor
import BearingClient
import Foundation
import TestSupport
import XCTest

/// The client library against a real publishing server on a real UNIX socket: typed messages through a
/// chain of the client's own, the agent's ERROR as a thrown error, reconnection across a restart.
final class BearingClientTests: XCTestCase {
    var dir: URL!
    override func setUp() { dir = temporaryDirectory("client") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    var socketPath: String { dir.appendingPathComponent("b.sock").path }

    func startServer() throws -> SocketDoor {
        var socket = SocketSettings()
        socket.path = socketPath
        var passthrough: [StreamKey: [OperatorSpec]] = [:]
        for key in StreamKey.all { passthrough[key] = [] }
        let server = SocketDoor(configuration: .init(socket: socket), core: PublishingCore(defaults: passthrough, release: Release.wireRelease), logger: testLogger())
        try server.start()
        return server
    }

    func fix(_ i: Int) -> Report {
        Report(.fix(GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_700_000_000 + Int64(i)), latitude: 50, longitude: -1)))
    }

    func testAChainOfItsOwnAndTypedMessages() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = BearingClient(.unix(socketPath))
        try client.connect()
        let watch = try client.request(.watch(WatchChange(enable: true, json: true, classes: ["TPV"], pipelines: [.tpv: [.sample(every: 2)]])),
                                       expecting: "WATCH")
        XCTAssertEqual(watch.className, "WATCH")
        for i in 0..<6 { server.publish(fix(i), from: .gpsd) }
        var seconds: [Int64] = []
        while seconds.count < 3, let m = try client.next(timeout: 5) {
            if let f = m.fix { seconds.append(f.time!.seconds - 1_700_000_000) }
        }
        XCTAssertEqual(seconds, [0, 2, 4], "every second TPV, as the client's own sample chain says, decoded as GPSFix")
        let poll = try client.request(.poll, expecting: "POLL")
        XCTAssertEqual(poll.className, "POLL")
    }

    func testTheAgentsErrorIsThrownWithItsMessage() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = BearingClient(.unix(socketPath))
        try client.connect()
        XCTAssertThrowsError(try client.request(.watch(WatchChange(enable: true, pipeline: "nope")), expecting: "WATCH")) { error in
            guard case BearingClientError.refused(_, let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("no pipeline named \"nope\""), message)
        }
    }

    func testErrorsNameTheEndpoint() {
        let client = BearingClient(.unix(socketPath))
        XCTAssertThrowsError(try client.send(.poll)) { XCTAssertTrue("\($0)".contains(self.socketPath), "\($0)") }
        XCTAssertThrowsError(try client.connect()) { XCTAssertTrue("\($0)".contains(self.socketPath), "\($0)") }
    }

    func testWatchCarriesOnAcrossAnAgentRestart() throws {
        var server: SocketDoor? = try startServer()
        let received = NSCondition()
        nonisolated(unsafe) var times: [Int64] = []
        nonisolated(unsafe) var reconnects = 0
        let path = socketPath
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let client = BearingClient(.unix(path))
            client.watch(WatchChange(enable: true, json: true, classes: ["TPV"]), backoff: Backoff(initial: 0.05, maximum: 0.2),
                         onReconnect: { _, _ in received.withLock { reconnects += 1 } }) { m in
                guard let t = m.fix?.time else { return true }
                received.withLock { times.append(t.seconds - 1_700_000_000); received.broadcast() }
                return t.seconds - 1_700_000_000 < 100
            }
            done.signal()
        }
        /// Publishes TPV `i` every 20 ms while a client is connected, until the watch has it.
        func publishUntilReceived(_ i: Int) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if received.withLock({ times.contains(Int64(i)) }) { return true }
                if let server, server.clientCount > 0 { server.publish(fix(i), from: .gpsd) }
                usleep(20_000)
            }
            return false
        }
        XCTAssertTrue(publishUntilReceived(1))
        server?.stop()
        server = try startServer()
        XCTAssertTrue(publishUntilReceived(100), "after the restart the same watch receives again")
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the handler's false ends the watch")
        XCTAssertGreaterThanOrEqual(received.withLock { reconnects }, 1)
        server?.stop()
    }
}
