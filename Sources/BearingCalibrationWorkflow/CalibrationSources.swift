import BearingClient
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingModel
import BearingWire
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Raw samples gathered for a calibration, from whichever source, plus what came with them.
public final class SampleCollector: @unchecked Sendable { // `lock` guards the samples and status
    private let lock = ConditionLock()
    private var samples: [Vector3] = []
    private var chip: String?
    private var device: String?
    private var position: Vector3?
    private var status: String = "waiting for samples"
    private var failure: String?
    private let recorder: SampleRecorder?

    public init(recorder: SampleRecorder?) { self.recorder = recorder }

    public func add(_ field: Vector3, time: GPSTimestamp, chip: String, device: String, overflow: Bool) {
        guard !overflow, field.isFinite else { return }
        lock.lock()
        samples.append(field)
        self.chip = chip
        self.device = device
        status = "reading \(chip) at \(device)"
        lock.unlock()
        recorder?.append(field, time: time, chip: chip, device: device)
    }

    public func setPosition(_ p: Vector3) { lock.lock(); position = p; lock.unlock() }
    public func setStatus(_ s: String) { lock.lock(); status = s; lock.unlock() }
    public func fail(_ s: String) { lock.lock(); failure = s; lock.unlock() }

    public var snapshot: (samples: [Vector3], chip: String?, device: String?, position: Vector3?, status: String, failure: String?) {
        lock.lock(); defer { lock.unlock() }
        return (samples, chip, device, position, status, failure)
    }
}

/// `--record FILE`: raw samples as CSV under a `# bearing-samples` line naming the chip — the magnetometer's
/// as `time,x,y,z` (µT, chip axes), the IMU's as `bearing attitude` reads them; each line written whole by
/// one `write(2)`.
public final class SampleRecorder: @unchecked Sendable { // `lock` guards the header, counts and failure
    public let path: String
    private let fd: Int32
    private var wroteHeader = false
    private let lock = ConditionLock()
    private var written = 0
    /// The first write failure (a full disk, say); later samples are not recorded.
    public private(set) var failure: String?

    public init(path: String) throws(SystemError) {
        self.path = path
        fd = try Syscall.check("open", path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    }

    /// A magnetometer sample.
    public func append(_ v: Vector3, time: GPSTimestamp, chip: String, device: String) {
        append(String(printf: "%.3f,%.4f,%.4f,%.4f\n", time.unixTime, v.x, v.y, v.z),
               header: "\(SampleFile.recordingMarker) chip=\(chip) device=\(device) units=\(CalibrationRecord.microtesla)\ntime,x,y,z\n")
    }

    /// An accelerometer (+ gyroscope) sample, in the columns of `IMUSampleFile`.
    public func append(_ s: InertialSample) {
        let a = s.acceleration
        var line = String(printf: "%.6f,%.5f,%.5f,%.5f", s.time.unixTime, a.x, a.y, a.z)
        if let w = s.angularRate { line += String(printf: ",%.6f,%.6f,%.6f", w.x, w.y, w.z) }
        let columns = [IMUSampleFile.timeColumn] + IMUSampleFile.accelerometerColumns + (s.angularRate == nil ? [] : IMUSampleFile.gyroscopeColumns)
        append(line + "\n", header: "\(SampleFile.recordingMarker) chip=\(s.chip) device=\(s.device)\n\(columns.joined(separator: ","))\n")
    }

    /// Appends one line; the first is preceded by `header`.
    public func append(_ line: String, header: @autoclosure () -> String) {
        lock.lock(); defer { lock.unlock() }
        var text = ""
        if !wroteHeader {
            text = header()
            wroteHeader = true
        }
        text += line
        guard failure == nil else { return }
        var bytes = Array(text.utf8)
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
        if n == bytes.count {
            written += 1
        } else {
            failure = "\(path): " + (n < 0 ? SystemError("write", nil).message : "short write") + " after \(written) samples; the rest were not recorded"
        }
    }

    public func close() {
        lock.lock(); defer { lock.unlock() }
        fsync(fd)
        Glibc.close(fd)
    }
}

/// Raw samples from the running daemon: `?WATCH` for MAG (and TPV, for the position) on its socket.
public final class DaemonSampleSource: @unchecked Sendable { // `client` is used by the reading thread only after start()
    public let path: String
    private let client: BearingClient

    /// Connects; throws when no daemon is listening (then the caller reads the sensor itself).
    public init(path: String) throws(BearingClientError) {
        self.path = path
        client = BearingClient(.unix(path))
        try client.connect()
    }

    public func start(into collector: SampleCollector) {
        do throws(BearingClientError) {
            try client.send(.watch(WatchChange(enable: true, json: true, classes: .some(["MAG", "TPV", "STATE"]))))
        } catch {
            collector.fail(error.description)
            return
        }
        collector.setStatus("connected to the bearing daemon at \(path); waiting for MAG samples")
        Syscall.startThread(name: "bearing.calibrate.socket") { [self] in readLoop(collector) }
    }

    private func readLoop(_ collector: SampleCollector) {
        while true {
            let m: WireMessage
            do throws(BearingClientError) {
                guard let next = try client.next() else { continue }
                m = next
            } catch {
                collector.fail("the bearing daemon closed the connection at \(path)")
                return
            }
            if let s = m.magneticSample {
                collector.add(s.field, time: s.time, chip: s.chip.isEmpty ? "unknown" : s.chip,
                              device: s.device.isEmpty ? path : s.device, overflow: s.overflow)
            } else if let fix = m.fix {
                if fix.mode >= .twoD, let lat = fix.latitude, let lon = fix.longitude {
                    collector.setPosition(Vector3(lat, lon, (fix.altHAE ?? 0) / 1000))
                }
            } else if let st = m.state {
                if st.source == "magnetometer", st.state != "connected" {
                    collector.setStatus("the daemon's magnetometer is \(st.state)" + (st.message.map { ": \($0)" } ?? ""))
                }
            } else if let message = m.errorMessage {
                collector.fail("the bearing daemon replied: \(message)")
            }
        }
    }

    public func stop() { client.disconnect() }
}

/// Raw samples straight from the sensor (no daemon running): the daemon's own reader on its thread.
public final class SensorSampleSource: SensorReaderDelegate, @unchecked Sendable { // immutable after init; callbacks come on the reader thread
    private let reader: MagnetometerReader
    private let collector: SampleCollector

    public init(configuration: MagnetometerReader.Configuration, collector: SampleCollector) {
        self.collector = collector
        reader = MagnetometerReader(configuration: configuration, openBus: BusOpener.open, now: GPSTimestamp.now)
        reader.delegate = self
    }

    public func start() {
        collector.setStatus("looking for the magnetometer on \(reader.configuration.bus)")
        reader.start()
    }

    public func stop() { reader.stop() }

    public func sensorReader(didReceive sample: MagneticSample) {
        collector.add(sample.field, time: sample.time, chip: sample.chip, device: sample.device, overflow: sample.overflow)
    }

    public func sensorReader(didChangeState state: ConnectionState) {
        if case .disconnected(let reason, _) = state { collector.setStatus("magnetometer unavailable: \(reason)") }
    }

    public func sensorReader(didFail error: SensorError) {
        collector.setStatus("magnetometer: \(error.description)")
    }
}
