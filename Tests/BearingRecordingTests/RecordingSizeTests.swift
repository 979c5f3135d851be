import BearingModel
import BearingRecording
import Foundation
import XCTest

/// What an hour of recording costs on disk, from a synthetic minute: 100 Hz IMU and magnetometer samples,
/// 1 Hz TPV and SKY, one-second frames. Logged, not asserted: the number is the documentation's.
final class RecordingSizeTests: XCTestCase {
    static let seconds = 60

    struct Satellite {
        var prn: Int
        var el: Double
        var az: Double
        var ss: Double
        var used: Bool
    }

    /// A minute of events, in time order; `imu`, `magnetometer` and `gpsd` choose the streams.
    static func minute(imu: Bool = true, magnetometer: Bool = true, gpsd: Bool = true) -> [RecordedEvent] {
        var rng = SplitMix64(seed: 42)
        var events: [RecordedEvent] = []
        let start: UInt64 = 3_600_000_000
        let wall0 = GPSTimestamp(seconds: 1_748_779_200, nanoseconds: 0)
        func noise(_ r: inout SplitMix64) -> Double { Double(Int.random(in: -20...20, using: &r)) }
        /// The wall-clock stamp of a sample read `latency` nanoseconds before it entered the pipeline at `t`.
        func stamp(_ t: UInt64, _ r: inout SplitMix64) -> GPSTimestamp {
            let ns = Int64(t - start) * 1_000 + 250_000_000 - Int64.random(in: 20_000...120_000, using: &r)
            return GPSTimestamp(seconds: wall0.seconds + ns / 1_000_000_000, nanoseconds: Int32(ns % 1_000_000_000))
        }
        let prns = [1, 3, 4, 7, 8, 9, 14, 16, 21, 27, 30, 65, 66, 72, 73, 81, 82, 88, 2, 5, 11, 24, 25, 34, 36]
        var satellites: [Satellite] = []
        for (k, prn) in prns.enumerated() {
            let el = Double(5 + (k * 37) % 80), az = Double((k * 97) % 360), ss = Double(18 + (k * 13) % 30)
            satellites.append(Satellite(prn: prn, el: el, az: az, ss: ss, used: k % 2 == 0))
        }
        for second in 0..<seconds {
            let base = start + UInt64(second) * 1_000_000
            for k in 0..<100 {
                let x = Double(second * 100 + k) / 100 // seconds
                if imu {
                    let t = base + UInt64(k) * 10_000 + UInt64.random(in: 0...300, using: &rng)
                    let roll = sin(x * 2 * .pi / 8), pitch = sin(x * 2 * .pi / 6.5)
                    let values = [570 * cos(x * 2 * .pi / 8), 400 * cos(x * 2 * .pi / 6.5), 30 * sin(x / 20),
                                  1_600 * roll, 1_300 * pitch, 16_300 - 40 * abs(roll)].map { Int16(($0 + noise(&rng)).rounded()) }
                    events.append(RecordedEvent(time: t, .sensorSample(.imu, time: stamp(t, &rng), transactions: Samples.imu(values))))
                }
                if magnetometer {
                    let t = base + UInt64(k) * 10_000 + 5_000 + UInt64.random(in: 0...300, using: &rng)
                    let heading = x * 2 * .pi / 600 + 0.05 * sin(x * 2 * .pi / 8)
                    let values = [2_200 * cos(heading), -2_200 * sin(heading), -4_100 + 60 * sin(x * 2 * .pi / 6.5)]
                        .map { Int16(($0 + noise(&rng)).rounded()) }
                    events.append(RecordedEvent(time: t, .sensorSample(.magnetometer, time: stamp(t, &rng), transactions: Samples.magnetometer(values))))
                }
            }
            if gpsd {
                let time = "2025-06-01T12:\(String(format: "%02d:%02d", second / 60, second % 60)).000Z"
                let x = Double(second)
                let tpv = String(format: #"{"class":"TPV","device":"/dev/ttyACM0","status":2,"mode":3,"time":"%@","ept":0.005,"lat":%.9f,"lon":%.9f,"altHAE":%.3f,"altMSL":%.3f,"epx":%.3f,"epy":%.3f,"epv":%.3f,"track":%.4f,"magvar":1.7,"speed":%.3f,"climb":%.3f,"eps":%.2f,"eph":%.3f,"sep":%.3f}"#,
                                 time, 59.912345678 + x * 1.3e-5, 10.751234567 + x * 2.1e-5, 45.1 + 0.3 * sin(x / 9), 20.4 + 0.3 * sin(x / 9),
                                 2.3 + 0.1 * sin(x / 7), 3.0 + 0.1 * cos(x / 7), 5.1 + 0.2 * sin(x / 5), 41.2 + 2 * sin(x / 11),
                                 2.5 + 0.2 * sin(x / 3), 0.01 * sin(x), 0.6 + 0.05 * sin(x / 4), 3.4 + 0.1 * sin(x / 7), 6.8 + 0.2 * sin(x / 5))
                events.append(RecordedEvent(time: base + 120_000 + UInt64.random(in: 0...2_000, using: &rng), .gpsd(Array(tpv.utf8))))
                for k in satellites.indices {
                    if Int.random(in: 0..<3, using: &rng) == 0 { satellites[k].ss += Double(Int.random(in: -1...1, using: &rng)) }
                    if second % 12 == k % 12 { satellites[k].el += 0.1; satellites[k].az += 0.1 }
                }
                if second % 17 == 5 { satellites[second % 25].used.toggle() }
                var sky = String(format: #"{"class":"SKY","device":"/dev/ttyACM0","time":"%@","xdop":%.2f,"ydop":%.2f,"vdop":%.2f,"tdop":%.2f,"hdop":%.2f,"gdop":%.2f,"pdop":%.2f,"nSat":25,"uSat":%d,"satellites":["#,
                                 time, 0.54 + 0.01 * Double(second / 10), 0.61, 0.92, 0.63, 0.81, 1.34 + 0.01 * Double(second / 15), 1.23,
                                 satellites.filter { $0.used }.count)
                sky += satellites.map { (s: Satellite) -> String in
                    String(format: #"{"PRN":%d,"el":%.1f,"az":%.1f,"ss":%.1f,"used":%@,"gnssid":%d,"svid":%d,"sigid":0,"freqid":0,"health":1,"qual":7}"#,
                           s.prn, s.el, s.az, s.ss, s.used ? "true" : "false", s.prn > 64 ? 6 : 0, s.prn > 64 ? s.prn - 64 : s.prn)
                }.joined(separator: ",") + "]}"
                events.append(RecordedEvent(time: base + 180_000 + UInt64.random(in: 0...2_000, using: &rng), .gpsd(Array(sky.utf8))))
            }
        }
        return events.sorted { $0.time < $1.time }
    }

