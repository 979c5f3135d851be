import BearingCalibration
import BearingClient
import BearingModel
import BearingPOSIX
import BearingWire
#if canImport(Glibc)
import Glibc
#endif

/// Where `bearing swing` takes its attitudes and fixes from: a data log, or the running daemon.
public enum SwingSources {
    /// ATT and TPV lines of a data log (other lines, and lines that are not JSON, are passed over).
    public static func read(log path: String, into collector: inout SwingCollector) throws {
        let text: String
        do { text = try AtomicFile.readText(path) } catch { throw CalibrateError("cannot read \(path): \(error)") }
        for line in text.split(separator: "\n") {
            guard let m = try? WireMessage(line: String(line)) else { continue }
            take(m, into: &collector)
        }
    }

    /// Every fused ATT (no smoothing, no throttle) and TPV from the daemon until the swing is complete or
    /// `duration` has passed; progress on standard error.
    public static func collect(socketPath: String, duration: Double, into collector: inout SwingCollector) throws {
        let client = BearingClient(.unix(socketPath))
        let change = WatchChange(enable: true, json: true, classes: .some(["ATT", "TPV"]), pipelines: [.att: [], .tpv: []])
        let start = Syscall.monotonicSeconds()
        var told = -Double.infinity
        let live = isatty(2) == 1
        var refusal: String?
        do throws(BearingClientError) {
            try client.connect()
            try client.send(.watch(change))
            while refusal == nil, !collector.isComplete, Syscall.monotonicSeconds() - start < duration {
                if let m = try client.next(timeout: 1) {
                    refusal = m.errorMessage
                    take(m, into: &collector)
                }
                let now = Syscall.monotonicSeconds()
                if now - told >= (live ? 1 : 10) {
                    told = now
                    Syscall.printToStandardError(live ? "\r\u{1B}[K\(collector.progress)" : "\(collector.progress)\n")
                }
            }
        } catch {
            throw CalibrateError("swing: \(error) (is the daemon running at \(socketPath)?)")
        }
        Syscall.printToStandardError("\(live ? "\r\u{1B}[K" : "")\(collector.progress)\n")
        if let refusal { throw CalibrateError("swing: the agent replied: \(refusal)") }
    }

    /// One object into the swing: ATT's compass heading (mheading less the deviation it carries), rate of turn
    /// (°/min) and variation (heading − mheading); TPV's speed, track, eph and eps. Only Bearing's own compass's
    /// ATT (its device `i2c:…`): a GNSS compass's, relayed from gpsd, is another instrument.
    public static func take(_ m: WireMessage, into collector: inout SwingCollector) {
        switch m.className {
        case "ATT":
            guard m.string("device")?.hasPrefix("i2c:") == true, let t = m.time?.unixTime, let mheading = m.number("mheading"),
                  let rot = m.number("rot") else { return }
            let variation = m.number("heading").map { SwingSolver.wrap180($0 - mheading) }
            collector.attitude(time: t, compassHeading: mheading - (m.number("deviation") ?? 0), rateOfTurn: rot / 60, variation: variation)
        case "TPV":
            guard let f = m.fix, f.mode >= .twoD, let t = f.time?.unixTime, let speed = f.speed, let track = f.track else { return }
            collector.epoch(time: t, speed: speed, track: track, eph: f.eph, eps: f.eps)
        default:
            return
        }
    }

}
