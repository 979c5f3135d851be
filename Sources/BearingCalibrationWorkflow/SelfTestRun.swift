import BearingAttitude
import BearingI2C
import BearingModel
import BearingPOSIX
import BearingSelfTest
import BearingSensors

/// `bearing selftest`'s I/O: each configured sensor opened, found, configured (its configuration read back), read at
/// rest for a while and, with `moves`, while the user turns the board as asked; the verdicts are `SelfTestJudge`'s
/// and `GuidedMoveResults`'. Time and waiting come from `clock` and `sleep` (monotonic seconds), so that tests run
/// the register models (with faults injected) in virtual time.
public struct SelfTestRun {
    public struct Target: Sendable {
        public var kind: SensorRun.Kind
        public var bus: String
        public var chip: String?
        public var address: UInt8?
        public var rate: Double
        public var orientation: Orientation
        public init(kind: SensorRun.Kind, bus: String, chip: String?, address: UInt8?, rate: Double, orientation: Orientation) {
            self.kind = kind
            self.bus = bus
            self.chip = chip
            self.address = address
            self.rate = rate
            self.orientation = orientation
        }
        /// The config's magnetometer and IMU (those enabled).
        public static func of(magnetometer m: MagnetometerConfig, imu i: IMUConfig) -> [Target] {
            var out: [Target] = []
            if m.enabled {
                out.append(Target(kind: .magnetometer, bus: m.reader.bus, chip: m.reader.chip, address: m.reader.address,
                                  rate: m.reader.settings.rate, orientation: m.orientation))
            }
            if i.enabled {
                out.append(Target(kind: .imu, bus: i.reader.bus, chip: i.reader.chip, address: i.reader.address,
                                  rate: i.reader.settings.rate, orientation: i.orientation))
            }
            return out
        }
    }

    public var targets: [Target]
    /// Seconds read at rest, per sensor.
    public var seconds = 10.0
    public var moves = false
    /// Latitude, longitude (degrees) for the WMM's field and dip; nil: not judged.
    public var position: (latitude: Double, longitude: Double)?
    /// Unix time for the WMM's epoch.
    public var now: Double
    public var openBus: (String) throws(I2CError) -> I2CBus
    public var clock: () -> Double = Syscall.monotonicSeconds
    public var sleep: (Double) -> Void = DriverSleep.real
    /// What to tell the user (prompts), and how far a step is (0…1).
    public var say: (String) -> Void = { _ in }
    public var progress: (Double) -> Void = { _ in }

    public init(targets: [Target], now: Double, openBus: @escaping (String) throws(I2CError) -> I2CBus) {
        self.targets = targets
        self.now = now
        self.openBus = openBus
    }

    /// Chips whose control registers are write-only (their configuration cannot be read back).
    static let writeOnlyControl: Set<String> = ["mmc5983ma"]

