import BearingModel
@testable import BearingMQTT
import CGPS
import TestSupport
@testable import BearingGPSD
import XCTest

/// Conversion of libgps's `gps_data_t` into Bearing's values: NaN becomes nil, zero time becomes nil.
final class LibgpsConversionTests: XCTestCase {
    func withData(_ body: (UnsafeMutablePointer<gps_data_t>) -> Void) {
        let p = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        p.initialize(to: gps_data_t())
        gps_clear_fix(&p.pointee.fix)   // libgps's own "nothing known": every double NaN
        gps_clear_dop(&p.pointee.dop)
        body(p)
        p.deallocate()
    }

    func testEmptyFixIsAllNil() {
        withData { d in
            d.pointee.fix.mode = MODE_NO_FIX
            let f = GPSDMessage.fix(from: d)
            XCTAssertEqual(f, GPSFix(mode: .noFix))
        }
    }

    func testPartialFix() {
        withData { d in
            d.pointee.fix.mode = MODE_2D
            d.pointee.fix.latitude = 44.068843333
            d.pointee.fix.longitude = -121.314191667
            d.pointee.fix.time = timespec(tv_sec: 2_048_000_000, tv_nsec: 500_000_000)
            d.pointee.fix.speed = 0.015
            d.pointee.fix.status = Int32(bearing_status_dgps)
            let f = GPSDMessage.fix(from: d)
            XCTAssertEqual(f.mode, .twoD)
            XCTAssertEqual(f.latitude, 44.068843333)
            XCTAssertEqual(f.time, GPSTimestamp(seconds: 2_048_000_000, nanoseconds: 500_000_000))
            XCTAssertEqual(f.speed, 0.015)
            XCTAssertEqual(f.status, 2)
            XCTAssertNil(f.altHAE)
            XCTAssertNil(f.track)
            XCTAssertNil(f.eph)
        }
    }

    func testUnknownModeBecomesNotSeen() {
        withData { d in
            d.pointee.fix.mode = 7
            XCTAssertEqual(GPSDMessage.fix(from: d).mode, .notSeen)
        }
    }

    func testSkyView() {
        withData { d in
            d.pointee.satellites_visible = 2
            d.pointee.dop.hdop = 0.84
            withUnsafeMutableBytes(of: &d.pointee.skyview) { raw in
                let sats = raw.bindMemory(to: satellite_t.self)
                sats[0] = satellite_t()
                sats[0].PRN = 9; sats[0].elevation = 88; sats[0].azimuth = 89; sats[0].ss = 31; sats[0].used = true
                sats[1] = satellite_t()
                sats[1].PRN = 47; sats[1].elevation = .nan; sats[1].azimuth = .nan; sats[1].ss = .nan; sats[1].gnssid = 1; sats[1].svid = 134
            }
            let s = GPSDMessage.sky(from: d)
            XCTAssertEqual(s.hdop, 0.84)
            XCTAssertNil(s.vdop)
            XCTAssertEqual(s.satellites.count, 2)
            XCTAssertEqual(s.satellites[0], Satellite(prn: 9, elevation: 88, azimuth: 89, signalStrength: 31, used: true, gnssID: 0, svID: 0))
            XCTAssertEqual(s.satellites[1], Satellite(prn: 47, used: false, gnssID: 1, svID: 134))
            XCTAssertEqual(s.usedCount, 1)
        }
    }

    func testAbsurdSatelliteCountIsClamped() {
        withData { d in
            d.pointee.satellites_visible = 100_000
            XCTAssertEqual(GPSDMessage.sky(from: d).satellites.count, Int(MAXCHANNELS))
            d.pointee.satellites_visible = -3
            XCTAssertEqual(GPSDMessage.sky(from: d).satellites.count, 0)
        }
    }

    func testClassNameOfRawMessage() {
        let cases: [(String, String?)] = [(#"{"class":"TPV","mode":3}"#, "TPV"), (#"{"class":"SKY"}"#, "SKY"), ("garbage", nil), ("", nil)]
        for (text, expected) in cases {
            text.withCString { XCTAssertEqual(GPSDMessage.className($0), expected, text) }
        }
    }
}
