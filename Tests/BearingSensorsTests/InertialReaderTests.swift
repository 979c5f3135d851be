import BearingModel
import BearingPOSIX
@testable import BearingSensors
import BearingSimulator
import Foundation
import XCTest

/// `InertialReader` (and the reader loop it shares with `MagnetometerReader`) against register models on
/// a simulated bus: find and identify, read and stamp, lose the chip and find it again.
final class InertialReaderTests: XCTestCase {
    /// What a reader reported, in order; `wait` blocks (bounded) until a condition on it holds.
    final class Recorder<Sample>: SensorReaderDelegate, @unchecked Sendable { // `condition` guards `events`
        enum Event: Equatable {
            case sample(String, Vector3)
            case state(ConnectionState)
            case failure(String)
        }
        private let condition = NSCondition()
        private var events: [Event] = []
        private let describe: (Sample) -> (device: String, value: Vector3)
        var received: [Sample] = []
        /// When set (before the reader starts), the delegate call for that sample (counted from 1) blocks the
        /// reader's thread for that long, as a busy CPU would.
        var stall: (sample: Int, seconds: Double)?

        init(_ describe: @escaping (Sample) -> (device: String, value: Vector3)) { self.describe = describe }

        private func add(_ e: Event) { condition.lock(); events.append(e); condition.broadcast(); condition.unlock() }

        func sensorReader(didReceive sample: Sample) {
            condition.lock(); received.append(sample); let n = received.count; condition.unlock()
            if let stall, n == stall.sample { usleep(UInt32(stall.seconds * 1e6)) }
            let d = describe(sample)
            add(.sample(d.device, d.value))
        }
        func sensorReader(didChangeState state: ConnectionState) { add(.state(state)) }
        func sensorReader(didFail error: SensorError) { add(.failure(error.description)) }

        /// Waits up to `timeout` for `done` to hold over the events so far; returns them.
        @discardableResult
        func wait(_ timeout: Double = 10, until done: ([Event]) -> Bool) -> [Event] {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock(); defer { condition.unlock() }
            while !done(events), condition.wait(until: deadline) {}
            return events
        }

        func samples(after index: Int = 0) -> Int {
            condition.lock(); defer { condition.unlock() }
            return events.dropFirst(index).filter { if case .sample = $0 { return true }; return false }.count
        }
        var count: Int { condition.lock(); defer { condition.unlock() }; return events.count }
        /// The samples delivered so far.
        var delivered: [Sample] { condition.lock(); defer { condition.unlock() }; return received }
    }

    typealias Event = Recorder<InertialSample>.Event

    /// Recorders of each reader's samples: the device and the acceleration or field.
    static func inertialRecorder() -> Recorder<InertialSample> { Recorder { ($0.device, $0.acceleration) } }
    static func magneticRecorder() -> Recorder<MagneticSample> { Recorder { ($0.device, $0.field) } }

    static func sampleCount<S>(_ events: [Recorder<S>.Event]) -> Int {
        events.filter { if case .sample = $0 { return true }; return false }.count
    }

    func reader(_ bus: SimulatedI2CBus, chip: String? = nil, rate: Double = 200) -> (InertialReader, Recorder<InertialSample>) {
        var c = InertialReader.Configuration()
        c.bus = bus.path
        c.chip = chip
        c.settings.rate = rate
        c.retryInitial = 0.01
        c.retryMax = 0.05
        let r = InertialReader(configuration: c, openBus: { _ in bus }, now: GPSTimestamp.now)
        let recorder = Self.inertialRecorder()
        r.delegate = recorder
        return (r, recorder)
    }

