@testable import BearingCompass
import XCTest

/// The fusion's own time from the samples' stamps (`SampleClock`): monotonic across a wall clock stepped back, and
/// nothing changed for samples a little out of order or a step forward.
final class SampleClockTests: XCTestCase {
    func testAStepBackIsTakenOutAndTheSamplesGoOnAtTheirInterval() {
        var clock = SampleClock()
        let before = (0..<5).map { clock.time(1000 + Double($0) * 0.01) }
        XCTAssertEqual(before, [1000, 1000.01, 1000.02, 1000.03, 1000.04].map { $0 }, "no step: the stamps as they are")
        // Stepped back by an hour between two samples 10 ms apart.
        let after = (5..<8).map { clock.time(1000 - 3600 + Double($0) * 0.01) }
        XCTAssertEqual(after[0], 1000.05, accuracy: 1e-9, "the sample after the step follows the latest by its interval")
        XCTAssertEqual(after[2] - after[1], 0.01, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 1)
        XCTAssertEqual(clock.shift, 3600, accuracy: 1e-9)
    }

    func testSamplesALittleOutOfOrderAndStepsForwardAreLeftAsTheyAre() {
        var clock = SampleClock()
        XCTAssertEqual(clock.time(10.0), 10.0)
        XCTAssertEqual(clock.time(10.3), 10.3)
        XCTAssertEqual(clock.time(9.9), 9.9, "0.4 s out of order (another reader's thread): no step")
        XCTAssertEqual(clock.time(3610.3), 3610.3, "a step forward is a gap")
        XCTAssertEqual(clock.steps, 0)
        XCTAssertEqual(clock.time(.nan).isNaN, true, "no time is no time")
        XCTAssertEqual(clock.time(3610.4), 3610.4)
    }

    /// A sample stamped before a step and handed over after one stamped after it: one gap the size of the step, once.
    func testAStampFromBeforeAStepHandedOverLateMakesOneGap() {
        var clock = SampleClock()
        _ = clock.time(100.00)
        _ = clock.time(100.01)
        let stepped = clock.time(100.02 - 60)  // the first stamp after a step back by 60 s
        XCTAssertEqual(stepped, 100.02, accuracy: 1e-9)
        let late = clock.time(100.015)  // stamped before the step, handed over now
        XCTAssertEqual(late, 160.015, accuracy: 1e-9, "a step ahead")
        let next = clock.time(100.03 - 60)
        XCTAssertEqual(next, 160.025, accuracy: 1e-9, "the time goes on from the late sample, as after a step forward")
        XCTAssertEqual(clock.time(100.04 - 60), 160.035, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 2)
    }

    // With each sample's monotonic time (`elapsed`: when it was handed over, never before its wall stamp was read, so
    // the stamp minus it is the clocks' offset less a latency that is never negative).

    /// A Pi without a real-time clock syncs: its wall clock steps forward by a day between two samples 10 ms apart.
    func testAStepForwardIsTakenOutWhenTheSamplesMonotonicTimeIsKnown() {
        var clock = SampleClock()
        // 1.5 s of samples first: a step is told from the offset once it has had `offsetWarmUp` to settle.
        for i in 0..<150 { XCTAssertEqual(clock.time(1000 + Double(i) * 0.01, elapsed: 50 + Double(i) * 0.01 + 0.004), 1000 + Double(i) * 0.01, accuracy: 1e-9) }
        let after = (150..<153).map { clock.time(1000 + 86400 + Double($0) * 0.01, elapsed: 50 + Double($0) * 0.01 + 0.002) }
        XCTAssertEqual(after[0], 1001.50, accuracy: 1e-9, "the sample after the step follows the latest by its interval")
        XCTAssertEqual(after[2] - after[1], 0.01, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 1)
        XCTAssertEqual(clock.shift, -86400, accuracy: 1e-9)
        XCTAssertEqual(clock.stamp(ofTime: after[2]), 1000 + 86400 + 1.52, accuracy: 1e-9, "what is told keeps the samples' stamps")
    }

