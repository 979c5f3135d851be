import BearingAttitude
import BearingCalibration
import BearingCompass
import BearingModel
import BearingOnlineCalibration
import BearingSimulator
import XCTest
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The fused compass judged on `RoadDrive`, a simulated car drive that departs from the estimator's own model
/// (sideslip, a misaligned IMU with bias random walk and vibration, a local field off WMM's, the street's iron,
/// a hard iron that changes, a soft iron that is not linear, GNSS that lags and jumps), as the held-out real
/// drives are judged: from a cold start (`calibration.auto: track`, `vehicle: car`, nothing calibrated), the
/// true heading's RMS on straight stretches at more than 5 m/s after the first two minutes, and the worst
/// two-minute window; and the same drives without GNSS after ten minutes. docs/simulation.md describes the
/// simulator and the sources of its magnitudes.
final class RoadDriveTests: XCTestCase {
    /// WMM at the start (Sydney): what the estimator is given; the drive's own field departs from it.
    static let wmm = LocalField.wmm(.wmm2025, latitude: -33.9, longitude: 151.2, heightKm: 0, year: 2026.4, source: .fix)
    static var model: RoadDriveField {
        RoadDriveField(declination: wmm.declination.value, dip: wmm.reference.dip, norm: wmm.reference.norm)
    }
    static let seeds: [UInt64] = [1, 2, 3, 4, 5, 6, 7, 8]
    static let duration = 960.0

    static func drive(seed: UInt64, duration: Double = duration, effects: RoadDriveEffects = RoadDriveEffects(),
                      configure: (inout RoadDrive.Configuration) -> Void = { _ in }) -> RoadDrive {
        var c = RoadDrive.Configuration(seed: seed, model: model)
        c.duration = duration
        c.effects = effects
        configure(&c)
        return RoadDrive(c)
    }

    static func wrap(_ degrees: Double) -> Double {
        var e = degrees.truncatingRemainder(dividingBy: 360)
        if e > 180 { e -= 360 } else if e < -180 { e += 360 }
        return e
    }

    /// How a drive is judged: RMS of the true heading's error on the straights after `after` seconds, the worst
    /// 2-minute window (windows every 30 s with at least 30 s of straight samples), and the number judged.
    struct Score {
        var rms: Double
        var worstWindow: Double
        var samples: Int
        /// The error's mean (a constant offset) on the same samples.
        var mean: Double
        /// Fits online calibration refused because the course on the straights did not bear them out.
        var refusedByCourse = 0
        /// The RMS over the outage given to `judge` (0 without one).
        var duringOutage = 0.0
        /// The vehicle's forward axis the fusion learnt, board frame, at the end.
        var forward: Vector3?
        /// The yaw the fusion took for the board's mounting at the end (`AttitudeFusion.mountingYaw`).
        var mountingYaw = 0.0
        /// RMS of ATT's pitch and roll against the car's (not the board's) over the second half of the drive, degrees.
        var pitch = 0.0
        var roll = 0.0
        /// The largest distance, µT, between a hard iron online calibration put in force and the car's own at that moment
        /// (the simulator's, in the sensor's axes).
        var worstHardIron = 0.0
        /// The RMS on the straights after `judge`'s `alsoAfter` (nil without one): the same run judged from another time.
        var rmsAlsoAfter: Double?
    }

    /// The drive's fixes as `bearing attitude --gnss` takes a track of positions only (`t,lat,lon`, as the held-out
    /// drives give theirs): written as that CSV, read back by `GNSSTrackFile`, which derives each epoch's speed and
    /// course from the positions either side, and made gpsd's 2D fixes as `OfflineAttitude` makes them.
    /// `outage`: seconds of the drive whose epochs the file leaves out (the fixes returned keep their places, for
    /// `judge` to leave out too).
    /// `jitter`: white noise added to each position (m RMS an axis, from a seeded stream of the test's own), on top of
    /// the receiver's own slow errors. `dropped`: the share of epochs the track leaves out at random (nil in their place).
    /// `stamped`: each epoch's time off by up to this many seconds either way, uniformly (a logger that stamps a line
    /// when it arrives, not the fix's own time). `decimals`: the positions written to that many decimals of a degree.
    /// `every`: only every so many epochs written (a logger set to log every `every` seconds; nil in the others' places).
    static func positionsOnly(_ drive: RoadDrive, outage: Range<Double>? = nil, jitter: Double = 0, dropped: Double = 0,
                              stamped: Double = 0, decimals: Int? = nil, every: Int = 1) throws -> [GPSFix?] {
        var csv = "t,lat,lon\n"
        var all: [(fix: GPSFix, lost: Bool, dropped: Bool)] = []
        var random = RoadDriveRandom(seed: drive.configuration.seed, stream: 100)
        var dropping = RoadDriveRandom(seed: drive.configuration.seed, stream: 101)
        var stamping = RoadDriveRandom(seed: drive.configuration.seed, stream: 102)
        for event in drive.events {
            guard case .fix(let f) = event, let t = f.time?.unixTime, var lat = f.latitude, var lon = f.longitude else { continue }
            if jitter > 0 {
                lat += random.gaussian() * jitter / 111_320
                lon += random.gaussian() * jitter / (111_320 * cos(lat * .pi / 180))
            }
            let lost = Self.lost(f, drive, outage), gone = (dropped > 0 && dropping.chance(dropped)) || all.count % every != 0
            all.append((f, lost, gone))
            let time = stamped > 0 ? t + stamping.uniform(-stamped, stamped) : t
            if !lost && !gone { csv += decimals.map { String(format: "%.3f,%.\($0)f,%.\($0)f\n", time, lat, lon) } ?? "\(time),\(lat),\(lon)\n" }
        }
        var given = try GNSSTrackFile.parse(csv, source: "RoadDrive \(drive.configuration.seed)").epochs.makeIterator()
        return all.map { x, lost, gone in
            guard !gone else { return nil }
            guard !lost, let e = given.next() else { return x }
            var f = GPSFix(mode: .twoD, time: GPSTimestamp(unixTime: e.time), latitude: e.latitude, longitude: e.longitude)
            f.speed = e.speed
            f.track = e.track
            return f
        }
    }

    /// Whether the fix's time falls in `outage` (seconds of the drive).
    static func lost(_ fix: GPSFix, _ drive: RoadDrive, _ outage: Range<Double>?) -> Bool {
        outage?.contains((fix.time?.unixTime ?? 0) - drive.configuration.start) ?? false
    }

    /// `fixes`: the fixes to give in place of the drive's own, in order (nil: the drive's, a receiver's Doppler
    /// speed and course). `outage`: seconds of the drive whose fixes are not given (a tunnel, a car park).
    /// `samplesLost`: seconds of the drive (from its start) whose inertial and field samples are not given (a logger's
    /// stall), each judged sample's truth still its own. `recordedFrom`: seconds of the drive before which nothing is
    /// given at all (a recording started on the move: the fusion's cold start is then there). `fieldLost`: seconds
    /// whose field samples alone are not given (the magnetometer's chip lost, the IMU reading on). `clockStep`: from
    /// `at` seconds of the drive on, the samples are stamped `by` seconds off (the system clock stepped by NTP or GPS).
    /// `elapsed`: each sample is given its time on a monotonic clock, as the daemon's pipeline clock gives it: the
    /// drive's time since a boot 200 s before it, plus a latency from reading to handing over of 0–30 ms, 0.3 s for
    /// one sample in 200 (a loaded single-core board).
    static func judge(_ drive: RoadDrive, gnss: Bool, after: Double, alsoAfter: Double? = nil, fixes: [GPSFix?]? = nil,
                      outage: Range<Double>? = nil, samplesLost: [Range<Double>] = [], fieldLost: [Range<Double>] = [],
                      recordedFrom: Double = 0, clockStep: (at: Double, by: Double)? = nil, elapsed: Bool = false,
                      field: LocalField = wmm) -> Score {
        var f = coldStart(field: field)
        var all: [(time: Double, error: Double)] = []
        let from = min(after, alsoAfter ?? after)
        var tilt = (pitch: 0.0, roll: 0.0, n: 0.0)
        var inForce: Vector3?, worstHardIron = 0.0
        var i = 0, k = 0
        /// Whether the sample stamped `t` is not given (with `field`, a field sample, which `fieldLost` loses too).
        func lost(_ t: GPSTimestamp, field: Bool = false) -> Bool {
            let second = t.unixTime - drive.configuration.start
            return second < recordedFrom || (samplesLost + (field ? fieldLost : [])).contains { $0.contains(second) }
        }
        func recorded(_ fix: GPSFix) -> Bool {
            (fix.time?.unixTime ?? 0) - drive.configuration.start >= recordedFrom
        }
        func stamped(_ t: GPSTimestamp) -> GPSTimestamp {
            guard let step = clockStep, t.unixTime - drive.configuration.start >= step.at else { return t }
            return t.adding(nanoseconds: Int64((step.by * 1e9).rounded()))
        }
        var latencies = SplitMix64(seed: 0xE1A95ED)
        func monotonic(_ t: GPSTimestamp) -> Double? {
            guard elapsed else { return nil }
            let latency = Int.random(in: 0..<200, using: &latencies) == 0 ? 0.3 : Double.random(in: 0...0.03, using: &latencies)
            return t.unixTime - drive.configuration.start + 200 + latency
        }
        for event in drive.events {
            switch event {
            case .inertial(let s):
                let truth = drive.truth[i]
                i += 1
                guard !lost(s.time) else { continue }
                var s = s
                let e = monotonic(s.time)
                s.time = stamped(s.time)
                f.step(.inertial(s), elapsed: e)
                if truth.time > drive.configuration.duration / 2, let a = f.emitted, let pitch = a.pitch, let roll = a.roll {
                    let (p, r) = (pitch - truth.pitch, wrap(roll - truth.roll))
                    tilt = (tilt.pitch + p * p, tilt.roll + r * r, tilt.n + 1)
                }
                guard truth.straight, truth.time > from, let heading = f.emitted?.heading else { continue }
                all.append((truth.time, wrap(heading - truth.heading)))
            case .magnetic(let s):
                guard !lost(s.time, field: true) else { continue }
                var s = s
                let e = monotonic(s.time)
                s.time = stamped(s.time)
                f.step(.magnetic(s), elapsed: e)
                if let offset = f.online?.inForce.offset, offset != inForce {
                    inForce = offset
                    if f.online?.origin != CalibrationOrigin.none { worstHardIron = max(worstHardIron, (offset - drive.truth[max(i - 1, 0)].hardIron).length) }
                }
            case .fix(let x):
                if gnss && !Self.lost(x, drive, outage) && recorded(x),
                   let given = fixes.map({ $0[k] }) ?? x { f.step(.fix(given)) }
                k += 1
            }
        }
        let errors = all.filter { $0.time > after }
        let rms = RoadDriveJudging.rootMeanSquare(errors)
        let mean = errors.reduce(0) { $0 + $1.error } / Double(max(errors.count, 1))
        let worst = RoadDriveJudging.worstWindow(errors, from: after, duration: drive.configuration.duration, rate: drive.configuration.rate)
        let during = outage.map { o in errors.filter { o.contains($0.time) }.map(\.error) } ?? []
        return Score(rms: rms, worstWindow: worst, samples: errors.count, mean: mean,
                     refusedByCourse: f.history.filter { $0.kind == .refusedByCourse }.count,
                     duringOutage: (during.reduce(0) { $0 + $1 * $1 } / Double(max(during.count, 1))).squareRoot(),
                     forward: f.vehicleForward, mountingYaw: f.mountingYaw,
                     pitch: (tilt.pitch / max(tilt.n, 1)).squareRoot(), roll: (tilt.roll / max(tilt.n, 1)).squareRoot(),
                     worstHardIron: worstHardIron, rmsAlsoAfter: alsoAfter.map { t in RoadDriveJudging.rootMeanSquare(all.filter { $0.time > t }) })
    }

