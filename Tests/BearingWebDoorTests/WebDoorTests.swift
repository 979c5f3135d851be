import BearingDaemon
import BearingLog
import BearingModel
import BearingPOSIX
import BearingPublishing
import BearingService
import BearingSocketDoor
import BearingWebDoor
import DaemonTestRig
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The web door in a whole daemon (the simulated board, fused compass, online calibration on), spoken to over
/// real loopback sockets with a bare HTTP client, beside a reader of the UNIX socket.
final class WebDoorTests: XCTestCase {
    static let credential = webCredential

    func rig(_ name: String, gps: Bool = false, web: String = "", logger: Logger = testLogger()) throws -> (DaemonRig, WebDoor) {
        try webRig(name, gps: gps, web: web, logger: logger)
    }

    func origin(_ door: WebDoor) -> (String, String) { ("Origin", "http://127.0.0.1:\(door.port)") }

    func login(_ door: WebDoor, credential: String = WebDoorTests.credential) throws -> (status: Int, cookie: String?) {
        let r = try httpRequest(port: door.port, "POST", "/login", headers: [origin(door)], body: #"{"credential":"\#(credential)"}"#)
        return (r.status, r.header("Set-Cookie").flatMap { $0.split(separator: ";").first.map(String.init) })
    }

    func testThePageIsBuiltInSelfContainedAndSmall() throws {
        let (rig, door) = try rig("web-page")
        defer { rig.finish() }
        let r = try httpRequest(port: door.port, "GET", "/")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertTrue(r.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
        XCTAssertEqual(r.header("X-Frame-Options"), "DENY")
        XCTAssertTrue(r.text.contains("<html"), "not the page: \(r.text.prefix(100))")
        // Nothing from elsewhere: no URL outside the page's own origin.
        for scheme in ["http://", "https://", "//cdn", "@import"] {
            XCTAssertFalse(r.text.contains(scheme), "the page loads something from elsewhere (\(scheme))")
        }
        // ≤ 100 KB compressed in all (it is the only file).
        let gz = Process()
        gz.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gz.arguments = ["-9c"]
        let input = Pipe(), output = Pipe()
        gz.standardInput = input
        gz.standardOutput = output
        try gz.run()
        input.fileHandleForWriting.write(Data(r.body))
        try input.fileHandleForWriting.close()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        gz.waitUntilExit()
        print("web page: \(r.body.count) bytes, \(compressed.count) bytes gzip -9")
        XCTAssertGreaterThan(compressed.count, 1000)
        XCTAssertLessThanOrEqual(compressed.count, 100 * 1024)
        XCTAssertEqual(try httpRequest(port: door.port, "GET", "/nothing").status, 404)
        XCTAssertEqual(try httpRequest(port: door.port, "PUT", "/request").status, 405)
    }

    /// A page's stream is a socket reader's, line for line: the same WATCH gives the same objects.
    func testTheEventStreamIsWhatASocketReaderGets() throws {
        let (rig, door) = try rig("web-stream")
        defer { rig.finish() }
        let watch = #"{"enable":true,"json":true,"classes":["ATT","STATE","CALIBRATION"]}"#
        let socket = try SocketClient(path: rig.socketPath)
        socket.send("?WATCH=\(watch);\n")
        let page = try EventStreamClient(port: door.port, watch: watch)
        XCTAssertEqual(page.status(), 200)
        XCTAssertTrue(page.read(timeout: 15) { $0.filter { $0.contains(#""class":"ATT""#) }.count >= 5 })
        var seen: [String] = []
        let deadline = Syscall.monotonicSeconds() + 5
        while Syscall.monotonicSeconds() < deadline, let line = socket.readLine(timeout: 1) { seen.append(line) }
        let fromSocket = Set(seen)
        let attOnPage = page.events.filter { $0.contains(#""class":"ATT""#) }
        // The page connected after the socket reader: each ATT it got, the socket reader got too, byte for byte.
        let shared = attOnPage.filter { fromSocket.contains($0) }
        XCTAssertGreaterThanOrEqual(shared.count, 5, "ATT on the page and on the socket differ: \(attOnPage.first ?? "none") vs \(seen.first ?? "none")")
        XCTAssertEqual(page.events.first.flatMap { jsonObject($0)?["class"] as? String }, "VERSION")
        XCTAssertTrue(page.events.contains { $0.contains(#""class":"WATCH""#) })
        XCTAssertTrue(page.events.contains { $0.contains(#""class":"CALIBRATION""#) }, "CALIBRATION is replayed to a page as to a reader")
    }

    func testABadWatchIsRefusedNamingWhatWasWrong() throws {
        let (rig, door) = try rig("web-bad-watch")
        defer { rig.finish() }
        let page = try EventStreamClient(port: door.port, watch: #"{"enable":true,"pipelines":{"ATT":[{"op":"throttle","every":2}]}}"#)
        XCTAssertEqual(page.status(), 400)
        page.read(timeout: 5) { _ in false }
        let body = String(decoding: page.reader.bytes, as: UTF8.self)
        XCTAssertTrue(body.contains("pipelines.ATT[0]") && body.contains("throttle"), body)
        // The daemon goes on serving.
        XCTAssertEqual(try httpRequest(port: door.port, "GET", "/session").status, 200)
    }

    /// Actions need the credential and the page's own origin; with both they work, and the socket sees it.
    func testActionsNeedTheCredentialAndThePagesOrigin() throws {
        let log = LogCapture()
        let (rig, door) = try rig("web-actions", logger: log.logger)
        defer { rig.finish() }
        let socket = try SocketClient(path: rig.socketPath)
        func onlineMode() -> String? {
            socket.send("?CALIBRATION;\n")
            let reply = socket.collect(timeout: 5) { cls($0) == "CALIBRATION" }.last
            return (reply?["online"] as? [String: Any])?["mode"] as? String
        }
        XCTAssertEqual(onlineMode(), "track")
        let lock = #"?CALIBRATION={"online":"lock"};"#
        // No session.
        var r = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: lock)
        XCTAssertEqual(r.status, 401, r.text)
        XCTAssertTrue(r.text.contains("log in"), r.text)
        // Wrong credential.
        XCTAssertEqual(try login(door, credential: "guess-guess-guess").status, 401)
        let (status, cookie) = try login(door)
        XCTAssertEqual(status, 204)
        let session = try XCTUnwrap(cookie)
        XCTAssertTrue(session.hasPrefix("bearing_session="))
        // A session, but another site's page, or no Origin at all.
        r = try httpRequest(port: door.port, "POST", "/request", headers: [("Origin", "http://evil.example"), ("Cookie", session)], body: lock)
        XCTAssertEqual(r.status, 403, r.text)
        r = try httpRequest(port: door.port, "POST", "/request", headers: [("Cookie", session)], body: lock)
        XCTAssertEqual(r.status, 403, r.text)
        // No action through a GET.
        XCTAssertEqual(try httpRequest(port: door.port, "GET", "/request?q=" + lock, headers: [("Cookie", session)]).status, 405)
        XCTAssertEqual(onlineMode(), "track", "a refused action changed the daemon")
        // Both: it is done, the reply says so, and every reader sees it.
        r = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: lock)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual((jsonObject(r.lines.first ?? "")?["online"] as? [String: Any])?["mode"] as? String, "locked", r.text)
        XCTAssertEqual(onlineMode(), "locked")
        // The journal says who did it, and each refusal once.
        XCTAssertEqual(log.lines.filter { $0.contains("online calibration: lock") && $0.contains("by=web 127.0.0.1 (logged in)") }.count, 1, "\(log.lines)")
        XCTAssertEqual(log.lines.filter { $0.contains("web: refused POST /request: actions need the web credential") }.count, 1)
        XCTAssertEqual(log.lines.filter { $0.contains("Origin http://evil.example is not this door's") }.count, 1)
        r = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: #"?CALIBRATION={"online":"unlock"};"#)
        XCTAssertEqual(onlineMode(), "track")
        // Its history holds both, for every client.
        socket.send(#"?CALIBRATION={"points":true};"# + "\n")
        let detail = socket.collect(timeout: 5) { cls($0) == "CALIBRATION" }.last
        let history = ((detail?["online"] as? [String: Any])?["history"] as? [[String: Any]])?.compactMap { $0["event"] as? String }
        XCTAssertEqual(history?.suffix(2), ["lock", "unlock"])
        XCTAssertGreaterThan(((detail?["online"] as? [String: Any])?["points"] as? [[Double]])?.count ?? 0, 0)
        // A socket reader that is not root or a pipeline writer may not act.
        if getuid() != 0 {
            socket.send(lock + "\n")
            XCTAssertEqual(cls(socket.collect(timeout: 5) { cls($0) == "ERROR" || cls($0) == "CALIBRATION" }.last ?? [:]), "ERROR")
        }
        // Logged out: actions are refused again.
        _ = try httpRequest(port: door.port, "POST", "/logout", headers: [origin(door), ("Cookie", session)])
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: lock).status, 401)
        XCTAssertEqual(onlineMode(), "track")
    }

    func testTheBlackBoxIsSavedAndFetchedWithTheCredentialOnly() throws {
        let (rig, door) = try rig("web-blackbox")
        defer { rig.finish() }
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: "?BLACKBOX;").status, 401)
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: #"?BLACKBOX={"save":true};"#).status, 401)
        let session = try XCTUnwrap(login(door).cookie)
        var r = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: #"?BLACKBOX={"save":true};"#)
        let file = try XCTUnwrap(jsonObject(r.lines.first ?? "")?["file"] as? String, r.text)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file), file)
        r = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: "?BLACKBOX;")
        let o = try XCTUnwrap(jsonObject(r.lines.first ?? ""))
        let data = try XCTUnwrap(Data(base64Encoded: o["data"] as? String ?? ""))
        XCTAssertEqual(data.count, o["bytes"] as? Int)
        XCTAssertGreaterThan(data.count, 100)
    }

    /// Viewing needs nothing from loopback by a loopback name; by another name (DNS rebinding) it needs a login.
    func testAnotherNameForThisHostNeedsTheCredential() throws {
        let (rig, door) = try rig("web-rebinding")
        defer { rig.finish() }
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", body: "?POLL;", host: "localhost:\(door.port)").status, 403, "a POST without Origin")
        let ok = try httpRequest(port: door.port, "POST", "/request", headers: [("Origin", "http://localhost:\(door.port)")], body: "?POLL;", host: "localhost:\(door.port)")
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(jsonObject(ok.lines.first ?? "")?["class"] as? String, "POLL")
        let evil = "rebind.example:\(door.port)"
        let r = try httpRequest(port: door.port, "POST", "/request", headers: [("Origin", "http://\(evil)")], body: "?POLL;", host: evil)
        XCTAssertEqual(r.status, 401, r.text)
        let page = try EventStreamClient(port: door.port, watch: nil, headers: [])
        XCTAssertEqual(page.status(), 200)
        let session = try httpRequest(port: door.port, "GET", "/session", host: evil)
        XCTAssertEqual(jsonObject(session.text)?["login_required"] as? Bool, true)
    }

    /// Too many headers, too large a body, too many pages: each refused with its status, counted in HEALTH,
    /// and the door goes on serving.
    func testRequestsAndPagesAreBounded() throws {
        let (rig, door) = try rig("web-bounds", web: ", max_pages: 2, max_headers: 10, max_request: 512")
        defer { rig.finish() }
        let many = (0..<11).map { ("X-Header-\($0)", "1") }
        XCTAssertEqual(try httpRequest(port: door.port, "GET", "/session", headers: many).status, 431)
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: String(repeating: "x", count: 600)).status, 413)
        let huge = String(repeating: "h", count: 40_000)
        XCTAssertEqual(try httpRequest(port: door.port, "GET", "/session", headers: [("X-Huge", huge)]).status, 431)
        let pages = try (0..<2).map { _ in try EventStreamClient(port: door.port, watch: nil) }
        for p in pages { XCTAssertEqual(p.status(), 200) }
        let third = try EventStreamClient(port: door.port, watch: nil)
        XCTAssertEqual(third.status(), 503)
        let health = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: "?HEALTH;")
        let doors = jsonObject(health.lines.first ?? "")?["doors"] as? [[String: Any]]
        let web = doors?.first { $0["name"] as? String == "web" }
        XCTAssertEqual(web?["clients"] as? Int, 2, health.text)
        XCTAssertGreaterThanOrEqual(web?["refused"] as? Int ?? 0, 3, health.text)
        // Each sensor says how many of its samples saturated (none here: the simulator's board stays in range).
        let sources = jsonObject(health.lines.first ?? "")?["sources"] as? [[String: Any]]
        for name in ["magnetometer", "imu"] {
            XCTAssertEqual(sources?.first { $0["source"] as? String == name }?["saturated"] as? Int, 0, "\(name): \(health.text)")
        }
    }

    /// A page that stops reading is dropped; socket readers lose nothing meanwhile (the pipeline never waits for a page).
    func testAPageThatStopsReadingIsDroppedAndNobodyWaits() throws {
        let (rig, door) = try rig("web-stalled", web: ", client_queue: 16")
        defer { rig.finish() }
        let socket = try SocketClient(path: rig.socketPath)
        socket.watch(#","classes":["ATT"],"pipelines":{"ATT":[]}"#)
        // Every ATT, unthrottled (50 a second, ~700 bytes each), into a 4 KB receive window that is never read.
        let stalled = try EventStreamClient(port: door.port, watch: #"{"enable":true,"json":true,"classes":["ATT","MAG"],"pipelines":{"ATT":[]}}"#, receiveBuffer: 4096)
        var times: [Double] = []
        var dropped = 0
        let deadline = Syscall.monotonicSeconds() + 30
        while Syscall.monotonicSeconds() < deadline {
            while let line = socket.readLine(timeout: 0.2) {
                if line.contains(#""class":"ATT""#), let t = jsonObject(line)?["time"] as? String { times.append(Double(t.dropLast().suffix(6)) ?? 0) }
                if line.contains("OVERFLOW") { XCTFail("the socket reader overflowed: \(line)") }
                if times.count % 50 == 0 { break }
            }
            let health = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: "?HEALTH;")
            let web = (jsonObject(health.lines.first ?? "")?["doors"] as? [[String: Any]])?.first { $0["name"] as? String == "web" }
            dropped = web?["dropped"] as? Int ?? 0
            if dropped > 0 && times.count > 200 { break }
        }
        XCTAssertEqual(dropped, 1, "the stalled page was not dropped")
        XCTAssertGreaterThan(times.count, 200)
        _ = stalled
        // The reader got every ATT the compass gave (50 a second): no gap of a second in sample time.
        let gaps = zip(times, times.dropFirst()).map { b in (b.1 - b.0 + 60).truncatingRemainder(dividingBy: 60) }
        XCTAssertLessThan(gaps.max() ?? 0, 0.5, "the socket reader missed ATTs while a page stalled")
    }

    /// Fifty pages open: the socket reader still gets every line, in order, nothing dropped.
    func testFiftyPagesOpenChangeNothingForSocketReaders() throws {
        let (rig, door) = try rig("web-fifty", web: ", max_pages: 64")
        defer { rig.finish() }
        let socket = try SocketClient(path: rig.socketPath)
        socket.watch(#","classes":["ATT"],"pipelines":{"ATT":[]}"#)
        let pages = try (0..<50).map { _ in try EventStreamClient(port: door.port, watch: #"{"enable":true,"json":true,"pipelines":{"ATT":[{"op":"throttle","interval":0.2}]}}"#) }
        for p in pages { XCTAssertEqual(p.status(), 200) }
        var lines: [String] = []
        let deadline = Syscall.monotonicSeconds() + 4
        while Syscall.monotonicSeconds() < deadline, let line = socket.readLine(timeout: 1) { lines.append(line) }
        let att = lines.filter { $0.contains(#""class":"ATT""#) }
        XCTAssertGreaterThan(att.count, 100)
        XCTAssertFalse(lines.contains { $0.contains("OVERFLOW") })
        for p in pages.prefix(5) { XCTAssertTrue(p.read(timeout: 5) { $0.filter { $0.contains(#""class":"ATT""#) }.count >= 3 }) }
        XCTAssertEqual(door.pageCount, 50)
    }

    /// A swing started and stopped from a page: collected by the daemon from its own ATT and gpsd's TPV, solved on
    /// stop, and applied only if the solver takes it; every reader can follow it with ?SWING;.
    func testASwingIsRunFromThePageAndSeenOnTheSocket() throws {
        let (rig, door) = try rig("web-swing", gps: true)
        defer { rig.finish() }
        let socket = try SocketClient(path: rig.socketPath)
        func swing() -> [String: Any] {
            socket.send("?SWING;\n")
            return socket.collect(timeout: 5) { cls($0) == "SWING" || cls($0) == "ERROR" }.last ?? [:]
        }
        XCTAssertEqual(swing()["state"] as? String, "idle")
        let start = #"?SWING={"action":"start"};"#
        XCTAssertEqual(try httpRequest(port: door.port, "POST", "/request", headers: [origin(door)], body: start).status, 401)
        XCTAssertEqual(swing()["state"] as? String, "idle")
        let session = try XCTUnwrap(login(door).cookie)
        let started = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: start)
        XCTAssertEqual(jsonObject(started.lines.first ?? "")?["state"] as? String, "collecting", started.text)
        let again = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: start)
        XCTAssertTrue(again.text.contains("a swing is collecting since"), again.text)
        // It takes gpsd's epochs (gpsfake plays about four a second) with the compass's attitudes.
        var epochs = 0
        let deadline = Date().addingTimeInterval(15)
        while epochs < 8 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.5)
            epochs = swing()["epochs"] as? Int ?? 0
        }
        XCTAssertGreaterThanOrEqual(epochs, 8, "\(swing())")
        let stopped = try httpRequest(port: door.port, "POST", "/request", headers: [origin(door), ("Cookie", session)], body: #"?SWING={"action":"stop"};"#)
        let o = try XCTUnwrap(jsonObject(stopped.lines.first ?? ""), stopped.text)
        let deviationFile = rig.config.deviationPath
        switch o["state"] as? String {
        case "refused":
            // A few seconds of a board turning in place is no swing: the solver says what is missing, nothing is written.
            XCTAssertTrue((o["error"] as? String ?? "").contains("the deviation curve in force is unchanged"), "\(o)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: deviationFile))
        case "applied":
            XCTAssertEqual(o["file"] as? String, deviationFile)
            XCTAssertTrue(FileManager.default.fileExists(atPath: deviationFile))
        default:
            XCTFail("stop gave \(o)")
        }
        XCTAssertEqual(swing()["state"] as? String, o["state"] as? String, "the outcome stays for every reader")
    }

    /// A LAN address without a credential file is refused at start, naming the command that sets one.
    func testALANAddressNeedsACredentialFile() throws {
        let core = PublishingCore(defaults: [:], release: "test")
        var settings = WebSettings()
        settings.host = "0.0.0.0"
        settings.port = 0
        settings.credentialFile = temporaryDirectory("web-lan").appendingPathComponent("missing").path
        XCTAssertThrowsError(try WebDoor(settings, core: core, requests: SocketDoor.Requests(), logger: testLogger())) { error in
            XCTAssertTrue("\(error)".contains("bearing web-credential"), "\(error)")
        }
    }
}
