import BearingCalibration
import BearingModel
import BearingPOSIX
import BearingSensors
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The still poses for an accelerometer calibration, from a recording or live from the IMU. Live, it shows
/// which of the six directions are done, whether the board is being held still, and which way to turn it
/// next; it stops when the fit passes with every direction held (and the model asked for, if any), on
/// Enter, or at the timeout.
public final class PoseCollection {
    public struct Result {
        public var poses: [StaticPose]
        public var samples: Int
        public var chip: String?
        public var device: String?
        /// `file` or `sensor`.
        public var source: String
        /// What the source last said (why there were no samples, if there were none).
        public var status = ""

        public init(poses: [StaticPose], samples: Int, chip: String?, device: String?, source: String, status: String = "") {
            self.poses = poses
            self.samples = samples
            self.chip = chip
            self.device = device
            self.source = source
            self.status = status
        }
    }

    /// The poses of a recording.
    public static func read(_ path: String, chip: String?, progress: any CollectionProgress) throws -> Result {
        let file = try InertialInput.read(path)
        var detector = StaticPoseDetector()
        for s in file.samples {
            detector.add(time: s.time, specificForce: s.accelerometer, angularRate: file.hasGyroscope ? s.gyroscope : nil)
        }
        detector.finish()
        progress.note("\(path): \(file.samples.count) samples, \(detector.poses.count) still poses" + (file.hasGyroscope ? "" : " (accelerometer only)"))
        return Result(poses: detector.poses, samples: file.samples.count, chip: chip ?? file.metadata["chip"], device: file.metadata["device"],
                      source: "file")
    }

    public let reader: InertialReader.Configuration
    public let recorder: SampleRecorder?
    public let progress: any CollectionProgress
    public let timeout: Double
    public let orientation: Orientation
    public let calibrator: AccelerometerCalibrator

    /// `model`: the accelerometer model to fit (nil: the best the poses support), for the live preview.
    public init(reader: InertialReader.Configuration, recorder: SampleRecorder?, progress: any CollectionProgress, timeout: Double, orientation: Orientation,
         model: CalibrationModel?) {
        self.reader = reader
        self.recorder = recorder
        self.progress = progress
        self.timeout = timeout
        self.orientation = orientation
        self.calibrator = AccelerometerCalibrator(model: model)
    }

    public func run() -> Result {
        let buffer = InertialSampleBuffer(recorder: recorder)
        let sensor = InertialSensorSource(configuration: reader, buffer: buffer)
        sensor.start()
        defer { sensor.stop() }
        var detector = StaticPoseDetector()
        var enter = EnterKey()
        var count = 0
        var chip: String?, device: String?
        var held: [AxisDirection?] = []
        var lastStatus = ""
        var lastDraw = -10.0
        let drawEvery = progress.live ? 0.25 : 2.0
        let start = Syscall.monotonicSeconds()
        progress.note("Hold the board still for a second or two in each pose: each face up in turn (and tilts between them for the full model). Enter finishes now, Ctrl-C aborts.")
        func result() -> Result { Result(poses: detector.poses, samples: count, chip: chip, device: device, source: "sensor", status: lastStatus) }
        while true {
            if enter.pressed(waiting: 100) {
                progress.note("finishing (Enter)")
                detector.finish()
                return result()
            }
            let now = Syscall.monotonicSeconds() - start
            let (samples, status, failure) = buffer.take()
            lastStatus = status
            if let failure {
                progress.note("stopped: \(failure)")
                return result()
            }
            var newPose = false
            for s in samples {
                count += 1
                chip = s.chip
                device = s.device
                if let pose = detector.add(time: s.time.unixTime, specificForce: s.acceleration, angularRate: s.angularRate) {
                    held.append(AxisDirection(pointing: pose.specificForce))
                    newPose = true
                    if !progress.live { progress.note(Self.describe(pose, number: detector.poses.count, direction: held.last!)) }
                }
            }
            let fit = newPose ? try? calibrator.fit(detector.poses) : nil
            let done = fit.map { $0.passes && $0.figures.missing.isEmpty && (calibrator.model == nil || $0.model == calibrator.model) } ?? false
            if now - lastDraw >= drawEvery || done || newPose {
                frame(status: status, held: held, holding: detector.holding, last: detector.poses.last, elapsed: now)
                lastDraw = now
            }
            if done {
                progress.note("every direction held and the fit passes: finishing")
                return result()
            }
            if now >= timeout {
                progress.note(String(printf: "timeout after %.0f s", timeout))
                detector.finish()
                return result()
            }
        }
    }

    /// One frame: status, the six directions, "hold still" feedback, the last pose, a hint.
    public func frame(status: String, held: [AxisDirection?], holding: StaticPose?, last: StaticPose?, elapsed: Double) {
        let done = Set(held.compactMap { $0 })
        let directions = AxisDirection.allCases.map { "\($0.rawValue) \(done.contains($0) ? "✓" : "·")" }.joined(separator: "  ")
        let still: String
        if let h = holding, h.duration > 0.2 {
            still = h.duration >= 1 ? String(printf: "still %.1f s ✓ (turn it to the next pose)", h.duration)
                : String(printf: "hold still… %.1f s", h.duration)
        } else {
            still = "moving"
        }
        let next = AxisDirection.allCases.filter { !done.contains($0) }.min { $0.postureRank(orientation) < $1.postureRank(orientation) }
        let hint = next.map { "hold it \($0.posture(orientation)) (\($0.rawValue) up), still" }
            ?? "all six faces held; tilt it about 45° between two faces and hold it still, for the full model (or Enter)"
        var lines = [status, "poses \(held.count)   \(directions)   \(Int(elapsed)) s of \(Int(timeout))", still]
        if let last { lines.append("last: " + Self.describe(last, number: held.count, direction: held.last ?? nil)) }
        lines.append("hint: \(hint)")
        progress.frame(lines, plainLine: String(printf: "%4.0f s  poses %d  ", elapsed, held.count) + "\(directions)  \(still)  hint: \(hint)")
    }

    public static func describe(_ pose: StaticPose, number: Int, direction: AxisDirection?) -> String {
        String(printf: "pose %d %@ held %.1f s, |a| %.4f m/s²", number, direction?.rawValue ?? "tilted", pose.duration, pose.specificForce.length)
    }
}
