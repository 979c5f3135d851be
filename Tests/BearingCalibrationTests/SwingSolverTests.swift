@testable import BearingCalibration
import BearingModel
import BearingSimulator
import XCTest

/// The GNSS swing on simulated turns with a known deviation curve, speed, current and gyro drift.
final class SwingSolverTests: XCTestCase {
    static let truthCurve = DeviationCurve(coefficients: [1.0, 4.0, -2.5, 1.2, -0.8])
    static let variation = 3.5

    /// A turn at `rate` °/s for `seconds`, GNSS at 1 Hz: speed through the water `speed` m/s, a current
    /// (m/s east, north), gyro drift °/s, compass noise (waves rolling the boat) and GNSS velocity noise.
    static func swing(seconds: Int = 360, rate: Double = 2, speed: Double = 2.572, current: (Double, Double) = (0.514, 0),
                      drift: Double = 0.005, compassNoise: Double = 0.5, velocityNoise: Double = 0.05, seed: UInt64 = 7) -> [SwingSample] {
        var random = SplitMix64(seed: seed)
        func gauss(_ sigma: Double) -> Double {
            let u = max(random.uniform(0, 1), 1e-12), v = random.uniform(0, 1)
            return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
        }
        return (0..<seconds).map { i in
            let t = Double(i)
            let trueHeading = 20 + rate * t
            let r = trueHeading * .pi / 180
            let ve = speed * sin(r) + current.0 + gauss(velocityNoise), vn = speed * cos(r) + current.1 + gauss(velocityNoise)
            // The compass heading whose deviation and the variation give the true heading.
            var compass = trueHeading - variation
            for _ in 0..<20 { compass = trueHeading - variation - truthCurve.deviation(atCompassHeading: compass) }
            return SwingSample(time: 1000 + t, gyroHeading: trueHeading - 57 + drift * t + gauss(0.02),
                               compassHeading: AttitudeAngles.normalizedDegrees(compass + gauss(compassNoise)),
                               speed: (ve * ve + vn * vn).squareRoot(),
                               track: AttitudeAngles.normalizedDegrees(atan2(ve, vn) * 180 / .pi), eph: 2.5, eps: 0.1)
        }
    }

    /// The largest difference between a curve and the truth over a turn, degrees.
    static func curveError(_ c: DeviationCurve) -> Double {
        (0..<360).map { abs(c.deviation(atCompassHeading: Double($0)) - truthCurve.deviation(atCompassHeading: Double($0))) }.max()!
    }

    func testBoatInACrossCurrentGivesTheCurveTheSpeedAndTheCurrent() throws {
        let r = try SwingSolver.solve(Self.swing(), variation: Self.variation)
        let error = Self.curveError(r.curve)
        print("swing, 5 kn in a 1 kn cross current: curve within \(error)° (A..E \(r.curve.coefficients), σ \(r.curve.uncertainties!)); "
              + "current \(r.current) ± \(r.currentSigma) m/s; speed \(r.speed) m/s; drift \(r.gyroDrift) °/s; misfits \(r.velocityResidual) m/s, \(r.deviationResidual)°")
        XCTAssertLessThanOrEqual(error, 0.3)
        XCTAssertEqual(r.current.east, 0.514, accuracy: 0.1)
        XCTAssertEqual(r.current.north, 0, accuracy: 0.1)
        XCTAssertEqual(r.speed, 2.572, accuracy: 0.05)
        XCTAssertEqual(r.gyroDrift, 0.005, accuracy: 0.002)
        XCTAssertEqual(r.currentSet, 90, accuracy: 5)
        XCTAssertEqual(r.sectorsCovered, 12)
        // The uncertainties are honest: each coefficient's error within 4 σ, and σ small.
        for (i, (got, want)) in zip(r.curve.coefficients, Self.truthCurve.coefficients).enumerated() {
            let sigma = r.curve.uncertainties![i]
            XCTAssertLessThan(sigma, 0.2, DeviationCurve.names[i])
            XCTAssertLessThanOrEqual(abs(got - want), 4 * sigma + 0.02, DeviationCurve.names[i])
        }
    }

