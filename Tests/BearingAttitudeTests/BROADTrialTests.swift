@testable import BearingModel
@testable import BearingAttitude
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
@testable import BearingOnlineCalibration
@testable import BearingMarine
@testable import BearingMQTT
import BearingCalibrationWorkflow
import BearingDaemon
import BearingSimulator
import Foundation
import TestSupport
import XCTest

/// The attitude filter on real recordings with optical ground truth: the BROAD trials in
/// ../shared/data/broad (see its README), scored with the BROAD paper's metrics over the movement phase.
/// Skipped, visibly, without ../shared.
final class BROADTrialTests: XCTestCase {
    /// Per trial: the total RMSE (degrees) of Madgwick with the BROAD-tuned β = 0.12, from the README,
    /// as the bound each trial must beat, and VQF online's total for comparison.
    static let trials: [(name: String, madgwickTuned: Double, vqfOnline: Double)] = [
        ("05_undisturbed_slow_rotation_with_breaks_B", 1.85, 0.99),
        ("07_undisturbed_fast_rotation_B", 4.51, 1.75),
        ("16_undisturbed_fast_translation_B", 4.41, 0.74),
        ("26_disturbed_phone_vibration_A", 4.01, 1.75),
        ("29_disturbed_stationary_magnet_B", 5.95, 2.38),
        ("33_disturbed_attached_magnet_2cm", 10.22, 3.75),
    ]
    /// Means over the six trials from the README's table (total, heading): the best of Fusion's two rows
    /// and of Madgwick's two rows.
    static let fusionBestMean = (total: 9.18, heading: 5.95)
    static let madgwickBestMean = (total: 5.16, heading: 4.15)

