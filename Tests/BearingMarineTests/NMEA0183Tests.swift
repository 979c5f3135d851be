@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
@testable import BearingMarine
@testable import BearingMQTT
import BearingDaemon
import XCTest

extension Attitude {
    /// An attitude at 2024-05-01T12:00:00Z with what the marine encoders read (the NMEA and Signal K tests).
    static func marine(heading: Double?, magnetic: Double, declination: Double?, roll: Double?, pitch: Double?, rateOfTurn: Double?) -> Attitude {
        var a = Attitude(time: GPSTimestamp(seconds: 1_714_564_800), device: "test", heading: heading, magneticHeading: magnetic,
                         field: .zero, dip: 0, magStatus: "N", declination: declination, declinationSource: nil)
        a.roll = roll
        a.pitch = pitch
        a.rateOfTurn = rateOfTurn
        return a
    }
}

final class NMEA0183Tests: XCTestCase {
    /// 2024-05-01T12:00:00Z.
    static let noon = GPSTimestamp(seconds: 1_714_564_800)

    func attitude(heading: Double? = nil, magnetic: Double = 0, declination: Double? = nil,
                  roll: Double? = nil, pitch: Double? = nil, rateOfTurn: Double? = nil) -> Attitude {
        .marine(heading: heading, magnetic: magnetic, declination: declination, roll: roll, pitch: pitch, rateOfTurn: rateOfTurn)
    }

    /// 2024-05-01T12:34:56.789Z.
    func fix(mode: FixMode = .threeD, latitude: Double? = nil, longitude: Double? = nil, speed: Double? = nil,
             track: Double? = nil, time: GPSTimestamp? = GPSTimestamp(seconds: 1_714_566_896, nanoseconds: 789_000_000)) -> GPSFix {
        var f = GPSFix(mode: mode, time: time, latitude: latitude, longitude: longitude)
        f.speed = speed
        f.track = track
        return f
    }

    let hc = NMEA0183Encoder()

    func fits(_ sentence: String?, file: StaticString = #filePath, line: UInt = #line) {
        guard let sentence else { return XCTFail("no sentence", file: file, line: line) }
        XCTAssertLessThanOrEqual(sentence.utf8.count + 2, NMEA0183.maximumLength, sentence, file: file, line: line)
    }

    // MARK: framing

    func testChecksumOfPublishedSentences() {
        // Signal K's definitions.json example and the classic RMC example of NMEA references, checked by hand.
        XCTAssertEqual(NMEA0183.checksum("GPRMC,092750.000,A,5321.6802,N,00630.3372,W,0.02,31.66,280511,,,A"), 0x43)
        XCTAssertEqual(NMEA0183.checksum("GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W"), 0x6A)
        XCTAssertEqual(NMEA0183.checksum(""), 0)
        let line = "$GPRMC,092750.000,A,5321.6802,N,00630.3372,W,0.02,31.66,280511,,,A*43"
        let body = line.dropFirst().prefix { $0 != "*" }
        XCTAssertEqual(NMEA0183.checksum(body), 0x43)  // a Substring
    }

    func testSentenceFraming() {
        XCTAssertEqual(NMEA0183.sentence("GPRMC", ["123519", "A", "4807.038", "N", "01131.000", "E", "022.4", "084.4",
                                                   "230394", "003.1", "W"]),
                       "$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A")
        // Checksums below 0x10 keep two digits.
        XCTAssertEqual(NMEA0183.sentence("HCHDG", ["0.0", "", "", "12.3", "W"]), "$HCHDG,0.0,,,12.3,W*0B")
        XCTAssertEqual(NMEA0183.maximumLength, 82)
    }

    func testTalker() {
        XCTAssertEqual(hc.talker, "HC")
        XCTAssertTrue(NMEA0183Encoder.validTalker("HC"))
        XCTAssertTrue(NMEA0183Encoder.validTalker("GP"))
        for bad in ["", "H", "hc", "HCX", "H1", "H ", "ÄB"] { XCTAssertFalse(NMEA0183Encoder.validTalker(bad), bad) }
        XCTAssertEqual(NMEA0183Encoder(talker: "HE").hdt(attitude(heading: 123.4)), "$HEHDT,123.4,T*2B")
        XCTAssertEqual(NMEA0183SentenceType.allCases.map(\.rawValue), ["HDT", "HDM", "HDG", "ROT", "XDR", "RMC"])
        XCTAssertEqual(NMEA0183SentenceType(rawValue: "XDR"), .xdr)
    }

    // MARK: headings