    /// The fusion as the drives are judged from a cold start: a car, `calibration.auto: track`, nothing calibrated, the
    /// board's axes the sensors', `field` (WMM's at the start) given.
    static func coldStart(field: LocalField = wmm) -> AttitudeFusion {
        let axes = try! Orientation(axes: "+X+Y+Z")
        var f = AttitudeFusion(imuOrientation: axes, magnetometerOrientation: axes, trueNorth: true, auto: .track, vehicle: .car)
        f.step(.calibration(nil))
        f.step(.localField(field))
        return f
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func format(_ x: Double, _ digits: Int = 2) -> String { String(printf: "%.\(digits)f", x) }

    /// Eight 16-minute drives from a cold start, with GNSS and without: a table per seed, bounds on the median
    /// and the worst seed at about 1.5 times what the estimator gets today, so the test fails if it gets worse.
    func testTheFusionOnSimulatedRoadDrivesJudgedAsTheHeldOutDrives() {
        var withGNSS: [Score] = [], withoutGNSS: [Score] = [], withoutGNSSFromTwoMinutes: [Double] = []
        var yawLeft = (board: [Double](), taken: [Double]())
        print("RoadDrive: seed | GNSS: RMS (after 120 s), worst 2-min, mean, n | no GNSS: RMS (after 600 s), worst 2-min, mean, n | "
              + "lag s, mounting r/p/y °, Δdecl °, Δdip °, km")
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed)
            let a = Self.judge(drive, gnss: true, after: 120), b = Self.judge(drive, gnss: false, after: 600, alsoAfter: 120)
            withGNSS.append(a)
            withoutGNSS.append(b)
            withoutGNSSFromTwoMinutes.append(b.rmsAlsoAfter!)
            let m = drive.mounting
            print("RoadDrive: \(seed) | \(Self.format(a.rms)) \(Self.format(a.worstWindow)) \(Self.format(a.mean)) \(a.samples) | "
                  + "\(Self.format(b.rms)) \(Self.format(b.worstWindow)) \(Self.format(b.mean)) \(b.samples) | "
                  + "\(Self.format(drive.gnssLag)) \(Self.format(m.x, 1))/\(Self.format(m.y, 1))/\(Self.format(m.z, 1)) "
                  + "\(Self.format(drive.localField.declination - Self.model.declination)) \(Self.format(drive.localField.dip - Self.model.dip)) "
                  + "\(Self.format(drive.distance / 1000, 1))")
            XCTAssertGreaterThan(a.samples, 8000, "seed \(seed): enough straight driving to judge")
            XCTAssertEqual(a.mountingYaw, 0, "seed \(seed): a board mounted straight (1–2° off) is left to the deviation and the trim")
            // Without GNSS nothing else takes the board's yaw on the car out: the heading is taken along the axis the
            // corners give, however near the board's x (`VehicleAcceleration.forwardFromCornersAlone`).
            yawLeft.board.append(abs(m.z))
            yawLeft.taken.append(abs(Self.wrap(b.mountingYaw + m.z)))
            print("RoadDrive: \(seed) | hard iron put in force, farthest from the car's: \(Self.format(a.worstHardIron)) µT with GNSS, "
                  + "\(Self.format(b.worstHardIron)) µT without")
        }
        let gnssMedian = Self.median(withGNSS.map(\.rms)), gnssWorst = withGNSS.map(\.rms).max()!
        let windowMedian = Self.median(withGNSS.map(\.worstWindow)), windowWorst = withGNSS.map(\.worstWindow).max()!
        let noneMedian = Self.median(withoutGNSS.map(\.rms)), noneWorst = withoutGNSS.map(\.rms).max()!
        // No calibration put in force is the mirror image of the car's iron: a car only turns, and a sphere through a ring of
        // directions has two centres, the second about 2 × 51 µT further along the vertical (seed 7 without GNSS took it
        // after a step, 106 µT off, and its heading went 9° wrong), nor a lorry's beside the car at a light (seed 6 with
        // GNSS took one as a step of the hard iron, 13.29 µT off, before the step's time ran only with the car moving).
        // Measured: 6.89 µT at most (seed 2 without GNSS).
        print("RoadDrive: without GNSS, the board's yaw on the car left in the heading's axis: \(yawLeft.taken.map { Self.format($0) })°, "
              + "along the board's x \(yawLeft.board.map { Self.format($0) })°")
        XCTAssertLessThan(Self.median(yawLeft.taken), 0.85 * Self.median(yawLeft.board), "without GNSS, the mounting's yaw left in the heading")
        let farthest = (withGNSS + withoutGNSS).map(\.worstHardIron).max()!
        XCTAssertLessThan(farthest, 10, "a hard iron put in force \(Self.format(farthest)) µT from the car's")
        let refusals = withGNSS.map(\.refusedByCourse)
        print("RoadDrive: fits refused by the course, with GNSS, per seed: \(refusals)")
        XCTAssertGreaterThan(refusals.reduce(0, +), 0, "the course refused no fit on any drive")
        XCTAssertEqual(withoutGNSS.map(\.refusedByCourse).reduce(0, +), 0, "no course, no refusal by it")
        print("RoadDrive: with GNSS RMS median \(Self.format(gnssMedian))°, worst seed \(Self.format(gnssWorst))°; worst 2-min window median "
              + "\(Self.format(windowMedian))°, worst \(Self.format(windowWorst))°; without GNSS RMS median \(Self.format(noneMedian))°, "
              + "worst \(Self.format(noneWorst))°")
        // Measured (2026-12-05, once the course's trim fitted its window on steady epochs only, `CourseTrim.steadyRate`): with
        // GNSS RMS median 0.48°, worst seed 0.63°, worst window median 0.74°, worst 1.34° (0.50°, 0.65°, 0.76°, 1.61°
        // before); without GNSS the same.
        // Measured (2026-12-05, once a step's fit waited for the samples after it to bear it out, `OnlineCalibrationSettings.
        // validationSamples`): with GNSS the same; without GNSS median 2.61°, third worst 2.91°, worst 4.64° (seed 8 6.33° →
        // 2.32°: a step's fit on 8 directions at 708 s had put its heading 8–11° off for three minutes).
        // Measured (2026-12-05, once the corners' left and right turns were weighed alike for the forward axis,
        // `VehicleAcceleration.balancedTurning`): with GNSS the same; without GNSS median 2.90°, worst 6.33° (2.65°, 6.20°
        // before; seeds 1–48 3.51° → 3.33°), the yaw left in the heading's axis median 0.57° (0.80°).
        // Measured (2026-12-04, once a car's heading turned to the field at 60 s rather than 30, `AttitudeFusion.tauMagOnLand`):
        // with GNSS the same; without GNSS median 2.62°, worst 6.05°, third worst 3.11° (3.13°, 5.69°, 4.26° at 30 s).
        // Before (2026-12-04, once the next corners could correct a corner's start, `OnlineMagnetometerCalibration.solvesCorners`):
        // with GNSS the same; without GNSS median 3.13°, worst 5.69°, third worst 4.26° (seed 4 5.48° → 4.26°, seed 7 3.28° → 2.40°).
        // Before (2026-12-04, once the rest test no longer depended on the IMU's rate, `RestDetector`, and the course's
        // window followed the bias learnt and the turns between epochs, `CourseTrim`): with GNSS RMS median 0.50°, worst
        // seed 0.68°, worst window median 0.75°, worst 1.72°; without GNSS median 3.31°, worst 5.69°. Before (Swift 6.3.1,
        // Linux x86_64): with GNSS RMS median 0.51°, worst seed 0.65°; worst window median
        // 0.76°, worst 1.61° (0.51°, 0.64°, 0.83°, 1.59° before the forward axis was learnt, `VehicleAcceleration.forward`); without GNSS median 3.47°, worst 5.96°,
        // third worst 5.12° (2.95°, 4.84°, 4.01° while a corner's hard iron waited for the next corner only 20 s,
        // `OnlineMagnetometerCalibration.gyroLevelHoldTime`: on seeds 1–48 the median went 4.11° → 3.88°, the worst 10.68° → 9.28°,
        // and from two minutes 13.26° → 8.43°; with the first corner's solution in force at once, 3.75° and 4.30°), the board's yaw left in the heading's axis median 0.80° (3.78°, 5.15°, 4.46° and the board's own 1.12°
        // while the corners' axis was taken only beyond 20° of the board's x, as with fixes; 4.10° and 4.47° while a step's fit on a car's ring of directions could take the mirror image of its
        // vertical hard iron: seed 7 4.70° → 3.83°; 3.91°, 5.08° while every calibration change restarted the heading; 4.13° and 6.40° before a held fit had to leave the
        // field's heading nearer its mean on clearly more of the samples after it, `validationHeadingZ`; 4.48° and 7.53° before an earlier calibration was
        // recalled from the gyroscope's frame without a disturbance and a refused fit ended learning; 9.32° worst before a
        // planar fit's plausibility was judged in its plane, `MagnetometerCalibrator.solve`); 4.87° before a turn's fit had to go
        // round its own hard iron, and 5.74°, 6.4°, 16.43° before a car's loads switching were found as steps of the hard iron (`OnlineCalibrationSettings.landStepWorldSpread`,
        // which left the figures with GNSS as they were). Before the gyroscope carried the
        // trim between straights (`CourseTrim.trim(at:gyroHeading:time:)`): 0.54°, 0.78°, 0.88°, 1.58°. Before the course's trim took the
        // course carried by the gyroscope (`CourseTrim`), on these drives (their gyroscope's scale 0.5–3 % off): 1.01°,
        // 1.27°, 1.75°, 3.22°; without GNSS the same. Before the drives' gyroscope had a scale error: 0.98°, 1.26°,
        // 1.64°, 2.91°; without GNSS 5.2°, 6.5°, 9.4°. Before a car's heading turned to
        // the field at 30 s rather than 9 (`AttitudeFusion.tauMagOnLand`): 1.30°, 1.68°, 1.94°, 3.23°; 5.9°, 6.3°,
        // 10.9°. Before that, 3.85° and 10.77° for the worst seed and window with GNSS until the course judged fits
        // (seed 6 took one that chased the car's changing iron); without GNSS 89.8° for the worst before a corner gave a car
        // its hard iron from the gyroscope, `GyroAidedHardIron.solveLevel`: seed 5 had nothing in force until 760 s);
        // 8.5° and 11.0° while the first field sample, before any accelerometer sample, had the identity's "up" (seed 4
        // had nothing in force for 11 minutes). Without GNSS the
        // accelerometer is taken at 60 s (`AttitudeFusion.tauAccWithoutSpeed`); at 3 s, braking that nothing takes out
        // tilted its "up" and the median was 12.5°, the third worst 14.2°. Bounds at about 1.5 times.
        // With GNSS (2026-12-06, since the drift is weighed against a rest's): 0.37°, 0.51°, 0.56°, 1.19°.
        XCTAssertLessThan(gnssMedian, 0.56)
        XCTAssertLessThan(gnssWorst, 0.77)
        XCTAssertLessThan(windowMedian, 0.84)
        XCTAssertLessThan(windowWorst, 1.8)
        // Issue 39's goal for a car without GNSS: at most 3° after ten minutes.
        XCTAssertLessThan(noneMedian, 3.0, "without GNSS after ten minutes, the median of the eight drives")
        let noneSorted = withoutGNSS.map(\.rms).sorted()
        XCTAssertLessThan(noneSorted[noneSorted.count - 3], 4.4, "the third worst seed without GNSS")
        XCTAssertLessThan(noneWorst, 7.0, "the worst seed without GNSS")
        // Without GNSS judged as with it, from two minutes: until a calibration is in force the heading is the raw
        // field's, tens of degrees off. Measured (2026-12-05): median 2.61°, worst 3.86° (2.82°, 4.42° while a step's fit was
        // taken at once). Measured (2026-12-04): median 3.05°, worst 4.57° (3.48° and 4.40° while a car's
        // heading turned to the field at 30 s; 3.79° and 7.63° while only the
        // first corners were solved: seed 4 kept its first corner's hard iron, 4.6 µT off, for 400 s; 3.90°, 7.70° before
        // the rest test held at every rate; 11.19° and 41.00° while the first corner's
        // hard iron waited for the next corner before it was put in force, seed 6's first corners a minute apart).
        let early = Self.median(withoutGNSSFromTwoMinutes)
        print("RoadDrive: without GNSS from two minutes, RMS \(withoutGNSSFromTwoMinutes.map { Self.format($0) }) median \(Self.format(early))°")
        XCTAssertLessThan(early, 3.9, "without GNSS from two minutes")
        XCTAssertLessThan(withoutGNSSFromTwoMinutes.max()!, 5.8, "the worst seed without GNSS from two minutes")
    }

    /// Without GNSS the forward axis comes from the corners alone, Σ (a × ω) dt (`VehicleAcceleration`): along the axis
    /// for a turn either way, but what the force holds that is odd in the turn's rate adds across it (a change of speed
    /// through the turn, v̇ f × ω: a car brakes into a corner and speeds up out of it). Those cancel between a left turn
    /// and a right one, so between the sums only on a drive that turned as much each way, and no drive does. Here a
    /// board mounted straight on a car sensed exactly (every effect of the simulator off, its iron too): whatever yaw the
    /// axis takes is the estimator's own. Measured (2026-12-05), seeds 1–8: the yaw taken −0.77…0.72°, RMS 0.59°
    /// (with the two sums weighed alike, `VehicleAcceleration.balancedTurning`); −1.05…2.28°, RMS 1.46°, with the turns
    /// summed as they came. Bounds 1.5 times.
    func testTheCornersAloneGiveTheForwardAxisOnADriveThatTurnsMoreOneWay() {
        let fx = RoadDriveEffects.exact
        var yaws: [Double] = []
        for seed in Self.seeds {
            let score = Self.judge(Self.drive(seed: seed, effects: fx), gnss: false, after: 600)
            XCTAssertNotEqual(score.mountingYaw, 0, "seed \(seed): the heading not taken along the corners' axis")
            yaws.append(score.mountingYaw)
        }
        let rms = (yaws.reduce(0) { $0 + $1 * $1 } / Double(yaws.count)).squareRoot(), worst = yaws.map(abs).max()!
        print("RoadDrive, every effect off, without GNSS: the yaw of the forward axis from the corners \(yaws.map { Self.format($0) })°, "
              + "RMS \(Self.format(rms))°, worst \(Self.format(worst))°")
        XCTAssertLessThan(rms, 0.9, "the forward axis from the corners, RMS of its yaw off the car's")
        XCTAssertLessThan(worst, 1.15, "the forward axis from the corners, its worst yaw off the car's")
    }

    /// The turned boards' mountings (roll, pitch, yaw, degrees), one per seed: 1–2° off level, turned in yaw.
    static let turnedYaws: [Double] = [90, 180, -90, 135, -45, -135, 180, 60]
    static let turned = zip(seeds, turnedYaws).map { seed, yaw in seed % 2 == 0 ? Vector3(1.5, -1.2, yaw) : Vector3(-1.3, 1.7, yaw) }

    /// The same eight drives with the board mounted any way round in the car: across it, backwards, at 45° and 135°
    /// (a Pi on the side of a console, a module under a seat facing aft), and 1–2° off level. Nothing is told the
    /// mounting. The car's acceleration is then not along the board's x, and taking it out along x (what a land
    /// vehicle's accelerometer did) tilts "up" in every corner and every change of speed: the heading follows the
    /// tilt. Judged as the drives mounted straight, with the same bounds; and the vehicle's forward axis the fusion
    /// finds, against the mounting's own (the car's x in the board's axes, from the drive's roll, pitch and yaw).
    func testABoardMountedAnyWayRoundInTheCar() {
        let summary = Self.judgeMounted("mounted any way round", Self.turned)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.38°,
        // 0.53°, 0.59°, 1.23°. Bounds at 1.5 times.
        XCTAssertLessThan(summary.median, 0.57)
        XCTAssertLessThan(summary.worst, 0.8)
        XCTAssertLessThan(summary.windowMedian, 0.89)
        XCTAssertLessThan(summary.windowWorst, 1.85)
    }

    /// The eight seeds' drives with the board mounted as given (roll, pitch, yaw, degrees), judged with GNSS after
    /// 120 s; each drive's forward axis found by the fusion within 7° of the mounting's, asserted here.
    static func judgeMounted(_ label: String, _ mountings: [Vector3]) -> (median: Double, worst: Double, windowMedian: Double, windowWorst: Double) {
        var scores: [Score] = []
        for (seed, m) in zip(seeds, mountings) {
            let a = judge(drive(seed: seed) { $0.mounting = m }, gnss: true, after: 120)
            scores.append(a)
            let found = a.forward ?? .zero, truth = carForward(mounting: m)
            let off = acos(max(-1, min(1, found.dot(truth) / max(found.length, 1e-12)))) * 180 / .pi
            print("RoadDrive \(label), \(format(m.x, 1))/\(format(m.y, 1))/\(format(m.z, 0))°: seed \(seed) | "
                  + "\(format(a.rms)) \(format(a.worstWindow)) \(format(a.mean)) | forward found \(format(off))° from the mounting's | "
                  + "pitch \(format(a.pitch))°, roll \(format(a.roll))° RMS off the car's")
            XCTAssertLessThan(off, 7, "seed \(seed), mounted \(m): the forward axis found")
            // ATT's pitch and roll are the car's once its axes are known, however the board sits in it
            // (`AttitudeFusion.vehicleUp`). Measured (2026-12-05, the car's accelerometer at 20 s with GNSS speed,
            // `AttitudeFusion.tauAccWithSpeed`): pitch 0.28–0.62°, roll 1.21–1.74° over the turned, standing and upside-down
            // boards. Measured (2026-12-01): pitch 1.36–1.95°, roll 1.34–1.82° RMS over the drives'
            // second halves, turned and standing alike (a board flat and straight in the car, nothing taken: pitch 1.36–1.87°,
            // roll 0.56–0.75°; the mean "up" holds the road's crossfall); before, a board across the car read the car's pitch
            // as its roll (up to 4.7° off) and one standing 60–88° of pitch. Bounds: 1.5 times the worst.
            XCTAssertLessThan(a.pitch, 0.95, "seed \(seed), mounted \(m): ATT's pitch against the car's")
            XCTAssertLessThan(a.roll, 2.7, "seed \(seed), mounted \(m): ATT's roll against the car's")
        }
        return summary(label, scores)
    }

    /// The car's x in the board's axes for a mounting (roll, pitch, yaw, degrees): the first row of the body-to-board
    /// rotation Rz(ψ)·Ry(θ)·Rx(φ).
    static func carForward(mounting m: Vector3) -> Vector3 {
        let (r, p, y) = (m.x * .pi / 180, m.y * .pi / 180, m.z * .pi / 180)
        return Vector3(cos(y) * cos(p), cos(y) * sin(p) * sin(r) - sin(y) * cos(r), cos(y) * sin(p) * cos(r) + sin(y) * sin(r))
    }

    /// The standing boards' mountings (roll, pitch, yaw, degrees), one per seed.
    static let standing = [Vector3(0, 90, 0), Vector3(0, -90, 0), Vector3(90, 90, 0), Vector3(0, 75, 180),
                           Vector3(-90, -80, 45), Vector3(180, 60, 0), Vector3(0, 90, 90), Vector3(30, -70, -120)]

    /// A board standing in the car: on its end or its side, against a windscreen or a bulkhead, its x pointing up or
    /// down or 60–80° from the road. Its x's heading is no heading at all (straight up, it is any), so the headings are
    /// taken along the forward axis learnt (`AttitudeFusion.mountingAxis`), for the compass, the gyroscope, the
    /// deviation and the trim alike. Before the axis is known, a board whose x is steep has its headings taken along its
    /// axis nearest the horizontal. Bounds: 1.5 times the medians measured (0.47°, 0.77° on 2026-11-30), those of the
    /// drives mounted straight for the worst; the axis found within 7° of the mounting's, as for a board turned flat.
    func testABoardStandingInTheCar() {
        let summary = Self.judgeMounted("standing", Self.standing)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.41°,
        // 0.47°, 0.66°, 0.86°. Bounds at 1.5 times.
        XCTAssertLessThan(summary.median, 0.62)
        XCTAssertLessThan(summary.worst, 0.71)
        XCTAssertLessThan(summary.windowMedian, 0.99)
        XCTAssertLessThan(summary.windowWorst, 1.29)
    }

    /// A board upside down in the car (under a shelf, the dashboard's lip or the roof): rolled 180° and turned any way
    /// in yaw. Its z points up, the field's vertical is read negated and the car's turns turn it the other way about z:
    /// nothing in the fusion may take the board's z for down. With its x within 20° of forward it takes no mounting
    /// axis, and ATT's roll was the board's own, 179.6° off the car's (seeds 1 and 7), until the vehicle's "up" on the
    /// board's z side gave the vehicle's tilt along x (`AttitudeFusion.vehicleUp`). Measured (2026-12-02): RMS median
    /// 0.45°, worst seed 0.61°, worst window median 0.80°, worst 1.44° with the receiver's fixes; ATT's pitch and roll
    /// 1.4–1.9° RMS off the car's (without GNSS, rolled 180° on each seed's own misalignment, seeds 1–48: median 4.12°
    /// against 3.75° the right way up, worse on 27 of 48, which is how far one change moves these drives). Bounds 1.5
    /// times.
    func testABoardUpsideDownInTheCar() {
        let summary = Self.judgeMounted("upside down", [Vector3(180, 0, 0), Vector3(180, 0, 90), Vector3(180, 0, -90), Vector3(180, 0, 180),
                                                        Vector3(180, 5, 45), Vector3(180, -5, -135), Vector3(181, 2, 10), Vector3(179, -2, -60)])
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.39°,
        // 0.45°, 0.65°, 0.86°. Bounds at 1.5 times.
        XCTAssertLessThan(summary.median, 0.59)
        XCTAssertLessThan(summary.worst, 0.68)
        XCTAssertLessThan(summary.windowMedian, 0.98)
        XCTAssertLessThan(summary.windowWorst, 1.29)
    }

    /// With GNSS the car's own acceleration is taken out of the accelerometer (`VehicleAcceleration.acceleration`),
    /// but from the speed's change between the last two epochs: the mean of the second before the last fix, which
    /// reached the samples a moment after it. What the acceleration did since (a car pulling away, braking, its
    /// acceleration changing by metres a second per second within the second) is left in the force, and a filter
    /// that takes the accelerometer in over 3 s tilts by it. Here every effect of the simulator is off (a flat road,
    /// the car sensed exactly, its speed exact): ATT's pitch and roll against the car's, RMS over each drive's second
    /// half. Measured (2026-12-05), seeds 1–8: pitch median 0.18°, worst 0.19°; roll median 0.18°, worst 0.21°, with
    /// `AttitudeFusion.tauAccWithSpeed` 20 s; pitch 1.01° (worst 1.06°), roll 0.37° (0.41°) with the filter's own 3 s.
    /// Bounds 1.5 times.
    func testATTsTiltWithTheSpeedsAccelerationTakenOutOnAFlatRoad() {
        let fx = RoadDriveEffects.exact
        var pitch: [Double] = [], roll: [Double] = []
        for seed in Self.seeds {
            let score = Self.judge(Self.drive(seed: seed, effects: fx), gnss: true, after: 120)
            pitch.append(score.pitch)
            roll.append(score.roll)
        }
        print("RoadDrive, every effect off, with GNSS: ATT's pitch RMS off the car's \(pitch.map { Self.format($0) })°, "
              + "roll \(roll.map { Self.format($0) })°")
        XCTAssertLessThan(Self.median(pitch), 0.27, "ATT's pitch on a flat road, median")
        XCTAssertLessThan(pitch.max()!, 0.32, "ATT's pitch on a flat road, the worst drive")
        XCTAssertLessThan(Self.median(roll), 0.27, "ATT's roll on a flat road, median")
        XCTAssertLessThan(roll.max()!, 0.32, "ATT's roll on a flat road, the worst drive")
    }

    /// Three minutes without fixes (400–580 s) on the drives with the board turned in the car, as
    /// `testABoardMountedAnyWayRoundInTheCar` turns it. Through an outage the course's trim fades to the compass's
    /// heading (`CourseTrim.fadeTime`): that must be the car's, not the board's x, or a board across the car fades
    /// towards 90° off. Measured (2026-12-05, `AttitudeFusion.tauAccWithSpeed`): 1.18° median, worst 1.86° (1.08°,
    /// 3.37° before). Measured (2026-12-04): 0.94° median, worst 3.03°, the gyroscope's scale corrected through the
    /// outage's turns (1.68°, 3.17° before). Bounds: 1.5 times the median, 1.5 the worst (1.80°, 3.82° on 2026-12-01; 1.76°, 3.84° on 2026-11-30, with the gyroscope's heading
    /// also the car's); and the yaw the fusion takes for the mounting (`AttitudeFusion.mountingYaw`, its axis's yaw)
    /// within 10° of the drive's (measured: 5.39° at worst; 7.7°, seed 2, whose axis the GNSS lag turns most, before a first fix's
    /// unknown change of speed was kept out of the axis's fit).
    func testAThreeMinuteGNSSOutageWithTheBoardTurnedInTheCar() {
        let (during, scores) = Self.judgeOutage("the board turned in the car", Self.turned)
        var yawErrors: [Double] = []
        for (seed, (yaw, score)) in zip(Self.seeds, zip(Self.turnedYaws, scores)) {
            // The board turned by `yaw` (clockwise) has the car's forward `yaw` anticlockwise from its x.
            XCTAssertLessThan(abs(Self.wrap(score.mountingYaw + yaw)), 10, "seed \(seed): the mounting's yaw \(score.mountingYaw)° for \(-yaw)°")
            yawErrors.append(abs(Self.wrap(score.mountingYaw + yaw)))
        }
        print("RoadDrive, the board turned in the car: the yaw taken at most \(Self.format(yawErrors.max()!))° from the mounting's")
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): median
        // 1.03°, worst 1.53°. Bounds at 1.5 times.
        XCTAssertLessThan(Self.median(during), 1.55)
        XCTAssertLessThan(during.max()!, 2.3)
    }

    /// The same outage with the board standing in the car, as `testABoardStandingInTheCar` stands it: through it the
    /// heading is the gyroscope's along the forward axis learnt before it, and the trim fades to the compass's heading
    /// along that axis. Measured (2026-12-05, `AttitudeFusion.tauAccWithSpeed`): 0.98° median, worst 1.21° (whole
    /// drives at most 0.91°; 1.45°, 3.85° and 2.26° before). Measured (2026-12-04): 1.42° median during it, worst 3.69° (whole drives at most 2.05°); 1.63°,
    /// 3.11° on 2026-12-01, and 2.33°, 3.48° once the rest test held at every rate but before the gyroscope's scale was
    /// corrected through the outage's turns (`CourseTrim.follow(gyroHeading:)`). Bounds: 1.5 times the median, 1.25 the
    /// worst.
    func testAThreeMinuteGNSSOutageWithTheBoardStandingInTheCar() {
        let (during, _) = Self.judgeOutage("the board standing in the car", Self.standing)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): median
        // 0.76°, worst 1.26°. Bounds at 1.5 times (the worst's 1.8 is within it).
        XCTAssertLessThan(Self.median(during), 1.15)
        XCTAssertLessThan(during.max()!, 1.8)
    }

    /// Without GNSS, the boards turned and standing in the car (as the two tests above mount them), judged as the drives
    /// mounted straight are without GNSS (RMS on the straights after ten minutes). Without a speed the forward axis is
    /// found from the corners alone: the specific force's part across the car turns with the yaw rate, whatever the
    /// speed, so Σ a × ω over the corners points along it (`VehicleAcceleration.forwardWithoutSpeed`). Measured
    /// (2026-12-02): turned, median 4.60°, worst 7.48°; standing, 3.72° and 7.06° (4.66° and 3.81° while the first corner's
    /// solution waited for the next before it was in force; 5.24°, 7.35° and 5.25°, 10.09° while a corner's hard iron waited
    /// for the next corner only 20 s; seeds 2 and 5 standing were 5.64° and 10.09°:
    /// their calibration, not their axis; mounted straight they are 2.29° and 5.15°; 13.86° and 14.40° until a step
    /// that a lorry at a light caused was undone once the car turned, `OnlineCalibrationSettings.stepRecallRatio`);
    /// the axis found within 1.03–1.60° (with GNSS 0.28–5.11°). Before: 113° and 100° median, the axis the board's x.
    /// Bounds: 1.5 times.
    func testABoardTurnedOrStandingInACarWithoutGNSS() {
        for (label, mountings) in [("turned", Self.turned), ("standing", Self.standing)] {
            var rms: [Double] = [], off: [Double] = [], tilt: [Double] = []
            for (seed, m) in zip(Self.seeds, mountings) {
                let score = Self.judge(Self.drive(seed: seed) { $0.mounting = m }, gnss: false, after: 600)
                rms.append(score.rms)
                tilt.append(max(score.pitch, score.roll))
                let found = score.forward ?? .zero, truth = Self.carForward(mounting: m)
                off.append(acos(max(-1, min(1, found.dot(truth) / max(found.length, 1e-12)))) * 180 / .pi)
            }
            print("RoadDrive without GNSS, the board \(label): RMS \(rms.map { Self.format($0) }) median \(Self.format(Self.median(rms)))°, "
                  + "worst \(Self.format(rms.max()!))°; forward found \(off.map { Self.format($0) })° from the mounting's; "
                  + "pitch or roll off the car's \(tilt.map { Self.format($0) })°")
            // ATT's pitch and roll are the car's here too: its "up" from the turns that found the axis
            // (`VehicleAcceleration.upWithoutSpeed`). Measured: the worse of the two 1.45–2.46° turned, 1.37–2.19° standing
            // (before: up to 4.70° turned, 71–178° standing). Bound: 1.5 times the worst.
            XCTAssertLessThan(tilt.max()!, 3.7, "\(label): ATT's pitch and roll against the car's")
            XCTAssertLessThan(off.max()!, 2.4, "\(label): the forward axis found")
            // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`):
            // turned median 4.28°, worst 6.58°; standing 3.07°, 7.26°. Bounds at 1.5 times.
            XCTAssertLessThan(Self.median(rms), label == "turned" ? 6.45 : 4.65, label)
            XCTAssertLessThan(rms.max()!, label == "turned" ? 9.9 : 10.9, label)
        }
    }

    /// Each mounting's drive (one seed each) with three minutes without fixes (400–580 s): the RMS during the outage,
    /// and each drive's score.
    static func judgeOutage(_ label: String, _ mountings: [Vector3]) -> (during: [Double], scores: [Score]) {
        var during: [Double] = [], scores: [Score] = []
        for (seed, m) in zip(seeds, mountings) {
            let score = judge(drive(seed: seed) { $0.mounting = m }, gnss: true, after: 120, outage: 400..<580)
            during.append(score.duringOutage)
            scores.append(score)
        }
        print("RoadDrive, a three-minute GNSS outage, \(label): RMS during it \(during.map { format($0) }) median "
              + "\(format(median(during)))°, worst \(format(during.max()!))°; whole drive worst \(format(scores.map(\.rms).max()!))°")
        return (during, scores)
    }

    /// A car's fusion from a cold start through `drive` with its fixes, and the last record of the deviation from driving
    /// it kept, read back as a file is.
    static func keptAfter(_ drive: RoadDrive) throws -> (fusion: AttitudeFusion, record: DrivingDeviationRecord) {
        let axes = try Orientation(axes: "+X+Y+Z")
        let kept = Mutex<[DrivingDeviationRecord]>([])
        var f = AttitudeFusion(imuOrientation: axes, magnetometerOrientation: axes, trueNorth: true, auto: .track, vehicle: .car)
        f.onDrivingDeviation = { r in kept.withLock { $0.append(r) } }
        f.step(.calibration(nil))
        f.step(.localField(wmm))
        for event in drive.events {
            switch event {
            case .inertial(let s): f.step(.inertial(s))
            case .magnetic(let s): f.step(.magnetic(s))
            case .fix(let x): f.step(.fix(x))
            }
        }
        return (f, try DrivingDeviationRecord.decode(try XCTUnwrap(kept.withLock { $0 }.last).encoded(), source: "kept"))
    }

    /// The forward axis is kept across restarts with the deviation learnt from driving (`DrivingDeviationRecord`,
    /// `calibration.driving_file`): a board across the car (yaw 90°) drives five minutes; what that run kept has the
    /// axis it found, and a run started with the record takes the car's acceleration out along it before its first
    /// corner. A record without one (kept before the axis was learnt, or by an older Bearing) leaves the board's x.
    func testTheForwardAxisIsKeptWithTheDeviationFromDriving() throws {
        let axes = try Orientation(axes: "+X+Y+Z")
        let (first, record) = try Self.keptAfter(Self.drive(seed: 3, duration: 300) { $0.mounting = Vector3(0.8, -1.1, 90) })
        let axis = try XCTUnwrap(try record.forwardAxis(), "the axis learnt is kept")
        let found = try XCTUnwrap(first.vehicleForward)
        XCTAssertEqual((axis - found).length, 0, accuracy: 0.05, "the axis kept is the one found")
        // The car's x in the board's axes (yaw 90°: the board's −y, to a degree).
        XCTAssertLessThan(axis.dot(Vector3(0, -1, 0)), 1)
        XCTAssertGreaterThan(axis.dot(Vector3(0, -1, 0)), cos(7 * Double.pi / 180), "kept \(axis)")
        var next = AttitudeFusion(imuOrientation: axes, magnetometerOrientation: axes, trueNorth: true, auto: .track, vehicle: .car)
        XCTAssertEqual(next.vehicleForward, Vector3(1, 0, 0))
        next.step(.drivingDeviation(record))
        // The same axis, to the last bits of its normalisation.
        XCTAssertEqual((try XCTUnwrap(next.vehicleForward) - axis).length, 0, accuracy: 1e-12, "in force from the start")
        // A record without one leaves the board's x.
        var plain = AttitudeFusion(imuOrientation: axes, magnetometerOrientation: axes, trueNorth: true, auto: .track, vehicle: .car)
        var older = record
        older.forward = nil
        plain.step(.drivingDeviation(try DrivingDeviationRecord.decode(older.encoded(), source: "older")))
        XCTAssertEqual(plain.vehicleForward, Vector3(1, 0, 0))
    }

    /// The vehicle's "up" is kept with the forward axis (`DrivingDeviationRecord.up`): a board standing in the car
    /// (its x straight up) drives five minutes; the next run, restored from what that one kept, gives ATT the car's
    /// pitch and roll from its first sample, before any fix (a car's board boots with every trip). Measured
    /// (2026-12-01): 2.57° and 0.81° RMS over the next drive's first minute without fixes (the car's acceleration, which
    /// no GNSS speed takes out, tilts the filter); without the kept up, the board's: 88° of pitch. Bounds: 1.5 times.
    func testTheVehiclesUpIsKeptWithTheDeviationFromDriving() throws {
        let standing = Vector3(0, 90, 0)
        let (_, record) = try Self.keptAfter(Self.drive(seed: 1, duration: 300) { $0.mounting = standing })
        let up = try XCTUnwrap(try record.upAxis(), "the vehicle's up is kept")
        // The car's up in the board's axes (the third row of the body-to-board rotation, negated), to a few degrees.
        let (r, p) = (standing.x * .pi / 180, standing.y * .pi / 180)
        let carUp = Vector3(sin(p), -cos(p) * sin(r), -cos(p) * cos(r))
        XCTAssertGreaterThan(up.dot(carUp), cos(5 * Double.pi / 180), "kept \(up), the car's \(carUp)")
        var next = Self.coldStart()
        next.step(.drivingDeviation(record))
        let drive = Self.drive(seed: 2, duration: 120) { $0.mounting = standing }
        var sums = (pitch: 0.0, roll: 0.0, n: 0.0), i = 0
        for event in drive.events {
            switch event {
            case .inertial(let s):
                next.step(.inertial(s))
                let truth = drive.truth[i]
                i += 1
                guard truth.time - drive.truth[0].time < 60, let a = next.emitted, let pitch = a.pitch, let roll = a.roll else { continue }
                let (p, r) = (pitch - truth.pitch, Self.wrap(roll - truth.roll))
                sums = (sums.pitch + p * p, sums.roll + r * r, sums.n + 1)
            case .magnetic(let s): next.step(.magnetic(s))
            case .fix: break
            }
        }
        let pitch = (sums.pitch / max(sums.n, 1)).squareRoot(), roll = (sums.roll / max(sums.n, 1)).squareRoot()
        print("RoadDrive, the next run's first minute without fixes, from the up kept: pitch \(Self.format(pitch))°, roll \(Self.format(roll))° RMS off the car's")
        XCTAssertGreaterThan(sums.n, 1000)
        XCTAssertLessThan(pitch, 3.9)
        XCTAssertLessThan(roll, 1.2)
    }

    /// The same drives on a quiet IMU (no engine or road vibration: a sensor that filters what it reports, as the
    /// held-out drives' VN-100 does at 40 Hz, on a smooth road). Its bends pass the rest test, which a land vehicle
    /// takes only where the rate agrees with the bias learnt (`AttitudeFilter.restMustMatchBias`). Measured (Swift
    /// 6.3.1, Linux x86_64): with GNSS RMS median 0.38°, worst seed 0.57°, worst window 1.52° (0.37°, 0.55°, 1.55°
    /// before the forward axis was learnt, `VehicleAcceleration.forward`); without GNSS (2026-12-04) median 3.15°, worst 6.33° (8.23°, seed 4,
    /// while only the first corners were solved, `OnlineMagnetometerCalibration.solvesCorners`); earlier 3.74°, worst 5.58° (3.79°, 6.36° while a corner's
    /// hard iron waited for the next corner only 20 s; 4.29° and 5.71° while the
    /// corners' axis was taken only beyond 20° of the board's x; 4.33° and 6.66° while every
    /// calibration change restarted the heading; 3.70° and 6.66° before a held fit had to leave the field's heading nearer its mean on clearly
    /// more of the samples after it, `validationHeadingZ`; 4.59° and 7.85° before an earlier calibration was recalled from the gyroscope's frame without a
    /// disturbance and a refused fit ended learning; 9.14° before a planar fit's plausibility was judged in its plane; 4.97° median before a turn's
    /// fit had to go round its own hard iron). Before the gyroscope carried the trim between straights: 0.43°, 0.55°, 1.54°. Before the
    /// course's trim took the course carried by the gyroscope (`CourseTrim`): with GNSS 1.00°, 1.26°, 3.34°. Bounds at
    /// about 1.5 times.
    func testQuietIMUDrives() {
        var withGNSS: [Score] = [], withoutGNSS: [Score] = []
        var quiet = RoadDriveEffects()
        quiet.vibration = false
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed, effects: quiet)
            withGNSS.append(Self.judge(drive, gnss: true, after: 120))
            withoutGNSS.append(Self.judge(drive, gnss: false, after: 600))
        }
        let gnss = withGNSS.map(\.rms), none = withoutGNSS.map(\.rms)
        print("RoadDrive, quiet IMU: with GNSS RMS \(gnss.map { Self.format($0) }) median \(Self.format(Self.median(gnss)))°, "
              + "worst window \(Self.format(withGNSS.map(\.worstWindow).max()!))°; without GNSS \(none.map { Self.format($0) }) "
              + "median \(Self.format(Self.median(none)))°")
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): with
        // GNSS median 0.29°, worst 0.42°, worst window 1.20°. Bounds at 1.5 times.
        XCTAssertLessThan(Self.median(gnss), 0.44)
        XCTAssertLessThan(gnss.max()!, 0.63)
        XCTAssertLessThan(withGNSS.map(\.worstWindow).max()!, 1.8)
        // Without GNSS, measured (2026-12-05): median 2.44°, worst 3.56° (seed 1 3.10° → 2.59° once a step's fit waited for
        // the samples after it). Bounds at 1.5 times.
        XCTAssertLessThan(Self.median(none), 3.7)
        XCTAssertLessThan(none.max()!, 5.3)
    }

    /// A quiet IMU's drive whose first corners are a minute apart, without GNSS (seed 47): the first corner's hard iron
    /// (`GyroAidedHardIron.solveLevel`) waits for the next corner to judge it. While it waited only as long as the
    /// solver's 20 s window, every corner's solution lapsed unjudged, nothing was in force until 796 s (the ring fits,
    /// 4.4 % and 4.4° on their points, were not good enough to be taken from nothing) and the heading was 108° off
    /// after ten minutes. Measured: 3.02° after ten minutes, 4.48° from two (6.17° while the first corner's solution waited
    /// for the next corner before it was put in force). Bounds at 1.5 times.
    func testACornersHardIronWaitsForTheNextCorner() {
        var quiet = RoadDriveEffects()
        quiet.vibration = false
        let drive = Self.drive(seed: 47, effects: quiet)
        let score = Self.judge(drive, gnss: false, after: 600, alsoAfter: 120), early = score.rmsAlsoAfter!
        print("RoadDrive, seed 47, quiet IMU, without GNSS: RMS \(Self.format(score.rms))° after ten minutes, \(Self.format(early))° from two")
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 2.44°
        // after ten minutes, 3.93° from two. Bounds at 1.5 times.
        XCTAssertLessThan(score.rms, 3.7)
        XCTAssertLessThan(early, 5.9)
    }

    /// The same drives with GNSS positions only, once a second, as the held-out drives give theirs to `bearing
    /// attitude --gnss`: each epoch's course is the positions' either side (`GNSSTrackFile`), so it spans two
    /// seconds, bends the first epochs out of a turn, and jumps with each multipath jump in town (by up to 65° on
    /// these drives, against 7° for a receiver's Doppler course). Measured (2026-12-06, since one bend's scale is not
    /// believed in full, `CourseTrim.scaleEvidence`): RMS median 0.42°, worst seed 0.50°, worst window median 0.71°, worst
    /// 0.85° (2026-12-05: 0.42°, 0.51°, 0.76°, 1.09°; 2026-12-04: 0.47°, 0.53°, 0.80°, 1.05°). Before the rest test stopped depending on the IMU's rate (Swift
    /// 6.3.1, Linux x86_64): RMS median 0.45°, worst seed 0.54°; worst 2-minute window median 0.82°, worst 1.16° (0.44°, 0.53°, 0.79°, 1.17°
    /// before the forward axis was learnt, `VehicleAcceleration.forward`). Before the gyroscope carried the trim
    /// between straights, and a stop's courses could lever the window's drift: 0.48°, 0.62°; 0.84°, 1.11°. Before the
    /// course's trim (`CourseTrim`) took the course carried by the gyroscope: 1.23°, 2.13°; 2.23°, 5.53°. Bounds at
    /// about 1.5 times.
    func testWithGNSSPositionsOnly() throws {
        let s = Self.summary("GNSS positions only", try Self.judgeWithPositionsOnly(Self.seeds))
        // 2026-12-06, since the drift is weighed against a rest's (`CourseTrim.restDrift`): 0.36°, 0.44°, 0.55°, 0.67–0.68°.
        XCTAssertLessThan(s.median, 0.54)
        XCTAssertLessThan(s.worst, 0.66)
        XCTAssertLessThan(s.windowMedian, 0.83)
        XCTAssertLessThan(s.windowWorst, 1.02)
    }

    /// Positions that jitter from one epoch to the next: white noise of 1 m and of 2 m RMS an axis added to each
    /// position of `testWithGNSSPositionsOnly`'s tracks (a receiver under trees or between buildings, a phone), on top of
    /// the receiver's own slow errors. A course from positions either side at 14 m/s is then about 6° off an epoch at
    /// 2 m; the course's window of two minutes (`CourseTrim`) averages it. Positions found to jitter by 1.5 m or more
    /// (`GNSSTrackFile.positionNoise`, 1.05–1.11 m estimated at 1 m, 1.96–2.13 m at 2 m) give courses from the epochs two
    /// either side (`GNSSTrackFile.chordReach`). Measured (2026-12-02): 1 m RMS median 0.73°, worst 1.06°, worst window
    /// median 1.46°, worst 2.69°; 2 m 0.97°, 1.77°, 1.98°, 3.90° (1.49°, 2.04°, 3.06°, 5.22° from the epochs either side;
    /// 0.45°, 0.54°, 0.82°, 1.16° without jitter). What costs is the noise of the course, not of the speed (tried once
    /// each alone). Bounds at about 1.5 times.
    ///
    /// A phone's positions in town jitter by more: 5 m and 10 m. With courses from the epochs two either side the heading
    /// was worse at 10 m than with no GNSS at all (RMS median 3.64°, worst seed 5.57°, worst window median 6.78°, worst
    /// 13.61°, against 2.62° without GNSS; 5 m: 2.13°, 3.59°, 4.37°, 7.83°). Bounds at about 1.5 times what the fusion
    /// should do with them.
    func testWithGNSSPositionsThatJitter() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 1 m
        // 0.54°, 0.72°, 1.06°, 1.73°; 2 m 0.64°, 1.05°, 1.15°, 2.61°; 5 m 1.15°, 1.59°, 2.62°, 4.38°; 10 m 1.71°,
        // 2.40°, 3.75°, 4.66°. Bounds at 1.5 times.
        try Self.assertPositionsOnly("jittering by 1 m", below: (0.81, 1.08, 1.59, 2.6), jitter: 1)
        try Self.assertPositionsOnly("jittering by 2 m", below: (0.96, 1.58, 1.73, 3.92), jitter: 2)
        try Self.assertPositionsOnly("jittering by 5 m", below: (1.73, 2.39, 3.93, 6.57), jitter: 5)
        try Self.assertPositionsOnly("jittering by 10 m", below: (2.57, 3.6, 5.63, 7.0), jitter: 10)
    }

    /// The eight seeds judged with their fixes as positions only (`positionsOnly`, with `jitter` and `dropped`): RMS
    /// median and worst seed, worst window median and worst, each below its bound.
    static func assertPositionsOnly(_ label: String, below bounds: (Double, Double, Double, Double), jitter: Double = 0,
                                    dropped: Double = 0, stamped: Double = 0, decimals: Int? = nil, every: Int = 1,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        var scores: [Score] = []
        for seed in seeds {
            let drive = Self.drive(seed: seed)
            let fixes = try positionsOnly(drive, jitter: jitter, dropped: dropped, stamped: stamped, decimals: decimals, every: every)
            scores.append(judge(drive, gnss: true, after: 120, fixes: fixes))
        }
        assertSummary("GNSS positions only, \(label)", scores, below: bounds, file: file, line: line)
    }

    /// `summary`'s four figures, each below its bound.
    static func assertSummary(_ label: String, _ scores: [Score], below bounds: (Double, Double, Double, Double),
                              file: StaticString = #filePath, line: UInt = #line) {
        let s = summary(label, scores)
        XCTAssertLessThan(s.median, bounds.0, "\(label): RMS median", file: file, line: line)
        XCTAssertLessThan(s.worst, bounds.1, "\(label): worst seed", file: file, line: line)
        XCTAssertLessThan(s.windowMedian, bounds.2, "\(label): worst window's median", file: file, line: line)
        XCTAssertLessThan(s.windowWorst, bounds.3, "\(label): worst window", file: file, line: line)
    }

    /// A track as a logger may write it: each line stamped when it arrived (up to 0.15 s either way of the fix's own
    /// time), the positions to five decimals of a degree (1.1 m of latitude). The speeds and courses derived from
    /// such positions and times are noisier (a 2 s chord at 14 m/s is 28 m, its time 0.3 s off at worst). Measured
    /// (2026-12-02): RMS median 0.54°, worst seed 0.60°, worst window median 0.98°, worst 1.36° (0.45°, 0.54°, 0.82°,
    /// 1.16° from the fixes' own times at full precision). Bounds at 1.5 times. Since the fusion learns from an epoch
    /// only 0.75 s or more after the one before (`AttitudeFusion.learningEpochInterval`): 0.53°, 0.59°, 0.99°, 1.34°.
    func testWithAGNSSTrackAsALoggerWritesIt() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.39°,
        // 0.51°, 0.59°, 1.11°. Bounds at 1.5 times.
        try Self.assertPositionsOnly("stamped on arrival (±0.15 s), five decimals", below: (0.59, 0.77, 0.89, 1.67), stamped: 0.15, decimals: 5)
    }

    /// Tracks of positions with epochs missing at random (a logger that drops fixes, a receiver that gives none for a
    /// second under a tree): 10 %, 30 % and 50 % of `testWithGNSSPositionsOnly`'s epochs left out. Each course then spans
    /// whatever positions are either side (`GNSSTrackFile`), and the gaps cut the straights `CourseTrim` carries. Measured
    /// (2026-12-02): 10 % RMS median 0.45°, worst seed 0.53°, worst window median 0.73°, worst 0.89°; 30 % 0.56°, 0.76°,
    /// 1.06°, 1.65°; 50 % 1.08°, 1.58°, 2.42°, 4.26° (0.45°, 0.54°, 0.82°, 1.16° with every epoch). Bounds at 1.5 times.
    /// Since an epoch over 1.5 s after the one before must be straight by its chord (`CourseTrim.chordTurn`,
    /// 2026-12-03): 0.44°, 0.54°, 0.73°, 0.91°; 0.51°, 0.76°, 1.00°, 1.65°; 0.94°, 1.56°, 1.82°, 4.25°.
    func testWithGNSSPositionsMissingEpochs() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 10 %
        // 0.34°, 0.46°, 0.57°, 0.83°; 30 % 0.39°, 0.49°, 0.64°, 0.92°; 50 % 0.60°, 1.52°, 1.07°, 4.24°. Bounds at 1.5
        // times.
        try Self.assertPositionsOnly("10 % of the epochs missing", below: (0.51, 0.69, 0.86, 1.25), dropped: 0.1)
        try Self.assertPositionsOnly("30 % of the epochs missing", below: (0.59, 0.74, 0.96, 1.38), dropped: 0.3)
        try Self.assertPositionsOnly("50 % of the epochs missing", below: (0.9, 2.28, 1.61, 6.36), dropped: 0.5)
    }

    /// A logger that loses the IMU's samples now and then (a USB or serial stall, an SD card's slow write), its clock
    /// running on: a second lost every two minutes on average, at random (`samplesLost`, a stream of its own), on the
    /// eight drives with their positions only, as the held-out drives come. Across a lost second the gyroscope's rate
    /// held from the sample after it turned the car by that rate for the whole second: at a corner's start or end, by
    /// up to the turn's 10–20°, which the course's window (`CourseTrim`) then carried for minutes. Now the mean of the
    /// rates either side (`AttitudeFilter.gapInterval`). Measured (2026-12-02): RMS median 0.48°, worst seed 0.70°, worst
    /// window median 0.86°, worst 1.45° (held: 0.54°, 1.29°, 1.00°, 3.47°). Bounds: those of the same drives with every
    /// sample (`testWithGNSSPositionsOnly`).
    ///
    /// Three seconds lost at the same places, and five. A car may take a corner in three seconds with the rates either
    /// side alike, so the turn across such a gap is not known, and the heading carried across it may be off by tens of
    /// degrees. The course's window (`CourseTrim`) then carried the offsets from before the gap (course − a gyroscope
    /// heading that no longer matches them) for a minute: 3 s 0.82°, 2.48°, 2.06°, 7.52°; 5 s 4.03°, 8.77°, 12.04°,
    /// 22.02° (measured 2026-12-03). Such a gap now starts the window again, and the first straight epochs after it
    /// are taken once three agree (`CourseTrim.gyroscopeGap(seconds:)`): 3 s 0.65°, 2.23°, 1.23°, 6.81°; 5 s 0.82°,
    /// 3.84°, 1.82°, 9.08°. Bounds at 1.5 times those.
    ///
    /// Tried and not kept (2026-12-02): taking such a gap (over 2 s) as the gyroscope's
    /// frame broken, online calibration's and the course's window restarted and the heading started again from the
    /// field, as after a new calibration: 1.38°, 3.64°, 2.28°, 10.09° (the car's compass before its deviation is
    /// learnt is worse than the gyroscope's guess), and without the heading's restart 1.03°, 5.84°, 2.51°, 19.26°; the
    /// 6D frame turned by the field's heading over the second after the gap wherever it lay over 10° from the heading's
    /// offset (a 90° turn across a 3 s gap on a still field is then found within 0.24°): 1.34°, 4.92°, 2.99°, 13.71°, the
    /// car's compass off by more than that at its turns and in the street's field.
    func testSamplesLostNowAndThen() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 1 s
        // 0.35°, 0.68°, 0.57°, 1.33°; 3 s 0.41°, 2.22°, 0.63°, 6.79°; 5 s 0.59°, 3.83°, 1.18°, 9.03°. Medians' bounds
        // at 1.5 times; the worst's as they were (within 1.5 times, or under the 1 s case's). Since a gap over 4 s is
        // not bridged (`AttitudeFilter.longestBridge`, `testLongGapsInTheSamples`): 5 s 0.83°, 1.22°, 2.02°, 2.75° (the
        // windows' median worse, the worst seed and window better); 1 s and 3 s within 0.01°. Bounds at 1.5 times.
        try Self.assertSamplesLost(seconds: 1, below: (0.53, 0.8, 0.86, 1.67))
        try Self.assertSamplesLost(seconds: 3, below: (0.62, 3.35, 0.95, 10.2))
        try Self.assertSamplesLost(seconds: 5, below: (1.25, 1.83, 3.03, 4.13))
    }

    /// Samples lost for longer than a corner takes: 10 s and 30 s, every two minutes on average (a sensor that stops
    /// answering and is opened again after the reader's back-off, `SensorReaderConfiguration.retryMax`; a stalled bus),
    /// on the eight drives with their positions only, and without GNSS. Across such a gap the mean of the rates either
    /// side bridged nothing of a corner held in it, and the heading came back tens of degrees off: with positions, 10 s
    /// RMS median 5.96°, worst seed 12.45°, worst window median 18.47°, worst 35.34°, 30 s 12.86°, 18.69°, 26.40°,
    /// 43.82°; without GNSS 10 s median 6.91°, worst 31.41°, 30 s 27.53°, 44.64° (measured 2026-12-06). Now nothing is
    /// bridged across a gap over `AttitudeFilter.longestBridge`: the heading starts again from the field, online
    /// calibration's following in the gyroscope's frame starts again, and the course's trim drops what it carried in
    /// that frame (`CourseTrim.gyroscopeGap(seconds:bridged:)`); the rest test counts no quiet time across a gap
    /// (`RestDetector`: a gap ends a rest). Measured: 10 s 1.63°, 3.93°, 3.59°, 10.77°, 30 s 1.78°, 2.30°, 3.32°, 4.26°;
    /// without GNSS 10 s 4.05°, 12.96°, 30 s 4.27°, 10.51° (1.63°, 3.93°, 3.58°, 10.80°, 1.71°, 2.30°, 3.31°, 4.26°;
    /// 4.00°, 12.97°, 4.29°, 9.34° while the gap still counted as quiet time after the rest test's restart). Bounds at
    /// 1.5 times.
    func testLongGapsInTheSamples() throws {
        for (seconds, positions, none) in [(10.0, (2.45, 5.9, 5.37, 16.2), (6.0, 19.5)), (30.0, (2.57, 3.45, 4.97, 6.39), (6.44, 14.1))] {
            try Self.assertSamplesLost(seconds: seconds, below: positions)
            Self.assertSamplesLostWithoutGNSS(seconds: seconds, below: none)
        }
    }

    /// The field's chip alone lost (a magnetometer on its own breakout and cable), the IMU reading on: 30 s of its samples
    /// every two minutes on average, at the same places as `testLongGapsInTheSamples`, on the eight drives with their
    /// positions only and without GNSS. The gyroscope carries the heading across such a gap, turns and all: it is no
    /// gap in the gyroscope's samples (`AttitudeFilter.longestBridge`), and online calibration and the course's trim go on
    /// in the same frame. Measured (2026-12-06): with positions RMS median 0.36°, worst seed 0.44°, worst window median
    /// 0.55°, worst 0.67°, as with every sample (`testWithGNSSPositionsOnly`); without GNSS median 4.28°, worst seed
    /// 5.84°, against 2.61° and 4.64° with every sample. That is the field's own loss, not the gap's handling: on seed 2
    /// (1.58° → 5.63°) the turns at 408–438 s fell in a gap, so the calibration taken at 148 s was not refined at 414 s
    /// as it was with every sample, and it left the heading 4–10° off until the next fit taken, at 688 s. Bounds at 1.5
    /// times.
    func testTheFieldAloneLost() throws {
        try Self.assertSamplesLost(seconds: 30, fieldOnly: true, below: (0.54, 0.66, 0.83, 1.01))
        Self.assertSamplesLostWithoutGNSS(seconds: 30, fieldOnly: true, below: (6.42, 8.76))
    }

    /// The eight seeds without GNSS, judged after ten minutes, `seconds` of the IMU's samples lost every two minutes on
    /// average (with `fieldOnly`, the magnetometer's alone): the median RMS and the worst seed's below `bounds`.
    static func assertSamplesLostWithoutGNSS(seconds: Double, fieldOnly: Bool = false, below bounds: (median: Double, worst: Double),
                                             file: StaticString = #filePath, line: UInt = #line) {
        var without: [Double] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed)
            let lost = samplesLost(drive, seed: seed, seconds: seconds)
            without.append(Self.judge(drive, gnss: false, after: 600, samplesLost: fieldOnly ? [] : lost, fieldLost: fieldOnly ? lost : []).rms)
        }
        let what = "\(seconds) s of \(fieldOnly ? "field " : "")samples lost every two minutes"
        print("RoadDrive, no GNSS, \(what), after ten minutes: RMS \(without.map { Self.format($0) }) "
              + "median \(Self.format(Self.median(without)))°, worst \(Self.format(without.max()!))°")
        XCTAssertLessThan(Self.median(without), bounds.median, "\(what), without GNSS: the median", file: file, line: line)
        XCTAssertLessThan(without.max()!, bounds.worst, "\(what), without GNSS: the worst seed", file: file, line: line)
    }

    /// The eight seeds with their positions only, `seconds` of the IMU's samples lost every two minutes on average (with
    /// `fieldOnly`, the magnetometer's alone).
    static func assertSamplesLost(seconds: Double, fieldOnly: Bool = false, below bounds: (Double, Double, Double, Double),
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        var scores: [Score] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed)
            let lost = samplesLost(drive, seed: seed, seconds: seconds)
            scores.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive),
                                     samplesLost: fieldOnly ? [] : lost, fieldLost: fieldOnly ? lost : []))
        }
        assertSummary("positions only, \(seconds) s of \(fieldOnly ? "field " : "")samples lost every two minutes", scores, below: bounds,
                      file: file, line: line)
    }

    /// `seconds` of the drive's samples lost every two minutes on average, at random (a stream of their own).
    static func samplesLost(_ drive: RoadDrive, seed: UInt64, seconds: Double) -> [Range<Double>] {
        var random = RoadDriveRandom(seed: seed, stream: 103)
        var lost: [Range<Double>] = []
        var t = random.uniform(0, 240)
        while t < drive.configuration.duration {
            lost.append(t..<(t + seconds))
            t += seconds + random.uniform(0, 240)
        }
        return lost
    }

    /// The eight drives with a track a logger wrote every 2, 3 or 5 s (a phone's GPS logger is often set so), positions
    /// only. A course from positions spans the epochs either side, 4–10 s of the drive here. Measured (2026-12-03):
    /// every 5 s RMS median 2.66°, worst seed 3.29°, worst window median 6.30°, worst 7.28°: the positions' own jitter was
    /// estimated from their second differences, which at 5 s hold the car's own changes of velocity (25 times a
    /// second's), so each course took the chord two epochs either side, 20 s of the drive; and the epochs next to a turn,
    /// their chords bent by it, taught the course's window a gyroscope scale 2–3 % off. Every 2 s 0.55°, 0.65°, 0.85°,
    /// 1.02°; every 3 s 0.60°, 2.02°, 1.01°, 6.17°. Bounds at 1.5 times what a chord of 2.5 s at most either side, and a
    /// sparse epoch taken as straight only where the gyroscope turned under 1.5° either side of it, give.
    func testWithATrackLoggedEveryFewSeconds() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): every 2
        // s 0.39°, 0.63°, 0.67°, 1.03°; 3 s 0.42°, 0.56°, 0.76°, 0.95°; 5 s 0.52°, 0.82°, 0.95°, 1.56°. Bounds at 1.5
        // times.
        for (every, bounds) in [(2, (0.59, 0.92, 1.01, 1.55)), (3, (0.63, 0.84, 1.14, 1.43)), (5, (0.78, 1.23, 1.43, 2.34))] {
            try Self.assertPositionsOnly("logged every \(every) s", below: bounds, every: every)
        }
    }

    /// The eight drives with a receiver set to 5 or 10 fixes a second (u-blox receivers in cars often are), its own
    /// speed and course, and as a track of its positions only. Its errors are the same processes sampled more often
    /// (`RoadDrive.Configuration.gnssRate`), so successive epochs' errors are nearly alike. Measured (2026-12-04), RMS
    /// median, worst seed, worst window median and worst: 5 Hz receiver 0.54°, 0.81°, 1.10°, 1.64°, positions 0.51°,
    /// 0.62°, 0.87°, 1.43°; 10 Hz receiver 0.42°, 0.56°, 0.80°, 1.36°, positions 0.52°, 0.67°, 0.90°, 1.83° (the rest test
    /// at any rate gave the course's window a bias learnt at each stop, `CourseTrim.gyroscopeDriftChanged`; before it
    /// was told of the change, 5 Hz positions were 1.44° and 4.00° at worst). Measured (2026-12-03), RMS
    /// median, worst seed, worst window median and worst: 5 Hz receiver 0.59°, 0.84°, 1.21°, 1.74°, positions 0.62°,
    /// 0.78°, 1.12°, 1.19°; 10 Hz receiver 0.51°, 0.70°, 0.87°, 1.50°, positions **1.18°, 1.80°, 2.15°, 3.35°** (each
    /// course a chord of 0.2 s, 3 m at 14 m/s; at 1 Hz 0.51°, 0.65°, 0.76°, 1.61° and 0.45°, 0.54°, 0.82°, 1.16°).
    func testAReceiverGivingFiveOrTenFixesASecond() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 5 Hz
        // 0.38°, 0.54°, 0.74°, 1.01° (positions 0.39°, 0.45°, 0.61°, 0.73°); 10 Hz 0.36°, 0.48°, 0.64°, 0.92° (0.45°,
        // 0.57°, 0.80°, 1.22°). Bounds at 1.5 times.
        for (rate, receiver, positions) in [(5.0, (0.57, 0.81, 1.11, 1.52), (0.59, 0.68, 0.92, 1.1)),
                                            (10.0, (0.54, 0.72, 0.96, 1.38), (0.68, 0.86, 1.2, 1.83))] {
            var given: [Score] = [], derived: [Score] = []
            for seed in Self.seeds {
                let drive = Self.drive(seed: seed) { $0.gnssRate = rate }
                given.append(Self.judge(drive, gnss: true, after: 120))
                derived.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive)))
            }
            Self.assertSummary("a receiver at \(Int(rate)) Hz, its speed and course", given, below: receiver)
            Self.assertSummary("a receiver at \(Int(rate)) Hz, positions only", derived, below: positions)
        }
    }

    /// A drive that starts in an underground car park (`RoadDrive.Configuration.carPark`): 15 s standing on the lowest
    /// deck, then its aisles and a ramp turning through a whole circle at walking pace, in a field its rebar, columns and
    /// parked cars move by tens of µT over metres, with no GNSS fix until the street. A cold start there learns from
    /// the turns it sees, and they are all in that field. Judged as the held-out drives are (with GNSS, RMS on the
    /// straights after two minutes, and the worst two-minute window), against the same seeds without the car park.
    func testAStartInAnUndergroundCarPark() {
        var inside: [Double] = [], fixesInside = 0, scores: [Score] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed) { $0.carPark = true }
            // The simulator's own checks: the field inside moves by tens of µT; no fix comes until the street.
            var leftAt = drive.configuration.duration
            for t in drive.truth where t.time > 15 && t.kind == .suburb && t.anomaly > 0 {
                if leftAt == drive.configuration.duration { inside.append(t.anomaly) }
                if t.speed > 5 && leftAt == drive.configuration.duration { leftAt = t.time }
            }
            for case .fix(let f) in drive.events where (f.time?.unixTime ?? .infinity) - drive.configuration.start < 40 { fixesInside += 1 }
            scores.append(Self.judge(drive, gnss: true, after: 120))
        }
        let sorted = inside.sorted()
        print("RoadDrive, car park: the field's anomaly inside, median \(Self.format(sorted[sorted.count / 2])) µT, 90th percentile "
              + "\(Self.format(sorted[sorted.count * 9 / 10])) µT; fixes in the first 40 s: \(fixesInside)")
        XCTAssertEqual(fixesInside, 0, "a fix underground")
        XCTAssertGreaterThan(sorted[sorted.count / 2], 3, "the car park's field")
        // Measured (2026-12-01): RMS median 0.56°, worst seed 0.92°; worst window median 1.09°, worst 2.80° (against
        // 0.51°, 0.65°, 0.76°, 1.61° for the same seeds without it). Bounds: 1.5 times.
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.41°,
        // 0.52°, 0.69°, 1.11°. Bounds at 1.5 times.
        let s = Self.summary("a start in an underground car park, with GNSS", scores)
        XCTAssertLessThan(s.median, 0.62)
        XCTAssertLessThan(s.worst, 0.78)
        XCTAssertLessThan(s.windowMedian, 1.04)
        XCTAssertLessThan(s.windowWorst, 1.67)
    }

    /// A start reversing out of a parking bay (`RoadDrive.Configuration.reverseStart`), as most drives from home or a
    /// car park begin: GNSS speed has no sign, so while the car backs its course is its tail's way and its speed's
    /// changes are the opposite of the car's. Checks the simulator (the course backing is the heading's opposite; the
    /// fixes' track says so), then judges the eight seeds as the held-out drives are, with the receiver's fixes, with
    /// positions only, and without GNSS.
    ///
    /// Measured (2026-12-02), against the same seeds starting on the street: with the receiver's fixes RMS median 0.55°
    /// (0.51°), worst seed 0.83° (0.65°), worst window median 1.06° (0.76°), worst 2.20° (1.61°); positions only 0.51°
    /// (0.45°), 0.55°, 0.85°, 1.05°; without GNSS after ten minutes 3.65° (3.47°), worst 6.28° (5.96°), from two minutes
    /// 4.51° (3.90°), worst 5.45° (7.70°). On seeds 1–24 with the receiver's fixes: median 0.44° → 0.45°, mean 0.492° →
    /// 0.494°, 14 seeds worse and 10 better; the worst window's median 0.78° → 0.90°, mean 0.92° → 0.98°. The forward
    /// axis learnt does not turn aft (backing, GNSS speed's changes are the car's opposite; asserted within about 25° of
    /// the board's x): what differs is the drive shifted by the bay's 10–17 s. Bounds at about 1.5 times.
    func testAStartReversingOutOfAParkingBay() throws {
        var backedFixes = 0, worstBackingTrack = 0.0, backed = 0.0
        var receiver: [Score] = [], positions: [Score] = [], none: [Score] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed) { $0.reverseStart = true }
            let interval = 1 / drive.configuration.rate
            for t in drive.truth where abs(Self.wrap(t.course - t.heading)) > 90 && t.speed > 0 { backed += t.speed * interval }
            for case .fix(let f) in drive.events {
                guard let ft = f.time?.unixTime, let track = f.track, let speed = f.speed, speed > 0.8 else { continue }
                let k = min(drive.truth.count - 1, max(0, Int(((ft - drive.configuration.start - drive.gnssLag) * drive.configuration.rate).rounded()) - 1))
                let t = drive.truth[k]
                guard abs(Self.wrap(t.course - t.heading)) > 90 else { continue }
                backedFixes += 1
                worstBackingTrack = max(worstBackingTrack, abs(Self.wrap(track - t.heading - 180)))
            }
            receiver.append(Self.judge(drive, gnss: true, after: 120))
            positions.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive)))
            none.append(Self.judge(drive, gnss: false, after: 600, alsoAfter: 120))
        }
        print("RoadDrive, reversing out of a bay: \(Self.format(backed / Double(Self.seeds.count), 1)) m backed a drive; "
              + "\(backedFixes) fixes while backing, their track at most \(Self.format(worstBackingTrack, 1))° from the tail's way")
        XCTAssertGreaterThan(backedFixes, 2 * Self.seeds.count, "fixes while the car backs")
        XCTAssertLessThan(worstBackingTrack, 30, "a fix's track backing is the tail's way")
        // The forward axis learnt from the speed stays ahead: backing, the speed's changes are the car's opposite.
        for (i, score) in (receiver + positions).enumerated() {
            let seed = Self.seeds[i % Self.seeds.count]
            XCTAssertGreaterThan(score.forward?.x ?? 0, 0.9, "seed \(seed): the forward axis learnt, \(score.forward.map { "\($0)" } ?? "none")")
        }
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): with
        // GNSS 0.39°, 0.70°, 0.72°, 1.23°; positions 0.39°, 0.53°, 0.74°, 0.91°; no GNSS 2.99° (worst 6.88°), from two
        // minutes 3.49° (5.22°). Bounds at 1.5 times.
        Self.assertSummary("reversing out of a bay, with GNSS", receiver, below: (0.59, 1.05, 1.08, 1.85))
        Self.assertSummary("reversing out of a bay, GNSS positions only", positions, below: (0.59, 0.8, 1.11, 1.37))
        let c = Self.summary("reversing out of a bay, no GNSS, after ten minutes", none)
        XCTAssertLessThan(c.median, 4.5)
        XCTAssertLessThan(c.worst, 9.4)
        let fromTwo = none.map { $0.rmsAlsoAfter! }
        print("RoadDrive, reversing out of a bay, no GNSS from two minutes: median \(Self.format(Self.median(fromTwo)))°, worst \(Self.format(fromTwo.max()!))°")
        XCTAssertLessThan(Self.median(fromTwo), 5.25)
        XCTAssertLessThan(fromTwo.max()!, 7.85)
    }

    /// A recording started on the move: most logs are cut from longer drives, or start when a logger is switched on at
    /// a junction, so the fusion's cold start comes at speed (no rest to learn the gyroscope's bias or "up" from, the
    /// car's own acceleration in the first samples) and, without GNSS, with no corner yet. The eight drives with nothing
    /// given before 61 s (every seed at 14 m/s on the street out of the car park) and before 407 s (8.6–25 m/s), judged
    /// as the held-out drives are from two minutes after the recording's start with GNSS positions only (the track's
    /// epochs before it left out), and ten minutes after it without GNSS.
    ///
    /// Measured (2026-12-04): positions only, from 61 s RMS median 0.46°, worst seed 0.87°, worst window median 0.79°,
    /// worst 2.29°; from 407 s 0.50°, 0.77°, 0.78°, 1.33° (0.47°, 0.53°, 0.80°, 1.05° from the start at rest); without
    /// GNSS from 61 s median 2.73°, worst 6.30° (2.62°, 6.05° from the start). Bounds at about 1.5 times.
    func testARecordingStartedOnTheMove() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): from 61
        // s 0.34°, 0.49°, 0.51°, 1.25°; from 407 s 0.32°, 0.52°, 0.51°, 0.76°; no GNSS 3.29° (worst 5.91°). Bounds at
        // 1.5 times.
        for (from, bounds) in [(61.0, (0.51, 0.74, 0.77, 1.88)), (407.0, (0.48, 0.78, 0.77, 1.14))] {
            var scores: [Score] = []
            for seed in Self.seeds {
                let drive = Self.drive(seed: seed)
                let start = drive.truth.first { $0.time >= from }!
                XCTAssertGreaterThan(start.speed, 8, "seed \(seed): the car moves when the recording starts")
                scores.append(Self.judge(drive, gnss: true, after: from + 120, fixes: try Self.positionsOnly(drive), recordedFrom: from))
            }
            Self.assertSummary("a recording started on the move at \(Int(from)) s, GNSS positions only", scores, below: bounds)
        }
        var none: [Score] = []
        for seed in Self.seeds { none.append(Self.judge(Self.drive(seed: seed), gnss: false, after: 61 + 600, recordedFrom: 61)) }
        let c = Self.summary("a recording started on the move at 61 s, no GNSS, after ten minutes", none)
        XCTAssertLessThan(c.median, 4.1)
        XCTAssertLessThan(c.worst, 8.9)
    }

    /// A track that lags the samples by more than the receiver's own 0.2–1 s: a logger that stamps each line when it
    /// has read it, a phone's location service (its positions filtered), a receiver's output buffered over USB.
    /// `bearing attitude --gnss` takes a track whose turns match the gyroscope's within 2 s of its own times as it is
    /// (`TrackClock`; further off it is shifted there), so lags up to 2 s reach the fusion. The eight drives with
    /// positions only, lagging 1.5 s and 2 s in all. Measured (2026-12-04): 1.5 s RMS median 0.64°, worst seed 0.80°, worst window median
    /// 1.11°, worst 2.06°; 2 s 0.66°, 0.90°, 1.15°, 2.47° (0.5 s: 0.49°, 0.64°, 0.82°, 1.78°; 3 s, which `TrackClock`
    /// shifts: 0.81°, 1.46°, 1.37°, 4.48°). Bounds at about 1.5 times.
    func testAGNSSTrackLaggingUpToTwoSeconds() throws {
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 1.5 s
        // 0.42°, 0.49°, 0.67°, 1.10°; 2 s 0.43°, 0.49°, 0.70°, 1.13°. Bounds at 1.5 times.
        for (lag, bounds) in [(1.5, (0.63, 0.74, 1.01, 1.65)), (2.0, (0.65, 0.74, 1.05, 1.7))] {
            var scores: [Score] = []
            for seed in Self.seeds {
                let drive = Self.drive(seed: seed) { $0.gnssLag = lag }
                XCTAssertEqual(drive.gnssLag, lag)
                scores.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive)))
            }
            Self.assertSummary("GNSS positions only, lagging \(lag) s", scores, below: bounds)
        }
    }

    /// Sixteen drives more (seeds 9–24), with GNSS positions only, that no change was tuned on: the estimator was
    /// developed on seeds 1–8, and the held-out real drives are the same kind of check. Measured (2026-12-06, since one
    /// bend's scale is not believed in full, `CourseTrim.scaleEvidence`): RMS median 0.43°, worst seed 0.56°; worst
    /// 2-minute window median 0.77°, worst 1.03° (2026-12-05: 0.41°, 0.73°, 0.73°, 1.79°). Earlier (Swift 6.3.1, Linux
    /// x86_64): RMS median 0.44°, worst seed 1.00°; worst 2-minute window median 0.84°, worst 2.65° (0.46°, 1.05°,
    /// 0.81°, 2.87° before the forward axis was learnt, `VehicleAcceleration.forward`). Before the gyroscope
    /// carried the trim between straights: 0.53°, 1.03°; 1.04°, 2.84° (and 4.59°, 14.9° on seed 12 with the carry
    /// before a stop's courses lost their lever on the window's drift). Bounds at about 1.5 times.
    ///
    /// The same drives without GNSS, judged after ten minutes as the eight are (`testTheFusionOnSimulatedRoadDrivesJudgedAsTheHeldOutDrives`).
    /// Measured (2026-12-04, once a car's heading turned to the field at 60 s): RMS median 3.71°, worst seed 6.24°, third
    /// worst 4.72° (3.86°, 7.50°, 5.16° at 30 s; 3.84° while only the first corners were solved; 3.60°, 7.83°
    /// on 2026-12-02, before the rest test held at every rate). Before (2026-12-02): RMS median 3.60°, worst seed 7.83°, third worst 7.21° (3.70° while the first corner's solution
    /// waited for the next before it was in force; 3.84°, 7.86°, 6.26° while a corner's hard iron waited for the next corner
    /// only 20 s). Issue 39's 3° is met on the eight (2.62°), not on these.
    /// Bounds at about 1.5 times.
    func testSeedsNoChangeWasTunedOn() throws {
        var without: [Score] = []
        let positions = try Self.judgeWithPositionsOnly(Array(9...24)) { without.append(Self.judge($0, gnss: false, after: 600)) }
        let s = Self.summary("seeds 9–24, GNSS positions only", positions)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): 0.36°,
        // 0.53°, 0.58°, 1.02°. Bounds at 1.5 times.
        XCTAssertLessThan(s.median, 0.54)
        XCTAssertLessThan(s.worst, 0.8)
        XCTAssertLessThan(s.windowMedian, 0.87)
        XCTAssertLessThan(s.windowWorst, 1.53)
        let none = Self.summary("seeds 9–24, no GNSS, after ten minutes", without)
        let sorted = without.map(\.rms).sorted()
        // Measured (2026-12-05, once a step's fit waited for the samples after it): median 3.46°, third worst 5.03°, worst
        // 5.53° (3.65°, the same, the same before). Bounds at 1.5 times.
        XCTAssertLessThan(none.median, 5.2)
        XCTAssertLessThan(sorted[sorted.count - 3], 7.1, "the third worst seed without GNSS")
        XCTAssertLessThan(none.worst, 8.3)
    }

    /// Seeds 101–116, which no change was ever judged on: seeds 1–48 have judged every change since 2026-12-02, and the
    /// tests' seeds 9–24 are among them. With the receiver's fixes after two minutes, and without GNSS after ten
    /// minutes, as the eight are judged. Measured (2026-12-07, the first time these seeds were run): with GNSS RMS median
    /// 0.36°, worst seed 0.52°, worst window median 0.67°, worst 1.11° (seeds 1–48: 0.38°, 0.70°, 0.65°, 1.63°); without
    /// GNSS median 3.51°, third worst 4.82°, worst 8.51° (seed 113). On seeds 101–148 without GNSS the median is 3.89°,
    /// against 3.29° on seeds 1–48 (docs/simulation.md, "On 48 drives no change was looked at"). Bounds at 1.5 times.
    func testSeedsNoChangeWasLookedAt() {
        var with: [Score] = [], without: [Score] = []
        for seed in UInt64(101)...116 {
            let drive = Self.drive(seed: seed)
            with.append(Self.judge(drive, gnss: true, after: 120))
            without.append(Self.judge(drive, gnss: false, after: 600))
        }
        let s = Self.summary("seeds 101–116, the receiver's fixes", with)
        XCTAssertLessThan(s.median, 0.56)
        XCTAssertLessThan(s.worst, 0.78)
        XCTAssertLessThan(s.windowMedian, 1.0)
        XCTAssertLessThan(s.windowWorst, 1.67)
        let none = Self.summary("seeds 101–116, no GNSS, after ten minutes", without)
        let sorted = without.map(\.rms).sorted()
        XCTAssertLessThan(none.median, 5.27)
        XCTAssertLessThan(sorted[sorted.count - 3], 7.23, "the third worst seed without GNSS")
        XCTAssertLessThan(none.worst, 12.8)
    }

    /// Drives of 45 minutes, as long as many real ones (the held-out drives are judged to their end, and a daemon runs for
    /// months): whatever goes wrong and is never put right shows here, not in sixteen minutes. Without GNSS on seeds 1–16
    /// (after ten minutes, as the sixteen-minute drives), and with GNSS positions only on seeds 1–4 (after two minutes;
    /// each drive takes as long to simulate and judge as three of sixteen minutes).
    /// Measured (2026-12-05, once a step's fit waited for the samples after it to bear it out): without GNSS RMS median
    /// 4.26°, mean 4.34°, worst seed 7.54° (seed 7; seed 1 9.29° → 4.97°).
    /// Measured (2026-12-04): without GNSS RMS median 4.18°, mean 4.75°, worst seed 9.30° (seed 1); seed 7 7.06°, 11.18°
    /// before a step's fit freed a soft iron with which no hard iron explains its points (`OnlineMagnetometerCalibration.
    /// fit(at:)`: its soft iron 16 % off, every fit of the hard iron alone refused for 570 s after a step at 1214 s). The
    /// sixteen-minute drives of the same seeds (other routes: a route is drawn for its length) are 3.04° median, 3.52° mean. Before a turn's fit needed the gyroscope to have turned
    /// through more than half a turn (`OnlineMagnetometerCalibration.minimumTurnedSectors`): mean 7.24° (5.01° between
    /// the two changes), worst 40.89°
    /// (seed 15, its heading 30–76° off from 400 s to the end: a first fit from an arc of 150° of heading, its soft iron
    /// 0.84 and 1.31 on the board's x and y), every other seed the same. Positions only: RMS 0.44°, 0.54°, 0.35°, 0.64°,
    /// their worst windows 0.85°, 0.98°, 0.65°, 2.70° (the same before). Bounds at about 1.5 times (seed 7's at 1.4).
    func testLongDrives() throws {
        let long = 2700.0
        var without: [Score] = []
        for seed in UInt64(1)...16 { without.append(Self.judge(Self.drive(seed: seed, duration: long), gnss: false, after: 600)) }
        let none = Self.summary("45 minutes, seeds 1–16, no GNSS, after ten minutes", without)
        let rms = without.map(\.rms)
        let mean = rms.reduce(0, +) / Double(rms.count)
        print("RoadDrive, 45 minutes without GNSS: mean \(Self.format(mean))°")
        XCTAssertLessThan(none.median, 6.3)
        XCTAssertLessThan(mean, 6.5)
        XCTAssertLessThan(none.worst, 11.3)
        XCTAssertLessThan(without[6].rms, 10, "seed 7, a step learnt with a soft iron 16 % off (RMS, °)")
        var positions: [Score] = []
        for seed in UInt64(1)...4 {
            let drive = Self.drive(seed: seed, duration: long)
            positions.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive)))
        }
        let s = Self.summary("45 minutes, seeds 1–4, GNSS positions only", positions)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`):
        // positions only 0.38°, 0.39°, 0.70°, 0.99°; without GNSS median 4.26°, mean 4.34°, worst 7.54°. Bounds at 1.5
        // times.
        XCTAssertLessThan(s.median, 0.57)
        XCTAssertLessThan(s.worst, 0.59)
        XCTAssertLessThan(s.windowMedian, 1.05)
        XCTAssertLessThan(s.windowWorst, 1.49)
    }

    /// GNSS lost for good a quarter of an hour into a 45-minute drive (an antenna's cable, a receiver that died): the
    /// calibration, the deviation learnt from driving and the forward axis from the fixes go on without them, and the
    /// heading is judged over the last 30 minutes, against the same drives without GNSS at all (judged over the same
    /// time). Measured (2026-12-05, once a step's fit waited for the samples after it), seeds 1–8: RMS median 3.24°, worst
    /// 4.15°, against 4.43° and 8.06° without GNSS at all. Measured (2026-12-04), seeds 1–8: RMS 4.50°, 3.38°, 4.96°, 2.56°, 3.09°, 5.72°, 4.90°, 1.87° (median 3.94°,
    /// worst 5.72°) against 9.59°, 4.59°, 3.10°, 6.17°, 4.02°, 2.73°, 7.46°, 3.86° (median 4.31°, worst 9.59°) without
    /// GNSS at all: better on six seeds, worse on two (seeds 3 and 6). On seed 6 the deviation learnt from driving in
    /// force when the fixes stopped came from 6 of 12 sectors whose medians lay 9.5° apart (−8.2° … +1.3°, their mean
    /// −4.1° applied elsewhere), and the heading was 7–13° off for three minutes with the hard iron within 0.6 µT of the
    /// car's; the sectors' mean alone in place of each sector's own changed it by 0.2°. Bounds at about 1.5 times.
    func testGNSSLostForGood() {
        var lost: [Double] = [], never: [Double] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed, duration: 2700)
            lost.append(Self.judge(drive, gnss: true, after: 900, outage: 900..<2700).rms)
            never.append(Self.judge(drive, gnss: false, after: 900).rms)
        }
        print("RoadDrive, GNSS lost for good at 900 s, judged after: RMS \(lost.map { Self.format($0) }) median \(Self.format(Self.median(lost)))°; "
              + "without GNSS at all: \(never.map { Self.format($0) }) median \(Self.format(Self.median(never)))°")
        XCTAssertLessThan(Self.median(lost), 4.9)
        XCTAssertLessThan(lost.max()!, 6.2)
        XCTAssertLessThan(Self.median(lost), Self.median(never), "the median with GNSS for the first quarter of an hour, against none")
    }

    /// Three minutes without fixes (400–580 s: a tunnel, a car park) on each drive, the course's trim carried by the
    /// gyroscope through them and faded by the drift its window found (`CourseTrim.fadeTime`), against the compass's
    /// own heading (which is what a car without GNSS has, 4.5° after ten minutes). Measured (2026-12-05, a car's
    /// accelerometer at 20 s with GNSS speed too, `AttitudeFusion.tauAccWithSpeed`): median 0.70°, worst seed 0.99°
    /// (0.84°, 3.88° before: the tilt the speed's late change left in "up" turned the heading the gyroscope carried).
    /// Measured (2026-12-04): median 0.85°,
    /// worst seed 3.91° once a car's heading turned to the field at 60 s (`AttitudeFusion.tauMagOnLand`; seed 5, whose
    /// course trim fades in the outage, follows the field later); 0.86°, 3.54° at 30 s, once the gyroscope's scale was corrected for the turns taken in the outage as well
    /// (`CourseTrim.follow(gyroHeading:)`: before, only while epochs came at most 10 s apart, 1.93°, 4.02°). Before the rest
    /// test held at every rate (Swift 6.3.1, Linux x86_64):
    /// RMS on the straights during the outage, median 2.02°, worst seed 4.57° (2.03°, 4.64° before the course start's epochs were mended; 1.96°, 4.61° before the forward axis was learnt, `VehicleAcceleration.forward`; 1.84°
    /// before an earlier calibration was recalled from the gyroscope's frame without a disturbance; 1.96° before a planar fit's plausibility
    /// was judged in its plane; 1.88° before a car's loads switching
    /// were found as steps of the hard iron and a turn's fit had to go round its own hard iron); before the fade followed the drift (a
    /// fixed 120 s) 4.11°, 13.47°; before the gyroscope carried the trim between straights 9.80°, 30.81°. Bounds at
    /// about 1.5 times.
    func testAThreeMinuteGNSSOutage() {
        var during: [Double] = []
        for seed in Self.seeds {
            let score = Self.judge(Self.drive(seed: seed), gnss: true, after: 120, outage: 400..<580)
            during.append(score.duringOutage)
        }
        print("RoadDrive, a three-minute GNSS outage: RMS during it \(during.map { Self.format($0) }) median "
              + "\(Self.format(Self.median(during)))°, worst \(Self.format(during.max()!))°")
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): median
        // 0.69°, worst 0.79°. Bounds at 1.5 times.
        XCTAssertLessThan(Self.median(during), 1.04)
        XCTAssertLessThan(during.max()!, 1.19)
    }

    /// The same outage in a track of positions only (`t,lat,lon`, as the held-out drives give theirs): the file has a
    /// three-minute gap, and the epochs beside it take their course from one side (`GNSSTrackFile.gapIntervals`).
    /// Measured (2026-12-05, `AttitudeFusion.tauAccWithSpeed`): median 0.67°, worst seed 1.30°, whole drive worst 0.82°
    /// (1.03°, 3.37°, 1.90° before). Measured (2026-12-04): median 0.99°, worst seed 3.27°, whole drive worst 1.85°, the gyroscope's scale corrected
    /// through the gap's turns (`CourseTrim.follow(gyroHeading:)`; 2.18°, 5.55°, 3.09° before). Earlier (Swift 6.3.1,
    /// Linux x86_64): RMS during the outage median 2.32°, worst seed 5.32°, over the whole drive
    /// worst seed 2.96° (2.42°, 5.41°, 3.01° before the course start's epochs were mended; 2.46°, 4.77° and 2.66° before the forward axis was learnt, `VehicleAcceleration.forward`; 2.35° median before a held fit had to leave the
    /// field's heading nearer its mean on clearly more of the samples after it; 2.60° median before a planar fit's
    /// plausibility was judged in its plane). With the chord across the gap as the course of the epochs beside it: 3.74°, 29.21°; 14.38°.
    /// Bounds at about 1.5 times.
    func testAThreeMinuteGapInATrackOfPositions() throws {
        var during: [Double] = [], whole: [Double] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed)
            let score = Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive, outage: 400..<580), outage: 400..<580)
            during.append(score.duringOutage)
            whole.append(score.rms)
        }
        print("RoadDrive, a three-minute gap in a track of positions: RMS during it \(during.map { Self.format($0) }) median "
              + "\(Self.format(Self.median(during)))°, worst \(Self.format(during.max()!))°; whole drive worst \(Self.format(whole.max()!))°")
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): median
        // 0.58°, worst 1.10°, whole drives at most 0.65°. Bounds at 1.5 times.
        XCTAssertLessThan(Self.median(during), 0.87)
        XCTAssertLessThan(during.max()!, 1.65)
        XCTAssertLessThan(whole.max()!, 0.98)
    }

    /// A car without GNSS, on seed 5 with its accelerometer's errors taken out (a drive the ablation found): a turn's
    /// fit whose refinement left the ring (its hard iron moved 62 µT, to (37, 90, −12) µT for a true (20, 27, −10),
    /// the turn's points then in 3 of 12 sectors about it) was taken, and an arc about a far centre explained their
    /// magnitude better than the calibration in force; later the identity of the cold start was recalled. 36.7° RMS
    /// after ten minutes, against 4.2–10° for the other seeds. Measured (Swift 6.3.1, Linux x86_64) once the turn must
    /// go round the refined hard iron as round the calibrator's: 4.34°; 6.36° later, and 3.69° since the heading is
    /// taken along the axis the corners give without GNSS, however near the board's x (`VehicleAcceleration.forwardFromCornersAlone`);
    /// 3.04° since a corner's hard iron waits for the next corner (`OnlineMagnetometerCalibration.gyroLevelHoldTime`).
    func testATurnsFitGoesRoundItsHardIron() {
        var fx = RoadDriveEffects()
        fx.accelerometerErrors = false
        let score = Self.judge(Self.drive(seed: 5, effects: fx), gnss: false, after: 600)
        print("RoadDrive: seed 5 without the accelerometer's errors, without GNSS: \(Self.format(score.rms))°")
        XCTAssertLessThan(score.rms, 5.5)
    }

    /// A car whose iron is far stronger than the simulator's (hard 30–60 µT an axis, up to twice the Earth's field in
    /// all, against 10–35; soft iron 1 ± 15 % along the axes and ± 7.5 % across, against 6 % and 3 %): a sensor beside a
    /// loudspeaker or on a steel dashboard frame. With a track of positions, the heading judged on the straights comes
    /// from the course carried by the gyroscope (`CourseTrim`), so the iron must not reach it. Measured (Swift 6.3.1,
    /// Linux x86_64): the same figures as `testWithGNSSPositionsOnly` to the hundredth, 0.45° median, worst seed 0.54°,
    /// worst window median 0.82°, worst 1.16° (and with hard 75–150 µT and soft 30 %, the same again). Without GNSS,
    /// where the compass is all there is (2026-12-04): median 3.52°, worst seed 7.14° (4.33°, 7.68° while only the first
    /// corners were solved: seed 2 7.68° → 2.74°). Before: median 4.49°, worst seed 7.80° (6.18° while a corner's hard iron waited for the
    /// next corner only 20 s; 4.21° and 7.65° while the corners' axis was taken only
    /// beyond 20° of the board's x; 4.22° and 7.91° before a held fit had to leave the field's
    /// heading nearer its mean on clearly more of the samples after it; 4.36° and 8.30° before an earlier calibration was
    /// recalled from the gyroscope's frame without a disturbance and a refused fit ended learning; 3.91° and 5.08° with the
    /// simulator's own iron;
    /// 7.07° before a planar fit's plausibility was judged in its plane).
    /// Seed 8 was 18.03° while a step found by the magnitude alone could take a hard iron that explained its own samples
    /// worse than the one in force: a corner into headings the young calibration's soft iron was wrong at, read as a
    /// step, moved the hard iron 13 µT for a load of 2.4 µT. Bounds at about 1.5 times.
    func testAStrongIronDoesNotReachTheHeadingWithGNSS() throws {
        var positions: [Score] = [], without: [Score] = []
        for seed in Self.seeds {
            let drive = Self.drive(seed: seed) { c in
                c.hardIron = 30...60
                c.softIron = 0.15
            }
            positions.append(Self.judge(drive, gnss: true, after: 120, fixes: try Self.positionsOnly(drive)))
            without.append(Self.judge(drive, gnss: false, after: 600))
        }
        let s = Self.summary("strong iron, GNSS positions only", positions)
        // 2026-12-06, since the drift is weighed against a rest's (`CourseTrim.restDrift`): 0.36°, 0.44°, 0.55°, 0.67–0.68°.
        XCTAssertLessThan(s.median, 0.54)
        XCTAssertLessThan(s.worst, 0.66)
        XCTAssertLessThan(s.windowMedian, 0.83)
        XCTAssertLessThan(s.windowWorst, 1.02)
        let n = Self.summary("strong iron, without GNSS after ten minutes", without)
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): without
        // GNSS median 3.52°, worst 6.30°. Bounds at 1.5 times.
        XCTAssertLessThan(n.median, 5.3)
        XCTAssertLessThan(n.worst, 9.3)
    }

    /// The same strong iron on the sixteen drives no change was tuned on (seeds 9–24), without GNSS after ten minutes.
    /// Measured (Swift 6.3.1, Linux x86_64): median 6.08°, worst seed 9.98° (5.92° before a held fit had to leave the
    /// field's heading nearer its mean on clearly more of the samples after it; 6.38°, 12.38° before an earlier calibration
    /// was recalled from the gyroscope's frame without a disturbance and a refused fit ended learning). Seed 20's hard iron, 83 µT (its vertical
    /// part adding to the field's), had every turn's fit refused as "no plausible planar fit" while the planar fit's
    /// plausibility held the data's height above the turn's plane against it: nothing was in force until 832 s, and
    /// it was 129.42° (median 6.79°). Bounds at about 1.5 times.
    func testAStrongIronOnTheSeedsNoChangeWasTunedOn() {
        let scores = (9...24).map { seed -> Score in
            let drive = Self.drive(seed: UInt64(seed)) { c in
                c.hardIron = 30...60
                c.softIron = 0.15
            }
            return Self.judge(drive, gnss: false, after: 600)
        }
        let n = Self.summary("strong iron, seeds 9–24, without GNSS after ten minutes", scores)
        // Median 4.71°, worst seed 10.42° (2026-12-02; 9.73° while the first corner's solution waited for the next before it
        // was in force; 5.12° and 10.00° while a corner's hard iron waited for the next corner only
        // 20 s; 5.61° and 9.98° while the corners' axis was taken only beyond 20° of the
        // board's x; 6.07° until a step that was no change of the car's iron was undone once the car
        // turned, `OnlineCalibrationSettings.stepRecallRatio`: seed 22 9.51° → 5.08°), worst seed 9.98°.
        // Measured (2026-12-06, since the course's drift is weighed against a rest's, `CourseTrim.restDrift`): median
        // 3.88°, worst 8.38°. Bounds at 1.5 times.
        XCTAssertLessThan(n.median, 5.85)
        XCTAssertLessThan(n.worst, 12.6)
    }

    /// A soft iron that is not symmetric (`RoadDrive.Configuration.softIronTwist`): the car's soft iron turned 3° about
    /// the board's vertical, on seeds 1–8. The estimator's soft iron is symmetric, and no magnitude, dip or gyroscope
    /// can tell such a turn from the heading: with GNSS the course on the straights takes it out (each drive's RMS
    /// within 0.05° of the same drive without it), without GNSS it is a constant offset of the heading, each drive's
    /// mean error moved by about the turn. Truth is the simulator's: the turn is applied to the field the car senses,
    /// and the estimator is not told of it.
    func testASoftIronThatIsNotSymmetric() {
        var with: [Score] = [], withBase: [Score] = [], moved: [Double] = []
        for seed in Self.seeds {
            let base = Self.drive(seed: seed), twisted = Self.drive(seed: seed) { $0.softIronTwist = 3 }
            with.append(Self.judge(twisted, gnss: true, after: 120))
            withBase.append(Self.judge(base, gnss: true, after: 120))
            let without = Self.judge(twisted, gnss: false, after: 600), withoutBase = Self.judge(base, gnss: false, after: 600)
            moved.append(without.mean - withoutBase.mean)
            print("RoadDrive: seed \(seed), soft iron turned 3°: with GNSS RMS \(Self.format(with.last!.rms))° "
                  + "(\(Self.format(withBase.last!.rms))° without the turn); without GNSS mean error \(Self.format(without.mean))° "
                  + "(\(Self.format(withoutBase.mean))°), RMS \(Self.format(without.rms))° (\(Self.format(withoutBase.rms))°)")
        }
        let s = Self.summary("soft iron turned 3°, with GNSS", with)
        for (seed, (a, b)) in zip(Self.seeds, zip(with, withBase)) {
            XCTAssertEqual(a.rms, b.rms, accuracy: 0.05, "seed \(seed): with GNSS the course takes the turn out")
        }
        // Measured (2026-12-07): every drive's RMS the same as without the turn to 0.01°, median 0.37°, worst 0.51°.
        XCTAssertLessThan(s.median, 0.55)
        let sorted = moved.sorted()
        print("RoadDrive, soft iron turned 3°, without GNSS: each drive's mean error moved by \(moved.map { Self.format($0) }) "
              + "(median \(Self.format(Self.median(moved)))°)")
        // The field turned clockwise seen from above (x towards y, z down) puts north clockwise of where it is: the
        // heading, measured clockwise from north, reads the turn less.
        // Measured (2026-12-07): −2.85° to −3.08° on seven drives; seed 1 −1.32°, where the turn also changed which fits
        // were taken (its RMS 3.16° → 2.28°).
        XCTAssertEqual(Self.median(moved), -3, accuracy: 0.3)
        XCTAssertGreaterThanOrEqual(moved.filter { abs($0 + 3) < 0.3 }.count, 6, "\(moved)")
        XCTAssertLessThan(sorted.last!, 0, "\(moved)")
    }

    /// A Pi without a real-time clock may run its system clock (the samples' times) far from GPS time (the fixes')
    /// until it syncs: the course's trim must not care. The same drives with each fix stamped an hour earlier than
    /// the samples' clock give the same heading. Before the trim took each epoch on the samples' clock (its arrival),
    /// it faded by the hour between the two clocks and was gone, and the deviation from driving restarted on one clock and
    /// settled on the other (seeds 1 and 2, 8 minutes: 0.67° and 0.65° on one clock, 4.41° and 9.32° on two).
    func testFixesOnAnotherClockThanTheSamples() {
        for seed: UInt64 in [1, 2] {
            let drive = Self.drive(seed: seed, duration: 480)
            let fixes: [GPSFix] = drive.events.compactMap { event in
                guard case .fix(var f) = event else { return nil }
                f.time = f.time.map { GPSTimestamp(unixTime: $0.unixTime - 3600) }
                return f
            }
            let same = Self.judge(drive, gnss: true, after: 120), other = Self.judge(drive, gnss: true, after: 120, fixes: fixes)
            print("RoadDrive: seed \(seed), fixes an hour behind the samples' clock: \(Self.format(other.rms))° against \(Self.format(same.rms))°")
            XCTAssertEqual(other.rms, same.rms, accuracy: 0.05, "seed \(seed)")
        }
    }

    /// A Pi's system clock, which stamps the samples, is stepped while it drives: back by an hour (a clock set ahead,
    /// an RTC that ran fast, corrected by NTP or GPS), back by 2 s (ntpd steps any offset over 128 ms), or forward by an
    /// hour (a Pi without a real-time clock, whose fake-hwclock restored the time of its last shutdown, syncs on the
    /// move). Seeds 1–4, the receiver's fixes on their own clock, the step at 300 s.
    ///
    /// The filter took only samples newer than its clock: stepped back by an hour, it dropped every sample after the
    /// step, and the heading stood still (RMS 50.17°, 41.81°, 56.82°, 44.64°); by 2 s, it dropped two seconds of them,
    /// 2.93° on seed 3 against 0.37°. The fusion now keeps its own time monotonic (`SampleClock`): a step back gives the
    /// same heading as no step, to 0.01°. By the stamps alone (no monotonic time given, as here) a step forward cannot be
    /// told from samples lost and is a gap over `AttitudeFilter.longestBridge`: the heading starts again from the field
    /// (seed 1: 0.83° against 0.49°, worst window 2.35°; the others within 0.01°). Bounds: a step back as no step within
    /// 0.05°, a step forward at 1.5 times. With the monotonic time: `testTheSamplesClockSteppedForwardWhileDriving`.
    func testTheSamplesClockSteppedWhileDriving() {
        for seed: UInt64 in [1, 2, 3, 4] {
            let drive = Self.drive(seed: seed)
            let same = Self.judge(drive, gnss: true, after: 120)
            var line = "RoadDrive: seed \(seed), the samples' clock stepped at 300 s: none \(Self.format(same.rms))°"
            for by: Double in [-3600, -2, 3600] {
                let stepped = Self.judge(drive, gnss: true, after: 120, clockStep: (300, by))
                line += ", by \(Int(by)) s \(Self.format(stepped.rms))° (worst window \(Self.format(stepped.worstWindow))°)"
                if by < 0 {
                    XCTAssertEqual(stepped.rms, same.rms, accuracy: 0.05, "seed \(seed), the clock stepped back by \(-by) s")
                    XCTAssertEqual(stepped.worstWindow, same.worstWindow, accuracy: 0.05, "seed \(seed), the clock stepped back by \(-by) s")
                } else {
                    XCTAssertLessThan(stepped.rms, 1.25, "seed \(seed), the clock stepped forward by \(by) s")
                    XCTAssertLessThan(stepped.worstWindow, 3.5, "seed \(seed), the clock stepped forward by \(by) s")
                }
            }
            print(line)
        }
    }

    /// A Pi without a real-time clock, whose fake-hwclock restored the time of its last shutdown, syncs on the move: its
    /// wall clock, which stamps the samples, steps forward by an hour or by a day at 900 s, once online calibration has
    /// learnt the car. The stamps alone cannot tell that from samples lost (`testTheSamplesClockSteppedWhileDriving`):
    /// the filter starts again from the field, and every point online calibration held is older than its `maximumAge`.
    /// The daemon gives the fusion each sample's time on its monotonic pipeline clock too (`elapsed`), with which the
    /// step is taken out. Seeds 1–4, without GNSS (after 600 s) and with it (after 120 s).
    ///
    /// Measured (2026-12-06) before the monotonic time was used: without GNSS, RMS 3.62°, 8.03°, 9.10°, 4.13° against
    /// 3.16°, 1.58°, 1.99°, 2.90° without the step (the same for an hour and a day); with GNSS, a day's step 0.50°,
    /// 1.16°, 1.28°, 0.26° against 0.49°, 0.35°, 0.37°, 0.25°. Now the same as without the step, to 0.01°; and the
    /// monotonic time given without a step changes nothing (its latencies are never a step).
    func testTheSamplesClockSteppedForwardWhileDriving() {
        for seed: UInt64 in [1, 2, 3, 4] {
            let drive = Self.drive(seed: seed)
            var line = "RoadDrive: seed \(seed), the samples' clock stepped forward at 900 s, each sample's monotonic time given:"
            for (gnss, after) in [(false, 600.0), (true, 120.0)] {
                let same = Self.judge(drive, gnss: gnss, after: after)
                let given = Self.judge(drive, gnss: gnss, after: after, elapsed: true)
                XCTAssertEqual(given.rms, same.rms, accuracy: 0.01, "seed \(seed), GNSS \(gnss): the monotonic time and no step")
                line += " \(gnss ? "with" : "without") GNSS none \(Self.format(same.rms))°"
                for by: Double in gnss ? [86400] : [3600, 86400] {
                    let stepped = Self.judge(drive, gnss: gnss, after: after, clockStep: (900, by), elapsed: true)
                    line += ", +\(Int(by)) s \(Self.format(stepped.rms))° (worst window \(Self.format(stepped.worstWindow))°)"
                    XCTAssertEqual(stepped.rms, same.rms, accuracy: 0.01, "seed \(seed), GNSS \(gnss), stepped by \(by) s")
                    XCTAssertEqual(stepped.worstWindow, same.worstWindow, accuracy: 0.01, "seed \(seed), GNSS \(gnss), stepped by \(by) s")
                }
                line += ";"
            }
            print(line)
        }
    }

    /// ntpd steps the clock at any offset over 0.128 s (ntpd(8), `-x`; chrony's `makestep` and gpsd-fed time at what
    /// they are set to): a step back of a tenth of a second to half of one is not a step by the stamps alone
    /// (`SampleClock.stepTolerance`, 0.5 s, which the two readers' threads stamping their own samples need), and each
    /// component dropped the samples stamped behind what it had until the clock caught up: up to half a second of the
    /// gyroscope's turn never integrated. With each sample's monotonic time (the daemon's), a sample stamped behind the
    /// latest and below its monotonic time's offset is a step once the next sample is too (a sample handed over late
    /// is followed by one that is not). Seeds 1–4 with and without GNSS, stepped back at 300 s or 700 s.
    ///
    /// Measured (2026-12-06) before: with GNSS, seed 3 stepped back 0.45 s at 300 s 0.71° RMS (worst window 1.90°)
    /// against 0.37° (0.57°) without the step; seed 4 0.45 s at 700 s 0.41° (1.13°) against 0.25° (0.41°); without GNSS
    /// seed 2 0.3 s at 300 s 5.02° against 1.58°, seed 3 0.15 s at 300 s 3.48° against 1.99°. Taking the step out only
    /// once the second sample confirmed it, and dropping the first, changed no drive with GNSS but moved two without it
    /// by degrees (seed 3 3.81°, one fit taken or refused); the first sample is now taken out on trial, and every case
    /// is as without the step within 0.01° RMS and 0.03° in the worst window.
    func testTheSamplesClockSteppedBackByLessThanHalfASecond() {
        for seed: UInt64 in [1, 2, 3, 4] {
            let drive = Self.drive(seed: seed)
            var line = "RoadDrive: seed \(seed), the samples' clock stepped back by less than half a second, each sample's monotonic time given:"
            for (gnss, after) in [(true, 120.0), (false, 600.0)] {
                let same = Self.judge(drive, gnss: gnss, after: after, elapsed: true)
                line += " \(gnss ? "with" : "without") GNSS none \(Self.format(same.rms))° (\(Self.format(same.worstWindow))°)"
                for (at, by) in [(300.0, -0.15), (300, -0.3), (300, -0.45), (700, -0.45)] {
                    let stepped = Self.judge(drive, gnss: gnss, after: after, clockStep: (at, by), elapsed: true)
                    line += ", \(by) s at \(Int(at)) s \(Self.format(stepped.rms))° (\(Self.format(stepped.worstWindow))°)"
                    XCTAssertEqual(stepped.rms, same.rms, accuracy: 0.05, "seed \(seed), GNSS \(gnss), stepped \(by) s at \(at) s")
                    XCTAssertEqual(stepped.worstWindow, same.worstWindow, accuracy: 0.1, "seed \(seed), GNSS \(gnss), stepped \(by) s at \(at) s")
                }
                line += ";"
            }
            print(line)
        }
    }

    /// The samples' clock stepped back by an hour at 300 s, before a GNSS outage from 400 to 700 s (seeds 1–4): what the
    /// fusion times between fixes (how the course's trim fades, how long the deviation from driving settles after a
    /// calibration changes) must be on its own clock (`SampleClock`), as the fixes' epochs are, so the heading is what it
    /// is without the step. Measured (2026-12-06) before it was: the RMS in the outage 0.81°, 0.67°, 0.40°, 0.35°
    /// without the step, 0.72°, 0.86°, 0.66°, 0.30° with it (the trim never faded: its age was an hour below zero). Now
    /// the same to 0.01° (RMS 0.63°, 0.52°, 0.50°, 0.30° both ways).
    func testTheSamplesClockSteppedBackBeforeAnOutage() {
        for seed: UInt64 in [1, 2, 3, 4] {
            let drive = Self.drive(seed: seed)
            let same = Self.judge(drive, gnss: true, after: 120, outage: 400..<700)
            let stepped = Self.judge(drive, gnss: true, after: 120, outage: 400..<700, clockStep: (300, -3600))
            print("RoadDrive: seed \(seed), outage 400–700 s, the samples' clock stepped back by an hour at 300 s: RMS \(Self.format(stepped.rms))° "
                  + "against \(Self.format(same.rms))°, in the outage \(Self.format(stepped.duringOutage))° against \(Self.format(same.duringOutage))°")
            XCTAssertEqual(stepped.rms, same.rms, accuracy: 0.01, "seed \(seed)")
            XCTAssertEqual(stepped.duringOutage, same.duringOutage, accuracy: 0.01, "seed \(seed): in the outage")
            XCTAssertEqual(stepped.worstWindow, same.worstWindow, accuracy: 0.01, "seed \(seed): the worst window")
        }
    }

    /// The seeds' RMS and worst windows, printed under `label`: their medians and worsts.
    static func summary(_ label: String, _ scores: [Score]) -> (median: Double, worst: Double, windowMedian: Double, windowWorst: Double) {
        let rms = scores.map(\.rms), windows = scores.map(\.worstWindow)
        let s = (median(rms), rms.max()!, median(windows), windows.max()!)
        print("RoadDrive, \(label): RMS \(rms.map { format($0) }) median \(format(s.0))°, worst \(format(s.1))°; worst window "
              + "\(windows.map { format($0) }) median \(format(s.2))°, worst \(format(s.3))°")
        return s
    }

    /// Each seed's drive judged with its fixes as positions only (`positionsOnly`); `alsoEach` is given each drive too.
    static func judgeWithPositionsOnly(_ seeds: [UInt64], alsoEach: (RoadDrive) -> Void = { _ in }) throws -> [Score] {
        var scores: [Score] = []
        for seed in seeds {
            let drive = Self.drive(seed: seed)
            let fixes = try Self.positionsOnly(drive)
            let receiver = drive.events.reduce(0) { if case .fix = $1 { return $0 + 1 }; return $0 }
            XCTAssertEqual(fixes.count, receiver)
            scores.append(Self.judge(drive, gnss: true, after: 120, fixes: fixes))
            alsoEach(drive)
        }
        return scores
    }

    // MARK: The simulator itself

    /// With every effect off but the car's (linear) iron, the drive is the estimator's own model again, on this
    /// route: the fusion does nearly as well as on `VirtualIMU`'s car (0.6°). What is left (1.0–1.4°) is the
    /// route's: bends at 80 km/h and pulling away tilt the filter's "up" by about a degree (its roll and pitch
    /// err while the car's own acceleration is taken out from 1 Hz speeds), which the steep dip (−64°) turns
    /// into twice that of heading.
    func testWithEveryEffectOffTheFusionIsNearlyAsGoodAsOnItsOwnModel() {
        for seed: UInt64 in [1, 2] {
            let drive = Self.drive(seed: seed, duration: 480, effects: .none)
            let a = Self.judge(drive, gnss: true, after: 120)
            print("RoadDrive: every effect off, seed \(seed): RMS \(Self.format(a.rms))°, worst 2-min \(Self.format(a.worstWindow))°, n \(a.samples)")
            XCTAssertLessThan(a.rms, 2, "seed \(seed)")
        }
    }

    /// The accelerometer reads gravity's reaction plus the car's own acceleration, computed here from the
    /// truth alone: level, without the sensor's errors, lever arm or suspension, the specific force in the car's
    /// axes is (v̇, v ψ̇, −g), v̇ and ψ̇ the truth's speed and heading differentiated.
    func testTheAccelerometerReadsTheCarsAcceleration() throws {
        let fx = RoadDriveEffects.exact
        let drive = Self.drive(seed: 7, duration: 300, effects: fx)
        let rate = drive.configuration.rate
        var k = 0, worst = 0.0, largest = 0.0
        for event in drive.events {
            guard case .inertial(let s) = event else { continue }
            defer { k += 1 }
            guard k > 0, k + 1 < drive.truth.count else { continue }
            let (before, now, after) = (drive.truth[k - 1], drive.truth[k], drive.truth[k + 1])
            let along = (after.speed - before.speed) * rate / 2
            let across = now.speed * Self.wrap(after.heading - before.heading) * rate / 2 * .pi / 180
            let expected = Vector3(along, across, -9.81)
            // Where the driver's acceleration steps (stopping at a light), the differences disagree for a sample.
            guard abs(after.speed - 2 * now.speed + before.speed) * rate * rate < 0.5 else { continue }
            worst = max(worst, (s.acceleration - expected).length)
            largest = max(largest, Vector3(along, across, 0).length)
        }
        print("RoadDrive: accelerometer against the truth's acceleration: worst \(Self.format(worst, 4)) m/s² (largest \(Self.format(largest)) m/s²)")
        XCTAssertGreaterThan(largest, 2)
        XCTAssertLessThan(worst, 0.05)
    }

    /// The gyroscope reads the truth's turn: the yaw rate from the body rates, (ω_y sin φ + ω_z cos φ)/cos θ
    /// with the truth's roll and pitch, integrates to the truth's heading over the drive (without the sensor's
    /// errors or misalignment), through sideslip, hills, body motion, bumps and lever arm alike; with its
    /// errors it wanders by about its bias.
    func testTheGyroscopeReadsTheTruthsTurn() throws {
        var effects = RoadDriveEffects()
        for off: WritableKeyPath<RoadDriveEffects, Bool> in [\.gyroNoise, \.gyroBias, \.gyroScale, \.vibration, \.misalignment] { effects[keyPath: off] = false }
        for (fx, tolerance) in [(effects, 0.3), (RoadDriveEffects(), 60.0)] {
            let drive = Self.drive(seed: 3, duration: 300, effects: fx)
            var integrated = drive.truth[0].heading, unwrapped = drive.truth[0].heading, worst = 0.0
            var previous: (rate: Double, heading: Double)?
            var k = 0, turned = 0.0
            for event in drive.events {
                guard case .inertial(let s) = event else { continue }
                let truth = drive.truth[k]
                k += 1
                let w = try XCTUnwrap(s.angularRate)
                let phi = truth.roll * .pi / 180, theta = truth.pitch * .pi / 180
                let rate = (w.y * sin(phi) + w.z * cos(phi)) / cos(theta) * 180 / .pi
                if let p = previous {
                    integrated += (p.rate + rate) / 2 / drive.configuration.rate
                    let step = Self.wrap(truth.heading - p.heading)
                    unwrapped += step
                    turned += abs(step)
                }
                previous = (rate, truth.heading)
                worst = max(worst, abs(integrated - unwrapped))
            }
            print("RoadDrive: gyroscope against the truth over 300 s (\(Self.format(turned, 0))° turned): worst \(Self.format(worst, 3))°")
            XCTAssertGreaterThan(turned, 360)
            XCTAssertLessThan(worst, tolerance)
            if fx == effects { XCTAssertGreaterThan(worst, 0) }
        }
    }

    /// Outside the car's iron and away from the street's, the magnetometer reads the local field: turned into
    /// north-east-down by the truth's attitude it is the drive's field exactly, whose declination and dip are
    /// 1–3° off WMM's (what the estimator is given).
    func testTheMagnetometerWithoutIronReadsTheLocalFieldNotWMMs() {
        var fx = RoadDriveEffects.exact
        fx.fieldOffWMM = true
        let drive = Self.drive(seed: 4, duration: 200, effects: fx)
        let local = drive.localField.ned
        var k = 0, worst = 0.0
        for event in drive.events {
            switch event {
            case .inertial: k += 1
            case .magnetic(let m):
                let t = drive.truth[k - 1]
                let (f, th, ps) = (t.roll * .pi / 180, t.pitch * .pi / 180, t.heading * .pi / 180)
                // Body (forward-right-down) to north-east-down, z-y-x.
                let b = m.field
                let x1 = b.x, y1 = b.y * cos(f) - b.z * sin(f), z1 = b.y * sin(f) + b.z * cos(f)
                let x2 = x1 * cos(th) + z1 * sin(th), z2 = -x1 * sin(th) + z1 * cos(th)
                let ned = Vector3(x2 * cos(ps) - y1 * sin(ps), x2 * sin(ps) + y1 * cos(ps), z2)
                worst = max(worst, (ned - local).length)
            case .fix: break
            }
        }
        print("RoadDrive: field without iron against the local field: worst \(worst) µT; local declination "
              + "\(Self.format(drive.localField.declination)) dip \(Self.format(drive.localField.dip)), WMM \(Self.format(Self.model.declination)) \(Self.format(Self.model.dip))")
        XCTAssertLessThan(worst, 1e-6)
        let dDecl = abs(drive.localField.declination - Self.model.declination), dDip = abs(drive.localField.dip - Self.model.dip)
        XCTAssertTrue((1...3).contains(dDecl), "\(dDecl)")
        XCTAssertTrue((1...3).contains(dDip), "\(dDip)")

        // The street's iron: mostly far, tens of µT on the bridge and over manholes.
        let street = Self.drive(seed: 4, effects: RoadDriveEffects())
        let anomalies = street.truth.map(\.anomaly).sorted()
        print("RoadDrive: the street's field at the sensor: median \(Self.format(anomalies[anomalies.count / 2])) µT, "
              + "99th percentile \(Self.format(anomalies[anomalies.count * 99 / 100])) µT, max \(Self.format(anomalies.last!)) µT")
        XCTAssertLessThan(anomalies[anomalies.count / 2], 2)
        XCTAssertGreaterThan(anomalies.last!, 10)
    }

    /// GNSS speed and course lag the fix's time by the configured lag: the truth's speed shifted by it fits
    /// the fixes' speed best; stopped, the course is noise.
    func testGNSSLagsAsConfigured() throws {
        for lag in [0.3, 0.8] {
            var fx = RoadDriveEffects()
            fx.gnssNoise = false
            fx.multipath = false
            let drive = Self.drive(seed: 5, duration: 400, effects: fx) { $0.gnssLag = lag }
            XCTAssertEqual(drive.gnssLag, lag)
            var fixes: [GPSFix] = []
            var lastInertial = 0.0
            for event in drive.events {
                switch event {
                case .inertial(let s): lastInertial = s.time.unixTime
                case .fix(let f):
                    fixes.append(f)
                    XCTAssertGreaterThanOrEqual(lastInertial, try XCTUnwrap(f.time).unixTime, "a fix arrives after its time")
                case .magnetic: break
                }
            }
            let start = drive.configuration.start, rate = drive.configuration.rate
            func misfit(_ shift: Double) -> Double {
                fixes.reduce(0) { sum, f in
                    let t = f.time!.unixTime - start - shift
                    let j = Int((t * rate).rounded()) - 1
                    guard j >= 0 && j < drive.truth.count else { return sum }
                    let e = f.speed! - drive.truth[j].speed
                    return sum + e * e
                }
            }
            let shifts = (0...60).map { Double($0) * 0.025 }
            let best = shifts.min { misfit($0) < misfit($1) }!
            print("RoadDrive: GNSS lag configured \(lag) s, the speed fits best \(best) s behind")
            XCTAssertEqual(best, lag, accuracy: 0.03)
        }
        // With its errors, a stopped car's course is anything.
        let drive = Self.drive(seed: 5, duration: 400)
        var stoppedTracks: [Double] = []
        for event in drive.events {
            guard case .fix(let f) = event, let t = f.time?.unixTime else { continue }
            let j = Int(((t - drive.configuration.start) * drive.configuration.rate).rounded()) - 1
            let lagged = j - Int((drive.gnssLag * drive.configuration.rate).rounded()) - 1
            if lagged >= 0, j < drive.truth.count, drive.truth[j].speed == 0, drive.truth[lagged].speed == 0, let track = f.track {
                stoppedTracks.append(track)
                XCTAssertLessThan(try XCTUnwrap(f.speed), 2, "noise and multipath, no more")
            }
        }
        XCTAssertGreaterThan(stoppedTracks.count, 10)
        XCTAssertGreaterThan(stoppedTracks.max()! - stoppedTracks.min()!, 90, "stopped, the course wanders")
    }

    /// The car's heading is its course plus a sideslip of 2–5° in turns, none going straight.
    func testTheCarSlipsSidewaysInTurnsOnly() {
        let drive = Self.drive(seed: 6, duration: 600)
        var turning = 0.0, straight = 0.0
        for t in drive.truth where t.speed > 1 {
            let slip = abs(Self.wrap(t.heading - t.course))
            if t.straight { straight = max(straight, slip) } else if abs(t.lateralAcceleration) > 1 { turning = max(turning, slip) }
        }
        print("RoadDrive: sideslip up to \(Self.format(turning))° in turns, \(Self.format(straight, 4))° going straight")
        XCTAssertGreaterThan(turning, 2)
        XCTAssertLessThanOrEqual(turning, 5.001)
        XCTAssertLessThan(straight, 0.05)
    }

    // MARK: Ablation

    /// Which effect costs the estimator most: each switched off in turn (and each alone), on every seed. Slow
    /// (minutes), so it runs only when ROAD_DRIVE_ABLATION is set (to "off", "alone" or "both").
    func testEachEffectsCostWhenAskedFor() {
        guard let mode = getenv("ROAD_DRIVE_ABLATION").map({ String(cString: $0) }) else { return }
        // ROAD_DRIVE_ABLATION_SEEDS=N: seeds 1…N instead of the eight (a drive more or less moves the eight's median by degrees);
        // =A-B: seeds A…B (seeds above 48 were never looked at while tuning: a check that what was tuned generalises).
        // "seeds" in ROAD_DRIVE_ABLATION prints each seed's figures too.
        let seeds = getenv("ROAD_DRIVE_ABLATION_SEEDS").map { String(cString: $0) }.map { given -> [UInt64] in
            let ends = given.split(separator: "-").compactMap { UInt64($0) }
            return ends.count == 2 ? Array(ends[0]...max(ends[0], ends[1])) : Array(1...max(ends.first ?? 1, 1))
        } ?? Self.seeds
        func summary(_ fx: RoadDriveEffects) -> String {
            var a: [Score] = [], b: [Score] = []
            for seed in seeds {
                let drive = Self.drive(seed: seed, effects: fx)
                a.append(Self.judge(drive, gnss: true, after: 120))
                if mode.contains("nognss") { b.append(Self.judge(drive, gnss: false, after: 600)) }
                if mode.contains("seeds") {
                    print("RoadDrive ablation: seed \(seed): GNSS RMS \(Self.format(a.last!.rms)) window \(Self.format(a.last!.worstWindow))"
                        + (b.isEmpty ? "" : " | no GNSS RMS \(Self.format(b.last!.rms)) window \(Self.format(b.last!.worstWindow)) mean \(Self.format(b.last!.mean))")
                        + " | Δdecl \(Self.format(drive.localField.declination - Self.model.declination)) yaw \(Self.format(drive.mounting.z))")
                }
            }
            var line = "GNSS RMS median \(Self.format(Self.median(a.map(\.rms)))) worst \(Self.format(a.map(\.rms).max()!)), "
                + "window median \(Self.format(Self.median(a.map(\.worstWindow)))) worst \(Self.format(a.map(\.worstWindow).max()!))"
            if !b.isEmpty {
                line += " | no GNSS RMS median \(Self.format(Self.median(b.map(\.rms)))) mean \(Self.format(b.map(\.rms).reduce(0, +) / Double(b.count))) "
                    + "worst \(Self.format(b.map(\.rms).max()!))"
            }
            return line
        }
        print("RoadDrive ablation: all effects: \(summary(RoadDriveEffects()))")
        if mode.hasPrefix("off") || mode.hasPrefix("both") {
            for (name, path) in RoadDriveEffects.switches {
                var fx = RoadDriveEffects()
                fx[keyPath: path] = false
                print("RoadDrive ablation: without \(name): \(summary(fx))")
            }
        }
        if mode.hasPrefix("alone") || mode.hasPrefix("both") {
            print("RoadDrive ablation: no effect: \(summary(.none))")
            for (name, path) in RoadDriveEffects.switches where name != "carIron" {
                var fx = RoadDriveEffects.none
                fx[keyPath: path] = true
                print("RoadDrive ablation: only \(name): \(summary(fx))")
            }
        }
    }
}
