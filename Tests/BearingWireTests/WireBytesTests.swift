import BearingModel
import BearingWire
import XCTest

/// A door that sends bytes (the MQTT spool) encodes each value once, straight into its buffer: the bytes are
/// the line's, to the byte, for every class, with and without `fields` and a sequence number.
final class WireBytesTests: XCTestCase {
    func reports() throws -> [Report] {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_780_000_000, nanoseconds: 250_000_000), latitude: 50.123456789, longitude: -1.5)
        f.speed = 3.25; f.track = 271.5; f.altHAE = 12.5; f.device = "/dev/ttyACM0"
        var s = SkyView(satellites: [Satellite(prn: 9, elevation: 88, azimuth: 89, signalStrength: 31, used: true, gnssID: 0, svID: 9),
                                     Satellite(prn: 47, elevation: nil, azimuth: nil, signalStrength: nil, used: false)])
        s.hdop = 0.9
        let a = Attitude(time: GPSTimestamp(seconds: 1_780_000_000), device: "i2c:sim:0x0d", heading: 12.5, magneticHeading: 11.25,
                         field: Vector3(20, 1, 40), dip: 63, magStatus: "N", declination: 1.25, declinationSource: .fix)
        let r = try XCTUnwrap(RelayedObject(line: #"{"class":"TOFF","device":"d","real_sec":1622548801,"real_nsec":500000000}"#))
        return [Report(.fix(f)), Report(.sky(s)), Report(.attitude(a)), Report(.relayed(r))]
    }

    func testTheBytesAreTheLinesToTheByte() throws {
        for report in try reports() {
            for keep in [nil, Set(["time", "lat", "heading", "hdop", "real_sec"])] as [Set<String>?] {
                for seq in [nil, 0, 42, UInt64.max] as [UInt64?] {
                    var out = Array("prefix\t".utf8)
                    WireEncoding.encode(report.payload, keep: keep, seq: seq, appendingTo: &out)
                    XCTAssertEqual(out, Array("prefix\t".utf8) + Array(WireEncoding.encode(report.payload, keep: keep, seq: seq).utf8),
                                   "\(report.payload) keep \(keep.map { "\($0.sorted())" } ?? "all") seq \(seq.map { "\($0)" } ?? "none")")
                }
            }
            var line: [UInt8] = []
            report.appendLine(seq: 7, to: &line)
            XCTAssertEqual(String(decoding: line, as: UTF8.self), report.line(seq: 7))
        }
    }
}
