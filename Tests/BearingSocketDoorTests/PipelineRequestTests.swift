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

/// Per-client and named chains over the real socket: WATCH with pipelines, ?PIPELINE by an allowed
/// uid, stored atomically and back after a restart, refused for others; errors keep what was in force.
final class PipelineRequestTests: XCTestCase {
    var dir: URL!
    override func setUp() { dir = temporaryDirectory("pipelines") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func makeServer() -> SocketDoor {
        var socket = SocketSettings()
        socket.path = dir.appendingPathComponent("s.sock").path
        var defaults: [StreamKey: [OperatorSpec]] = [:]
        for key in StreamKey.all { defaults[key] = [] }
        defaults[StreamKey(.tpv, .gpsd)] = [.minMode(.threeD)]
        let core = PublishingCore(defaults: defaults, named: [NamedPipeline(name: "cfg", chains: [.tpv: [.sample(every: 100)]], origin: .config)],
                                  release: Release.wireRelease)
        return SocketDoor(configuration: .init(socket: socket, pipelineStore: dir.appendingPathComponent("state/pipelines.json").path),
                          core: core, logger: testLogger())
    }

    func fix(_ i: Int, mode: FixMode = .threeD) -> Report {
        Report(.fix(GPSFix(mode: mode, time: GPSTimestamp(seconds: 1_700_000_000 + Int64(i)), latitude: 50, longitude: -1)))
    }

    func client(_ server: SocketDoor, _ watch: String) throws -> SocketClient {
        let c = try SocketClient(path: server.socketPath)
        XCTAssertEqual(c.message(timeout: 5)?.className, "VERSION")
        c.send("?WATCH=\(watch);\n")
        let replies = c.messages(timeout: 5) { $0.className == "WATCH" || $0.className == "ERROR" }
        XCTAssertEqual(replies.last?.className, "WATCH", "\(replies.map(\.line))")
        return c
    }

    func seconds(_ c: SocketClient, until last: Int) -> [Int] {
        c.messages(timeout: 10) { ($0.fix?.time?.seconds).map { Int($0 - 1_700_000_000) } == last }
            .compactMap { $0.fix?.time.map { Int($0.seconds - 1_700_000_000) } }
    }

    func testEachClientGetsItsOwnChainFromTheUnfilteredStream() throws {
        let server = makeServer()
        try server.start()
        defer { server.stop() }
        let plain = try client(server, #"{"enable":true,"json":true,"classes":["TPV"]}"#)
        let own = try client(server, #"{"enable":true,"json":true,"classes":["TPV"],"pipelines":{"TPV":[{"op":"sample","every":3}]}}"#)
        for i in 0..<10 { server.publish(fix(i, mode: i == 3 ? .twoD : .threeD), from: .gpsd) }
        XCTAssertEqual(seconds(own, until: 9), [0, 3, 6, 9], "every third, the 2D fix included")
        XCTAssertEqual(seconds(plain, until: 9), [0, 1, 2, 4, 5, 6, 7, 8, 9], "the default chain drops the 2D fix")

        // A bad chain: an ERROR naming class, index, operator and what is allowed; the old chain stays.
        own.send(#"?WATCH={"pipelines":{"TPV":[{"op":"sample","every":2},{"op":"smooth","samples":3}]}};"# + "\n")
        let error = own.messages(timeout: 5) { $0.className == "ERROR" }.last?.errorMessage
        XCTAssertEqual(error, "WATCH: pipelines.TPV[1]: operator smooth ({\"op\":\"smooth\",\"samples\":3}) does not apply to TPV; allowed for TPV: min_mode, max_error, dedupe, throttle, sample, debounce, deadband, fields")
        for i in 10..<16 { server.publish(fix(i), from: .gpsd) }
        XCTAssertEqual(seconds(own, until: 15), [12, 15], "still every third")
    }

    func testNamedPipelineDefinedStoredAndBackAfterARestart() throws {
        var server = makeServer()
        try server.start()
        let admin = try SocketClient(path: server.socketPath)
        _ = admin.message(timeout: 5)
        admin.send(#"?PIPELINE={"name":"slow","TPV":[{"op":"sample","every":5}]};"# + "\n")
        let listed = try XCTUnwrap(admin.messages(timeout: 5) { $0.className == "PIPELINES" || $0.className == "ERROR" }.last)
        XCTAssertEqual(listed.className, "PIPELINES", listed.line)
        XCTAssertEqual(listed["named"]?.list?.compactMap { $0["name"]?.string }, ["cfg", "slow"])
        let stored = try String(contentsOfFile: dir.appendingPathComponent("state/pipelines.json").path, encoding: .utf8)
        XCTAssertEqual(stored, #"{"format":"bearing-pipelines/1","pipelines":{"slow":{"TPV":[{"op":"sample","every":5}]}}}"# + "\n")
        admin.send(#"?PIPELINE={"name":"cfg","TPV":[]};"# + "\n")
        XCTAssertEqual(admin.messages(timeout: 5) { $0.className == "ERROR" }.last?.errorMessage,
                       "PIPELINE: \"cfg\" is defined in the config file; change it there")
        server.stop()

        server = makeServer()
        try server.start()
        defer { server.stop() }
        let a = try client(server, #"{"enable":true,"json":true,"classes":["TPV"],"pipeline":"slow"}"#)
        let b = try client(server, #"{"enable":true,"json":true,"classes":["TPV"],"pipeline":"slow"}"#)
        for i in 0..<11 { server.publish(fix(i), from: .gpsd) }
        XCTAssertEqual(seconds(a, until: 10), [0, 5, 10])
        XCTAssertEqual(seconds(b, until: 10), [0, 5, 10])
        XCTAssertEqual(server.queue.sync { server.hub.runCount.named }, 1, "one run of \"slow\" for both clients")
        let unknown = try SocketClient(path: server.socketPath)
        _ = unknown.message(timeout: 5)
        unknown.send(#"?WATCH={"enable":true,"pipeline":"fast"};"# + "\n")
        XCTAssertEqual(unknown.messages(timeout: 5) { $0.className == "ERROR" }.last?.errorMessage,
                       "WATCH: no pipeline named \"fast\"; defined: cfg, slow; the previous options stay in force")
    }

    func testAnotherUserMayNotDefinePipelines() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("SKIPPED: needs root and setpriv to connect as another uid")
        }
        let server = makeServer()
        try server.start()
        defer { server.stop() }
        chmod(dir.path, 0o755)
        chmod(server.socketPath, 0o666)
        // nobody (65534) connects with Python's socket module and asks.
        let script = """
        import socket
        s = socket.socket(socket.AF_UNIX); s.connect("\(server.socketPath)")
        f = s.makefile("rb")
        f.readline()
        s.sendall(b'?PIPELINE={"name":"x","TPV":[{"op":"sample","every":2}]};\\n')
        print(f.readline().decode().strip())
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let line = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(try WireMessage(line: line.trimmingCharacters(in: .whitespacesAndNewlines)).errorMessage,
                       "PIPELINE: uid 65534 may not change pipelines; allowed: root and the uids in socket.pipeline_writers, over the UNIX socket")
        XCTAssertEqual(server.queue.sync { server.hub.named.keys.sorted() }, ["cfg"])
    }
}
