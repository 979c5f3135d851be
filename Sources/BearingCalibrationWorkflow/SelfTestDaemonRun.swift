import BearingClient
import BearingModel
import BearingPOSIX
import BearingSelfTest
import BearingWire

/// `bearing selftest` while the daemon runs: it reads the chips, so the test asks it instead of opening them
/// again (two readers of one chip take each other's samples). HEALTH gives each sensor's state, endpoint, I2C
/// failures and saturated samples since it started; the raw field (MAG) and the fused ATT's accelerometer and
/// gyroscope (board axes, turned back into the IMU's chip axes through `orientation`) are read for `seconds`, and
/// judged as the direct test judges its own reads. The configuration is not read back (the daemon owns the chip),
/// and a position comes from the daemon's TPV when none is given.
public struct SelfTestDaemonRun {
    public var path: String
    public var targets: [SelfTestRun.Target]
    public var seconds = 10.0
    public var moves = false
    public var position: (latitude: Double, longitude: Double)?
    public var now: Double
    public var say: (String) -> Void = { _ in }
    public var progress: (Double) -> Void = { _ in }

    public init(path: String, targets: [SelfTestRun.Target], now: Double) {
        self.path = path
        self.targets = targets
        self.now = now
    }

    public func run() throws(SelfTestSession.Refused) -> [SelfTestLine] {
        let client = BearingClient(.unix(path))
        func refuse(_ e: BearingClientError) -> SelfTestSession.Refused { SelfTestSession.Refused(description: "the bearing daemon at \(path): \(e)") }
        do { try client.connect() } catch { throw refuse(error) }
        defer { client.disconnect() }
        let health: WireMessage
        do { health = try client.request(.health, expecting: "HEALTH") } catch { throw refuse(error) }
        var lines: [SelfTestLine] = []
        var runs: [SensorRun.Kind: SensorRun] = [:]
        let missedBefore = Self.missedReads(health)
        for target in targets {
            let name = target.kind.rawValue
            guard case .list(let sources)? = health["sources"], let s = sources.first(where: { $0["source"]?.string == name }) else {
                lines.append(SelfTestLine(name, "chip", measured: "the daemon reads no \(name)", expected: "configured", .fail,
                                          fix: "the daemon's config has no \(name) section: compare /etc/bearing/bearing.yaml with the board"))
                continue
            }
            let state = s["state"]?.string ?? "?", endpoint = s["endpoint"]?.string ?? "?"
            guard state == "connected" else {
                lines.append(SelfTestLine(name, "chip", measured: "\(state) at \(endpoint)" + (s["reason"]?.string.map { ": \($0)" } ?? ""),
                                          expected: "connected", .fail, fix: "stop the daemon and run the test again for the details (sudo systemctl stop bearing)"))
                continue
            }
            var run = SensorRun(kind: target.kind, chip: target.chip ?? "", display: target.chip ?? name, endpoint: endpoint, configuredRate: target.rate)
            run.readbackUnavailable = "the daemon owns the chip"
            run.saturatedSamples = Int(s["saturated"]?.number ?? 0)
            let failures = Int(s["failures"]?.number ?? 0)
            lines.append(SelfTestLine(name, "i2c errors", measured: "\(failures) since the daemon started", expected: "none", failures == 0 ? .pass : .warn,
                                      fix: failures == 0 ? nil : "the daemon's reads failed \(failures) times: see `journalctl -u bearing`; shorten the wires, check pull-ups and ground"))
            runs[target.kind] = run
        }
        guard !runs.isEmpty else { return lines }
        let keep = ["time", "device", "acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z", "quat"]
        do throws(BearingClientError) {
            try client.send(.watch(WatchChange(enable: true, json: true, classes: .some(["ATT", "MAG", "TPV"]), pipelines: [.att: [.fields(keep)]])))
        } catch { throw refuse(error) }
        let imuOrientation = targets.first { $0.kind == .imu }?.orientation ?? .identity
        var fixPosition: (latitude: Double, longitude: Double)?
        var gyro: [(Double, Vector3)] = []
        var lost = 0
        let start = Syscall.monotonicSeconds()
        say("keep the board still for \(Int(seconds)) s (reading the daemon's samples)")
        while Syscall.monotonicSeconds() - start < seconds {
            let next: WireMessage?
            do { next = try client.next(timeout: 0.25) } catch { throw refuse(error) }
            progress(min(1, (Syscall.monotonicSeconds() - start) / seconds))
            if let m = next, m.className == "OVERFLOW" { lost += Int(m.number("dropped") ?? 0) }
            guard let m = next, let t = m.time?.unixTime else { continue }
            if let s = m.magneticSample, runs[.magnetometer] != nil {
                runs[.magnetometer]!.field.append(t, s.field)
                if !s.chip.isEmpty { runs[.magnetometer]!.chip = s.chip; runs[.magnetometer]!.display = s.chip }
            } else if m.className == "ATT", m["quat"] != nil, runs[.imu] != nil, let x = m.number("acc_x"), let y = m.number("acc_y"), let z = m.number("acc_z") {
                let back = imuOrientation.matrix.transposed
                runs[.imu]!.acceleration.append(t, back * Vector3(x, y, z))
                if let gx = m.number("gyro_x"), let gy = m.number("gyro_y"), let gz = m.number("gyro_z") {
                    let w = back * (Vector3(gx, gy, gz) * (.pi / 180))
                    runs[.imu]!.angularRate.append(t, w)
                    gyro.append((t, w))
                }
            } else if let fix = m.fix, fix.mode >= .twoD, let lat = fix.latitude, let lon = fix.longitude {
                fixPosition = (lat, lon)
            }
        }
        // Samples the chip made and this test never saw are not the chip's rate or noise: reads the daemon's reader
        // missed by running late (a busy CPU), and lines this test lost from the socket by reading too slowly.
        let elapsed = Syscall.monotonicSeconds() - start
        let missedAfter: [String: Int]
        do { missedAfter = Self.missedReads(try client.request(.health, expecting: "HEALTH")) } catch { throw refuse(error) }
        for kind in Array(runs.keys) {
            let missed = (missedAfter[kind.rawValue] ?? 0) - (missedBefore[kind.rawValue] ?? 0)
            var why: [String] = []
            if Double(missed) > 0.01 * runs[kind]!.configuredRate * elapsed {
                why.append("the daemon's reader missed \(missed) reads during the test (it ran late: the CPU is busy)")
            }
            if lost > 0 { why.append("this test lost \(lost) lines from the daemon's socket (it read them too slowly)") }
            if !why.isEmpty { runs[kind]!.gaps = why.joined(separator: ", and ") }
        }
        for kind in [SensorRun.Kind.magnetometer, .imu] {
            guard let run = runs[kind] else { continue }
            // The chip's name as the daemon has it (MAG names the magnetometer's; the IMU's is the config's, `auto` when found).
            lines += SelfTestJudge.judge(run).filter { $0.check != "i2c errors" }
        }
        if let field = runs[.magnetometer]?.field, !field.values.isEmpty, let p = position ?? fixPosition,
           let magOrientation = targets.first(where: { $0.kind == .magnetometer })?.orientation {
            let down = runs[.imu].flatMap { $0.acceleration.values.isEmpty ? nil : imuOrientation.toBoard($0.acceleration.mean) * -1 }
            lines += SelfTestRun.earthLines(field: magOrientation.toBoard(field.mean), down: down, position: p, now: now)
        }
        lines = SelfTestJudge.judgedTogether(lines)
        if moves, runs[.imu] != nil {
            lines.append(SelfTestLine("imu", "moves", measured: "not with the daemon running", expected: "-", .info,
                                      fix: "stop the daemon (sudo systemctl stop bearing) for the guided moves"))
        }
        return lines
    }

    /// HEALTH's `missed` for each sensor source: reads its reader skipped by running late, since the daemon started.
    static func missedReads(_ health: WireMessage) -> [String: Int] {
        guard case .list(let sources)? = health["sources"] else { return [:] }
        var out: [String: Int] = [:]
        for s in sources {
            if let name = s["source"]?.string, let n = s["missed"]?.number { out[name] = Int(n) }
        }
        return out
    }
}
