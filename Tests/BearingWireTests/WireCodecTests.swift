import BearingWire
@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
@testable import BearingMarine
@testable import BearingMQTT
import Foundation
import XCTest

final class WireEncodingTests: XCTestCase {
    func testTimestampRoundTripAndFormat() {
        let t = GPSTimestamp(seconds: 1_748_772_000, nanoseconds: 283_999_999)
        XCTAssertEqual(t.iso8601, "2025-06-01T10:00:00.283Z")
        XCTAssertEqual(GPSTimestamp(iso8601: "2025-06-01T10:00:00.283Z"), GPSTimestamp(seconds: 1_748_772_000, nanoseconds: 283_000_000))
        XCTAssertEqual(GPSTimestamp(iso8601: "1970-01-01T00:00:00Z"), GPSTimestamp(seconds: 0))
        XCTAssertEqual(GPSTimestamp(seconds: 951_782_400).iso8601, "2000-02-29T00:00:00.000Z")
        XCTAssertNil(GPSTimestamp(iso8601: "2025-13-01T10:00:00Z"))
        XCTAssertNil(GPSTimestamp(iso8601: "yesterday"))
    }

    /// A timestamp moved by nanoseconds carries into and borrows from its seconds exactly, either way.
    func testATimestampMovedByNanosecondsCarriesAndBorrowsExactly() {
        let t = GPSTimestamp(seconds: 1_748_772_000, nanoseconds: 900_000_000)
        XCTAssertEqual(t.adding(nanoseconds: 100_000_001), GPSTimestamp(seconds: 1_748_772_001, nanoseconds: 1))
        XCTAssertEqual(t.adding(nanoseconds: -900_000_001), GPSTimestamp(seconds: 1_748_771_999, nanoseconds: 999_999_999))
        XCTAssertEqual(t.adding(nanoseconds: -300_000_000), GPSTimestamp(seconds: 1_748_772_000, nanoseconds: 600_000_000))
        XCTAssertEqual(t.adding(nanoseconds: 86_400_000_000_000), GPSTimestamp(seconds: 1_748_858_400, nanoseconds: 900_000_000))
        XCTAssertEqual(t.adding(nanoseconds: -2_900_000_000), GPSTimestamp(seconds: 1_748_771_998))
    }

    func testFullTPVUsesGpsdNamesAndDecimals() throws {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_748_772_000), latitude: 50.8000183333, longitude: -1.0999685)
        f.altHAE = 59.8; f.altMSL = 12.5; f.speed = 3.0112; f.track = 47.2; f.eph = 20.9; f.status = 2
        let line = WireEncoding.tpv(f)
        XCTAssertEqual(line, #"{"class":"TPV","status":2,"mode":3,"time":"2025-06-01T10:00:00.000Z","lat":50.800018333,"lon":-1.099968500,"altHAE":59.8000,"altMSL":12.5000,"alt":12.5000,"track":47.2000,"speed":3.011,"eph":20.900}"#)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(line.utf8)))
    }

    func testPartialFixLeavesOutWhatIsMissing() throws {
        var f = GPSFix(mode: .noFix)
        f.ept = .nan   // a NaN that slipped through is still never written
        let line = WireEncoding.tpv(f)
        XCTAssertEqual(line, #"{"class":"TPV","mode":1}"#)
    }

    func testSkyCountsAndSatellites() throws {
        var s = SkyView(satellites: [Satellite(prn: 9, elevation: 88, azimuth: 89, signalStrength: 31, used: true, gnssID: 0, svID: 9),
                                     Satellite(prn: 47, elevation: nil, azimuth: nil, signalStrength: nil, used: false)])
        s.hdop = 0.84
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(WireEncoding.sky(s).utf8)) as? [String: Any])
        XCTAssertEqual(obj["nSat"] as? Int, 2)
        XCTAssertEqual(obj["uSat"] as? Int, 1)
        XCTAssertEqual(obj["hdop"] as? Double, 0.84)
        let sats = try XCTUnwrap(obj["satellites"] as? [[String: Any]])
        XCTAssertEqual(sats[0]["PRN"] as? Int, 9)
        XCTAssertNil(sats[1]["el"])
    }

    func testStringsAreEscaped() throws {
        let line = WireEncoding.error("bad \"quote\" \\ and \u{1}")
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(obj["message"] as? String, "bad \"quote\" \\ and \u{1}")
    }

    func testStateObject() throws {
        let s = SourceState(source: "gpsd", endpoint: "127.0.0.1:2947", state: .disconnected(.silence(seconds: 5), retryIn: 2), time: GPSTimestamp(seconds: 0))
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(WireEncoding.state(s).utf8)) as? [String: Any])
        XCTAssertEqual(obj["state"] as? String, "disconnected")
        XCTAssertEqual(obj["reason"] as? String, "silence")
        XCTAssertEqual(obj["message"] as? String, "no data for 5 s")
    }
}

