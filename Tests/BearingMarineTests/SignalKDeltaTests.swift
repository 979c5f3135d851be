@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
@testable import BearingMarine
@testable import BearingMQTT
import BearingDaemon
import Foundation
import TestSupport
import XCTest

final class SignalKDeltaTests: XCTestCase {
    /// 2024-05-01T12:00:00Z.
    static let noon = GPSTimestamp(seconds: 1_714_564_800)
    let source = SignalKSource()
    /// Every delta a test made, validated against the Signal K schemas after it.
    var produced: [String] = []

    override func tearDownWithError() throws {
        guard !produced.isEmpty else { return }
        _ = try validateSignalK(produced)
    }

    /// `line`, kept for the schema check.
    func made(_ line: String?) -> String? {
        if let line { produced.append(line) }
        return line
    }

    func attitude(heading: Double? = nil, magnetic: Double = 0, declination: Double? = nil,
                  roll: Double? = nil, pitch: Double? = nil, rateOfTurn: Double? = nil) -> Attitude {
        .marine(heading: heading, magnetic: magnetic, declination: declination, roll: roll, pitch: pitch, rateOfTurn: rateOfTurn)
    }

    /// The one update of a delta line, parsed, and its values by path.
    func parse(_ line: String?, file: StaticString = #filePath, line l: UInt = #line) throws -> (update: [String: Any], values: [String: Any]) {
        let line = try XCTUnwrap(made(line), file: file, line: l)
        XCTAssertFalse(line.contains("\n"), file: file, line: l)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], file: file, line: l)
        XCTAssertEqual(object["context"] as? String, "vessels.self", file: file, line: l)
        let updates = try XCTUnwrap(object["updates"] as? [[String: Any]], file: file, line: l)
        XCTAssertEqual(updates.count, 1, file: file, line: l)
        let update = updates[0]
        XCTAssertNil(update["source"], "source and $source are exclusive", file: file, line: l)
        let list = try XCTUnwrap(update["values"] as? [[String: Any]], file: file, line: l)
        var values: [String: Any] = [:]
        for entry in list {
            let path = try XCTUnwrap(entry["path"] as? String, file: file, line: l)
            XCTAssertNil(values[path], "\(path) twice", file: file, line: l)
            values[path] = entry["value"]
        }
        return (update, values)
    }

    func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

    func testAttitudeExact() {
        let a = attitude(heading: 123.4, magnetic: 110.5, declination: 12.9, roll: -5, pitch: 2, rateOfTurn: -30)
        XCTAssertEqual(made(SignalKDelta.attitude(a, source: source)),
                       #"{"context":"vessels.self","updates":[{"$source":"bearing.compass","timestamp":"2024-05-01T12:00:00.000Z","values":["#
                       + #"{"path":"navigation.headingMagnetic","value":1.928589},"#
                       + #"{"path":"navigation.headingTrue","value":2.153736},"#
                       + #"{"path":"navigation.magneticVariation","value":0.225147},"#
                       + #"{"path":"navigation.attitude","value":{"roll":-0.087266,"pitch":0.034907,"yaw":2.153736}},"#
                       + #"{"path":"navigation.rateOfTurn","value":-0.008727}]}]}"#)
    }

    func testAttitudeValuesInRadians() throws {
        let a = attitude(heading: 350.25, magnetic: 2.75, declination: -12.5, roll: 7.5, pitch: -3.25, rateOfTurn: 60)
        let (update, v) = try parse(SignalKDelta.attitude(a, source: SignalKSource(label: "mast-2")))
        XCTAssertEqual(update["$source"] as? String, "mast-2.compass")
        XCTAssertEqual(update["timestamp"] as? String, "2024-05-01T12:00:00.000Z")
        XCTAssertEqual(try XCTUnwrap(v["navigation.headingMagnetic"] as? Double), radians(2.75), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(v["navigation.headingTrue"] as? Double), radians(350.25), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(v["navigation.magneticVariation"] as? Double), radians(-12.5), accuracy: 1e-6)
        let att = try XCTUnwrap(v["navigation.attitude"] as? [String: Double])
        XCTAssertEqual(Set(att.keys), ["roll", "pitch", "yaw"])
        XCTAssertEqual(att["roll"]!, radians(7.5), accuracy: 1e-6)
        XCTAssertEqual(att["pitch"]!, radians(-3.25), accuracy: 1e-6)
        XCTAssertEqual(att["yaw"]!, radians(350.25), accuracy: 1e-6)  // the true heading
        // 60 °/min = 1 °/s.
        XCTAssertEqual(try XCTUnwrap(v["navigation.rateOfTurn"] as? Double), radians(1), accuracy: 1e-6)
    }

    /// A deviation curve in force: navigation.headingCompass (the sensor's, not adjusted) and
    /// navigation.magneticDeviation (+ east), validated against the schema with the rest.
    func testDeviationGivesHeadingCompassAndMagneticDeviation() throws {
        var a = attitude(heading: 123.4, magnetic: 110.5, declination: 12.9)
        a.deviation = -4
        let (_, v) = try parse(SignalKDelta.attitude(a, source: source))
        XCTAssertEqual(try XCTUnwrap(v["navigation.headingCompass"] as? Double), radians(114.5), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(v["navigation.magneticDeviation"] as? Double), radians(-4), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(v["navigation.headingMagnetic"] as? Double), radians(110.5), accuracy: 1e-6)
        let (_, w) = try parse(SignalKDelta.attitude(attitude(heading: 123.4, magnetic: 110.5, declination: 12.9), source: source))
        XCTAssertNil(w["navigation.headingCompass"], "no curve, no compass heading apart from the magnetic one")
    }

    func testUnknownPathsAreLeftOut() throws {
        let (_, v) = try parse(SignalKDelta.attitude(attitude(magnetic: 42), source: source))
        XCTAssertEqual(Set(v.keys), ["navigation.headingMagnetic"])
        XCTAssertEqual(try XCTUnwrap(v["navigation.headingMagnetic"] as? Double), radians(42), accuracy: 1e-6)

        // Roll without pitch is no attitude; a NaN is no value.
        let (_, w) = try parse(SignalKDelta.attitude(attitude(heading: .nan, magnetic: 42, declination: .nan, roll: 3), source: source))
        XCTAssertEqual(Set(w.keys), ["navigation.headingMagnetic"])

        // Without a true heading the yaw is the magnetic one.
        let (_, m) = try parse(SignalKDelta.attitude(attitude(magnetic: 42, roll: 1, pitch: 2, rateOfTurn: -6), source: source))
        XCTAssertEqual(Set(m.keys), ["navigation.headingMagnetic", "navigation.attitude", "navigation.rateOfTurn"])
        XCTAssertEqual(try XCTUnwrap((m["navigation.attitude"] as? [String: Double])?["yaw"]), radians(42), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(m["navigation.rateOfTurn"] as? Double), -radians(0.1), accuracy: 1e-6)
    }

    func testHeadingsNormalized() throws {
        for (given, expected) in [(-10.0, 350.0), (370, 10), (360, 0), (-0.0, 0), (720.5, 0.5), (359.9999999999, 0)] {
            let (_, v) = try parse(SignalKDelta.attitude(attitude(heading: given, magnetic: given, roll: 0, pitch: 0), source: source))
            for value in [v["navigation.headingMagnetic"], v["navigation.headingTrue"],
                          (v["navigation.attitude"] as? [String: Double])?["yaw"]] {
                let r = try XCTUnwrap(value as? Double)
                XCTAssertTrue(r >= 0 && r < 2 * .pi, "\(given) → \(r)")
                XCTAssertLessThanOrEqual(abs(remainder(r - radians(expected), 2 * .pi)), 1e-6, "\(given) → \(r)")
            }
        }
        // No negative zero anywhere.
        let line = SignalKDelta.attitude(attitude(heading: -0.0, magnetic: -1e-12, declination: -1e-9, roll: -1e-9, pitch: -0.0, rateOfTurn: -1e-9), source: source)
        XCTAssertFalse(line.contains("-0.000000"), line)
    }

    func testFixExact() {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_306_574_870), latitude: 53 + 21.6802 / 60,
                       longitude: -(6 + 30.3372 / 60))
        f.speed = 0.02 * 1852 / 3600
        f.track = 31.66
        f.altHAE = 55
        f.altMSL = 3
        XCTAssertEqual(made(SignalKDelta.fix(f, source: source)),
                       #"{"context":"vessels.self","updates":[{"$source":"bearing.gps","timestamp":"2011-05-28T09:27:50.000Z","values":["#
                       + #"{"path":"navigation.position","value":{"longitude":-6.505620000,"latitude":53.361336667}},"#
                       + #"{"path":"navigation.courseOverGroundTrue","value":0.552571},"#
                       + #"{"path":"navigation.speedOverGround","value":0.010}]}]}"#)
    }

    func testFixWithoutPositionOrTime() throws {
        XCTAssertNil(SignalKDelta.fix(GPSFix(mode: .noFix, time: Self.noon), source: source))
        XCTAssertNil(SignalKDelta.fix(GPSFix(mode: .noFix, time: Self.noon, latitude: 1, longitude: 2), source: source))
        XCTAssertNil(SignalKDelta.fix(GPSFix(mode: .threeD, time: Self.noon, latitude: 1, longitude: nil), source: source))

        var moving = GPSFix(mode: .noFix)
        moving.track = -90
        moving.speed = 2.5
        let line = try XCTUnwrap(SignalKDelta.fix(moving, source: source))
        let (update, v) = try parse(line)
        XCTAssertNil(update["timestamp"])  // delta.json does not require one
        XCTAssertEqual(update["$source"] as? String, "bearing.gps")
        XCTAssertEqual(Set(v.keys), ["navigation.courseOverGroundTrue", "navigation.speedOverGround"])
        XCTAssertEqual(try XCTUnwrap(v["navigation.courseOverGroundTrue"] as? Double), radians(270), accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(v["navigation.speedOverGround"] as? Double), 2.5, accuracy: 1e-9)

        let (_, p) = try parse(SignalKDelta.fix(GPSFix(mode: .twoD, time: Self.noon, latitude: -33.5, longitude: 151.25), source: source))
        let position = try XCTUnwrap(p["navigation.position"] as? [String: Double])
        XCTAssertEqual(position, ["latitude": -33.5, "longitude": 151.25])  // no altitude
    }

    func testSourceLabel() {
        XCTAssertEqual(SignalKSource().label, "bearing")
        XCTAssertTrue(SignalKSource.validLabel("bearing"))
        XCTAssertTrue(SignalKSource.validLabel("NMEA0183.COM1.GP"))
        XCTAssertTrue(SignalKSource.validLabel("mast-2_a"))
        for bad in ["", "a b", "a/b", "ä", "x:y", "\"q\""] { XCTAssertFalse(SignalKSource.validLabel(bad), bad) }
        // An invalid label is still valid JSON.
        let line = SignalKDelta.attitude(attitude(magnetic: 1), source: SignalKSource(label: "a\"b"))
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8)))
    }
}
