import BearingModel
import BearingWire
import OpenCombine
#if canImport(Glibc)
import Glibc
#endif

/// Turns operator chains into OpenCombine operators over `Report`s of any class. Generic over the
/// scheduler, so tests drive the time-based operators with virtual time and the agent with its pipeline
/// queue. Every operator here is pure: what it keeps depends only on the values and the scheduler's clock.
public enum Pipeline {
    /// Applies `chain` to `upstream`, in order. Operators that do not apply to `stream` were refused when
    /// the chain was read (`OperatorSpec.validate`); here they pass values through unchanged.
    public static func build<S: Scheduler>(
        _ upstream: AnyPublisher<Report, Never>, _ chain: [OperatorSpec], for stream: StreamClass, scheduler: S
    ) -> AnyPublisher<Report, Never> {
        var p = upstream
        for spec in chain where spec.applies(to: stream) {
            p = apply(spec, to: p, scheduler: scheduler)
        }
        return p
    }

    static func apply<S: Scheduler>(_ spec: OperatorSpec, to p: AnyPublisher<Report, Never>, scheduler: S) -> AnyPublisher<Report, Never> {
        switch spec {
        case .minMode(let mode):
            return p.filter { ($0.fix?.mode ?? mode) >= mode }.eraseToAnyPublisher()
        case .maxError(let meters):
            return p.filter { ($0.fix?.horizontalError ?? 0) <= meters }.eraseToAnyPublisher()
        case .dedupe(.all):
            return p.removeDuplicates { $0.sameValue(as: $1) }.eraseToAnyPublisher()
        case .dedupe(.time):
            // Values without a time (gpsd 3.22's ATT has none) are never taken for repeats.
            return p.removeDuplicates { $0.time != nil && $0.time == $1.time }.eraseToAnyPublisher()
        case .dedupe(.position):
            return p.removeDuplicates {
                guard let a = $0.fix, let b = $1.fix else { return false }
                return a.mode == b.mode && a.latitude == b.latitude && a.longitude == b.longitude && a.altHAE == b.altHAE
            }.eraseToAnyPublisher()
        case .throttle(let interval, let latest):
            return ReportThrottle(upstream: p, interval: .seconds(interval), scheduler: scheduler, latest: latest).eraseToAnyPublisher()
        case .sample(let every):
            return p.scan((count: -1, report: Report?.none)) { s, r in ((s.count + 1) % every, r) }
                .compactMap { $0.count == 0 ? $0.report : nil }
                .eraseToAnyPublisher()
        case .debounce(let interval):
            return p.debounce(for: .seconds(interval), scheduler: scheduler).eraseToAnyPublisher()
        case .deadband(let d):
            let heartbeat = d.heartbeat.map { S.SchedulerTimeType.Stride.seconds($0) }
            return p.map { ($0, scheduler.now) }
                .scan(DeadbandState<S.SchedulerTimeType>()) { s, input in s.next(input.0, at: input.1, d.measure, heartbeat: heartbeat) }
                .compactMap(\.emitted)
                .eraseToAnyPublisher()
        case .fields(let names):
            return p.map { $0.keeping(names) }.eraseToAnyPublisher()
        case .smooth(let n):
            // A fused attitude (one with a quaternion) passes unchanged: the attitude filter already is its
            // low-pass (inclination over `tauAcc`, heading over `tauMag`, seconds), and averaging roll,
            // pitch and heading as separate angles would tear the rotation apart.
            return ReportSmooth(upstream: p, window: n).eraseToAnyPublisher()
        }
    }
}

/// What a `deadband` remembers: the last value it let through and when.
struct DeadbandState<Time: Strideable> {
    var last: Report?
    var lastTime: Time?
    var emitted: Report?

    func next(_ r: Report, at now: Time, _ measure: OperatorSpec.Deadband.Measure, heartbeat: Time.Stride?) -> Self {
        var s = self
        s.emitted = nil
        let pass: Bool
        if let last, let lastTime {
            if let heartbeat, lastTime.distance(to: now) >= heartbeat {
                pass = true
            } else {
                pass = Self.moved(from: last, to: r, measure)
            }
        } else {
            pass = true
        }
        if pass {
            s.last = r
            s.lastTime = now
            s.emitted = r
        }
        return s
    }

    /// Whether `r` moved far enough from `last`. A value missing the measured quantity (no position, no
    /// heading) passes when the last one had it, so a lost fix is never hidden; two values both without
    /// it are the same.
    static func moved(from last: Report, to r: Report, _ measure: OperatorSpec.Deadband.Measure) -> Bool {
        switch measure {
        case .meters(let m):
            let a = last.fix, b = r.fix
            guard let la = a?.latitude, let oa = a?.longitude, let lb = b?.latitude, let ob = b?.longitude else {
                return (a?.hasPosition ?? false) != (b?.hasPosition ?? false)
            }
            return Geodesy.distance(la, oa, lb, ob) >= m
        case .degrees(let g):
            guard let a = last.direction, let b = r.direction else { return (last.direction == nil) != (r.direction == nil) }
            var d = abs(a - b).truncatingRemainder(dividingBy: 360)
            if d > 180 { d = 360 - d }
            return d >= g
        case .field(let f, let change):
            guard let a = last.number(f), let b = r.number(f) else { return (last.number(f) == nil) != (r.number(f) == nil) }
            return abs(a - b) >= change
        }
    }
}