    public func run() -> [SelfTestLine] {
        var lines: [SelfTestLine] = []
        var boardField: Vector3?, boardDown: Vector3?
        // The magnetometer, kept for the guided moves: its field must turn against the board's turn.
        var magnetometer: (read: () -> Vector3?, orientation: Orientation)?
        for target in targets {
            let name = target.kind == .magnetometer ? "magnetometer" : "imu"
            let where_ = "\(target.bus)" + (target.address.map { " " + I2CError.hex($0) } ?? "")
            let bus: I2CBus
            do { bus = try openBus(target.bus) } catch {
                lines.append(SelfTestLine(name, "bus", measured: error.description, expected: "\(target.bus) opens", .fail,
                                          fix: "enable I2C (raspi-config, or dtparam=i2c_arm=on in config.txt) and check that this user may open it (group i2c)"))
                continue
            }
            let logging = WriteLoggingBus(bus)
            do {
                var run: SensorRun
                switch target.kind {
                case .magnetometer:
                    let d = try ChipProbe.find(logging, chip: target.chip, address: target.address)
                    d.sleep = sleep
                    var s = MagnetometerSettings()
                    s.rate = target.rate
                    let chosen = try d.configure(s)
                    run = SensorRun(kind: .magnetometer, chip: type(of: d).descriptor.name, display: type(of: d).descriptor.displayName,
                                    endpoint: "i2c:\(bus.path):\(I2CError.hex(d.address))", configuredRate: target.rate)
                    run.fieldRange = chosen.rangeMicrotesla
                    readBack(&run, logging, address: d.address)
                    capture(&run) { () throws(SensorError) in
                        let r = try d.read()
                        return (r.field, nil, r.overflow)
                    }
                    if !run.field.values.isEmpty { boardField = target.orientation.toBoard(run.field.mean) }
                    magnetometer = ({ try? d.read().field }, target.orientation)
                case .imu:
                    let d = try ChipProbe.findInertial(logging, chip: target.chip, address: target.address)
                    d.sleep = sleep
                    var s = InertialSettings()
                    s.rate = target.rate
                    let chosen = try d.configure(s)
                    run = SensorRun(kind: .imu, chip: type(of: d).descriptor.name, display: d.identifiedName,
                                    endpoint: "i2c:\(bus.path):\(I2CError.hex(d.address))", configuredRate: target.rate)
                    run.accelerationRange = chosen.accelerationRangeG * SelfTestJudge.standardGravity
                    run.angularRateRange = chosen.angularRateRangeDPS.map { $0 * .pi / 180 }
                    readBack(&run, logging, address: d.address)
                    capture(&run) { () throws(SensorError) in
                        let r = try d.read()
                        return (r.acceleration, r.angularRate, r.accelerationSaturated || r.angularRateSaturated)
                    }
                    if !run.acceleration.values.isEmpty { boardDown = target.orientation.toBoard(run.acceleration.mean) * -1 }
                    lines += SelfTestJudge.judge(run)
                    if moves, run.angularRate.values.count >= 10 {
                        lines += guidedMoves(target, magnetometer: magnetometer) { () throws(SensorError) in try d.read().angularRate ?? .zero }
                    }
                    continue
                }
                lines += SelfTestJudge.judge(run)
            } catch {
                lines.append(Self.notFound(error, name: name, target: target, where_: where_))
            }
        }
        lines = SelfTestJudge.judgedTogether(lines)
        if let boardField, let position { lines += Self.earthLines(field: boardField, down: boardDown, position: position, now: now) }
        return lines
    }

    /// The field at rest (board axes, raw: no calibration) against the WMM2025's at `position` and `now` (Unix time).
    static func earthLines(field: Vector3, down: Vector3?, position: (latitude: Double, longitude: Double), now: Double) -> [SelfTestLine] {
        let wmm = WorldMagneticModel.wmm2025
        let f = wmm.field(latitude: position.latitude, longitude: position.longitude, heightKm: 0,
                          year: wmm.heldYear(WorldMagneticModel.decimalYear(unixSeconds: now)))
        // The WMM's field in nT, µT here.
        return SelfTestJudge.earthField(board: field, down: down, wmmTotal: f.totalIntensity / 1000, wmmDip: f.inclination, calibrated: false)
    }

    static func notFound(_ error: SensorError, name: String, target: Target, where_: String) -> SelfTestLine {
        let expected = (target.chip ?? "a supported chip") + (target.address.map { " at " + I2CError.hex($0) } ?? "")
        switch error {
        case .bus(let e) where e.isNoAnswer:
            return SelfTestLine(name, "chip", measured: e.description, expected: expected, .fail,
                                fix: "check the wiring (SDA, SCL, 3.3 V, GND) and the address (`i2cdetect -y N`, `bearing probe --bus \(target.bus)`)")
        case .wrongChip:
            return SelfTestLine(name, "chip", measured: error.description, expected: expected, .fail,
                                fix: "another chip answers there: run `bearing probe --bus \(target.bus)` and use the chip and address it prints")
        default:
            return SelfTestLine(name, "chip", measured: error.description, expected: expected, .fail,
                                fix: "run `bearing probe --bus \(target.bus) --read` to see what answers")
        }
    }

    /// The configuration registers the driver wrote (a value other than 0, the last write to each) read back.
    func readBack(_ run: inout SensorRun, _ bus: WriteLoggingBus, address: UInt8) {
        if Self.writeOnlyControl.contains(run.chip) { run.readbackUnavailable = "write-only control registers"; return }
        var last: [UInt8: UInt8] = [:]
        var order: [UInt8] = []
        for w in bus.writes where w.address == address {
            if last[w.register] == nil { order.append(w.register) }
            last[w.register] = w.value
        }
        let written = order.filter { last[$0]! != 0 }
        guard !written.isEmpty else { return }
        let kept = written.filter { r in (try? bus.readByte(address: address, register: r)) == last[r] }.count
        run.readback = (written.count, kept)
    }

