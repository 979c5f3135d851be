import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value a low-pass filter can smooth: something that adds and scales like a vector.
public protocol LowPassSignal: Sendable {
    static var zero: Self { get }
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, s: Double) -> Self
}

extension Double: LowPassSignal {}
extension Vector3: LowPassSignal {}

/// A second-order Butterworth low-pass filter with time constant τ (cut-off frequency √2/(2π·τ), VQF's
/// convention), for samples at any, even irregular, intervals.
///
/// VQF discretises the filter once for a fixed sampling time (bilinear transform). Here the continuous filter
/// ÿ = ω²(u − y) − √2·ω·ẏ, ω = √2/τ, is stepped exactly over each interval with the input held (zero-order
/// hold), keeping y and ẏ as the state: a change of interval needs no state conversion, and at a constant
/// rate the response is the same as VQF's to well within a sample at the rates of an IMU. The poles are
/// (−1 ± i)/τ, so for the error e = y − u over an interval dt, with θ = dt/τ:
///
///     (e, ẏ)(t + dt) = e^(−θ) · [[cos θ + sin θ, τ·sin θ], [−2·sin θ / τ, cos θ − sin θ]] · (e, ẏ)(t)
///
/// As in VQF, the filter starts from the mean of its first samples: until τ seconds have been seen it
/// outputs their running mean, then it starts at rest on that mean, so one odd first sample does not linger.
public struct ButterworthLowPass<Value: LowPassSignal>: Sendable {
    public private(set) var tau: Double
    /// The latest output.
    public private(set) var output: Value = .zero
    private var rate: Value = .zero
    private var started = false
    private var sum: Value = .zero
    private var count = 0
    private var elapsed = 0.0
    private var cachedInterval = Double.nan
    private var phi = (0.0, 0.0, 0.0, 0.0)

    /// `tau` ≤ 0 makes the filter pass its input through.
    public init(tau: Double) {
        self.tau = tau
    }

    /// A new time constant from the next step on; the output and its rate carry over (no jump).
    public mutating func retune(tau: Double) {
        guard tau != self.tau else { return }
        self.tau = tau
        cachedInterval = .nan
    }

    /// Feeds `x`, the input over the `dt` seconds since the previous sample, and returns the new output.
    /// An interval that is not positive and finite leaves the state as it is and returns the last output.
    @discardableResult
    public mutating func step(_ x: Value, dt: Double) -> Value {
        guard tau > 0 else { output = x; return x }
        guard dt > 0, dt.isFinite else { return output }
        if !started {
            sum = sum + x
            count += 1
            elapsed += dt
            output = sum * (1 / Double(count))
            if elapsed >= tau {
                started = true
                rate = .zero
            }
            return output
        }
        if dt != cachedInterval { prepare(dt) }
        let e = output - x
        let newError = e * phi.0 + rate * phi.1
        rate = e * phi.2 + rate * phi.3
        output = x + newError
        return output
    }

    private mutating func prepare(_ dt: Double) {
        let theta = dt / tau
        let decay = exp(-theta)
        let c = cos(theta), s = sin(theta)
        phi = (decay * (c + s), decay * tau * s, -decay * 2 * s / tau, decay * (c - s))
        cachedInterval = dt
    }

    /// Back to the state before the first sample.
    public mutating func reset() {
        self = ButterworthLowPass(tau: tau)
    }
}