    func testHeadings() {
        let a = attitude(heading: 123.4, magnetic: 110.5, declination: 12.9)
        XCTAssertEqual(hc.hdt(a), "$HCHDT,123.4,T*2D")
        XCTAssertEqual(hc.hdm(a), "$HCHDM,110.5,M*2C")
        XCTAssertEqual(hc.hdg(a), "$HCHDG,110.5,,,12.9,E*16")
        XCTAssertNil(hc.hdt(attitude(heading: nil, magnetic: 110.5)))
        XCTAssertNil(hc.hdt(attitude(heading: .nan, magnetic: 110.5)))
        XCTAssertEqual(hc.hdm(attitude(magnetic: .nan)), "$HCHDM,,M*07")
    }

    func testHeadingsStayBelow360AfterRounding() {
        XCTAssertEqual(hc.hdt(attitude(heading: 359.97)), "$HCHDT,0.0,T*29")
        XCTAssertEqual(hc.hdm(attitude(magnetic: 359.96)), "$HCHDM,0.0,M*29")
        XCTAssertEqual(hc.hdm(attitude(magnetic: 359.94)), "$HCHDM,359.9,M*2F")
        XCTAssertEqual(hc.hdm(attitude(magnetic: -0.0)), "$HCHDM,0.0,M*29")
        XCTAssertEqual(hc.hdm(attitude(magnetic: -0.01)), "$HCHDM,0.0,M*29")  // 359.99
        XCTAssertEqual(hc.hdm(attitude(magnetic: 360)), "$HCHDM,0.0,M*29")
        XCTAssertEqual(hc.hdm(attitude(magnetic: -249.5)), "$HCHDM,110.5,M*2C")
        for h in stride(from: -720.0, through: 720, by: 0.013) {
            let text = NMEA0183.direction(h)
            let v = Double(text)!
            XCTAssertTrue(v >= 0 && v < 360, "\(h) → \(text)")
            XCTAssertFalse(text.hasPrefix("-"), "\(h) → \(text)")
        }
    }

    /// With a deviation curve in force HDG carries the sensor heading and the deviation (NMEA: magnetic =
    /// sensor + deviation east), as Signal K's parser maps it to headingCompass and magneticDeviation.
    func testHDGDeviation() {
        var a = attitude(heading: 123.4, magnetic: 110.5, declination: 12.9)
        a.deviation = -4
        XCTAssertEqual(a.compassHeading, 114.5, accuracy: 1e-9)
        XCTAssertEqual(hc.hdg(a), NMEA0183.sentence("HCHDG", ["114.5", "4.0", "W", "12.9", "E"]))
        a.deviation = 2.3
        XCTAssertTrue(hc.hdg(a).hasPrefix("$HCHDG,108.2,2.3,E,12.9,E*"), hc.hdg(a))
        XCTAssertEqual(hc.hdm(a), "$HCHDM,110.5,M*2C", "HDM stays the magnetic heading")
    }

    func testHDGVariation() {
        XCTAssertEqual(hc.hdg(attitude(declination: -12.3)), "$HCHDG,0.0,,,12.3,W*0B")
        XCTAssertEqual(hc.hdg(attitude(declination: 5)), "$HCHDG,0.0,,,5.0,E*2C")
        // Unknown: both fields empty, never 0.0.
        XCTAssertEqual(hc.hdg(attitude(declination: nil)), "$HCHDG,0.0,,,,*42")
        // A known variation that rounds to zero has no sign: 0.0,E.
        XCTAssertEqual(hc.hdg(attitude(declination: -0.04)), "$HCHDG,0.0,,,0.0,E*29")
        XCTAssertEqual(hc.hdg(attitude(declination: 0)), "$HCHDG,0.0,,,0.0,E*29")
    }

    // MARK: ROT, XDR