    /// The events in one-second frames, as a file.
    static func file(_ events: [RecordedEvent]) -> [UInt8] {
        var bytes = RecordingFormat.header
        var encoder = FrameEncoder()
        for e in events {
            if let first = encoder.firstTime, e.time / 1_000_000 != first / 1_000_000 { bytes += encoder.finishFrame()! }
            encoder.append(e)
        }
        bytes += encoder.finishFrame() ?? []
        return bytes
    }

    func testAnHourOfRecordingRoundTripsAndItsSizeIsLogged() throws {
        let events = Self.minute()
        let bytes = Self.file(events)
        let (read, tail) = try readAll(bytes)
        XCTAssertNil(tail)
        XCTAssertEqual(read.count, events.count)
        XCTAssertTrue(read == events, "the minute reads back as written")

        func perHour(_ bytes: [UInt8]) -> Double { Double(bytes.count - 16) * 3_600 / Double(Self.seconds) }
        let imu = perHour(Self.file(Self.minute(magnetometer: false, gpsd: false)))
        let magnetometer = perHour(Self.file(Self.minute(imu: false, gpsd: false)))
        let gpsd = perHour(Self.file(Self.minute(imu: false, magnetometer: false)))
        var raw = 0
        for e in events {
            if case .gpsd(let m) = e.record { raw += m.count }
        }
        func mb(_ v: Double) -> String { String(format: "%.2f MB", v / 1e6) }
        print("black box: \(mb(perHour(bytes)))/hour (\(Int(perHour(bytes))) bytes): IMU \(mb(imu)), magnetometer \(mb(magnetometer)), "
            + "gpsd \(mb(gpsd)) (its JSON: \(mb(Double(raw) * 3_600 / Double(Self.seconds))))")
    }
}
