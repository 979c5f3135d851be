import BearingCalibration
import BearingModel
import BearingWire

/// A GNSS swing the daemon runs for a client (`?SWING={"action":"start"};`, the web page's Start): the same
/// `SwingCollector` `bearing swing` feeds from the socket, fed here from the hub's unchained ATT (the compass's)
/// and TPV on the pipeline queue, and on `stop` the same solver and the same deviation file. Pure: the agent
/// feeds it and writes the file.
struct DaemonSwing {
    var collector = SwingCollector()
    let started: GPSTimestamp

    init(started: GPSTimestamp) { self.started = started }

    /// One of the compass's attitudes: its compass heading (magnetic less the deviation it carries), rate of
    /// turn and variation, as `SwingSources.take` reads them from an ATT line.
    mutating func take(_ a: Attitude) {
        guard let rot = a.rateOfTurn else { return }
        let variation = a.heading.map { SwingSolver.wrap180($0 - a.magneticHeading) }
        collector.attitude(time: a.time.unixTime, compassHeading: a.magneticHeading - (a.deviation ?? 0), rateOfTurn: rot / 60, variation: variation)
    }

    /// One of gpsd's fixes, with speed and course.
    mutating func take(_ f: GPSFix) {
        guard f.mode >= .twoD, let t = f.time?.unixTime, let speed = f.speed, let track = f.track else { return }
        collector.epoch(time: t, speed: speed, track: track, eph: f.eph, eps: f.eps)
    }
}

extension WireEncoding {
    /// `SWING`: `state` (`idle`, `collecting`, `applied`, `refused`), and while collecting or after it `started`,
    /// `epochs`, `sectors` (of `sectors_needed`), `turned` (degrees, of 720), `complete` and `progress` (what to
    /// do next); once applied the curve (`coefficients`, `current` when solved, `residual`) and the `file`
    /// written; when refused, `error`.
    static func swing(state: String, _ swing: DaemonSwing?, result: SwingResult? = nil, file: String? = nil, error: String? = nil) -> String {
        var w = JSONObjectWriter(class: "SWING")
        w.string("state", state)
        if let s = swing {
            let c = s.collector
            w.time("started", s.started)
            w.int("epochs", c.samples.count)
            w.int("sectors", c.sectorsCovered)
            w.int("sectors_needed", c.limits.sectors)
            w.fixed("turned", c.turned, 0)
            w.bool("complete", c.isComplete)
            w.string("progress", c.progress)
        }
        if let r = result {
            w.raw("coefficients", "[" + r.curve.coefficients.map { String(printf: "%.3f", $0) }.joined(separator: ",") + "]")
            if r.currentSolved { w.raw("current", "[" + String(printf: "%.3f", r.current.east) + "," + String(printf: "%.3f", r.current.north) + "]") }
            w.fixed("residual", r.deviationResidual, 2)
        }
        w.string("file", file)
        w.string("error", error)
        return w.finished()
    }
}