    func testRateOfTurn() {
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: nil)), "$HCROT,,V*14")
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: -12.34)), "$HCROT,-12.3,A*30")
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: 45)), "$HCROT,45.0,A*1C")
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: -0.04)), "$HCROT,0.0,A*2D")
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: .infinity)), "$HCROT,,V*14")
        XCTAssertEqual(hc.rot(attitude(rateOfTurn: 1e300)), "$HCROT,,V*14")
        fits(hc.rot(attitude(rateOfTurn: -99_999.9)))
    }

    func testXDRPitchAndRoll() {
        XCTAssertEqual(hc.xdr(attitude(roll: -10.26, pitch: 3.14)), "$HCXDR,A,3.1,D,PTCH,A,-10.3,D,ROLL*4A")
        XCTAssertEqual(hc.xdr(attitude(roll: -0.06, pitch: -0.01)), "$HCXDR,A,0.0,D,PTCH,A,-0.1,D,ROLL*7B")
        XCTAssertNil(hc.xdr(attitude(roll: nil, pitch: 3)))
        XCTAssertNil(hc.xdr(attitude(roll: 3, pitch: nil)))
        XCTAssertNil(hc.xdr(attitude(roll: .nan, pitch: 3)))
        // Angles are wrapped, so the width is bounded.
        let wild = hc.xdr(attitude(roll: -179.99, pitch: 1e12))
        fits(wild)
        XCTAssertTrue(wild!.contains(",D,PTCH,A,-180.0,D,ROLL*"), wild!)
    }

    // MARK: RMC

    func testRMCWithFix() {
        let f = fix(latitude: 53 + 21.6802 / 60, longitude: -(6 + 30.3372 / 60), speed: 0.02 * 1852 / 3600, track: 31.66,
                    time: GPSTimestamp(seconds: 1_306_574_870))
        XCTAssertEqual(NMEA0183Encoder(talker: "GP").rmc(f, variation: nil),
                       "$GPRMC,092750.00,A,5321.68020,N,00630.33720,W,0.02,31.7,280511,,,A*44")
    }

    func testRMCWithoutFix() {
        let f = fix(mode: .noFix, speed: 3, track: 90)
        XCTAssertEqual(hc.rmc(f, variation: nil), "$HCRMC,123456.78,V,,,,,,,010524,,,N*6B")
        XCTAssertEqual(hc.rmc(f, variation: -12.3), "$HCRMC,123456.78,V,,,,,,,010524,12.3,W,N*22")
        // A 3D mode without coordinates, or a 1D mode with stale ones, is no position either.
        XCTAssertEqual(hc.rmc(fix(mode: .threeD, latitude: nil, longitude: 3), variation: nil),
                       "$HCRMC,123456.78,V,,,,,,,010524,,,N*6B")
        XCTAssertEqual(hc.rmc(fix(mode: .noFix, latitude: 1, longitude: 2), variation: nil),
                       "$HCRMC,123456.78,V,,,,,,,010524,,,N*6B")
        XCTAssertTrue(hc.rmc(fix(latitude: 91, longitude: 0), variation: nil)!.hasPrefix("$HCRMC,123456.78,V,,,,,"))
        XCTAssertNil(hc.rmc(fix(latitude: 1, longitude: 2, time: nil), variation: 3))
    }

    func testRMCExtremesFit() {
        let f = fix(latitude: -89.99999, longitude: -179.99999, speed: 999 * 1852 / 3600, track: 359.99)
        let s = hc.rmc(f, variation: -179.96)
        XCTAssertEqual(s, "$HCRMC,123456.78,A,8959.99940,S,17959.99940,W,999.00,0.0,010524,180.0,W,A*00")
        fits(s)
        // 1000 knots does not fit the field: left empty rather than cut.
        XCTAssertEqual(hc.rmc(fix(latitude: -89.99999, longitude: -179.99999, speed: 1000 * 1852 / 3600, track: 359.99),
                              variation: -179.96),
                       "$HCRMC,123456.78,A,8959.99940,S,17959.99940,W,,0.0,010524,180.0,W,A*17")
        XCTAssertEqual(hc.rmc(fix(latitude: 1, longitude: 1, speed: -1), variation: nil)!.split(separator: ",", omittingEmptySubsequences: false)[7], "")
        // Every sentence at its widest.
        let a = attitude(heading: 359.9, magnetic: 359.9, declination: -179.9, roll: -179.9, pitch: -179.9, rateOfTurn: -99_999.9)
        for s in [hc.hdt(a), hc.hdm(a), hc.hdg(a), hc.rot(a), hc.xdr(a)] { fits(s) }
        for lat in [-90.0, -89.999999, 0, 90] {
            for lon in [-180.0, -179.999999, 180] {
                fits(hc.rmc(fix(latitude: lat, longitude: lon, speed: 514, track: -0.01), variation: 180))
            }
        }
    }

    func testRMCRoundingAndOrigin() {
        // 59.999999′ rounds up into the next degree; zero position is N and E; midnight; speed 0.
        let f = fix(latitude: 0, longitude: -0.0, speed: 0, track: nil, time: GPSTimestamp(seconds: 1_714_521_600))
        XCTAssertEqual(hc.rmc(f, variation: nil), "$HCRMC,000000.00,A,0000.00000,N,00000.00000,E,0.00,,010524,,,A*5E")
        let (text, hemisphere) = NMEA0183Encoder.coordinate(12.999999999, degreeDigits: 2, positive: "N", negative: "S")
        XCTAssertEqual(text, "1300.00000")
        XCTAssertEqual(hemisphere, "N")
        XCTAssertEqual(NMEA0183Encoder.coordinate(-0.0000000001, degreeDigits: 3, positive: "E", negative: "W").1, "E")
        XCTAssertEqual(NMEA0183Encoder.coordinate(-7.5, degreeDigits: 3, positive: "E", negative: "W").0, "00730.00000")
    }
}
