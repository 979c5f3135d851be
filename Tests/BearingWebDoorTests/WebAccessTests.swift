import BearingWebDoor
import Foundation
import TestSupport
import XCTest

final class WebAccessTests: XCTestCase {
    func request(_ method: String = "GET", loopback: Bool = true, host: String? = "127.0.0.1:8074", origin: String? = nil, session: Bool = false) -> WebAccess.Request {
        WebAccess.Request(method: method, peerIsLoopback: loopback, host: host, origin: origin, hasSession: session)
    }

    func testLoopbackNames() {
        for h in ["127.0.0.1:8074", "127.1.2.3", "localhost:80", "LOCALHOST", "[::1]:8074"] { XCTAssertTrue(WebAccess.isLoopbackHost(h), h) }
        for h in ["192.168.1.5:8074", "127.0.0.1.evil.example", "localhost.evil.example", "[::2]:1", "", "127.0.0.256"] {
            XCTAssertFalse(WebAccess.isLoopbackHost(h), h)
        }
        XCTAssertFalse(WebAccess.isLoopbackHost(nil))
    }

    func testViewing() {
        XCTAssertEqual(WebAccess.view(request()), .allowed)
        if case .needsLogin = WebAccess.view(request(host: "evil.example:8074")) {} else { XCTFail("rebinding viewed freely") }
        if case .needsLogin = WebAccess.view(request(loopback: false, host: "192.168.1.5:8074")) {} else { XCTFail("LAN viewed freely") }
        XCTAssertEqual(WebAccess.view(request(loopback: false, host: "192.168.1.5:8074", session: true)), .allowed)
    }

    func testActingAndOrigins() {
        let own = "http://127.0.0.1:8074"
        if case .needsLogin = WebAccess.act(request("POST", origin: own)) {} else { XCTFail("acted without a session") }
        XCTAssertEqual(WebAccess.act(request("POST", origin: own, session: true)), .allowed)
        for o in [nil, "http://evil.example", "https://127.0.0.1:8074", "http://127.0.0.1:8075", "null"] as [String?] {
            if case .forbidden = WebAccess.act(request("POST", origin: o, session: true)) {} else { XCTFail("origin \(o ?? "none") acted") }
            if case .forbidden = WebAccess.login(request("POST", origin: o)) {} else { XCTFail("origin \(o ?? "none") logged in") }
        }
        if case .forbidden = WebAccess.act(request("POST", host: nil, origin: own, session: true)) {} else { XCTFail("no Host") }
    }
}

final class WebSessionsTests: XCTestCase {
    func sessions(_ secret: String?) throws -> WebSessions {
        let file = temporaryDirectory("web-sessions").appendingPathComponent("credential")
        if let secret { try secret.write(to: file, atomically: true, encoding: .utf8) }
        return WebSessions(credentialFile: file.path, lifetime: 60, capacity: 3)
    }

    func testLoginExpiryAndLogout() throws {
        let s = try sessions("  sea-state-four \n")
        guard case .success(let token) = s.login("sea-state-four", now: 100) else { return XCTFail("the right credential was refused") }
        XCTAssertEqual(token.count, 32)
        XCTAssertTrue(s.isValid(token, now: 150))
        XCTAssertFalse(s.isValid(token, now: 161))
        guard case .success(let t2) = s.login("sea-state-four", now: 200) else { return XCTFail() }
        s.logout(t2)
        XCTAssertFalse(s.isValid(t2, now: 201))
        XCTAssertEqual(s.login("sea-state-fou", now: 300), .failure(.wrong))
        XCTAssertEqual(s.login("sea-state-four5", now: 300), .failure(.wrong))
        XCTAssertNotEqual(WebSessions.token(), WebSessions.token())
    }

    func testNoCredentialAndTooShort() throws {
        if case .failure(.noCredential(let why)) = try sessions(nil).login("anything-at-all") { XCTAssertTrue(why.contains("credential"), why) } else { XCTFail() }
        if case .failure(.noCredential) = try sessions("short").login("short") {} else { XCTFail("a 5-character credential was taken") }
    }

    func testGuessingIsSlowedAndOldSessionsGo() throws {
        let s = try sessions("the-right-one")
        for _ in 0..<WebSessions.maxFailures { XCTAssertEqual(s.login("wrong-one-x", now: 10), .failure(.wrong)) }
        XCTAssertEqual(s.login("the-right-one", now: 20), .failure(.tooMany))
        guard case .success(let first) = s.login("the-right-one", now: 80) else { return XCTFail("still refused after the minute") }
        for i in 0..<3 { _ = s.login("the-right-one", now: 81 + Double(i)) }
        XCTAssertFalse(s.isValid(first, now: 90), "the oldest session stayed past the capacity")
        XCTAssertEqual(s.count, 3)
    }

    func testCookieParsing() {
        XCTAssertEqual(WebSessions.token(fromCookie: "a=b; bearing_session=abc; c=d"), "abc")
        XCTAssertNil(WebSessions.token(fromCookie: "xbearing_session=abc"))
        XCTAssertNil(WebSessions.token(fromCookie: nil))
    }
}
