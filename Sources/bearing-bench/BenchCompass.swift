import ArgumentParser
import BearingAttitude
import BearingCompass
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingOnlineCalibration
import BearingModel
import BearingWire
import BearingPOSIX
import BearingI2C
import BearingPublishing
import BearingRecording
import BearingDaemon
import BearingLog
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The compass path's cost per sample, for `bench/compass-cost`: a QMC5883L model on the simulated bus,
/// the driver's read (data-ready poll + block read + scaling), orientation, heading, declination,
/// smoothing, the ATT line, and a write to a UNIX socket whose other end is drained. No sleeps.
///
/// With `--imu`, the 9-axis path per inertial sample: an LSM6DSOX model read by its driver (data-ready
/// poll + 12-byte burst + scaling) at 100 Hz, a QMC5883L read every fifth sample (20 Hz), both fed to
/// `AttitudeFusion` at their own times, and the fused ATT line (roll, pitch, acc, gyro, quat) written for
/// every inertial sample: the cost of an unthrottled ATT reader at the gyroscope's rate.
///
/// With `--replay`, the drivers read through a `ReplayI2CBus`: the chip models answer the first 1,000
/// samples' reads, which are then replayed in a loop, so the count is Bearing's own work per sample (as
/// on a board, where the chip computes its values and the kernel moves the bytes).
///
/// With `--pipeline` (9-axis), the samples go through the daemon's own stage instead of a loop around
/// `AttitudeFusion`: the hub's sources (`PipelineSource`: the adapters' subjects, entered on the pipeline
/// queue), the daemon's `FusionStage` and a callback writing each ATT: what the wiring adds per sample. With
/// `--online` and `--record` too, the 9-axis path as the daemon runs it by default, as one figure.
struct BenchCompass: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-compass")

    @Option var samples: Int = 10_000
    @Flag var imu = false
    @Flag var replay = false
    @Flag var pipeline = false
    /// With `--pipeline`: each attitude published into the daemon's hub (`PublishingCore` with the default chains:
    /// ATT smoothed over 5 and thrown at most every 0.5 s) for one watching client, as `bearing run` does by default,
    /// instead of written unthrottled; the pipeline's clock set to each sample's time (a replay's clock), so the
    /// throttle's timers run as they would live.
    @Flag var daemon = false
    /// Records every sample as the black box does (bus transfers, clock stamp, frame encoding, the ring).
    @Flag var record = false
    /// Online magnetometer calibration on (`calibration.auto: track`) in the 9-axis loop: its per-sample work and
    /// its fits (every 10 s of sample time), amortized.
    @Flag var online = false
    /// `vehicle: car` in the 9-axis loop: a fix a second (12 m/s along the board's heading, which holds still
    /// instead of turning at 3 °/s), its speed taken out of the accelerometer, the deviation from driving
    /// learnt and applied: the whole per-sample path of a car (without a turn, online calibration fits nothing).
    @Option var vehicle: String = "none"

    /// Samples whose reads the replaying bus records (a multiple of 5, the magnetometer's period in samples).
    static let recorded = 1_000

    func run() throws {
        // The options as constants: a property wrapper's value read in the per-sample loop instantiates ArgumentParser's
        // generic metadata each time (about 330 instructions a read under callgrind, 2026-12-06), which is the
        // bench's cost, not Bearing's.
        let (imu, replay, pipeline, daemon, record, online, samples) = (imu, replay, pipeline, daemon, record, online, samples)
        let models = SimulatedI2CBus()
        let replaying = ReplayI2CBus(models)
        let transfers = TransactionLog()
        let recorder = BlackBoxRecorder(config: BlackBoxConfig(), logger: Logger(label: "bench", level: .error))
        let clock = PipelineClock(.live)
        let plain: I2CBus = replay ? replaying : models
        let bus: I2CBus = record ? RecordingI2CBus(plain, log: transfers) : plain
        /// What `PipelineInput.enterSample` does per sample: the live pipeline stamps each value, recording
        /// or not; the black box records it.
        func recordSample(_ sensor: RecordedSensor, _ time: GPSTimestamp) {
            clock.stamp()
            guard record else { return }
            // The record carries the sample's own time, so frames span what they would at the sensor's rate
            // however fast the bench runs.
            let t = UInt64(max(0, (time.unixTime - 1_780_000_000) * 1e6))
            recorder.appendSample(sensor, time: time, transfers: transfers, at: t)
        }
        var t = 0.0
        let compass = VirtualCompass(turnRate: 3, noise: 0.2, clock: { t })
        compass.orientation = try Orientation(axes: "+X-Y-Z")
        // In a car the board goes straight, its fixes taken (and the replayed reads agree with them).
        let turnRate = vehicle == "none" ? 3.0 : 0
        let board = VirtualIMU.board(earth: compass.earthField, heading: { turnRate * $0 }, pitch: { 5 * sin($0) }, roll: { 10 * sin(0.7 * $0) })
        if imu {
            compass.board = { board.boardField(at: $0) }
            ChipModels.attachInertial(chip: "lsm6dsox", to: models) { board.motion(at: t) }
        } else {
            compass.orientation = .identity
        }
        ChipModels.attach(chip: "qmc5883l", to: models) { compass.field() }
        let driver = QMC5883L(bus: bus, address: 0x0D)
        driver.sleep = { _ in }
        try driver.identify()
        _ = try driver.configure(MagnetometerSettings())
        var gyro: LSM6DSx?
        if imu {
            let g = LSM6DSx(bus: bus, address: 0x6A)
            g.sleep = { _ in }
            try g.identify()
            _ = try g.configure(InertialSettings())
            gyro = g
        }
        if replay {
            replaying.startRecording()
            for i in 0..<Self.recorded {
                t = Double(i) * (imu ? 0.01 : 0.1)
                if !imu || i % 5 == 0 { _ = try driver.read() }
                _ = try gyro?.read()
            }
            try replaying.replay()
        }
        _ = transfers.take()
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw ExitCode(1) }
        let reader = fds[1]
        Syscall.startThread(name: "bench.drain") {
            var buf = [UInt8](repeating: 0, count: 65_536)
            while read(reader, &buf, buf.count) > 0 {}
        }
        let field = LocalField.wmm(.wmm2025, latitude: 50.8, longitude: -1.1, heightKm: 0, year: 2026.5, source: .fallback)
        let orientation = try Orientation(axes: "+X-Y-Z")
        var bytes = 0
        let start = Syscall.monotonicSeconds()
        let write = { (line: String) in
            var line = line + "\n"
            bytes += line.utf8.count
            _ = line.withUTF8 { Glibc.write(fds[0], $0.baseAddress, $0.count) }
        }
        if let gyro, pipeline {
            // As the daemon wires it: the sensors' sources (the hub's), entered on the pipeline queue, each value into
            // one FusionStage, each attitude written.
            // The daemon's hub, its default chains and one watching client (`--daemon`): the sources enter its queue.
            let clock = PipelineClock(.replay)
            let core = PublishingCore(defaults: AgentConfig.defaultPipelines, release: Release.wireRelease,
                                      queue: DispatchQueue(label: "bench.pipeline"), clock: clock)
            let entry = daemon ? core.entry : PipelineEntry(DispatchQueue(label: "bench.pipeline"))
            let inertial = PipelineSource<InertialSample>(), magnetic = PipelineSource<MagneticSample>()
            var stage = FusionStage(AttitudeFusion(imuOrientation: orientation, magnetometerOrientation: orientation, trueNorth: true,
                                                   auto: online ? .track : .off))
            stage.start(calibration: nil, localField: field)
            if daemon {
                core.serveClients { line, _ in write(line) }
                core.entry.run {
                    core.hub.connect(1)
                    core.hub.handle(.watch(WatchChange(enable: true, json: true)), from: 1, now: GPSTimestamp(unixTime: 1_780_000_000))
                }
            }
            let publish = { (a: Attitude) in
                // On the entry already, as the agent's `fuse` is.
                if daemon { core.hub.publish(Report(.attitude(a)), from: .compass) } else { write(WireEncoding.att(a)) }
            }
            // With `--daemon`, each sample's time on the pipeline's clock too, as the agent gives it (`Agent.fuse(_:elapsed:)`).
            let elapsed = { daemon ? clock.seconds : nil }
            let runs = [magnetic.subscribe(on: entry) { if let a = stage.step(.magnetic($0), elapsed: elapsed()) { publish(a) } },
                        inertial.subscribe(on: entry) { if let a = stage.step(.inertial($0), elapsed: elapsed()) { publish(a) } }]
            for i in 0..<samples {
                t = Double(i) * 0.01
                let time = GPSTimestamp(unixTime: 1_780_000_000 + t)
                if daemon {
                    let us = UInt64(t * 1e6)
                    entry.run {
                        clock.set(us, wallTime: time)
                        clock.runTimers(through: us)
                    }
                }
                if i % 5 == 0 {
                    let r = try driver.read()
                    recordSample(.magnetometer, time)
                    let sample = MagneticSample(time: time, device: "bench", chip: "qmc5883l", field: r.field, overflow: r.overflow)
                    entry.run { magnetic.send(sample) }
                }
                let r = try gyro.read()
                recordSample(.imu, time)
                let sample = InertialSample(time: time, device: "bench", chip: "lsm6dsx", acceleration: r.acceleration,
                                            angularRate: r.angularRate, temperature: r.temperature)
                entry.run { inertial.send(sample) }
            }
            runs.forEach { $0.cancel() }
        } else if let gyro {
            guard let vehicle = Vehicle(rawValue: vehicle) else { throw ValidationError("--vehicle \(self.vehicle): none, car, rover or boat") }
            var fusion = AttitudeFusion(imuOrientation: orientation, magnetometerOrientation: orientation, trueNorth: true,
                                        auto: online ? .track : .off, vehicle: vehicle)
            if online { fusion.step(.calibration(nil)) }
            fusion.step(.localField(field))
            for i in 0..<samples {
                t = Double(i) * 0.01
                let time = GPSTimestamp(unixTime: 1_780_000_000 + t)
                if vehicle != .none, i % 100 == 0 {
                    var fix = GPSFix(mode: .threeD, time: time, latitude: 50.8, longitude: -1.1)
                    fix.speed = 12
                    fix.track = Compass.normalize(turnRate * t + field.declination.value)
                    fix.eps = 0.2
                    fusion.step(.fix(fix))
                }
                if i % 5 == 0 {
                    let r = try driver.read()
                    recordSample(.magnetometer, time)
                    fusion.step(.magnetic(MagneticSample(time: time, device: "bench", chip: "qmc5883l", field: r.field, overflow: r.overflow)))
                }
                let r = try gyro.read()
                recordSample(.imu, time)
                fusion.step(.inertial(InertialSample(time: time, device: "bench", chip: "lsm6dsx", acceleration: r.acceleration,
                                                     angularRate: r.angularRate, temperature: r.temperature)))
                if let a = fusion.emitted { write(WireEncoding.att(a)) }
            }
        } else {
            var smoother = AttitudeSmoother(window: 5)
            for i in 0..<samples {
                t = Double(i) * 0.1
                let r = try driver.read()
                let sample = MagneticSample(time: GPSTimestamp(unixTime: 1_780_000_000 + t), device: "bench", chip: "qmc5883l",
                                            field: r.field, overflow: r.overflow)
                recordSample(.magnetometer, sample.time)
                smoother.add(Compass.attitude(sample, orientation: orientation, calibration: .identity,
                                              declination: (field.declination.value, .fallback)))
                write(WireEncoding.att(smoother.smoothed!))
            }
        }
        let elapsed = Syscall.monotonicSeconds() - start
        close(fds[0])
        print(String(printf: "%d %@ samples in %.3f s: %.0f samples/s on one core, %d bytes of ATT", samples, imu ? "inertial" : "compass",
                     elapsed, Double(samples) / elapsed, bytes))
    }
}
