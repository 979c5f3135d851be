import BearingModel
import BearingWire
import BearingMarine
import Foundation
import XCTest

/// STATE transitions only: a retry loop against an absent source sends one `disconnected`, not a line per attempt.
final class SourceStateTransitionsTests: XCTestCase {
    func testRetriesUpdateTheKeptStateButOnlyTransitionsAreSent() throws {
        var t = SourceStateTransitions()
        let time = GPSTimestamp(seconds: 1_780_000_000)
        var sent: [String] = []
        var kept = ""
        func feed(_ s: ConnectionState) {
            let (state, isTransition) = t.next(s, source: "gpsd", endpoint: "127.0.0.1:2947", time: time)
            kept = WireEncoding.state(state)
            if isTransition { sent.append(kept) }
        }
        feed(.connecting(attempt: 1))
        for n in 1...50 {
            feed(.disconnected(.openFailed("Connection refused"), retryIn: min(0.5 * pow(2, Double(n - 1)), 5)))
            feed(.connecting(attempt: n + 1))
        }
        feed(.disconnected(.openFailed("Connection refused"), retryIn: 5))
        XCTAssertEqual(sent.count, 2, "connecting, then one disconnected: \(sent)")
        let kept51 = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        XCTAssertEqual(kept51["state"] as? String, "disconnected")
        XCTAssertEqual(kept51["failed_attempts"] as? Int, 51, "the replayed STATE counts the attempts")
        XCTAssertEqual(kept51["retry_in"] as? Double, 5)
        XCTAssertEqual(kept51["next_retry"] as? String, "2026-05-28T20:26:45.000Z")
        let first = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(sent[1].utf8)) as? [String: Any])
        XCTAssertEqual(first["failed_attempts"] as? Int, 1)
        XCTAssertEqual(first["retry_in"] as? Double, 0.5)

        feed(.disconnected(.error("gpsd went mad"), retryIn: 5))
        XCTAssertEqual(sent.count, 3, "another reason is a transition")
        feed(.connecting(attempt: 53))
        feed(.connected)
        XCTAssertEqual(sent.count, 4)
        XCTAssertTrue(sent[3].contains(#""state":"connected""#), sent[3])
        feed(.disconnected(.closedByPeer, retryIn: 0.5))
        feed(.connecting(attempt: 1))
        feed(.connected)
        XCTAssertEqual(sent.count, 6, "lost and back: two transitions")
        XCTAssertTrue(sent[4].contains(#""failed_attempts":0"#), "a lost session has no failed attempt yet: \(sent[4])")
    }
}

/// Bearing's own NMEA coming back through a gpsd that reads the door is recognised by its device path.
final class EchoGuardTests: XCTestCase {
    func testDoorDevicesAreEchoesOthersAreNot() {
        let g = EchoGuard(tcp: [.init(host: "127.0.0.1", port: 61110)], udp: [.init(host: "192.168.1.255", port: 10110)])
        XCTAssertTrue(g.isEcho(device: "tcp://127.0.0.1:61110"))
        XCTAssertTrue(g.isEcho(device: "tcp://localhost:61110"))
        XCTAssertTrue(g.isEcho(device: "tcp://[::1]:61110"))
        XCTAssertTrue(g.isEcho(device: "udp://0.0.0.0:10110"), "gpsd listening for the door's datagrams")
        XCTAssertFalse(g.isEcho(device: "tcp://192.168.1.7:61110"), "another machine's door")
        XCTAssertFalse(g.isEcho(device: "tcp://127.0.0.1:10110"))
        XCTAssertFalse(g.isEcho(device: "/dev/ttyACM0"))
        XCTAssertFalse(g.isEcho(device: nil))
        XCTAssertFalse(EchoGuard.none.isEcho(device: "tcp://127.0.0.1:61110"))
        let any = EchoGuard(tcp: [.init(host: "0.0.0.0", port: 61110)])
        XCTAssertTrue(any.isEcho(device: "tcp://192.168.1.7:61110"), "a door on every address is reached by this machine's own address")
    }
}