    func testFindsIdentifiesAndReadsTheChipWithTimestamps() throws {
        let bus = SimulatedI2CBus(path: "sim")
        let tilted = Motion(specificForce: Vector3(0, 3.0, 9.3), angularRate: Vector3(0.1, -0.2, 0.3))
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { tilted }
        let (r, rec) = reader(bus)
        XCTAssertEqual(r.endpoint, "i2c:sim")
        let before = GPSTimestamp.now()
        r.start()
        defer { r.stop() }
        let events = rec.wait { Self.sampleCount($0) >= 5 }
        XCTAssertEqual(Array(events.prefix(2)), [.state(.connecting(attempt: 1)), .state(.connected)])
        XCTAssertGreaterThanOrEqual(Self.sampleCount(events), 5)
        XCTAssertEqual(r.endpoint, "i2c:sim:0x6a", "auto found the LSM6DSOX at its first address")
        r.stop()
        let s = try XCTUnwrap(rec.received.first)
        XCTAssertEqual(s.chip, "lsm6dsx")
        XCTAssertEqual(s.device, "i2c:sim:0x6a")
        XCTAssertEqual(s.acceleration.x, 0, accuracy: 0.01)
        XCTAssertEqual(s.acceleration.y, 3.0, accuracy: 0.01)
        XCTAssertEqual(s.acceleration.z, 9.3, accuracy: 0.01)
        let rate = try XCTUnwrap(s.angularRate)
        XCTAssertEqual(rate.x, 0.1, accuracy: 0.001)
        XCTAssertEqual(rate.y, -0.2, accuracy: 0.001)
        XCTAssertEqual(rate.z, 0.3, accuracy: 0.001)
        XCTAssertFalse(s.saturated)
        XCTAssertGreaterThanOrEqual(s.time.unixTime, before.unixTime)
        let times = rec.received.map(\.time.unixTime)
        XCTAssertEqual(times, times.sorted(), "samples are stamped in order")
        XCTAssertEqual(rec.wait { $0.last == .state(.stopped) }.last, .state(.stopped))
    }

    func testAnAccelerometerWithoutGyroscopeIsFoundAndReadWithNoAngularRate() throws {
        let bus = SimulatedI2CBus(path: "sim")
        ChipModels.attachInertial(chip: "lsm303agr", to: bus) { Motion(specificForce: Vector3(0, 3.0, 9.3)) }
        let (r, rec) = reader(bus, rate: 100)
        r.start()
        defer { r.stop() }
        rec.wait { Self.sampleCount($0) >= 3 }
        r.stop()
        XCTAssertEqual(r.endpoint, "i2c:sim:0x19", "auto found the LSM303AGR's accelerometer")
        let s = try XCTUnwrap(rec.received.first)
        XCTAssertEqual(s.chip, "lsm303")
        XCTAssertEqual(s.acceleration.y, 3.0, accuracy: 0.02)
        XCTAssertEqual(s.acceleration.z, 9.3, accuracy: 0.02)
        XCTAssertNil(s.angularRate)
        XCTAssertFalse(s.saturated)
    }

    func testAChipThatIsNotThereIsReportedAndLookedForAgainWithBackoff() {
        let bus = SimulatedI2CBus(path: "empty")
        let (r, rec) = reader(bus, chip: "icm20948")
        r.start()
        defer { r.stop() }
        let events = rec.wait { $0.contains(.state(.connecting(attempt: 3))) }
        XCTAssertTrue(events.contains(.state(.connecting(attempt: 3))), "no retries: \(events)")
        let failure = events.compactMap { if case .failure(let f) = $0 { return f }; return nil }.first ?? ""
        XCTAssertTrue(failure.contains("empty"), "the failure names the bus: \(failure)")
        XCTAssertTrue(events.contains { if case .state(.disconnected(.openFailed, _)) = $0 { return true }; return false })
    }

    func testALostChipIsProbedAgainAndReadingResumesWhenItReturns() {
        let bus = SimulatedI2CBus(path: "sim")
        ChipModels.attachInertial(chip: "lsm6dsl", to: bus) { .level }
        let (r, rec) = reader(bus, chip: "lsm6dsx")
        r.start()
        defer { r.stop() }
        rec.wait { Self.sampleCount($0) >= 3 }
        bus.unplug(0x6A)
        let down = rec.wait { $0.contains { if case .state(.disconnected(.error, _)) = $0 { return true }; return false } }
        XCTAssertTrue(down.contains { if case .failure(let f) = $0 { return f.contains("0x6a") }; return false }, "the failure names the address")
        XCTAssertTrue(down.contains { if case .state(.disconnected(.error, _)) = $0 { return true }; return false }, "the lost chip was not reported")
        let mark = rec.count
        rec.wait { $0.dropFirst(mark).contains(.state(.connecting(attempt: 2))) }
        bus.plug(0x6A)
        let back = rec.wait { events in
            guard let i = events.dropFirst(mark).firstIndex(of: .state(.connected)) else { return false }
            return Self.sampleCount(Array(events[i...])) >= 3
        }
        XCTAssertTrue(back.dropFirst(mark).contains(.state(.connected)), "not found again: \(back.suffix(5))")
        XCTAssertGreaterThanOrEqual(rec.samples(after: mark), 3, "reading did not resume")
    }