    func testIgnoringTheCurrentIsVisiblyWorse() throws {
        var lenient = SwingLimits()
        lenient.maximumVelocityResidual = 10
        lenient.maximumDeviationResidual = 30
        let samples = Self.swing()
        let solved = try SwingSolver.solve(samples, variation: Self.variation, limits: lenient)
        let ignored = try SwingSolver.solve(samples, variation: Self.variation, limits: lenient, solveCurrent: false)
        // What the peers do: course over ground taken as the heading, epoch by epoch.
        let naive = try XCTUnwrap(SwingSolver.fitCurve(samples.map {
            (AttitudeAngles.normalizedDegrees($0.compassHeading), SwingSolver.wrap180($0.track - Self.variation - $0.compassHeading))
        }))
        // One and a half turns: a current ignored no longer averages out over whole circles.
        let partial = Self.swing(seconds: 270)
        let partialSolved = try SwingSolver.solve(partial, variation: Self.variation, limits: lenient)
        let partialIgnored = try SwingSolver.solve(partial, variation: Self.variation, limits: lenient, solveCurrent: false)
        print("swing in a 1 kn current, curve error over the turn: two turns \(Self.curveError(solved.curve))° with the current solved, "
              + "\(Self.curveError(ignored.curve))° with it ignored (velocity misfit \(solved.velocityResidual) vs \(ignored.velocityResidual) m/s), "
              + "\(Self.curveError(DeviationCurve(coefficients: naive.coefficients)))° taking course over ground as heading; "
              + "1.5 turns \(Self.curveError(partialSolved.curve))° solved, \(Self.curveError(partialIgnored.curve))° ignored")
        XCTAssertGreaterThan(Self.curveError(ignored.curve), 0.3)
        XCTAssertGreaterThan(Self.curveError(ignored.curve), 2 * Self.curveError(solved.curve))
        XCTAssertGreaterThan(Self.curveError(partialIgnored.curve), 2 * Self.curveError(partialSolved.curve))
        XCTAssertGreaterThan(Self.curveError(DeviationCurve(coefficients: naive.coefficients)), 5)
        XCTAssertGreaterThan(ignored.velocityResidual, 4 * solved.velocityResidual)
        // With the default limits the ignored current is refused, not believed.
        XCTAssertThrowsError(try SwingSolver.solve(samples, variation: Self.variation, solveCurrent: false)) { e in
            XCTAssertTrue("\(e)".contains("does not follow a steady turn"), "\(e)")
        }
    }

    func testCarWithNoCurrentAfterOneTurn() throws {
        let samples = Self.swing(seconds: 60, rate: 6, speed: 8, current: (0, 0), compassNoise: 0.3)
        let r = try SwingSolver.solve(samples, variation: Self.variation, solveCurrent: false)
        print("car, one turn at 6 °/s: curve within \(Self.curveError(r.curve))°")
        XCTAssertLessThanOrEqual(Self.curveError(r.curve), 0.5)
        XCTAssertFalse(r.currentSolved)
    }

    func testGNSSGlitchesAreSetAsideAndNamed() throws {
        var samples = Self.swing()
        // A velocity spike (a position jump) and a frozen TPV (the same epoch again).
        for i in [50, 51, 200] { samples[i].speed += 6 }
        samples.insert(samples[100], at: 101)
        samples.insert(samples[100], at: 101)
        let r = try SwingSolver.solve(samples, variation: Self.variation)
        XCTAssertEqual(r.rejected.first { $0.key.hasPrefix("time not after") }?.value, 2, "\(r.rejected)")
        XCTAssertEqual(r.rejected.first { $0.key.hasPrefix("ground velocity off the fit") }?.value, 3, "\(r.rejected)")
        XCTAssertLessThanOrEqual(Self.curveError(r.curve), 0.3)
    }

    func testHalfASwingIsRefusedNamingTheMissingSectors() {
        let half = Self.swing(seconds: 90)  // 180° of turn
        XCTAssertThrowsError(try SwingSolver.solve(half, variation: Self.variation)) { e in
            let m = "\(e)"
            XCTAssertTrue(m.contains("of 12 heading sectors covered (8 needed)"), m)
            XCTAssertTrue(m.contains("sectors from"), m)
        }
    }

    func testTooSlowAndBadAccuracyAreNamed() {
        var slow = Self.swing(speed: 0.5, current: (0, 0))
        for i in slow.indices { slow[i].eps = 2 }
        XCTAssertThrowsError(try SwingSolver.solve(slow, variation: Self.variation)) { e in
            let m = "\(e)"
            XCTAssertTrue(m.contains("GNSS epochs are usable"), m)
            XCTAssertTrue(m.contains("slower than 1.5 m/s"), m)
        }
        var inaccurate = Self.swing()
        for i in inaccurate.indices { inaccurate[i].eph = 40 }
        XCTAssertThrowsError(try SwingSolver.solve(inaccurate, variation: Self.variation)) { e in
            XCTAssertTrue("\(e)".contains("eph over 15"), "\(e)")
        }
    }

