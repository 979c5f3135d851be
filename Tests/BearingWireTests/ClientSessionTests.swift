import BearingModel
import BearingWire
import BearingCalibration
import XCTest

/// Bytes in, requests and error replies out: no sockets.
final class ClientSessionTests: XCTestCase {
    func events(_ session: inout ClientSession, _ text: String) -> [ClientSession.Event] { session.receive(Array(text.utf8)) }

    func testRequestsSplitAcrossReadsAndJoinedByColons() {
        var s = ClientSession()
        XCTAssertEqual(events(&s, "?VERS"), [])
        XCTAssertEqual(events(&s, "ION;?POLL;\r\n?WATCH={\"enable\":true,\"classes\":[\"TPV\"]};?DEVICES;\n"),
                       [.request(.version), .request(.poll), .request(.watch(WatchChange(enable: true, classes: .some(["TPV"])))), .request(.devices)])
    }

    func testSemicolonsInsideStringsDoNotSplit() {
        XCTAssertEqual(ClientSession.splitRequests(#"?PIPELINE={"name":"a;b"};?POLL;"#).map(String.init),
                       [#"?PIPELINE={"name":"a;b"}"#, "?POLL"])
    }

    func testTooLongIsOneErrorThenTheRestOfTheLineIsSkipped() {
        var s = ClientSession(maxRequestBytes: 16)
        let e = events(&s, String(repeating: "x", count: 40) + "\n?VERSION;\n")
        XCTAssertEqual(e, [.reply(#"{"class":"ERROR","message":"request too long (more than 16 bytes); skipped to its end of line"}"#), .request(.version)])
    }

    func testBadBytesAndBadRequestsAreRepliesAndLoseNothingAfter() {
        var s = ClientSession()
        let e = s.receive([0xff, 0xfe, 0x0a] + Array("?NOPE;?VERSION;\n".utf8))
        XCTAssertEqual(e.count, 3)
        XCTAssertEqual(e[0], .reply(#"{"class":"ERROR","message":"request is not valid UTF-8"}"#))
        XCTAssertEqual(e[1], .reply(#"{"class":"ERROR","message":"Unrecognized request 'NOPE'"}"#))
        XCTAssertEqual(e[2], .request(.version))
    }

    func testPipelineRequests() throws {
        var s = ClientSession()
        let e = events(&s, #"?PIPELINE={"name":"slow","TPV":[{"op":"throttle","interval":5}]};?PIPELINE={"name":"slow","delete":true};?PIPELINES;"# + "\n")
        XCTAssertEqual(e, [.request(.definePipeline(NamedPipeline(name: "slow", chains: [.tpv: [.throttle(interval: 5, latest: true)]], origin: .client))),
                           .request(.deletePipeline("slow")), .request(.pipelines)])
        let bad = events(&s, #"?PIPELINE={"name":"Bad Name","TPV":[]}"# + "\n")
        XCTAssertEqual(bad, [.reply(#"{"class":"ERROR","message":"PIPELINE: \"name\" is required: a–z, 0–9, _ and -, up to 32 characters"}"#)])
    }

    func testRequestsReadBackFromTheirLines() throws {
        let requests: [ClientRequest] = [
            .watch(nil), .version, .devices, .poll, .pipelines, .calibration(reload: true), .deletePipeline("x"),
            .watch(WatchChange(enable: true, json: true, pps: true, classes: .some(["ATT", "TPV"]), pipeline: .some("slow"),
                               pipelines: [.att: [.deadband(.init(.degrees(2), heartbeat: 30))]])),
            .definePipeline(NamedPipeline(name: "n", chains: [.sky: [.fields(["hdop"])]], origin: .client)),
        ]
        for r in requests {
            var s = ClientSession()
            XCTAssertEqual(events(&s, r.line), [.request(r)], r.line)
        }
    }
}