    func testRepeatedReadFailuresMakeTheReaderProbeAgain() {
        let bus = SimulatedI2CBus(path: "sim")
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { .level }
        let (r, rec) = reader(bus)
        r.start()
        defer { r.stop() }
        rec.wait { Self.sampleCount($0) >= 2 }
        bus.fail(after: 0, errno: EIO)
        let events = rec.wait { $0.contains { if case .state(.disconnected(.error, _)) = $0 { return true }; return false } }
        XCTAssertTrue(events.contains { if case .state(.disconnected(.error, _)) = $0 { return true }; return false },
                      "failing transfers never made the reader give up the chip: \(events.suffix(5))")
    }

    func testTheMagnetometerReaderRunsTheSameLoop() {
        let bus = SimulatedI2CBus(path: "sim")
        ChipModels.attach(chip: "qmc5883l", to: bus) { Vector3(20, 0, 40) }
        var c = MagnetometerReader.Configuration()
        c.bus = "sim"
        c.settings.rate = 100
        let r = MagnetometerReader(configuration: c, openBus: { _ in bus }, now: GPSTimestamp.now)
        let rec = Self.magneticRecorder()
        r.delegate = rec
        r.start()
        defer { r.stop() }
        let events = rec.wait { Self.sampleCount($0) >= 2 }
        XCTAssertEqual(Array(events.prefix(2)), [.state(.connecting(attempt: 1)), .state(.connected)])
        XCTAssertEqual(r.endpoint, "i2c:sim:0x0d")
    }

    /// A reader held up (here by its delegate; on a Pi by a busy CPU) does not read the periods it missed in a
    /// burst: it counts them, so that HEALTH and `bearing selftest` can tell a late reader from a slow chip.
    func testAReaderHeldUpCountsTheReadsItMissed() {
        let bus = SimulatedI2CBus(path: "sim")
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { .level }
        let (r, rec) = reader(bus, rate: 100)
        rec.stall = (sample: 5, seconds: 0.5)
        let start = Syscall.monotonicSeconds()
        r.start()
        defer { r.stop() }
        rec.wait { Self.sampleCount($0) >= 15 }
        let missed = r.missedReads, elapsed = Syscall.monotonicSeconds() - start
        r.stop()
        print("held up 0.5 s at 100 Hz: \(missed) reads missed, \(rec.samples()) read in \(String(format: "%.2f", elapsed)) s")
        // 50 periods held up: the read due on waking is made, the ones held up are not; at most every period there was.
        XCTAssertGreaterThanOrEqual(missed, 45)
        XCTAssertLessThanOrEqual(missed, Int(elapsed * 100))
        // No burst on waking: a read made at once after another gives the chip's last sample again (it has not made a
        // new one), under a time a millisecond or less after it. The loop starts its reads at least half a period apart;
        // the time is the read's own, so a thread preempted inside one read (a loaded CI machine: 0.13 ms between two
        // stamps once, 2026-12-04) can leave one pair close now and then. A burst leaves one for every period it read
        // (19 µs apart, ten of this test's fifteen reads, before the loop counted the periods it missed).
        let times = rec.delivered.map(\.time.unixTime)
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        let close = gaps.filter { $0 < 0.004 }.count
        print("closest reads \(String(format: "%.4f", gaps.min() ?? .nan)) s apart (the period 0.01 s), \(close) of \(gaps.count) under 4 ms")
        XCTAssertLessThanOrEqual(close, 2, "reads in a burst after the hold")
    }
}
