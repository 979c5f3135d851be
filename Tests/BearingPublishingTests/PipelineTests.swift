import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import CombineSchedulers
import OpenCombine
import OpenCombineDispatch
import XCTest

/// Operator behaviour under virtual time: the scheduler only moves when the test advances it.
final class PipelineTests: XCTestCase {
    typealias Virtual = TestScheduler<DispatchQueue.OCombine.SchedulerTimeType, DispatchQueue.OCombine.SchedulerOptions>

    func makeScheduler() -> Virtual {
        Virtual(now: .init(.init(uptimeNanoseconds: 1_000_000_000)))
    }

    func fix(_ second: Int64, mode: FixMode = .threeD, lat: Double = 50, eph: Double? = 5) -> GPSFix {
        var f = GPSFix(mode: mode, time: GPSTimestamp(seconds: 1_700_000_000 + second), latitude: lat, longitude: -1)
        f.eph = eph
        return f
    }

    /// Sends fixes through `chain` as TPV reports; returns the fixes that came out.
    func run(_ chain: [OperatorSpec], _ body: (FixSender, Virtual) -> Void) -> [GPSFix] {
        let scheduler = makeScheduler()
        let subject = PassthroughSubject<Report, Never>()
        var out: [GPSFix] = []
        let c = Pipeline.build(subject.eraseToAnyPublisher(), chain, for: .tpv, scheduler: scheduler).sink { out.append($0.fix!) }
        body(FixSender(subject: subject), scheduler)
        c.cancel()
        return out
    }

    struct FixSender {
        let subject: PassthroughSubject<Report, Never>
        func send(_ f: GPSFix) { subject.send(Report(.fix(f))) }
    }

    func testMinModeDropsWeakerFixes() {
        let out = run([.minMode(.threeD)]) { s, _ in
            s.send(fix(0, mode: .noFix)); s.send(fix(1, mode: .twoD)); s.send(fix(2, mode: .threeD))
        }
        XCTAssertEqual(out.map(\.mode), [.threeD])
    }

    func testMaxErrorDropsLargeErrorsAndKeepsUnknown() {
        let out = run([.maxError(meters: 10)]) { s, _ in
            s.send(fix(0, eph: 5)); s.send(fix(1, eph: 50)); s.send(fix(2, eph: nil)); s.send(fix(3, eph: 10))
        }
        XCTAssertEqual(out.compactMap(\.time?.seconds).map { $0 - 1_700_000_000 }, [0, 2, 3])
    }

    func testDedupeByValueAndByTime() {
        var second = fix(0)
        second.speed = 1.5
        let byValue = run([.dedupe(.all)]) { s, _ in s.send(fix(0)); s.send(fix(0)); s.send(second); s.send(fix(1)) }
        XCTAssertEqual(byValue.count, 3)
        let byTime = run([.dedupe(.time)]) { s, _ in s.send(fix(0)); s.send(second); s.send(fix(1)); s.send(fix(1)) }
        XCTAssertEqual(byTime.count, 2)
        let byPosition = run([.dedupe(.position)]) { s, _ in s.send(fix(0)); s.send(fix(1)); s.send(fix(2, lat: 51)) }
        XCTAssertEqual(byPosition.compactMap(\.latitude), [50, 51])
    }

    func testThrottleLatestEmitsFirstAtOnceThenNewestPerWindow() {
        let out = run([.throttle(interval: 1, latest: true)]) { s, sched in
            s.send(fix(0))
            sched.advance()
            s.send(fix(1)); s.send(fix(2))
            sched.advance(by: .milliseconds(500))
            s.send(fix(3))
            sched.advance(by: .milliseconds(500))
            sched.advance(by: .seconds(5))
        }
        XCTAssertEqual(out.compactMap(\.time?.seconds).map { $0 - 1_700_000_000 }, [0, 3])
    }

    func testThrottleFirstKeepsTheOldestOfAWindow() {
        let out = run([.throttle(interval: 1, latest: false)]) { s, sched in
            s.send(fix(0))
            sched.advance()
            s.send(fix(1)); s.send(fix(2))
            sched.advance(by: .seconds(1))
        }
        XCTAssertEqual(out.compactMap(\.time?.seconds).map { $0 - 1_700_000_000 }, [0, 1])
    }

    func testNothingLeavesAThrottleUntilTimeMoves() {
        let scheduler = makeScheduler()
        let subject = PassthroughSubject<Report, Never>()
        var out: [Report] = []
        let c = Pipeline.build(subject.eraseToAnyPublisher(), [.throttle(interval: 2, latest: true)], for: .tpv, scheduler: scheduler)
            .sink { out.append($0) }
        subject.send(Report(.fix(fix(0))))
        XCTAssertEqual(out.count, 0, "the first value is delivered on the scheduler, not synchronously")
        scheduler.advance()
        XCTAssertEqual(out.count, 1)
        subject.send(Report(.fix(fix(1))))
        scheduler.advance(by: .milliseconds(1999))
        XCTAssertEqual(out.count, 1)
        scheduler.advance(by: .milliseconds(1))
        XCTAssertEqual(out.count, 2)
        c.cancel()
    }

    func testEmptyChainIsPassthrough() {
        let out = run([]) { s, _ in s.send(fix(0, mode: .noFix)); s.send(fix(0, mode: .noFix)); s.send(fix(1, eph: 1e6)) }
        XCTAssertEqual(out.count, 3)
    }

    func testSkyChainRefusesFixOnlyOperators() {
        XCTAssertThrowsError(try OperatorSpec.validate([.minMode(.twoD)], for: .sky, path: "pipeline.sky")) {
            XCTAssertEqual("\($0)", #"pipeline.sky[0]: operator min_mode ({"op":"min_mode","mode":2}) does not apply to SKY; allowed for SKY: dedupe, throttle, sample, debounce, deadband, fields"#)
        }
        XCTAssertNoThrow(try OperatorSpec.validate([.dedupe(.all), .throttle(interval: 5, latest: true)], for: .sky, path: "pipeline.sky"))
    }
}
