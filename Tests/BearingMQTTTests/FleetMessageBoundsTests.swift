import BearingModel
import BearingWire
import BearingMQTT
import BearingDaemon
import XCTest

/// What a fleet message may be and what a refusal of one may quote (issue 26, items 3–5): the size bound,
/// checked before anything is parsed; `version` printable ASCII only; no key twice, at any depth, with the
/// socket's wording; and every refusal short and free of control characters, whatever the message held.
final class FleetMessageBoundsTests: XCTestCase {
    static let classes: Set<StreamClass> = [.tpv, .att, .sky]
    /// What a refusal (and so the retained status and the log line) may grow to: `FleetPipelines.maxRefusalCharacters`.
    static let refusalBound = 512

    func parse(_ bytes: [UInt8]) -> Result<FleetPipelines?, FleetPipelines.Refusal> {
        FleetPipelines.parse(bytes, classes: Self.classes)
    }

    func parse(_ text: String) -> Result<FleetPipelines?, FleetPipelines.Refusal> { parse(Array(text.utf8)) }

    func refusal(_ text: String, line: UInt = #line) -> FleetPipelines.Refusal? {
        refusal(Array(text.utf8), line: line)
    }

    func refusal(_ bytes: [UInt8], line: UInt = #line) -> FleetPipelines.Refusal? {
        switch parse(bytes) {
        case .success(let p): XCTFail("accepted: \(String(describing: p))", line: line); return nil
        case .failure(let r): return r
        }
    }

