import BearingClient
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingModel
import BearingWire
import BearingPOSIX
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Raw samples gathered for a calibration, from whichever source, plus what came with them.
public final class SampleCollector: Sendable {
    private struct State {
        var samples: [Vector3] = []
        var chip: String?
        var device: String?
        var position: Vector3?
        var status: String = "waiting for samples"
        var failure: String?
    }
    private let state = Mutex(State())
    private let recorder: SampleRecorder?

    public init(recorder: SampleRecorder?) { self.recorder = recorder }

    public func add(_ field: Vector3, time: GPSTimestamp, chip: String, device: String, overflow: Bool) {
        guard !overflow, field.isFinite else { return }
        state.withLock {
            $0.samples.append(field)
            $0.chip = chip
            $0.device = device
            $0.status = "reading \(chip) at \(device)"
        }
        recorder?.append(field, time: time, chip: chip, device: device)
    }

    public func setPosition(_ p: Vector3) { state.withLock { $0.position = p } }
    public func setStatus(_ s: String) { state.withLock { $0.status = s } }
    public func fail(_ s: String) { state.withLock { $0.failure = s } }

    public var snapshot: (samples: [Vector3], chip: String?, device: String?, position: Vector3?, status: String, failure: String?) {
        state.withLock { ($0.samples, $0.chip, $0.device, $0.position, $0.status, $0.failure) }
    }
}

/// `--record FILE`: raw samples as CSV under a `# bearing-samples` line naming the chip — the magnetometer's
/// as `time,x,y,z` (µT, chip axes), the IMU's as `bearing attitude` reads them; each line written whole by
/// one `write(2)`.
public final class SampleRecorder: Sendable {
    public let path: String
    private let fd: Int32
    /// Whether the header is written, the lines written, and the first write failure; each line's write
    /// happens under the lock, so lines never interleave.
    private let state = Mutex((wroteHeader: false, written: 0, failure: String?.none))
    /// The first write failure (a full disk, say); later samples are not recorded.
    public var failure: String? { state.withLock { $0.failure } }

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
        state.withLock { s in
            var text = ""
            if !s.wroteHeader {
                text = header()
                s.wroteHeader = true
            }
            text += line
            guard s.failure == nil else { return }
            var bytes = Array(text.utf8)
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress, $0.count) }
            if n == bytes.count {
                s.written += 1
            } else {
                s.failure = "\(path): " + (n < 0 ? SystemError("write", nil).message : "short write") + " after \(s.written) samples; the rest were not recorded"
            }
        }
    }

    public func close() {
        state.withLock { _ in
            fsync(fd)
            Glibc.close(fd)
        }
    }
}

/// Raw samples from the running daemon: `?WATCH` for MAG (and TPV, for the position) on its socket.
/// Unchecked Sendable: `BearingClient` is not Sendable; once start() has begun its reading thread only that
/// thread uses it (stop() sets `phase`, and the thread disconnects).
public final class DaemonSampleSource: @unchecked Sendable {
    public let path: String
    private let client: BearingClient
    /// Whether the reading thread owns `client`, and whether it was asked to stop.
    private let phase = Mutex((reading: false, stopping: false))

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
        phase.withLock { $0.reading = true }
        Syscall.startThread(name: "bearing.calibrate.socket") { [self] in
            readLoop(collector)
            client.disconnect()
        }
    }

    /// Reads until the daemon goes or stop() is asked for (seen within 0.25 s).
    private func readLoop(_ collector: SampleCollector) {
        while !phase.withLock({ $0.stopping }) {
            let m: WireMessage
            do throws(BearingClientError) {
                guard let next = try client.next(timeout: 0.25) else { continue }
                m = next
            } catch {
                if !phase.withLock({ $0.stopping }) { collector.fail("the bearing daemon closed the connection at \(path)") }
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

    /// Ends the reading thread, which disconnects; without one, disconnects now.
    public func stop() {
        let reading = phase.withLock { p -> Bool in
            p.stopping = true
            return p.reading
        }
        if !reading { client.disconnect() }
    }
}

/// Raw samples straight from the sensor (no daemon running): the daemon's own reader on its thread.
public final class SensorSampleSource: SensorReaderDelegate, Sendable {
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
