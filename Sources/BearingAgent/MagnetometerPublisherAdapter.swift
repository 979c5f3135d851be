import BearingCore
import BearingSensors
import Foundation
@preconcurrency import OpenCombine

/// Implements the magnetometer reader's delegate protocol and forwards each call into a subject. The state
/// publisher replays the current state to each new subscriber.
public final class MagnetometerPublisherAdapter: MagnetometerReaderDelegate, @unchecked Sendable {
    private let sampleSubject = PassthroughSubject<MagneticSample, Never>()
    private let stateSubject: CurrentValueSubject<ConnectionState, Never>
    private let failureSubject = PassthroughSubject<MagnetometerError, Never>()

    public init(initialState: ConnectionState = .disconnected(.stopped)) {
        stateSubject = CurrentValueSubject(initialState)
    }

    public var samples: AnyPublisher<MagneticSample, Never> { sampleSubject.eraseToAnyPublisher() }
    /// Replays the current state on subscription, then every change.
    public var states: AnyPublisher<ConnectionState, Never> { stateSubject.eraseToAnyPublisher() }
    public var failures: AnyPublisher<MagnetometerError, Never> { failureSubject.eraseToAnyPublisher() }

    public func magnetometerReader(_ reader: MagnetometerReader, didReceive sample: MagneticSample) { sampleSubject.send(sample) }
    public func magnetometerReader(_ reader: MagnetometerReader, didChangeState state: ConnectionState) { stateSubject.send(state) }
    public func magnetometerReader(_ reader: MagnetometerReader, didFail error: MagnetometerError) { failureSubject.send(error) }
}

/// The declination to apply, kept current from GPS fixes (WMM at the fix's position and date), else from
/// the configured fallback position at today's date. Recomputed only when the position moves by more
/// than about 1 km or the date by more than a day: declination changes far more slowly than that.
public final class DeclinationTracker: @unchecked Sendable {
    private let model: WorldMagneticModel
    private let fallback: Vector3?
    private let lock = NSLock()
    private var current: (value: Double, source: DeclinationSource, lat: Double, lon: Double, year: Double)?

    public init(model: WorldMagneticModel = .wmm2025, fallback: Vector3?) {
        self.model = model
        self.fallback = fallback
    }

    /// Takes a fix; returns the new declination when it changed the value in use.
    @discardableResult
    public func update(with fix: GPSFix) -> Double? {
        guard fix.mode >= .twoD, let lat = fix.latitude, let lon = fix.longitude, let time = fix.time else { return nil }
        let year = WorldMagneticModel.decimalYear(unixSeconds: time.unixTime)
        lock.lock(); defer { lock.unlock() }
        if let c = current, c.source == .fix, abs(c.lat - lat) < 0.01, abs(c.lon - lon) < 0.01, abs(c.year - year) < 1 / 365 {
            return nil
        }
        let heightKm = (fix.altHAE ?? 0) / 1000
        let d = model.field(latitude: lat, longitude: lon, heightKm: heightKm, year: year).declination
        current = (d, .fix, lat, lon, year)
        return d
    }

    /// The declination for a sample taken at `time`.
    public func declination(at time: GPSTimestamp) -> (value: Double, source: DeclinationSource)? {
        lock.lock(); defer { lock.unlock() }
        if let c = current { return (c.value, c.source) }
        guard let p = fallback else { return nil }
        let year = WorldMagneticModel.decimalYear(unixSeconds: time.unixTime)
        let d = model.field(latitude: p.x, longitude: p.y, heightKm: p.z, year: year).declination
        current = (d, .fallback, p.x, p.y, year)
        return (d, .fallback)
    }
}
