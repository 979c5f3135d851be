import OpenCombine

/// Turns operator chains into OpenCombine operators. Generic over the scheduler, so tests drive
/// `throttle` with virtual time and the agent with a dispatch queue.
public enum Pipeline {
    /// Applies a chain to a TPV stream, in the order given.
    public static func fixes<S: Scheduler>(
        _ upstream: AnyPublisher<GPSFix, Never>, _ chain: [OperatorSpec], scheduler: S
    ) -> AnyPublisher<GPSFix, Never> {
        var p = upstream
        for spec in chain {
            switch spec {
            case .minMode(let mode):
                p = p.filter { $0.mode >= mode }.eraseToAnyPublisher()
            case .maxError(let meters):
                p = p.filter { ($0.horizontalError ?? 0) <= meters }.eraseToAnyPublisher()
            case .dedupe(.all):
                p = p.removeDuplicates().eraseToAnyPublisher()
            case .dedupe(.time):
                p = p.removeDuplicates { $0.time == $1.time }.eraseToAnyPublisher()
            case .dedupe(.position):
                p = p.removeDuplicates {
                    $0.mode == $1.mode && $0.latitude == $1.latitude && $0.longitude == $1.longitude && $0.altHAE == $1.altHAE
                }.eraseToAnyPublisher()
            case .throttle(let interval, let latest):
                p = p.throttle(for: .seconds(interval), scheduler: scheduler, latest: latest).eraseToAnyPublisher()
            case .smooth:
                continue // refused for TPV when the config is read (`appliesToTPV`)
            }
        }
        return p
    }

    /// Applies a chain to an ATT (compass) stream; operators that do not apply to it are refused.
    public static func attitudes<S: Scheduler>(
        _ upstream: AnyPublisher<Attitude, Never>, _ chain: [OperatorSpec], scheduler: S
    ) throws(OperatorSpecError) -> AnyPublisher<Attitude, Never> {
        var p = upstream
        for spec in chain {
            switch spec {
            case .smooth(let n):
                p = p.scan(AttitudeSmoother(window: n)) { s, a in var s = s; s.add(a); return s }
                    .compactMap(\.smoothed).eraseToAnyPublisher()
            case .dedupe(.time):
                p = p.removeDuplicates { $0.time == $1.time }.eraseToAnyPublisher()
            case .throttle(let interval, let latest):
                p = p.throttle(for: .seconds(interval), scheduler: scheduler, latest: latest).eraseToAnyPublisher()
            case .minMode, .maxError, .dedupe:
                throw OperatorSpecError("operator \(spec.json) does not apply to ATT; allowed: smooth, throttle, dedupe (key time)")
            }
        }
        return p
    }

    /// Applies a chain to a SKY stream; operators that only make sense for fixes are refused.
    public static func skies<S: Scheduler>(
        _ upstream: AnyPublisher<SkyView, Never>, _ chain: [OperatorSpec], scheduler: S
    ) throws(OperatorSpecError) -> AnyPublisher<SkyView, Never> {
        var p = upstream
        for spec in chain {
            switch spec {
            case .dedupe(.all):
                p = p.removeDuplicates().eraseToAnyPublisher()
            case .dedupe(.time):
                p = p.removeDuplicates { $0.time == $1.time }.eraseToAnyPublisher()
            case .throttle(let interval, let latest):
                p = p.throttle(for: .seconds(interval), scheduler: scheduler, latest: latest).eraseToAnyPublisher()
            case .minMode, .maxError, .dedupe(.position), .smooth:
                throw OperatorSpecError("operator \(spec.json) does not apply to SKY")
            }
        }
        return p
    }
}
