import BearingModel
import BearingWire
import XCTest

/// `WireMessage` reads back what `WireEncoding` writes.
final class WireMessageTests: XCTestCase {
    func testTPVSKYATTMAGRoundTrip() throws {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_748_772_000, nanoseconds: 500_000_000), latitude: 50.800018333, longitude: -1.0999685)
        f.altHAE = 59.8; f.speed = 3.011; f.track = 47.2; f.eph = 20.9; f.status = 2; f.device = "/dev/ttyAMA0"
        XCTAssertEqual(try WireMessage(line: WireEncoding.tpv(f)).fix, f)
        var s = SkyView(satellites: [Satellite(prn: 9, elevation: 88, azimuth: 89, signalStrength: 31, used: true, gnssID: 0, svID: 9)])
        s.hdop = 0.84
        XCTAssertEqual(try WireMessage(line: WireEncoding.sky(s)).sky, s)
        let a = Attitude(time: GPSTimestamp(seconds: 1_748_772_000), device: "i2c:/dev/i2c-1:0x1e", heading: 12.5, magneticHeading: 11.25,
                         field: Vector3(20.125, -3.5, 40.25), dip: 63.125, magStatus: "N", declination: 1.25, declinationSource: .fix)
        XCTAssertEqual(try WireMessage(line: WireEncoding.att(a)).attitude, a)
        let m = MagneticSample(time: GPSTimestamp(seconds: 1), device: "i2c:x", chip: "qmc5883l", field: Vector3(1.5, 2.5, -3.5))
        XCTAssertEqual(try WireMessage(line: WireEncoding.mag(m)).magneticSample, m)
    }

    func testGpsdsATTIsNotTakenForACompassReading() throws {
        let m = try WireMessage(line: #"{"class":"ATT","device":"/dev/pts/1","heading":10.000}"#)
        XCTAssertNil(m.attitude)
        XCTAssertEqual(m.number("heading"), 10)
    }

    func testNotAnObjectSaysWhy() {
        XCTAssertThrowsError(try WireMessage(line: "[1]")) { XCTAssertEqual("\($0)", "not a JSON object") }
        XCTAssertThrowsError(try WireMessage(line: #"{"x":1}"#)) { XCTAssertEqual("\($0)", "no \"class\"") }
        XCTAssertThrowsError(try WireMessage(line: "{")) { XCTAssertTrue("\($0)".hasPrefix("not JSON: ")) }
    }
}