    /// No control character (C0, DEL, C1, U+2028/9) and at most `bound` characters.
    func assertShowable(_ text: String, bound: Int, _ what: String, line: UInt = #line) {
        XCTAssertLessThanOrEqual(text.count, bound, "\(what) is \(text.count) characters: \(text.prefix(200))…", line: line)
        let controls = text.unicodeScalars.filter { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
        XCTAssertEqual(controls.map(\.value), [], "\(what) holds control characters: \(text.debugDescription.prefix(200))", line: line)
    }

    func assertBounded(_ r: FleetPipelines.Refusal, line: UInt = #line) {
        assertShowable(r.message, bound: Self.refusalBound, "the refusal", line: line)
        if let v = r.version { assertShowable(v, bound: 64, "the refused version", line: line) }
        let status = WireEncoding.fleetRefused(r.message, version: r.version, inForce: "v1")
        XCTAssertLessThanOrEqual(status.utf8.count, 2 * Self.refusalBound, "the status is \(status.utf8.count) bytes", line: line)
    }

    /// `message` with spaces after it up to `size` bytes: still a valid message.
    func padded(_ message: String, to size: Int) -> [UInt8] {
        let bytes = Array(message.utf8)
        return bytes + [UInt8](repeating: 0x20, count: size - bytes.count)
    }

    // MARK: item 3: the size bound

    func testAMessageOverTheBoundIsRefusedBeforeItIsParsed() throws {
        let valid = #"{"version":"v1","mqtt":{"TPV":[{"op":"throttle","interval":60}]}}"#
        XCTAssertEqual(FleetPipelines.maxMessageBytes, 65_536)
        let atBound = try parse(padded(valid, to: FleetPipelines.maxMessageBytes)).get()
        XCTAssertEqual(atBound?.version, "v1", "a message of exactly the bound is read")

        let r = try XCTUnwrap(refusal(padded(valid, to: FleetPipelines.maxMessageBytes + 1)))
        XCTAssertEqual(r.message, "fleet pipelines: the message is 65537 bytes; at most 65536 (64 KiB)")
        XCTAssertNil(r.version, "a message over the bound is not read, so it names no version")

        // Neither UTF-8 nor JSON is looked at: the size is what is refused.
        let garbage = try XCTUnwrap(refusal([UInt8](repeating: 0xFF, count: 1 << 20)))
        XCTAssertEqual(garbage.message, "fleet pipelines: the message is 1048576 bytes; at most 65536 (64 KiB)")
    }

    /// Messages refused for something they quote: `x` stands as a version, key, class, operator, parameter,
    /// value or pipeline name.
    static func quoting(_ x: String) -> [String] {
        [
            #"{"version":"\#(x)","mqtt":{}}"#,
            #"{"version":"v1","\#(x)":1,"mqtt":{}}"#,
            #"{"version":"v1","mqtt":{"\#(x)":[]}}"#,
            #"{"version":"v1","mqtt":{"TPV":[{"op":"\#(x)"}]}}"#,
            #"{"version":"v1","mqtt":{"TPV":[{"op":"throttle","interval":"\#(x)"}]}}"#,
            #"{"version":"v1","mqtt":"\#(x)"}"#,
            #"{"version":"v1","pipelines":{"\#(x)":{"TPV":[]}}}"#,
            #"{"version":"v1","pipelines":{"p":{"TPV":[{"op":"throttle","\#(x)":1}]}}}"#,
            #"{"version":"v1","pipelines":{"p":{"TPV":[{"op":"dedupe","key":"\#(x)"}]}}}"#,
            #"{"version":"v1","pipelines":{"p":{"TPV":[{"op":"fields","keep":["time",""]}],"\#(x)":[]}}}"#,
            #"{"\#(x)" 1}"#,
            #"{"version":"v1","mqtt":{"\#(x)":[],"\#(x)":[]}}"#,
        ]
    }

    func testRefusalsQuoteABoundedPrefixOfTheMessage() throws {
        let long = String(repeating: "x", count: 30_000)
        for (i, text) in Self.quoting(long).enumerated() {
            XCTAssertLessThanOrEqual(text.utf8.count, FleetPipelines.maxMessageBytes)
            guard let r = refusal(text) else { continue }
            assertBounded(r)
            XCTAssertFalse(r.message.contains(String(repeating: "x", count: 65)), "case \(i) quotes the input whole: \(r.message.prefix(300))")
        }
    }

    func testRefusalsQuoteNoControlCharacters() throws {
        // JSON escapes in the message: what the parser reads is the control characters themselves.
        for text in Self.quoting(#"a\u001b[2J\u0000\r\n\t\u000b\u007f\u0085\u2028b"#) {
            guard let r = refusal(text) else { continue }
            assertBounded(r)
        }
    }

    // MARK: item 4: control characters

    func testVersionsWithControlCharactersAreRefused() throws {
        for escape in [#"\u0000"#, #"\u001b"#, #"\u007f"#, #"\u0007"#, #"\t"#, #"\r"#, #"\u000b"#, #"\n"#, #"\u0085"#, #"\u2028"#, " ", #"\""#, "é"] {
            let text = #"{"version":"v\#(escape)1","mqtt":{}}"#
            guard let r = refusal(text) else { continue }
            XCTAssertTrue(r.message.contains(#""version" is required: 1–64 printable ASCII characters"#), "\(text): \(r.message)")
            assertBounded(r)
        }
        // Printable ASCII from ! to ~ is a version, all of it.
        let printable = String(decoding: (0x21...0x7E).filter { $0 != 0x22 && $0 != 0x5C }.map { UInt8($0) }, as: UTF8.self)
        for version in [String(printable.prefix(64)), String(printable.suffix(64)), #"a\\b"#] {
            let got = try parse(#"{"version":"\#(version)","mqtt":{}}"#).get()
            XCTAssertEqual(got?.version, version.replacingOccurrences(of: #"\\"#, with: #"\"#))
        }
    }

    func testARefusedVersionIsQuotedEscaped() throws {
        let r = try XCTUnwrap(refusal(#"{"version":"a\rb\u000bc\td\u001b[2J","mqtt":{}}"#))
        XCTAssertTrue(r.message.hasPrefix(#"fleet pipelines "a\rb\u000bc\td\u001b[2J": "version" is required"#), r.message)
        XCTAssertEqual(r.version, #"a\rb\u000bc\td\u001b[2J"#)
        assertBounded(r)
    }

    // MARK: item 5: duplicate keys, one rule with the socket

    func testDuplicateKeysAreRefusedAtAnyDepthWithTheSocketsWording() throws {
        let cases: [(String, String)] = [
            (#"{"version":"v1","version":"v2","mqtt":{}}"#, #"fleet pipelines: "version" appears twice"#),
            (#"{"version":"v1","mqtt":{},"mqtt":{"TPV":[]}}"#, #"fleet pipelines "v1": "mqtt" appears twice"#),
            (#"{"version":"v1","mqtt":{"TPV":[],"TPV":[{"op":"sample","every":2}]}}"#, #"fleet pipelines "v1": "mqtt.TPV" appears twice"#),
            (#"{"version":"v1","mqtt":{"TPV":[{"op":"throttle","interval":1,"interval":60}]}}"#,
             #"fleet pipelines "v1": "mqtt.TPV[0].interval" appears twice"#),
            (#"{"version":"v1","pipelines":{"p":{"TPV":[]},"p":{"SKY":[]}}}"#, #"fleet pipelines "v1": "pipelines.p" appears twice"#),
            (#"{"version":"v1","pipelines":{"p":{"ATT":[{"op":"fields","keep":["time"]},{"op":"smooth","samples":2,"op":"smooth"}]}}}"#,
             #"fleet pipelines "v1": "pipelines.p.ATT[1].op" appears twice"#),
        ]
        for (text, expected) in cases {
            guard let r = refusal(text) else { continue }
            XCTAssertEqual(r.message, expected)
        }

        // The socket's rule is the same one: a key twice anywhere in a request's object, named by its path.
        let requests: [(String, String)] = [
            (#"?WATCH={"enable":true,"enable":false}"#, #"WATCH: "enable" appears twice"#),
            (#"?WATCH={"enable":true,"pipelines":{"TPV":[{"op":"throttle","interval":1,"interval":60}]}}"#,
             #"WATCH: "pipelines.TPV[0].interval" appears twice"#),
            (#"?PIPELINE={"name":"p","TPV":[],"TPV":[{"op":"sample","every":2}]}"#, #"PIPELINE: "TPV" appears twice"#),
        ]
        for (line, expected) in requests {
            XCTAssertThrowsError(try ClientRequest.parse(Substring(line)), line) { error in
                XCTAssertEqual("\(error)", expected)
            }
        }
    }
}