    func testInterferenceDuringTheSwingIsRefused() {
        var samples = Self.swing()
        for i in 100..<200 { samples[i].compassHeading = AttitudeAngles.normalizedDegrees(samples[i].compassHeading + 25 * sin(Double(i) / 7)) }
        XCTAssertThrowsError(try SwingSolver.solve(samples, variation: Self.variation)) { e in
            XCTAssertTrue("\(e)".contains("does not follow a deviation curve"), "\(e)")
        }
    }

    func testCurveChecksItsCoefficients() {
        XCTAssertNil(Self.truthCurve.problem)
        XCTAssertNotNil(DeviationCurve(coefficients: [1, 2, 3]).problem)
        XCTAssertTrue(DeviationCurve(coefficients: [0, 90, 0, 0, 0]).problem!.contains("coefficient B = 90.0°"))
        XCTAssertNotNil(DeviationCurve(coefficients: [0, .nan, 0, 0, 0]).problem)
        XCTAssertEqual(Self.truthCurve.magneticHeading(compass: 0), 360 + 1.0 - 2.5 - 0.8, accuracy: 1e-9)
    }
}

/// Deviation from driving, and the GNSS file that feeds it.
final class PassiveDeviationTests: XCTestCase {
    func testStraightsAtSpeedGiveTheCurveTurnsAndSlowEpochsAreSetAside() {
        var p = PassiveDeviation()
        let truth = SwingSolverTests.truthCurve
        var random = SplitMix64(seed: 5)
        // Only heading 0–60°: the constant term alone, from the sectors seen.
        for k in 0..<200 {
            let compass = Double(k % 60)
            let course = compass + truth.deviation(atCompassHeading: compass) + 2 + random.uniform(-0.5, 0.5)
            p.add(compass: compass, track: course, speed: 12, turnRate: 0.3, eps: 0.2, variation: 2)
        }
        XCTAssertEqual(p.curve?.coefficients[1], 0, "B before the sectors are covered")
        // Every heading: the whole curve.
        for k in 0..<2000 {
            let compass = Double(k * 7 % 360)
            let course = compass + truth.deviation(atCompassHeading: compass) + 2 + random.uniform(-0.5, 0.5)
            p.add(compass: compass, track: course, speed: 12, turnRate: 0.3, eps: 0.2, variation: 2)
        }
        let curve = try! XCTUnwrap(p.curve)
        let worst = (0..<360).map { abs(curve.deviation(atCompassHeading: Double($0)) - truth.deviation(atCompassHeading: Double($0))) }.max()!
        XCTAssertLessThan(worst, 0.5, "\(curve.coefficients)")
        let taken = p.taken
        XCTAssertFalse(p.add(compass: 10, track: 40, speed: 12, turnRate: 8, eps: 0.2, variation: 2), "turning")
        XCTAssertFalse(p.add(compass: 10, track: 40, speed: 1, turnRate: 0, eps: 0.2, variation: 2), "slow")
        XCTAssertFalse(p.add(compass: 10, track: 190, speed: 12, turnRate: 0, eps: 0.2, variation: 2), "reversing: 180° off")
        XCTAssertFalse(p.add(compass: 10, track: .nan, speed: 12, turnRate: 0, eps: 0.2, variation: 2))
        XCTAssertEqual(p.taken, taken)
        p.reset()
        XCTAssertNil(p.curve)
    }

