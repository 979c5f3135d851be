import BearingModel
@testable import BearingMQTT
import CGPS
import TestSupport
@testable import BearingGPSD
import Synchronization
import BearingWire
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
            XCTAssertEqual(s.satellites?.count, 2)
            XCTAssertEqual(s.satellites?.first, Satellite(prn: 9, elevation: 88, azimuth: 89, signalStrength: 31, used: true, gnssID: 0, svID: 0))
            XCTAssertEqual(s.satellites?.last, Satellite(prn: 47, used: false, gnssID: 1, svID: 134))
            XCTAssertEqual(s.usedCount, 1)
        }
    }

    func testAbsurdSatelliteCountIsClamped() {
        withData { d in
            d.pointee.satellites_visible = 100_000
            XCTAssertEqual(GPSDMessage.sky(from: d).satellites?.count, Int(MAXCHANNELS))
            d.pointee.satellites_visible = -3
            XCTAssertEqual(GPSDMessage.sky(from: d).satellites?.count, 0)
        }
    }

    /// gpsd 3.25 reports, between the SKYs that list the satellites, SKYs of DOPs and `uSat` only (from GSA): through
    /// libgps's own parser, the first is the list and the second no list at all, never an empty one, which says no
    /// satellite is seen (libgps 3.25 reads it as none, 3.22 keeps the last list).
    func testASkyOfDOPsOnlyListsNoSatellites() {
        final class Skies: GPSDClientDelegate {
            let seen = Mutex<[SkyView]>([])
            func gpsdClient(_ client: GPSDClient, didReceive fix: GPSFix) {}
            func gpsdClient(_ client: GPSDClient, didReceive sky: SkyView) { seen.withLock { $0.append(sky) } }
            func gpsdClient(_ client: GPSDClient, didReceive relayed: RelayedObject) {}
            func gpsdClient(_ client: GPSDClient, didChangeState state: ConnectionState) {}
            func gpsdClient(_ client: GPSDClient, didFail error: GPSDClientError) {}
        }
        let skies = Skies()
        let replay = GPSDReplay(client: GPSDClient(configuration: .init(), delegate: skies))
        // As Debian 13's gpsd 3.25 wrote them for the generated track (gpspipe -w).
        let lines = [
            #"{"class":"SKY","device":"/dev/pts/1","gdop":2.14,"hdop":1.10,"pdop":1.80,"tdop":1.00,"xdop":0.79,"ydop":0.95,"vdop":1.30,"nSat":2,"uSat":1,"satellites":[{"PRN":2,"gnssid":0,"svid":2,"az":211.0,"el":71.0,"ss":44.0,"used":true},{"PRN":5,"gnssid":0,"svid":5,"az":62.0,"el":43.0,"ss":41.0,"used":false}]}"#,
            #"{"class":"SKY","device":"/dev/pts/1","hdop":1.20,"pdop":1.80,"vdop":1.30,"uSat":7}"#,
            #"{"class":"SKY","device":"/dev/pts/1","hdop":1.30}"#,
        ]
        for line in lines { XCTAssertGreaterThanOrEqual(replay.replay(Array(line.utf8)), 0, line) }
        let seen = skies.seen.withLock { $0 }
        XCTAssertEqual(seen.count, 3)
        guard seen.count == 3 else { return }
        XCTAssertEqual(seen[0].satellites?.map(\.prn), [2, 5])
        XCTAssertEqual(seen[0].usedCount, 1)
        XCTAssertNil(seen[1].satellites, "a SKY of DOPs only lists no satellites")
        XCTAssertEqual(seen[1].usedCount, 7, "gpsd's uSat")
        XCTAssertEqual(seen[1].hdop, 1.2)
        XCTAssertNil(seen[2].satellites)
        XCTAssertNil(seen[2].usedCount, "neither a list nor uSat")
        // And written as gpsd wrote it: no nSat, no list.
        XCTAssertEqual(WireEncoding.encode(.sky(seen[1])), #"{"class":"SKY","device":"/dev/pts/1","vdop":1.30,"hdop":1.20,"pdop":1.80,"uSat":7}"#)
    }

    func testClassNameOfRawMessage() {
        let cases: [(String, String?)] = [(#"{"class":"TPV","mode":3}"#, "TPV"), (#"{"class":"SKY"}"#, "SKY"), ("garbage", nil), ("", nil)]
        for (text, expected) in cases {
            text.withCString { XCTAssertEqual(GPSDMessage.className($0), expected, text) }
        }
    }
}