    /// The decompressed text of `url` (gzip), read through /bin/gzip.
    func gunzip(_ url: URL) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-dc", url.path]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw XCTSkip("SKIPPED: gzip -dc \(url.path) failed: \(String(decoding: message, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The truth file's quaternions (NaN where the markers were lost) and movement flags.
    func truth(_ text: String, source: String) throws -> [(q: Quaternion, moving: Bool)] {
        var lines = text.split(separator: "\n")
        XCTAssertEqual(lines.first.map(String.init), "t,qw,qx,qy,qz,movement", source)
        lines.removeFirst()
        return try lines.enumerated().map { i, line in
            let f = line.split(separator: ",")
            guard f.count == 6, let w = Double(f[1]), let x = Double(f[2]), let y = Double(f[3]), let z = Double(f[4]) else {
                throw XCTSkip("SKIPPED: \(source) line \(i + 2) is not t,qw,qx,qy,qz,movement: \(line.prefix(80))")
            }
            return (Quaternion(w: w, x: x, y: y, z: z), f[5] == "1")
        }
    }

    func pad(_ s: String) -> String { s.padding(toLength: 44, withPad: " ", startingAt: 0) }

    /// A trial's samples and its truth, one row each; nil (having failed the test) when they do not pair up.
    func load(_ name: String, from directory: URL) throws -> (file: IMUSampleFile, truth: [(q: Quaternion, moving: Bool)])? {
        let samplesURL = directory.appendingPathComponent("\(name).samples.csv.gz")
        let truthURL = directory.appendingPathComponent("\(name).truth.csv.gz")
        let file = try IMUSampleFile.parse(try gunzip(samplesURL), source: samplesURL.lastPathComponent)
        let reference = try truth(try gunzip(truthURL), source: truthURL.lastPathComponent)
        guard reference.count == file.samples.count else { XCTFail("\(name): one truth row per sample"); return nil }
        return (file, reference)
    }

    /// `bearing attitude --samples` on `file` as a user runs it (`OfflineAttitude`, its defaults: a car's fusion stage
    /// from a cold start, no track), online calibration on or off (`--no-calibrate`), scored against the truth with the
    /// BROAD paper's metrics over the movement phase: all of it, and the part from `from` seconds on. Fails the test
    /// unless there is one attitude per sample.
    func scored(_ file: IMUSampleFile, against reference: [(q: Quaternion, moving: Bool)], calibrate: Bool = true,
                from: Double = .infinity) -> (all: AttitudeErrorRMS, later: AttitudeErrorRMS, outcome: OfflineAttitude.Outcome) {
        var all = AttitudeErrorRMS(), later = AttitudeErrorRMS(), i = 0
        let outcome = attitudes(file, calibrate: calibrate) { o in
            if reference[i].moving {
                all.add(estimate: o.quaternion, reference: reference[i].q)
                if file.samples[i].time >= from { later.add(estimate: o.quaternion, reference: reference[i].q) }
            }
            i += 1
        }
        XCTAssertEqual(i, file.samples.count, "one attitude per sample")
        return (all, later, outcome)
    }

    /// `bearing attitude --samples` on `file` (as `scored`), each attitude handed to `each` in the file's order.
    @discardableResult
    func attitudes(_ file: IMUSampleFile, calibrate: Bool = true, each: (OfflineAttitude.Output) -> Void) -> OfflineAttitude.Outcome {
        var options = OfflineAttitude.Options()
        options.calibrate = calibrate
        return OfflineAttitude.run(file, track: nil, options: options, now: 1_790_000_000, note: { _ in }, emit: each)
    }

    func testEveryTrialBeatsMadgwickAndTheMeanBeatsFusion() throws {
        let directory = try requireSharedData("broad")
        var sums = (total: 0.0, heading: 0.0, inclination: 0.0)
        var lines: [String] = []
        let started = Date()
        var samplesRun = 0
        for trial in Self.trials {
            guard let (file, reference) = try load(trial.name, from: directory) else { continue }
            XCTAssertTrue(file.hasMagnetometer)

            var filter = AttitudeFilter()
            var errors = AttitudeErrorRMS()
            filter.replay(file.samples) { i, q in
                if reference[i].moving { errors.add(estimate: q, reference: reference[i].q) }
            }
            samplesRun += file.samples.count
            let (total, heading, inclination) = (errors.totalDegrees, errors.headingDegrees, errors.inclinationDegrees)
            sums.total += total
            sums.heading += heading
            sums.inclination += inclination
            lines.append(pad(trial.name) + String(format: " %6.2f %8.2f %7.2f   %10.2f %12.2f  (%d scored)", total, heading,
                                                  inclination, trial.vqfOnline, trial.madgwickTuned, errors.count))
            XCTAssertLessThan(total, trial.madgwickTuned, "\(trial.name): total RMSE \(total)° not below Madgwick β 0.12's")
        }
        let n = Double(Self.trials.count)
        let mean = (total: sums.total / n, heading: sums.heading / n, inclination: sums.inclination / n)
        let seconds = Date().timeIntervalSince(started)
        print("BROAD, RMSE in degrees over the movement phase (bearing attitude, default parameters)")
        print(pad("trial") + "  total  heading   incl.   VQF online  Madgwick .12")
        for line in lines { print(line) }
        print(pad("mean") + String(format: " %6.2f %8.2f %7.2f   %10.2f %12.2f", mean.total, mean.heading, mean.inclination, 1.89, 5.16))
        print(String(format: "%d samples in %.1f s including gunzip and parsing", samplesRun, seconds))
        // A regression guard, not a target: VQF online's mean total (1.89°) plus a margin.
        XCTAssertLessThan(mean.total, 2.2, "mean total RMSE: VQF online has 1.89°")
        XCTAssertLessThan(mean.total, Self.fusionBestMean.total)
        XCTAssertLessThan(mean.heading, Self.fusionBestMean.heading)
        XCTAssertLessThan(mean.total, Self.madgwickBestMean.total)
        XCTAssertLessThan(mean.heading, Self.madgwickBestMean.heading)
    }

    /// `bearing attitude --samples` as a user runs it (its defaults: a car's online calibration from nothing
    /// known, no track): what it prints, scored against the truth, with online calibration on (the default) and off
    /// (`--no-calibrate`). Online calibration must never make a trial's heading worse by more than 0.1° (issue 39's
    /// rule). Trial 26 (a vibrating phone attached) was the one it did, by 0.14–0.16°, until the filter took its first
    /// field at rest (`testTrial26sCalibrationTakesOutWhatTurnsWithTheBoardAndLeavesNorth`).
    func testWhatBearingAttitudePrints() throws {
        let directory = try requireSharedData("broad")
        var lines: [String] = []
        var sums = (on: (0.0, 0.0), off: (0.0, 0.0))
        for trial in Self.trials {
            guard let (file, reference) = try load(trial.name, from: directory) else { continue }
            let result = [true, false].map { calibrate in
                let errors = scored(file, against: reference, calibrate: calibrate).all
                return (total: errors.totalDegrees, heading: errors.headingDegrees)
            }
            sums.on.0 += result[0].total; sums.on.1 += result[0].heading
            sums.off.0 += result[1].total; sums.off.1 += result[1].heading
            lines.append(pad(trial.name) + String(format: " %6.2f %7.2f    %6.2f %7.2f", result[0].total, result[0].heading, result[1].total, result[1].heading))
            // Issue 39's rule: online calibration never makes a trial's heading worse by more than 0.1°.
            XCTAssertLessThanOrEqual(result[0].heading, result[1].heading + 0.1, "\(trial.name): online calibration made the heading worse")
        }
        let n = Double(Self.trials.count)
        print("BROAD through bearing attitude (OfflineAttitude), RMSE in degrees over the movement phase: online calibration on | off")
        print(pad("trial") + "  total heading     total heading")
        for line in lines { print(line) }
        print(pad("mean") + String(format: " %6.2f %7.2f    %6.2f %7.2f   (VQF offline 2.35 / 2.27 on the held-out trials)",
                                   sums.on.0 / n, sums.on.1 / n, sums.off.0 / n, sums.off.1 / n))
        // Bounds near what it gives (1.31 / 1.09 on, 1.57 / 1.37 off; 1.35 / 1.13 on while a 3-D fit on part of the sphere
        // stayed in force, `OnlineCalibrationSettings.fullFitRegions`, trial 26 1.39° → 1.15°; 1.35 / 1.14 and 1.56 / 1.36 while a car's heading turned
        // to the field at 30 s; 1.39 / 1.18 on while every calibration change that
        // turns the heading restarted it from the new field's first seconds, `AttitudeFilter.headingRestartSpread`, trial
        // 33 1.66° → 1.45°; 1.41 / 1.20 on before a held fit had to leave the
        // field's heading nearer its mean on clearly more of the samples after it, `validationHeadingZ`, trial 33 1.84° →
        // 1.66°; 1.49 / 1.29 on before the filter took its first
        // field at rest, and 1.60 / 1.43 before a car's heading turned to the field at 30 s while it moves like a car,
        // `AttitudeFusion.tauMagOnLand`, which a board lying still or turned slowly does): the daemon's fusion stage
        // from a cold start.
        XCTAssertLessThan(sums.on.0 / n, 1.36, "mean total RMSE")
        XCTAssertLessThan(sums.on.1 / n, 1.14, "mean heading RMSE")
    }

    /// Fields fixed in the world that a board carried about meets and leaves (a steel desk's frame, a monitor, a radiator:
    /// the held-out office trials 37 and 38), added to the six trials: one every 5–20 s while the board moves, each
    /// 5–25 µT at its peak in a direction drawn at random, rising and falling as sin² over 1–6 s, turned into the sensor's
    /// axes by the optical truth (where the truth is lost, none). Many turn the field about the vertical more than they
    /// change its norm or dip (5 µT across a horizontal field of 16 µT turns it 17° and changes the norm by 1.6 %), which
    /// VQF's tests, and Bearing's, do not see: the heading follows them at `tauMag`. Measured (2026-12-05): mean heading
    /// 1.77° with them against 1.13° as recorded; trial 05 (slow turns with breaks) 3.33° against 0.89°. A test of the
    /// field's heading in the gyroscope's frame (a field that turns faster than the gyroscope could err) took this to
    /// 1.30–1.32° and was not kept: it cost the magnet tables (docs/attitude.md, "Fields the board passes"). The bound
    /// guards against worse.
    func testFieldsTheBoardPassesAsItIsCarriedAbout() throws {
        let directory = try requireSharedData("broad")
        var lines: [String] = []
        var sums = (passing: 0.0, clean: 0.0)
        for (k, trial) in Self.trials.enumerated() {
            guard let (recorded, reference) = try load(trial.name, from: directory) else { continue }
            var file = recorded
            var random = SplitMix64(seed: UInt64(101 + k))
            var peak = 0.0
            var start = recorded.samples[0].time + random.uniform(3, 10)
            var i = 0
            while i < file.samples.count {
                let length = random.uniform(1, 6), size = random.uniform(5, 25)
                let z = random.uniform(-1, 1), azimuth = random.uniform(0, 2 * .pi), across = (1 - z * z).squareRoot()
                let direction = Vector3(across * cos(azimuth), across * sin(azimuth), z)
                while i < file.samples.count && file.samples[i].time < start { i += 1 }
                while i < file.samples.count && file.samples[i].time < start + length {
                    let q = reference[i].q
                    if reference[i].moving && q.isFinite, let m = file.samples[i].magnetometer {
                        let world = direction * (size * pow(sin(.pi * (file.samples[i].time - start) / length), 2))
                        file.samples[i].magnetometer = m + q.conjugate.rotate(world)
                        peak = max(peak, world.length)
                    }
                    i += 1
                }
                start += length + random.uniform(5, 20)
            }
            let errors = [file, recorded].map { scored($0, against: reference).all }
            sums.passing += errors[0].headingDegrees
            sums.clean += errors[1].headingDegrees
            lines.append(pad(trial.name) + String(format: " %6.2f %7.2f    %6.2f %7.2f   (largest %.1f µT)", errors[0].totalDegrees,
                                                  errors[0].headingDegrees, errors[1].totalDegrees, errors[1].headingDegrees, peak))
        }
        let n = Double(Self.trials.count)
        print("BROAD with fields the board passes, through bearing attitude: RMSE in degrees, with them | as recorded (total, heading)")
        for line in lines { print(line) }
        print(pad("mean heading") + String(format: " %.2f with them, %.2f as recorded", sums.passing / n, sums.clean / n))
        XCTAssertLessThan(sums.passing / n, 1.45, "mean heading RMSE with the fields the board passes")
    }

    /// Trial 26 (a vibrating phone attached) was the one trial whose heading online calibration made worse against
    /// the optical truth (`testWhatBearingAttitudePrints`: 1.52° against 1.36°, until the filter took its first field
    /// at rest; now 1.15° against 1.84°). Is its fit wrong? Here the calibration it learns is
    /// applied to the recorded field from the first sample, and the heading's error is split into its mean (a
    /// constant offset of north) and its spread about that mean (what a wrong hard iron turns as the board turns).
    /// A right calibration takes out what turns with the board and leaves north where the truth has it (the authors
    /// aligned the truth's north to the field at rest). The one learnt left the spread at 0.72° (from 1.78°) but moved
    /// the mean from 0.45° to 1.03° while the first fit, on 35 of the 100 direction regions a minute in, stayed in force
    /// for the rest of the trial: the fits after it, on up to 83 regions, explained the points better but not by the
    /// 20 % a replacement needs. That looked like the truth's north 1° off the field's; it was the early fit's hard
    /// iron, 0.7 µT off. Since a fit on fewer than `OnlineCalibrationSettings.fullFitRegions` regions is provisional,
    /// a later fit on more replaces it on any real improvement, and the calibration learnt leaves 0.61° of spread and
    /// a mean of −0.38° (2026-12-05).
    func testTrial26sCalibrationTakesOutWhatTurnsWithTheBoardAndLeavesNorth() throws {
        let directory = try requireSharedData("broad")
        let name = "26_disturbed_phone_vibration_A"
        guard let (file, reference) = try load(name, from: directory) else { return }
        let learnt = try XCTUnwrap(attitudes(file) { _ in }.calibration?.inForce, "\(name): nothing learnt")
        var corrected = file
        for i in corrected.samples.indices { corrected.samples[i].magnetometer = corrected.samples[i].magnetometer.map(learnt.apply) }
        /// The signed heading error (degrees) over the movement phase: its mean and its spread about the mean.
        func headingError(_ f: IMUSampleFile) -> (mean: Double, spread: Double) {
            var errors: [Double] = []
            var i = 0
            attitudes(f, calibrate: false) { o in
                let r = reference[i].q
                i += 1
                guard reference[i - 1].moving, r.isFinite else { return }
                let e = o.quaternion.normalized * r.normalized.conjugate
                let sign = e.w < 0 ? -1.0 : 1.0
                errors.append(2 * atan2(sign * e.z, sign * e.w) * 180 / .pi)
            }
            let mean = errors.reduce(0, +) / Double(errors.count)
            let spread = (errors.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(errors.count)).squareRoot()
            return (mean, spread)
        }
        let off = headingError(file), on = headingError(corrected)
        print(String(format: "BROAD %@: heading error without calibration mean %.2f°, spread %.2f°; with the one learnt (hard iron %@) from the start mean %.2f°, spread %.2f°",
                     name, off.mean, off.spread, "\(learnt.offset)", on.mean, on.spread))
        XCTAssertLessThan(on.spread, 0.7 * off.spread, "the calibration learnt should take out what turns with the board")
        XCTAssertLessThan(abs(on.mean), 0.6, "the calibration learnt should leave north where the truth has it")
    }

    /// A magnet fixed to the board, added to the recorded field in the sensor's axes (its field turns with the
    /// board, so the optical truth still holds): 45 µT (about a magnet 1 cm from the chip; BROAD's 2 cm trial is
    /// ~6 µT) and 150 µT, three times the Earth's field. Through `bearing attitude` from a cold start, online
    /// calibration finds it from the gyroscope's attitude once the board turns (`GyroAidedHardIron`): the hard iron
    /// learnt is the magnet's (plus the trial's own, under 1 µT), and the heading after the first 100 s is right.
    /// Before, the 150 µT magnet was never learnt (the point fits' regions, binned by the field less a hard iron
    /// still unknown, all fell in a few) and the 45 µT one was learnt late and wrong (heading 36–50° on trial 05).
    func testAMagnetFixedToTheBoardIsLearntFromTheGyroscope() throws {
        let directory = try requireSharedData("broad")
        let magnets = [Vector3(-30, 28, -17), Vector3(90, -100, 60)]
        var lines: [String] = []
        for name in ["05_undisturbed_slow_rotation_with_breaks_B", "07_undisturbed_fast_rotation_B"] {
            guard let (recorded, reference) = try load(name, from: directory) else { continue }
            for magnet in magnets {
                var file = recorded
                for i in file.samples.indices { file.samples[i].magnetometer = file.samples[i].magnetometer.map { $0 + magnet } }
                let (all, late, outcome) = scored(file, against: reference, from: 100)
                let learnt = try XCTUnwrap(outcome.calibration?.inForce.offset, "\(name): nothing learnt")
                lines.append(pad(name) + String(format: " magnet %5.0f µT: learnt %@ (off by %.2f µT), heading RMS %.2f° after 100 s, %.2f° in all",
                                                magnet.length, "\(learnt)", (learnt - magnet).length, late.headingDegrees, all.headingDegrees))
                XCTAssertLessThan((learnt - magnet).length, 1.3, "\(name): the magnet's hard iron")
                XCTAssertLessThan(late.headingDegrees, 2.2, "\(name), magnet \(magnet.length) µT: heading RMS after 100 s")
            }
        }
        print("BROAD with a magnet fixed to the board, through bearing attitude from a cold start:")
        for line in lines { print(line) }
    }

    /// Trial 33's magnet, measured against the optical truth: the field the board measured less the Earth's (from the
    /// rest before it, turned by the truth), where that is over 13 µT (the magnet is 27 µT), averaged in the sensor's
    /// axes; and when it came and went, against the movement phase's start.
    func trial33sMagnet(from directory: URL) throws -> (field: Vector3, on: Double, off: Double)? {
        guard let (file, reference) = try load("33_disturbed_attached_magnet_2cm", from: directory) else { return nil }
        func valid(_ q: Quaternion) -> Bool { q.w.isFinite && q.x.isFinite && q.y.isFinite && q.z.isFinite }
        let first = try XCTUnwrap(reference.firstIndex { valid($0.q) }, "trial 33 has no truth")
        var earth = Vector3.zero, n = 0.0
        for i in first..<file.samples.count where file.samples[i].time < file.samples[first].time + 5 && valid(reference[i].q) {
            guard let m = file.samples[i].magnetometer else { continue }
            earth = earth + reference[i].q.rotate(m)
            n += 1
        }
        earth = earth * (1 / n)
        var sum = Vector3.zero, count = 0.0, on = Double.infinity, off = -Double.infinity
        for i in file.samples.indices where valid(reference[i].q) {
            guard let m = file.samples[i].magnetometer else { continue }
            let d = m - reference[i].q.conjugate.rotate(earth)
            guard d.length > 13 else { continue }
            sum = sum + d
            count += 1
            on = min(on, file.samples[i].time)
            off = max(off, file.samples[i].time)
        }
        let start = file.samples[try XCTUnwrap(reference.firstIndex { $0.moving })].time
        return (sum * (1 / count), on - start, off - start)
    }

    /// The held-out trials 32, 34, 35 and 36 are trial 33 with the magnet 1, 3, 4 and 5 cm from the IMU. Here trial 33's
    /// own magnet (measured against the truth, `trial33sMagnet`) is scaled as a dipole's field, by the cube of the
    /// distance, and added in the sensor's axes to the undisturbed trials 05, 07 and 16 over the same span as in trial
    /// 33 (from a few seconds before the movement to about a minute into it), through `bearing attitude` from a cold
    /// start, online calibration on and off. The truth still holds (the magnet turns with the board, and the truth's
    /// north was set at rest before it came). The heading after the magnet has gone is scored apart: a calibration
    /// that learnt it must let it go again.
    func testTrial33sMagnetAtOtherDistances() throws {
        let directory = try requireSharedData("broad")
        guard let magnet = try trial33sMagnet(from: directory) else { return }
        print(String(printf: "trial 33's magnet: (%.1f, %.1f, %.1f) µT, %.1f µT, from %.1f s to %.1f s of the movement phase",
                     magnet.field.x, magnet.field.y, magnet.field.z, magnet.field.length, magnet.on, magnet.off))
        XCTAssertEqual(magnet.field.length, 27, accuracy: 2, "trial 33's magnet")
        var lines: [String] = []
        var after: [String: Double] = [:], whole: [String: Double] = [:]
        var sums = (on: 0.0, off: 0.0), worse = -Double.infinity
        var fiveCentimetres: [(trial: String, on: Double, off: Double)] = []
        for name in ["05_undisturbed_slow_rotation_with_breaks_B", "07_undisturbed_fast_rotation_B", "16_undisturbed_fast_translation_B"] {
            guard let (recorded, reference) = try load(name, from: directory) else { continue }
            let start = recorded.samples[try XCTUnwrap(reference.firstIndex { $0.moving })].time
            let span = (start + magnet.on)..<(start + magnet.off)
            for distance in [1.0, 2, 3, 4, 5] {
                let field = magnet.field * pow(2 / distance, 3)
                var file = recorded
                for i in file.samples.indices where span.contains(file.samples[i].time) {
                    file.samples[i].magnetometer = file.samples[i].magnetometer.map { $0 + field }
                }
                let on = scored(file, against: reference, calibrate: true, from: span.upperBound)
                let off = scored(file, against: reference, calibrate: false, from: span.upperBound)
                sums.on += on.all.headingDegrees
                sums.off += off.all.headingDegrees
                worse = max(worse, on.all.headingDegrees - off.all.headingDegrees)
                if distance == 5 { fiveCentimetres.append((String(name.prefix(2)), on.all.headingDegrees, off.all.headingDegrees)) }
                after["\(name.prefix(2)) \(Int(distance))"] = on.later.headingDegrees
                whole["\(name.prefix(2)) \(Int(distance))"] = on.all.headingDegrees
                lines.append(String(printf: "%@ %1.0f cm %5.1f µT   %6.2f %6.2f   %6.2f %6.2f   %6.2f %6.2f", String(name.prefix(2)), distance,
                                    field.length, on.all.totalDegrees, on.all.headingDegrees, off.all.totalDegrees, off.all.headingDegrees,
                                    on.later.headingDegrees, off.later.headingDegrees))
            }
        }
        let n = Double(lines.count)
        print("BROAD with trial 33's magnet at other distances, through bearing attitude: RMSE in degrees, online on | off (total, heading) | heading after the magnet went, on | off")
        for line in lines { print(line) }
        print(String(printf: "mean heading: online on %.2f, off %.2f; worst case on against off %+.2f", sums.on / n, sums.off / n, worse))
        // A magnet 1 cm away (217 µT, five times the Earth's field) is learnt from the gyroscope; when it goes, the
        // calibration from before it must come back. Measured (2026-12-05, a step's fit judged on the samples after it,
        // `OnlineCalibrationSettings.validationSamples`): 0.41° and 1.22° after it went (2.17° on trial 07 while a step's
        // fit was taken at once). Before (Swift 6.3.1, Linux x86_64): 0.41° and 2.14° (0.47° and 3.53° while calibration changes restarted the heading; on trial 05 4.62° while a fit refused by the samples after it left online calibration learning, where nothing
        // judges the field against the calibration in force, and so nothing could recall the one from before it).
        XCTAssertLessThan(try XCTUnwrap(after["05 1"]), 0.6, "trial 05, magnet 1 cm: heading RMS after it went")
        XCTAssertLessThan(try XCTUnwrap(after["07 1"]), 1.85, "trial 07, magnet 1 cm: heading RMS after it went")
        // Before the gyroscope gives its hard iron, the magnet is a disturbance the heading rides through on the
        // gyroscope, however soon after the start it comes. Measured: 1.73° over the whole trial (2.19° while a step's fit
        // was taken at once; 3.31° while calibration
        // changes restarted the heading, 7.03° while the filter's fast start, the mean of its first 30 s of samples on
        // land, ran on through the magnet 21 s in and turned the still board's heading 14° towards it).
        XCTAssertLessThan(try XCTUnwrap(whole["07 1"]), 2.6, "trial 07, magnet 1 cm: heading RMS")
        // A magnet of 3.3 µT (4 cm) leaves the field within the disturbance thresholds, so when it goes nothing is
        // disturbed; an earlier calibration that holds the latest samples' field still in the gyroscope's frame better
        // is put back all the same. Measured: 1.14° on trial 05 after it went (1.58° before; 0.69° with online
        // calibration off).
        XCTAssertLessThan(try XCTUnwrap(after["05 4"]), 1.3, "trial 05, magnet 4 cm: heading RMS after it went")
        // Over the fifteen: 1.50° with online calibration, 4.07° without (1.67° while every calibration change that turns
        // the heading restarted it from the new field's first seconds, `AttitudeFilter.headingRestartSpread`: trial 07
        // with the 2 cm magnet 2.68°, with the 1 cm one 3.31°; trial 05 with the 3 cm magnet went from 1.35° to 1.63° and
        // with the 4 cm one from 1.53° to 1.61°; 1.70° before a held fit had to leave the field's
        // heading nearer its mean on clearly more of the samples after it, `validationHeadingZ`: trial 05 with the 5 cm
        // magnet was worse by 0.47°; 1.94° and 3.88° while the filter's fast start
        // ran on through a magnet; 4.85° and 9.24° while it learnt its first field only while turning: the magnet, come
        // 3 s before the movement, was that field, and nothing was judged disturbed). The goal (issue 39) is that no
        // case is worse with it than without by more than 0.1°.
        // Trial 07 with a 3.3 µT magnet was worse by 3.57°: from the cold start a 3-D fit of its first 24 directions
        // (hard iron 3.6 µT, but a soft iron 5 % off) was put in force leaving 4.8° of dip spread on its own points,
        // within a car's relaxed threshold; a 3-D fit must now explain the dip within 3°. What is left: trial 05 with
        // the 3.3 µT magnet, worse by 0.41° (0.33° while changes restarted the heading).
        // A magnet 5 cm away is the held-out case issue 39 names (2.22° → 2.62° with online calibration): here 1.7 µT,
        // mostly along the board's z, costs the heading less than a fit's errors would.
        for (trial, on, off) in fiveCentimetres {
            XCTAssertLessThanOrEqual(on, off + 0.1, "trial \(trial), magnet 5 cm: online calibration made the heading worse")
        }
        // A calibration put in force after a magnet came need not move a heading the gyroscope held right through it:
        // on trial 07 with the 2 cm magnet the fit from the gyroscope's attitude came 25 s into the magnet, its field 0.9°
        // from the heading held, and the heading restarted from the new field's first samples was 4–6° off for 20 s.
        XCTAssertLessThan(try XCTUnwrap(whole["07 2"]), 2.1, "trial 07, magnet 2 cm: heading RMS")
        XCTAssertLessThan(sums.on / n, 1.6, "mean heading RMS, online calibration on")
        XCTAssertLessThan(worse, 0.5, "the case online calibration makes worst, against off")
    }

    /// Online hard- and soft-iron calibration from a cold start (nothing known of the board), against the same
    /// filter fed the samples as they are: the attached-magnet trial must improve markedly and none get
    /// worse by more than 0.3°.
    func testOnlineCalibrationFromAColdStart() throws {
        let directory = try requireSharedData("broad")
        var lines: [String] = []
        var sums = (off: (0.0, 0.0), on: (0.0, 0.0))
        for trial in Self.trials {
            guard let (file, reference) = try load(trial.name, from: directory) else { continue }
            var off = AttitudeErrorRMS(), on = AttitudeErrorRMS()
            var plain = AttitudeFilter()
            plain.replay(file.samples) { i, q in if reference[i].moving { off.add(estimate: q, reference: reference[i].q) } }
            var online = OnlineCalibratedFilter(filter: AttitudeFilter(), calibration: OnlineMagnetometerCalibration(calibration: nil, origin: .none))
            online.replay(file.samples) { i, q in if reference[i].moving { on.add(estimate: q, reference: reference[i].q) } }
            let outcomes = online.takeOutcomes()
            if ProcessInfo.processInfo.environment["BEARING_DEBUG_ONLINE"] != nil {
                for o in outcomes { print(trial.name.prefix(2), String(format: "%.1f", o.time), o.outcome) }
            }
            let accepted = outcomes.filter { if case .accepted = $0.outcome { return true }; return false }
            let first = accepted.first.map { String(format: "%.0f s", $0.time) } ?? "never"
            sums.off.0 += off.totalDegrees; sums.off.1 += off.headingDegrees
            sums.on.0 += on.totalDegrees; sums.on.1 += on.headingDegrees
            lines.append(pad(trial.name) + String(format: " %6.2f %7.2f   %6.2f %7.2f   %2d fits accepted, first at %@, %d steps",
                                                  off.totalDegrees, off.headingDegrees, on.totalDegrees, on.headingDegrees,
                                                  accepted.count, first, online.calibration?.steps ?? 0))
            XCTAssertLessThanOrEqual(on.totalDegrees, off.totalDegrees + 0.3, "\(trial.name): online calibration made it worse")
            // Trial 33's magnet (27 µT, for 55 s) helped markedly (3.75° → 1.97° total) while the bare filter learnt its
            // first field only while turning: the magnet, come 3 s before the movement, was that field. With the field at
            // rest the reference, the bare filter rode its gyroscope through the whole magnet (1.78°) and online
            // calibration gave 1.96°; since the field's heading in the gyroscope's frame is judged too, off 2.82°, online
            // 1.53° (2026-12-06, docs/calibration-online.md#results).
        }
        let n = Double(Self.trials.count)
        print("BROAD, RMSE in degrees over the movement phase, from a cold start: calibration off | online")
        print(pad("trial") + "  total heading    total heading")
        for line in lines { print(line) }
        print(pad("mean") + String(format: " %6.2f %7.2f   %6.2f %7.2f   (VQF offline 2.35 / 2.27, online 2.56 / 2.40)",
                                   sums.off.0 / n, sums.off.1 / n, sums.on.0 / n, sums.on.1 / n))
    }
}

extension BROADTrialTests {
    /// The held-out BROAD trials 32, 34, 35 and 36 are trial 33's motion with its magnet 1, 3, 4 and 5 cm from the IMU.
    /// Trial 33 itself, its own magnet (measured against the optical truth, `trial33sMagnet`) taken out over its span and
    /// put back as a dipole's field at each distance (scaled by the cube of 2 cm over it), is the nearest to them this
    /// project has: the same hand, the same board, the same turns. Through `bearing attitude` from a cold start, online
    /// calibration must be no worse than off at any distance, by issue 39's 0.1°. Measured (heading RMS, on / off):
    /// none 1.20 / 1.20, 1 cm 1.27 / 2.04, 2 cm (the trial as recorded) 1.43 / 2.44, 3 cm 1.29 / 1.57, 4 cm 1.24 / 1.34,
    /// 5 cm 1.25 / 1.25.
    func testTrial33WithItsOwnMagnetMovedNearerOrFurther() throws {
        let directory = try requireSharedData("broad")
        guard let magnet = try trial33sMagnet(from: directory) else { return }
        guard let (recorded, reference) = try load("33_disturbed_attached_magnet_2cm", from: directory) else { return }
        let start = recorded.samples[try XCTUnwrap(reference.firstIndex { $0.moving })].time
        let span = (start + magnet.on)..<(start + magnet.off)
        var lines: [String] = [], on: [Double: Double] = [:]
        for distance in [0.0, 1, 2, 3, 4, 5] {
            // 0: no magnet at all.
            let added = distance == 0 ? -magnet.field : magnet.field * (pow(2 / distance, 3) - 1)
            var file = recorded
            for i in file.samples.indices where span.contains(file.samples[i].time) {
                file.samples[i].magnetometer = file.samples[i].magnetometer.map { $0 + added }
            }
            let heading = [true, false].map { scored(file, against: reference, calibrate: $0).all.headingDegrees }
            on[distance] = heading[0]
            let what = distance == 0 ? "none" : String(printf: "%1.0f cm, %5.1f µT", distance, (magnet.field * pow(2 / distance, 3)).length)
            lines.append(String(printf: "%@   %6.2f %6.2f", what, heading[0], heading[1]))
            XCTAssertLessThanOrEqual(heading[0], heading[1] + 0.1, "trial 33, its magnet \(what): online calibration made the heading worse")
        }
        print("BROAD trial 33 with its own magnet at other distances, through bearing attitude: heading RMSE in degrees, online on | off")
        for line in lines { print(line) }
        for (distance, bound) in [(0.0, 1.8), (1, 1.9), (2, 2.2), (3, 1.95), (4, 1.85), (5, 1.9)] {
            XCTAssertLessThan(try XCTUnwrap(on[distance]), bound, "trial 33, its magnet at \(distance) cm: heading RMS with online calibration")
        }
    }
}

extension BROADTrialTests {
    /// The six trials with the sensor's axes turned in the board before the recording: 90° about its x, its y and its z.
    /// The same motion, the same field and the same truth (every vector v' = r v r*, the truth q' = q r*), so a filter
    /// that treats its axes alike scores the same in each. The attitude filter does (online calibration off: the same
    /// to a few hundredths). Online calibration bins the field's directions into regions fixed in the sensor's axes
    /// (`SphereRegions`) and fits once enough regions hold a point, so its fits, and the heading, differ from one
    /// turn to the next. The held-out trials are recorded in whatever axes their motion put the board in, so the mean
    /// over the four is the fairer figure for them than the recorded axes' alone. Measured (2026-12-05): trial 26 (a
    /// vibrating phone attached) 1.15° as recorded and 1.40° / 1.91° / 2.38° turned, the mean over the 24 runs 1.39°
    /// total and 1.18° heading (1.09° as recorded). While the first 3-D fit stayed in force however few regions it had
    /// (`OnlineCalibrationSettings.fullFitRegions`): trial 26 1.39° and 2.31° / 1.41° / 2.38°, the mean 1.42° / 1.20°
    /// (1.13° as recorded).
    /// `scripts/bench-attitude --variant turned-x90,turned-y90,turned-z90` runs the peers on the same.
    func testTheSensorsAxesTurnedInTheBoard() throws {
        let directory = try requireSharedData("broad")
        let turns: [(name: String, r: Quaternion?)] = [
            ("as recorded", nil),
            ("x 90°", Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)),
            ("y 90°", Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)),
            ("z 90°", Quaternion(axis: Vector3(0, 0, 1), angle: .pi / 2)),
        ]
        var lines: [String] = []
        var sums = (total: 0.0, heading: 0.0), runs = 0.0
        var perTurn = [Double](repeating: 0, count: turns.count)
        for trial in Self.trials {
            guard let (recorded, reference) = try load(trial.name, from: directory) else { continue }
            var line = pad(trial.name)
            var off: [Double] = []
            for (k, turn) in turns.enumerated() {
                var file = recorded, truth = reference
                if let r = turn.r {
                    for i in file.samples.indices {
                        file.samples[i].accelerometer = r.rotate(file.samples[i].accelerometer)
                        file.samples[i].gyroscope = r.rotate(file.samples[i].gyroscope)
                        file.samples[i].magnetometer = file.samples[i].magnetometer.map { r.rotate($0) }
                        truth[i].q = reference[i].q * r.conjugate
                    }
                }
                let on = scored(file, against: truth).all
                off.append(scored(file, against: truth, calibrate: false).all.headingDegrees)
                sums.total += on.totalDegrees
                sums.heading += on.headingDegrees
                perTurn[k] += on.headingDegrees
                runs += 1
                line += String(format: "  %5.2f %5.2f", on.headingDegrees, off[k])
            }
            lines.append(line)
            for (k, turn) in turns.enumerated().dropFirst() {
                XCTAssertEqual(off[k], off[0], accuracy: 0.05,
                               "\(trial.name), axes turned \(turn.name): the filter without online calibration scores the same")
            }
        }
        print("BROAD with the sensor's axes turned in the board, through bearing attitude: heading RMSE in degrees, online calibration on, off")
        print(pad("trial") + turns.map { "  " + $0.name.padding(toLength: 11, withPad: " ", startingAt: 0) }.joined())
        for line in lines { print(line) }
        let n = Double(Self.trials.count)
        print(pad("mean heading, on") + perTurn.map { String(format: "  %5.2f      ", $0 / n) }.joined())
        print(String(format: "mean over the %.0f: %.2f total, %.2f heading", runs, sums.total / runs, sums.heading / runs))
        // Measured (2026-12-05): 1.39° total, 1.18° heading over the 24 (1.42° / 1.20° before `fullFitRegions`).
        XCTAssertLessThan(sums.total / runs, 1.45, "mean total RMSE over the axes turned")
        XCTAssertLessThan(sums.heading / runs, 1.24, "mean heading RMSE over the axes turned")
    }
}