    /// Samples lost (a reader reopening its chip for 10 s) are a gap in both clocks: no step. A step forward while they
    /// were lost keeps the gap the monotonic clock saw.
    func testSamplesLostStayAGapAndAStepAcrossThemKeepsIt() {
        var clock = SampleClock()
        _ = clock.time(1000.00, elapsed: 50.003)
        _ = clock.time(1000.01, elapsed: 50.013)
        XCTAssertEqual(clock.time(1010.02, elapsed: 60.021), 1010.02, accuracy: 1e-9, "10 s lost: a gap")
        XCTAssertEqual(clock.steps, 0)
        XCTAssertEqual(clock.time(1010.03 + 10 + 3600, elapsed: 70.032), 1020.03, accuracy: 0.005,
                       "10 s lost and an hour's step forward: the gap, not the step")
        XCTAssertEqual(clock.steps, 1)
        XCTAssertEqual(clock.time(1020.04 + 3600, elapsed: 70.043), 1020.04, accuracy: 0.005)
    }

    /// The pipeline stalled for 1.5 s while the readers read on: the samples are handed over late and then all at once.
    /// Their stamps are right; a latency is never a step.
    func testSamplesHandedOverLateAreNoStep() {
        var clock = SampleClock()
        for i in 0..<10 { _ = clock.time(1000 + Double(i) * 0.01, elapsed: 50 + Double(i) * 0.01 + 0.002) }
        for i in 10..<160 {
            let stamp = 1000 + Double(i) * 0.01
            XCTAssertEqual(clock.time(stamp, elapsed: 51.6 + Double(i - 10) * 0.0001), stamp, accuracy: 1e-9, "sample \(i)")
        }
        XCTAssertEqual(clock.steps, 0)
    }

    /// The pipeline busy as the daemon starts (its doors opening, its files read) while the readers read on: the first
    /// 0.3 s of samples are handed over late and bunched, before the offset has seen a sample handed over at once. Their
    /// stamps are right and go on at the readers' interval: no step, however far the first latencies put the offset off.
    func testSamplesHandedOverLateAtTheStartAreNoStep() {
        var clock = SampleClock()
        for i in 0..<30 {
            let stamp = 1000 + Double(i) * 0.01
            XCTAssertEqual(clock.time(stamp, elapsed: 50.3 + Double(i) * 0.0001), stamp, accuracy: 1e-9, "sample \(i)")
        }
        for i in 30..<100 {
            let stamp = 1000 + Double(i) * 0.01
            XCTAssertEqual(clock.time(stamp, elapsed: 50 + Double(i) * 0.01 + 0.002), stamp, accuracy: 1e-9, "sample \(i)")
        }
        XCTAssertEqual(clock.steps, 0)
        // The first field sample entered 0.3 s late (the pipeline busy), the IMU's first, read 0.3 s later, at once.
        var start = SampleClock()
        XCTAssertEqual(start.time(1000, elapsed: 50.3), 1000, accuracy: 1e-9)
        for i in 0..<50 {
            let stamp = 1000.301 + Double(i) * 0.01
            XCTAssertEqual(start.time(stamp, elapsed: stamp - 950 + 0.001), stamp, accuracy: 1e-9, "sample \(i)")
        }
        XCTAssertEqual(start.steps, 0)
    }

    /// A step back is taken out as without the monotonic time; the one that follows forward (a stamp from before it
    /// handed over late) too, so the fusion's time stays continuous.
    func testAStepBackAndALateStampFromBeforeItWithTheMonotonicTime() {
        var clock = SampleClock()
        for i in -150...1 { _ = clock.time(100 + Double(i) * 0.01, elapsed: 10.001 + Double(i) * 0.01) }
        XCTAssertEqual(clock.time(100.02 - 60, elapsed: 10.021), 100.02, accuracy: 1e-9)
        XCTAssertEqual(clock.time(100.015, elapsed: 10.0215), 100.02, accuracy: 0.011, "stamped before the step, handed over now")
        XCTAssertEqual(clock.time(100.03 - 60, elapsed: 10.031), 100.03, accuracy: 0.011)
        XCTAssertEqual(clock.time(100.04 - 60, elapsed: 10.041), 100.04, accuracy: 0.011)
    }