final class ClientRequestTests: XCTestCase {
    func parse(_ s: String) throws -> ClientRequest {
        try ClientRequest.parse(s[...])
    }

    func watch(_ s: String, over current: WatchOptions = WatchOptions()) throws -> WatchOptions? {
        guard case .watch(let change?) = try parse(s) else { return nil }
        return current.applying(change)
    }

    func testWatchEnableAndDisable() throws {
        XCTAssertEqual(try watch(#"?WATCH={"enable":true,"json":true};"#), WatchOptions(enable: true, json: true))
        XCTAssertEqual(try watch(#"?WATCH={"enable":true}"#), WatchOptions(enable: true, json: true))
        let on = WatchOptions(enable: true, json: true, classes: ["TPV"])
        XCTAssertEqual(try watch(#"?WATCH={"enable":false};"#, over: on), WatchOptions(enable: false, json: true, classes: ["TPV"]))
        XCTAssertEqual(try parse("?WATCH;"), .watch(nil))
        XCTAssertEqual(try parse(" ?VERSION; "), .version)
        XCTAssertEqual(try parse("?POLL;"), .poll)
    }

    func testClassesExtension() throws {
        XCTAssertEqual(try watch(#"?WATCH={"enable":true,"json":true,"classes":["TPV","SKY"]}"#),
                       WatchOptions(enable: true, json: true, classes: ["TPV", "SKY"]))
        XCTAssertThrowsError(try parse(#"?WATCH={"enable":true,"classes":["ATTX"]}"#)) {
            XCTAssertTrue("\($0)".contains("ATTX"))
        }
    }

    func testCalibrationRequestAndMAGOptIn() throws {
        XCTAssertEqual(try parse("?CALIBRATION;"), .calibration(reload: false))
        XCTAssertEqual(try parse(#"?CALIBRATION={"reload":true};"#), .calibration(reload: true))
        XCTAssertEqual(try parse(#"?CALIBRATION={"class":"CALIBRATION","reload":false}"#), .calibration(reload: false))
        XCTAssertThrowsError(try parse(#"?CALIBRATION={"reload":"yes"}"#)) { XCTAssertTrue("\($0)".contains("\"reload\" must be true or false")) }
        XCTAssertThrowsError(try parse(#"?CALIBRATION={"path":"/etc/passwd"}"#)) { XCTAssertTrue("\($0)".contains("unknown attribute \"path\"")) }
        XCTAssertThrowsError(try parse("?CALIBRATION=nope")) { XCTAssertEqual("\($0)", "CALIBRATION: invalid JSON: unexpected character 'o' at byte 1") }
        let all = WatchOptions(enable: true, json: true)
        XCTAssertTrue(all.wants("CALIBRATION"))
        XCTAssertFalse(all.wants("MAG"), "raw samples only on request")
        XCTAssertTrue(WatchOptions(enable: true, json: true, classes: ["MAG"]).wants("MAG"))
        let sample = MagneticSample(time: GPSTimestamp(unixTime: 1_795_000_000), device: "i2c:/dev/i2c-1:0x0d", chip: "qmc5883l",
                                    field: Vector3(12.5, -3.25, 40), overflow: false)
        XCTAssertEqual(WireEncoding.mag(sample),
                       #"{"class":"MAG","device":"i2c:/dev/i2c-1:0x0d","chip":"qmc5883l","time":"2026-11-18T11:06:40.000Z","x":12.5000,"y":-3.2500,"z":40.0000}"#)
    }

    func testBadRequestsSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("?FOO;", "Unrecognized request 'FOO'"),
            ("hello", "requests start with '?'"),
            ("?WATCH={enable:true}", "WATCH: invalid JSON: expected a quoted key, got 'e' at byte 1"),
            ("?WATCH=[1,2]", "WATCH takes a JSON object, got a list"),
            (#"?WATCH={"enable":true,"enable":false}"#, "\"enable\" appears twice"),
            (#"?WATCH={"enable":1e999}"#, "number 1e999 is too large to represent at byte 10"),
            (#"?WATCH={"enable":1}"#, "\"enable\" must be true or false"),
            (#"?WATCH={"colour":"red"}"#, "unknown attribute \"colour\""),
            (#"?WATCH={"enable":true,"nmea":true}"#, "nmea output is not available"),
        ]
        for (input, expected) in cases {
            XCTAssertThrowsError(try parse(input), input) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(input): \(error)")
            }
        }
    }
}

/// The integer formatter must write exactly what printf's `%.*f` writes (gpsd's digits).
final class FixedFormatTests: XCTestCase {
    func printf(_ v: Double, _ d: Int) -> String {
        var s: [UInt8] = []
        JSONObjectWriter.appendFixedPrintf(v, decimals: d, to: &s)
        return String(decoding: s, as: UTF8.self)
    }

    func fast(_ v: Double, _ d: Int) -> String {
        var s: [UInt8] = []
        JSONObjectWriter.appendFixed(v, decimals: d, to: &s)
        return String(decoding: s, as: UTF8.self)
    }

    func testMatchesPrintfOnTiesEdgesAndRandomValues() {
        var values: [Double] = [0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 1e-300, -1e-300, .leastNonzeroMagnitude, 0.0005, 0.00049999999999999999,
                                999_999_999.999, 123.4565, 50.800018333, -1.0999685, 89.999999999, 359.99995, 1e9, 1.7e308]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let exponent = Double.random(in: -12...9, using: &rng)
            let v = Double.random(in: 1...10, using: &rng) * pow(10, exponent) * (Bool.random(using: &rng) ? 1 : -1)
            values.append(v)
            // Exact binary ties at a few decimal places.
            values.append(Double(Int.random(in: -100_000...100_000, using: &rng)) / 8)
        }
        var checked = 0
        for v in values {
            for d in 0...9 {
                XCTAssertEqual(fast(v, d), printf(v, d), "\(v) with \(d) places")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 400_000)
    }
}

final class TimestampFormatTests: XCTestCase {
    /// The buffer formatter against a plain one, over 400 years of random instants.
    func testISO8601AgainstPaddedFields() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let t = GPSTimestamp(seconds: Int64.random(in: -62_135_596_800...253_402_300_799, using: &rng),
                                 nanoseconds: Int32.random(in: 0..<1_000_000_000, using: &rng))
            let (y, mo, d, h, mi, s) = CivilTime.fields(unixSeconds: t.seconds)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, h, mi, s, Int(t.nanoseconds / 1_000_000))
            XCTAssertEqual(t.iso8601, expected)
        }
    }

    func testEscapingStillEscapes() {
        XCTAssertEqual(JSONObjectWriter.escaped("a\"b\\c\nd\u{1}"), #""a\"b\\c\nd\u0001""#)
        XCTAssertEqual(JSONObjectWriter.escaped("/dev/ttyAMA0"), #""/dev/ttyAMA0""#)
    }
}
