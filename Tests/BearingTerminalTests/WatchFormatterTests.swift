import BearingTerminal
import BearingWire
import XCTest

/// `bearing watch`'s readable lines, one per gpsd object.
final class WatchFormatterTests: XCTestCase {
    func line(_ json: String) throws -> String { WatchFormatter.line(try WireMessage(line: json)) }

    func testFixesAttitudesAndOverflowsReadAsALine() throws {
        XCTAssertEqual(try line(#"{"class":"TPV","mode":3,"time":"2026-11-28T12:00:00.000Z","lat":-33.9,"lon":151.2,"altHAE":12.34,"speed":1.5,"track":270.25,"eph":3.1}"#),
                       "TPV    2026-11-28T12:00:00.000Z  3D  33.900000°S 151.200000°E  alt 12.3 m  1.50 m/s  track 270.2°  ±3.1 m")
        XCTAssertEqual(try line(#"{"class":"ATT","time":"2026-11-28T12:00:00.000Z","heading":101.26,"mheading":100.0,"mag_st":"N","device":"i2c:/dev/i2c-1:0x0d"}"#),
                       "ATT    2026-11-28T12:00:00.000Z  101.3° true  100.0° magnetic  mag_st N  (i2c:/dev/i2c-1:0x0d)")
        XCTAssertEqual(try line(#"{"class":"OVERFLOW","dropped":7}"#), "OVERFLOW  7 messages dropped: this client read too slowly")
        XCTAssertEqual(try line(#"{"class":"TOFF","real_sec":1}"#), #"TOFF  {"class":"TOFF","real_sec":1}"#)
    }
}
