import BearingCompass
import BearingModel
import BearingAttitude
import BearingSimulator
import XCTest

/// Rate of turn (ATT `rot`, °/min, + to starboard) on a simulated steady turn: from the gyroscope in the
/// level frame, heeled 20°, and from the heading's derivative without one. The error figures are printed
/// for the README and the closing note.
extension AttitudeFusionTests {
    /// A steady turn at `rate` °/s (negative: to port), heeled 20° to starboard, nose 5° up.
    func turningBoard(_ rate: Double) -> VirtualIMU {
        var v = heeledBoard()
        v.heading = { 100 + rate * $0 }
        return v
    }

    /// The fused attitudes of `seconds` of a board, through the rate-of-turn stage, from `settle` s on.
    func ratesOfTurn(_ board: VirtualIMU, seconds: Double, gyroscope: Bool = true, settle: Double = 3) -> [Attitude] {
        var f = fusion()
        var rot = RateOfTurn()
        var out: [Attitude] = []
        for input in inputs(board, seconds: seconds, gyroscope: gyroscope) {
            f.step(input)
            if let a = f.emitted {
                let r = rot.add(a)
                if a.time.unixTime - Self.start >= settle { out.append(r) }
            }
        }
        return out
    }

    func testSteadyTurnHeeled20DegreesReadsTheTrueRateFromTheGyroscope() throws {
        for rate in [3.0, -3.0, 0.5] {
            let truth = rate * 60
            let out = ratesOfTurn(turningBoard(rate), seconds: 10)
            let rots = try out.map { try XCTUnwrap($0.rateOfTurn) }
            let errors = rots.map { abs($0 - truth) }
            let maxError = try XCTUnwrap(errors.max())
            let mean = rots.reduce(0, +) / Double(rots.count)
            // What the board's own z axis reads: cos(heel)·cos(pitch) of the turn — short by ~6.4 %.
            let boardZ = out.map { ($0.angularRate?.z ?? .nan) * 60 }
            let naive = boardZ.reduce(0, +) / Double(boardZ.count)
            print(String(format: "rot, gyroscope, heel 20°, pitch 5°: truth %.1f°/min, mean %.3f, max error %.4f°/min; board z alone %.2f (%.1f %% short)",
                         truth, mean, maxError, naive, 100 * (1 - naive / truth)))
            XCTAssertLessThan(maxError, 0.5, "rate of turn \(truth)°/min")
            XCTAssertEqual(rate > 0, mean > 0, "starboard turns are positive, port negative")
            XCTAssertGreaterThan(abs(naive - truth), abs(truth) * 0.05, "the heel makes the board's z axis read short; the level frame must not")
        }
    }

    func testWithoutAGyroscopeTheRateIsTheHeadingsDerivative() throws {
        // The gyro-less filter takes about 10 s to follow a turn that starts at once (its heading lags while
        // it catches up); from then on its heading turns at the board's rate.
        let out = ratesOfTurn(turningBoard(-3), seconds: 20, gyroscope: false, settle: 12)
        XCTAssertTrue(out.allSatisfy { $0.angularRate == nil })
        let rots = try out.map { try XCTUnwrap($0.rateOfTurn, "known once half a window of headings has come") }
        let maxError = try XCTUnwrap(rots.map { abs($0 + 180) }.max())
        print(String(format: "rot, no gyroscope (tilt-compensated compass), heel 20°, after 12 s: truth -180.0°/min, max error %.2f°/min", maxError))
        XCTAssertLessThan(maxError, 3)
    }

    /// A magnetometer alone, 10 Hz, heading noise ±0.5°, turning through north: no spike at the wrap, the
    /// rate known after 1 s, nil after a gap longer than the window.
    func testMagnetometerAloneThroughNorthWithNoise() throws {
        let start = GPSTimestamp(unixTime: Self.start)
        var samples: [MagneticSample] = []
        var truths: [Double] = []
        for k in 0..<200 {
            let t = Double(k) / 10 + (k >= 150 ? 5 : 0) // a 5 s gap before the last 50
            let heading = 350 + 2 * t + 0.5 * sin(Double(k) * 2.3)
            let h = heading * .pi / 180
            samples.append(MagneticSample(time: GPSTimestamp(unixTime: start.unixTime + t), device: "mag", chip: "hmc5883l",
                                          field: Vector3(20 * cos(h), -20 * sin(h), 40)))
            truths.append(120)
        }
        var stage = MagnetometerStage(orientation: .identity)
        let out = samples.map { stage.attitude($0) }
        XCTAssertEqual(out.count, 200)
        XCTAssertNil(out[5].rateOfTurn, "not known before half a window (1 s) of headings")
        let settled = try out[12..<150].map { try XCTUnwrap($0.rateOfTurn) }
        let maxError = try XCTUnwrap(settled.map { abs($0 - 120) }.max())
        print(String(format: "rot, magnetometer alone, 10 Hz, ±0.5° heading noise: truth 120.0°/min, max error %.2f°/min", maxError))
        XCTAssertLessThan(maxError, 15, "through north (350° → 30°) without a spike")
        XCTAssertNil(out[150].rateOfTurn, "after a gap longer than the window the rate starts again")
        XCTAssertNotNil(out[199].rateOfTurn)
    }
}
