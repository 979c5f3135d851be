import BearingModel
/// Rest detection as in VQF (Laidig & Seel 2023, arXiv:2203.17024, the gyroscope bias estimation at rest):
/// the IMU is at rest when, for `restMinTime`, every gyroscope sample stays within `restThresholdGyro` of
/// its low-passed value, every accelerometer sample within `restThresholdAcc` of its low-passed value, and
/// no component of the low-passed rate exceeds `biasClip` (a slow steady turn is not rest). The low-passed
/// rate at rest is the measurement of the gyroscope bias. Unlike VQF, each sample first passes a fast low-pass
/// (`restSampleTau`, 4.5 Hz): a vibration sampled raw gives the test as many chances to break as the IMU has
/// samples, so rest depended on the rate; through the low-pass, a vibration above a few hertz counts by its mean.
public struct RestDetector: Sendable {
    public private(set) var atRest = false
    /// The gyroscope's low-passed rate, rad/s (the bias measurement at rest).
    public var lowPassedRate: Vector3 { gyroLowPass.output }
    /// How long the samples have stayed within the thresholds, s.
    public private(set) var quietTime = 0.0
    /// The latest deviations from the low-passed values, relative to their thresholds (≥ 1: not quiet).
    public private(set) var relativeDeviation = (gyro: 0.0, acc: 0.0)

    private var gyroLowPass: ButterworthLowPass<Vector3>
    private var accLowPass: ButterworthLowPass<Vector3>
    /// Each sample as the test sees it (`restSampleTau`).
    private var gyroSample: ButterworthLowPass<Vector3>
    private var accSample: ButterworthLowPass<Vector3>
    private let thresholdGyro: Double
    private let thresholdAcc: Double
    private let clip: Double
    private let minTime: Double
    /// The longest interval between samples that is never a gap (`restFilterTau`); a longer one is a gap when it is also
    /// longer than three of the sensor's own (`Cadence`).
    private let longestInterval: Double
    private var cadence = (gyroscope: Cadence(), accelerometer: Cadence())

    public init(parameters p: AttitudeFilterParameters) {
        gyroLowPass = ButterworthLowPass(tau: p.restFilterTau)
        accLowPass = ButterworthLowPass(tau: p.restFilterTau)
        gyroSample = ButterworthLowPass(tau: p.restSampleTau)
        accSample = ButterworthLowPass(tau: p.restSampleTau)
        thresholdGyro = p.restThresholdGyro * .pi / 180
        thresholdAcc = p.restThresholdAcc
        clip = p.biasClip * .pi / 180
        minTime = p.restMinTime
        longestInterval = p.restFilterTau
    }

    /// A gyroscope sample (rad/s) and the seconds since the previous one.
    public mutating func gyroscope(_ rate: Vector3, dt: Double) {
        if cadence.gyroscope.isGap(dt, longerThan: longestInterval) { restart(gyroscope: true) }
        let reference = gyroLowPass.step(rate, dt: dt)
        let deviation = (gyroSample.step(rate, dt: dt) - reference).length
        relativeDeviation.gyro = deviation / thresholdGyro
        if deviation >= thresholdGyro || abs(reference.x) > clip || abs(reference.y) > clip || abs(reference.z) > clip {
            interrupt()
        }
    }

    /// An accelerometer sample (m/s²) and the seconds since the previous one; the quiet time counts here.
    public mutating func accelerometer(_ acc: Vector3, dt: Double) {
        let gap = cadence.accelerometer.isGap(dt, longerThan: longestInterval)
        if gap { restart(gyroscope: false) }
        let reference = accLowPass.step(acc, dt: dt)
        let deviation = (accSample.step(acc, dt: dt) - reference).length
        relativeDeviation.acc = deviation / thresholdAcc
        if deviation >= thresholdAcc {
            interrupt()
        } else if !gap, dt > 0, dt.isFinite {
            quietTime += dt
            if quietTime >= minTime { atRest = true }
        }
    }

    /// Rest is judged on samples. Across a gap (samples lost) there were none, and the low-passes would jump to the
    /// sample after it: counted in full, a gap over `restMinTime` made that one sample a rest and its rate the bias
    /// (0.29 °/s off after a 10 s gap, `AttitudeFilterTests.testAGapLongerThanACornerStartsTheHeadingAgainFromTheField`).
    /// A gap ends the rest, and the sensor's test starts again from the samples after it; the gap itself is not quiet
    /// time (`RestDetectorTests.testAGapEndsTheRestAndTheSampleAfterItTeachesNothing`).
    private mutating func restart(gyroscope: Bool) {
        if gyroscope {
            gyroLowPass.reset()
            gyroSample.reset()
        } else {
            accLowPass.reset()
            accSample.reset()
        }
        interrupt()
    }

    private mutating func interrupt() {
        quietTime = 0
        atRest = false
    }
}

/// A sensor's own cadence, to tell a gap in its samples from its interval: the daemon takes an IMU at 1 Hz upwards, whose
/// every interval is longer than the rest test's low-pass (`restFilterTau`). The usual interval follows a shorter one at
/// once and a longer one by a tenth a sample, so a gap hardly moves it and a reader's jitter does not make one.
struct Cadence: Sendable {
    private(set) var usualInterval: Double?

    /// Whether `dt` is a gap: longer than `longest` and than three usual intervals. The first interval is none.
    mutating func isGap(_ dt: Double, longerThan longest: Double) -> Bool {
        guard dt > 0, dt.isFinite else { return false }
        defer { usualInterval = min(dt, (usualInterval ?? dt) * 1.1) }
        guard let usual = usualInterval else { return false }
        return dt > max(longest, 3 * usual)
    }
}