    /// ntpd steps the clock back by 0.3 s (it steps any offset over 0.128 s), less than the stamps alone take for a step:
    /// with the monotonic time the first sample after it is taken out on trial, and the next confirms it.
    func testASmallStepBackIsTakenOutWhenTheSamplesMonotonicTimeIsKnown() {
        var clock = SampleClock()
        for i in -145..<5 { _ = clock.time(1000 + Double(i) * 0.01, elapsed: 50 + Double(i) * 0.01 + 0.003) }
        XCTAssertEqual(clock.time(1000.05 - 0.3, elapsed: 50.053), 1000.05, accuracy: 1e-9, "the first after the step, on trial")
        XCTAssertEqual(clock.steps, 0, "not told until the next sample confirms it")
        XCTAssertEqual(clock.time(1000.06 - 0.3, elapsed: 50.064), 1000.06, accuracy: 1e-9)
        XCTAssertEqual(clock.steps, 1)
        XCTAssertEqual(clock.lastStep, -0.3, accuracy: 1e-9)
        for i in 7..<60 { XCTAssertEqual(clock.time(1000 + Double(i) * 0.01 - 0.3, elapsed: 50 + Double(i) * 0.01 + 0.002), 1000 + Double(i) * 0.01, accuracy: 1e-9) }
        XCTAssertEqual(clock.steps, 1)
        // Without the monotonic time it is left as it was: the samples behind the latest are a little out of order.
        var stampsOnly = SampleClock()
        for i in -145..<5 { _ = stampsOnly.time(1000 + Double(i) * 0.01) }
        XCTAssertEqual(stampsOnly.time(1000.05 - 0.3), 1000.05 - 0.3, accuracy: 1e-9)
        XCTAssertEqual(stampsOnly.steps, 0)
    }

    /// A reader's thread held for 0.2 s between its sample's stamp and its hand-over (a loaded single-core board): the
    /// sample comes behind the other reader's latest and below its offset, as the first after a step back would. The next
    /// sample is stamped after the latest, so the trial is undone: no step, every later time its stamp.
    func testASampleHandedOverLateIsNoSmallStepBack() {
        var clock = SampleClock()
        for i in -125..<25 { _ = clock.time(1000 + Double(i) * 0.01, elapsed: 50 + Double(i) * 0.01 + 0.003) }
        _ = clock.time(1000.045, elapsed: 50.245)
        XCTAssertEqual(clock.time(1000.25, elapsed: 50.253), 1000.25, accuracy: 1e-9, "the trial undone")
        for i in 26..<40 { XCTAssertEqual(clock.time(1000 + Double(i) * 0.01, elapsed: 50 + Double(i) * 0.01 + 0.003), 1000 + Double(i) * 0.01, accuracy: 1e-9) }
        XCTAssertEqual(clock.steps, 0)
        XCTAssertEqual(clock.shift, 0)
    }

    /// The journal tells a step at once, then at most one a minute, counting those it held back; a step back is told
    /// as one.
    func testTheJournalTellsAStepAtMostOnceAMinute() {
        var journal = ClockStepJournal()
        let first = journal.line(forStep: 86400, at: 10)
        XCTAssertEqual(first, "the system clock stepped forward by 86400.0 s: the sensors' samples are stamped by it, "
                       + "and the fusion's time goes on across the step")
        XCTAssertNil(journal.line(forStep: -3.25, at: 30), "within the minute: held back")
        XCTAssertNil(journal.line(forStep: 3.25, at: 69.9), "within the minute: held back")
        let next = journal.line(forStep: -2, at: 70)
        XCTAssertEqual(next, "the system clock stepped back by 2.0 s (and 2 more times since the last told): the sensors' "
                       + "samples are stamped by it, and the fusion's time goes on across the step")
        XCTAssertEqual(journal.line(forStep: 1, at: 200)?.contains("more times"), false, "the count starts again")
    }
}