    /// A frozen TPV (gpsd repeating one fix while the car turns) is no epoch: the next real one measures its
    /// turn from the last real one, so the turn made meanwhile sets it aside. A clock stepped back starts again.
    func testARepeatedFixIsNoEpochAndAClockSteppedBackStartsAgain() {
        var p = PassiveDeviation()
        func epoch(_ t: Double, _ gyro: Double) -> Bool {
            p.epoch(time: t, compass: 10, gyroHeading: gyro, track: 10, speed: 12, eps: nil, variation: 0)
        }
        for t in 0...40 { _ = epoch(Double(t), 10) }
        let taken = p.taken
        XCTAssertGreaterThan(taken, 0)
        // Frozen at t 40 while the car turns 90° in 3 s.
        for k in 1...3 { XCTAssertFalse(epoch(40, 10 + 30 * Double(k)), "a repeat of the fix at 40 s") }
        XCTAssertFalse(epoch(44, 100), "the turn since the last real epoch: 22.5°/s")
        XCTAssertFalse(p.straight)
        XCTAssertEqual(p.taken, taken)
        // The receiver's clock stepped back a day: the turn rate and the settling start again from there.
        XCTAssertFalse(epoch(44 - 86_400, 100))
        for t in 1...40 { _ = epoch(44 - 86_400 + Double(t), 100) }
        XCTAssertEqual(p.taken, taken + 11, "from 30 s after the step")
    }