    /// `seconds` of samples at the configured rate, each failed read retried once.
    func capture(_ run: inout SensorRun, read: () throws(SensorError) -> (Vector3, Vector3?, Bool)) {
        let start = clock(), period = 1 / max(run.configuredRate, 0.1)
        var next = start
        var lastProgress = -1.0
        while clock() - start < seconds {
            let wait = next - clock()
            if wait > 0 { sleep(wait) }
            next += period
            var sample: (Vector3, Vector3?, Bool)?
            for _ in 0..<2 where sample == nil {
                run.reads += 1
                do { sample = try read() } catch {
                    if case .bus = error {
                        run.failures += 1
                        if run.firstFailure == nil { run.firstFailure = error.description }
                    } else {
                        run.notReady += 1
                        if run.firstNotReady == nil { run.firstNotReady = error.description }
                    }
                }
            }
            guard let (v, rate, saturated) = sample else { continue }
            let t = clock()
            if saturated { run.saturatedSamples += 1 }
            if run.kind == .magnetometer { run.field.append(t, v) } else {
                run.acceleration.append(t, v)
                if let rate { run.angularRate.append(t, rate) }
            }
            let done = min(1, (t - start) / seconds)
            if done - lastProgress >= 0.05 { progress(done); lastProgress = done }
        }
    }

    /// Each guided move: asked for, waited for (a turn above 20 °/s, within 30 s), followed until the board is
    /// still again (below 6 °/s for 0.7 s, at most 15 s), its rate integrated and the largest excursion kept.
    /// With a magnetometer, the turn also checks its field: read as the turn starts and once the board is still
    /// again, it must turn against the board (`GuidedMoveResults.judgeField`).
    func guidedMoves(_ target: Target, magnetometer: (read: () -> Vector3?, orientation: Orientation)?,
                     read: () throws(SensorError) -> Vector3) -> [SelfTestLine] {
        var results = GuidedMoveResults()
        let period = 1 / max(target.rate, 1)
        var fieldLines: [SelfTestLine] = []
        for move in GuidedMove.allCases {
            say(move.prompt)
            var angle = Vector3.zero, largest = Vector3.zero
            var started: Double?, stillSince: Double?
            let fieldBefore = move == .turnClockwise ? magnetometer?.read() : nil
            let asked = clock()
            var last = clock()
            while true {
                sleep(period)
                guard let w = try? read() else { continue }
                let t = clock(), dt = t - last
                last = t
                if started == nil {
                    if w.length > 20 * .pi / 180 { started = t } else if t - asked > 30 { break } else { continue }
                }
                angle = angle + w * dt
                if angle.length > largest.length { largest = angle }
                if w.length < 6 * .pi / 180 {
                    if stillSince == nil { stillSince = t }
                    if t - stillSince! >= 0.7 { break }
                } else {
                    stillSince = nil
                }
                if t - started! > 15 { break }
            }
            if started != nil { results.turned[move] = largest }
            if let m = magnetometer, let before = fieldBefore, started != nil, let after = m.read() {
                let yaw = target.orientation.toBoard(angle).z
                fieldLines = GuidedMoveResults.judgeField(before: m.orientation.toBoard(before), after: m.orientation.toBoard(after),
                                                          boardTurn: yaw, orientation: m.orientation)
            }
        }
        return results.judge(orientation: target.orientation) + fieldLines
    }
}

/// A bus that notes every byte written (address, register, value) and passes everything through: the driver's
/// configuration, to be read back.
final class WriteLoggingBus: I2CBus {
    let inner: I2CBus
    private(set) var writes: [(address: UInt8, register: UInt8, value: UInt8)] = []
    init(_ inner: I2CBus) { self.inner = inner }
    var path: String { inner.path }
    func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 { try inner.readByte(address: address, register: register) }
    func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        try inner.writeByte(address: address, register: register, value: value)
        writes.append((address, register, value))
    }
    func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        try inner.readBlock(address: address, register: register, count: count)
    }
    func probe(address: UInt8) throws(I2CError) -> I2CProbeResult { try inner.probe(address: address) }
}