    /// Before the full curve the deviation applied is each sector's own where the vehicle has been, interpolated
    /// between neighbours, and the mean elsewhere: one heading's left-over iron is not carried to the others.
    func testBeforeTheCurveEachHeadingGetsTheDeviationSeenThere() throws {
        var p = PassiveDeviation()
        XCTAssertNil(p.deviation(atCompassHeading: 10))
        // Seen at 10° (+4°) and at 40° (−2°), nothing elsewhere.
        for _ in 0..<10 {
            p.add(compass: 10, track: 10 + 4, speed: 12, turnRate: 0, eps: nil, variation: 0)
            p.add(compass: 40, track: 40 - 2, speed: 12, turnRate: 0, eps: nil, variation: 0)
        }
        XCTAssertEqual(p.curve?.coefficients, [1, 0, 0, 0, 0], "A: the mean of the sectors")
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 10.2)), 4, accuracy: 0.2)
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 25.5)), 1, accuracy: 0.2, "halfway between the two")
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 40.5)), -2, accuracy: 0.2)
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 52)), -2, accuracy: 1e-9, "within 15° of one seen")
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 200)), 1, accuracy: 1e-9, "nothing seen near: A")
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 359.9)), 4, accuracy: 1e-9, "across north: 10.1° from 10°")
        XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: 330)), 1, accuracy: 1e-9)
        // Once the curve has all five terms, it is what is applied.
        let truth = SwingSolverTests.truthCurve
        for k in 0..<720 {
            let compass = Double(k % 360)
            p.add(compass: compass, track: compass + truth.deviation(atCompassHeading: compass), speed: 12, turnRate: 0, eps: nil, variation: 0)
        }
        let curve = try XCTUnwrap(p.curve)
        for c in stride(from: 0.0, to: 360, by: 15) {
            XCTAssertEqual(try XCTUnwrap(p.deviation(atCompassHeading: c)), curve.deviation(atCompassHeading: c), accuracy: 1e-12)
        }
    }

    func testGNSSFileDerivesSpeedAndCourseAndNamesBadLines() throws {
        let f = try GNSSTrackFile.parse("t,lat,lon\n0,51,0\n1,51.0001,0\n# a comment\n2,51.0001,0.0001\n", source: "g.csv")
        XCTAssertEqual(f.epochs.count, 3)
        // North 11.1 m, then east 7.0 m: forward at the first epoch, central at the middle one (the velocity at
        // the epoch, not half an epoch before), backward at the last.
        XCTAssertEqual(try XCTUnwrap(f.epochs[0].speed), 11.12, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(f.epochs[0].track), 0, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(f.epochs[1].speed), (11.12 * 11.12 + 7.0 * 7.0).squareRoot() / 2, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(f.epochs[1].track), atan2(7.0, 11.12) * 180 / .pi, accuracy: 0.2)
        XCTAssertEqual(try XCTUnwrap(f.epochs[2].track), 90, accuracy: 0.01)
        let given = try GNSSTrackFile.parse("lon,lat,t,speed,track\n0,51,0,3.5,271\n", source: "g.csv")
        XCTAssertEqual(given.epochs[0].track, 271)
        func refused(_ text: String) -> String {
            do { _ = try GNSSTrackFile.parse(text, source: "g.csv"); return "accepted" } catch { return error.description }
        }
        XCTAssertEqual(refused("t,lat\n"), "g.csv line 1: the header must name t, lat and lon (and may name speed, track, eps): t,lat")
        XCTAssertEqual(refused("t,lat,lon\n0,51,x\n"), "g.csv line 2, column lon: \"x\" is not a finite number")
        XCTAssertEqual(refused("t,lat,lon\n1,51,0\n1,51.001,0\n"), "g.csv line 3, column t: 1.0 is not after the epoch before (1.0), and its position is another")
        XCTAssertEqual(refused("t,lat,lon\n1,51,0\n0.5,51,0\n"), "g.csv line 3, column t: 0.5 is not after the epoch before (1.0)")
        // The same epoch written again (gpsd sends more than one TPV an epoch, each with the epoch's time and position):
        // taken once.
        let twice = try GNSSTrackFile.parse("t,lat,lon\n0,51,0\n1,51.0001,0\n1,51.0001,0\n2,51.0002,0\n", source: "g.csv")
        XCTAssertEqual(twice.epochs.map(\.time), [0, 1, 2])
        XCTAssertEqual(try XCTUnwrap(twice.epochs[1].speed), 11.12, accuracy: 0.05)
        XCTAssertEqual(refused("t,lat,lon\n0,95,0\n"), "g.csv line 2, column lat: not a position in degrees")
        XCTAssertEqual(refused(""), "g.csv: empty: expected a header naming t,lat,lon")
    }

    /// A gap in the fixes (a tunnel, a receiver that lost lock): the epochs beside it take their course from the side
    /// that has a neighbour, not the chord across the gap; an epoch alone between two gaps has none. Before, the
    /// epoch before a minute's gap, driving east at 15 m/s, took the chord to where the car came out going north.
    func testGNSSFileDerivesNoCourseAcrossAGap() throws {
        let lat0 = 51.0, m = 1 / 111_195.0, east = 1 / (111_195.0 * cos(lat0 * .pi / 180))
        var text = "t,lat,lon\n"
        // East at 15 m/s for 10 s, then a minute without fixes (the car turned north and drove 900 m), north at
        // 15 m/s for 10 s, one fix alone 30 s later, and 30 s later two more.
        for i in 0...10 { text += "\(i),\(lat0),\(Double(i) * 15 * east)\n" }
        for i in 0...10 { text += "\(70 + i),\(lat0 + Double(900 + i * 15) * m),\(150 * east)\n" }
        text += "110,\(lat0 + 1500 * m),\(150 * east)\n"
        text += "140,\(lat0 + 2000 * m),\(150 * east)\n141,\(lat0 + 2015 * m),\(150 * east)\n"
        let f = try GNSSTrackFile.parse(text, source: "gap.csv")
        XCTAssertEqual(try XCTUnwrap(f.epochs[10].track), 90, accuracy: 0.1, "the last epoch before the gap: east")
        XCTAssertEqual(try XCTUnwrap(f.epochs[10].speed), 15, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(f.epochs[11].track), 0, accuracy: 0.1, "the first epoch after it: north")
        XCTAssertEqual(try XCTUnwrap(f.epochs[11].speed), 15, accuracy: 0.1)
        XCTAssertNil(f.epochs[22].track, "an epoch alone between two gaps")
        XCTAssertNil(f.epochs[22].speed)
        XCTAssertEqual(try XCTUnwrap(f.epochs[23].track), 0, accuracy: 0.1)
    }

    /// Positions that jitter by metres from one epoch to the next (an old receiver, a phone under trees) are found by
    /// their second differences (`GNSSTrackFile.positionNoise`), and their courses then come from the epochs two either
    /// side, with half the noise: five minutes east at 14 m/s, a fix a second, white noise of 0, 1 and 2 m an axis.
    func testPositionsThatJitterByMetresGiveCoursesFromAWiderChord() throws {
        for sigma in [0.0, 1, 2] {
            var random = RoadDriveRandom(seed: 7, stream: 1)
            var text = "t,lat,lon\n"
            for i in 0..<300 {
                let north = sigma * random.gaussian(), east = Double(i) * 14 + sigma * random.gaussian()
                text += "\(i),\(51 + north / 111_195),\(east / (111_195 * cos(51 * Double.pi / 180)))\n"
            }
            let f = try GNSSTrackFile.parse(text, source: "jitter.csv")
            let noise = try XCTUnwrap(GNSSTrackFile.positionNoise(f.epochs))
            XCTAssertEqual(noise, sigma, accuracy: 0.05 + 0.1 * sigma, "σ \(sigma)")
            let errors = f.epochs.dropFirst(2).dropLast(2).compactMap { $0.track.map { $0 - 90 } }
            let rms = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
            // One epoch either side: σ√2 / (2 s × 14 m/s) rad (2.9° at 1 m, 5.8° at 2 m); two either side at 2 m, 2.9°.
            print("GNSSTrackFile: positions jittering by \(sigma) m: estimated \(String(format: "%.2f", noise)) m, courses \(String(format: "%.2f", rms))° RMS")
            XCTAssertLessThan(rms, sigma == 0 ? 0.01 : 3.6, "σ \(sigma)")
        }
    }

    /// A track logged every 5 s keeps the chord one epoch either side even where its positions jitter by metres: two
    /// would span 20 s of the drive, and the first epochs out of a corner would carry it. East at 14 m/s for five
    /// minutes, a right angle, north for five more, 2 m of white noise an axis; the epoch after the corner's is north.
    func testATrackLoggedEveryFewSecondsKeepsTheShortestChord() throws {
        XCTAssertEqual(GNSSTrackFile.chordReach(2, interval: 1), 2)
        XCTAssertEqual(GNSSTrackFile.chordReach(2, interval: 5), 1)
        XCTAssertEqual(GNSSTrackFile.chordReach(1, interval: 1), 1)
        XCTAssertEqual(GNSSTrackFile.chordReach(0.05, interval: 0.1), 10, "a 10 Hz track: a second either side")
        XCTAssertEqual(GNSSTrackFile.chordReach(2, interval: 0.2), 5)
        var random = RoadDriveRandom(seed: 7, stream: 2)
        var text = "t,lat,lon\n"
        for i in 0..<120 {
            let along = Double(i) * 5 * 14
            let north = (i < 60 ? 0 : along - 60 * 70) + 2 * random.gaussian()
            let east = min(along, 60 * 70) + 2 * random.gaussian()
            text += "\(i * 5),\(51 + north / 111_195),\(east / (111_195 * cos(51 * Double.pi / 180)))\n"
        }
        let f = try GNSSTrackFile.parse(text, source: "every5.csv")
        XCTAssertGreaterThan(try XCTUnwrap(GNSSTrackFile.positionNoise(f.epochs)), GNSSTrackFile.jitterForWiderChord)
        XCTAssertEqual(SwingSolver.wrap180(try XCTUnwrap(f.epochs[61].track)), 0, accuracy: 3, "the epoch after the corner's")
        XCTAssertEqual(try XCTUnwrap(f.epochs[58].track), 90, accuracy: 3, "the epoch before the corner's")
    }

    /// Speeds in km/h or knots and tracks in radians are named, judged on the whole file against the positions;
    /// a few glitches are not a units error.
    func testGNSSSpeedAndTrackInOtherUnitsAreNamed() throws {
        // A minute on a circle of 300 m at 12 m/s, a fix a second.
        func track(speed: (Double) -> Double, course: (Double) -> Double, glitches: Bool = false) -> String {
            var text = "t,lat,lon,speed,track\n"
            for i in 0..<60 {
                let a = 12.0 / 300 * Double(i), north = 300 * sin(a), east = 300 * (1 - cos(a))
                // Turning right from north: the course is the angle turned.
                let heading = AttitudeAngles.normalizedDegrees(a * 180 / .pi)
                var v = speed(12), t = course(heading)
                if glitches && i % 20 == 5 { v *= 3.6; t += 90 }
                text += "\(i),\(51 + north / 111_195),\(east / (111_195 * cos(51 * Double.pi / 180))),\(v),\(t)\n"
            }
            return text
        }
        let good = try GNSSTrackFile.parse(track(speed: { $0 }, course: { $0 }, glitches: true), source: "g.csv")
        XCTAssertEqual(good.epochs.count, 60)
        func refused(_ text: String) -> String {
            do { _ = try GNSSTrackFile.parse(text, source: "g.csv"); return "accepted" } catch { return error.description }
        }
        XCTAssertTrue(refused(track(speed: { $0 * 3.6 }, course: { $0 })).hasPrefix("g.csv column speed: the speeds are 3.60 times the positions': they look like km/h"))
        XCTAssertTrue(refused(track(speed: { $0 / 0.514444 }, course: { $0 })).contains("they look like knots; give m/s (multiply by 0.514444)"))
        let radians = refused(track(speed: { $0 }, course: { $0 * .pi / 180 }))
        XCTAssertTrue(radians.hasPrefix("g.csv column track: the tracks look like radians"), radians)
    }
}
