import BearingModel

/// One line of `bearing selftest`'s table: what was checked on which sensor, what was measured against what
/// was expected, the verdict, and what to do about it.
public struct SelfTestLine: Equatable, Sendable {
    public enum Verdict: String, Sendable, Comparable {
        case pass, info, warn, fail
        public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
        var rank: Int { switch self { case .pass: 0; case .info: 1; case .warn: 2; case .fail: 3 } }
    }
    /// `magnetometer`, `accelerometer`, `gyroscope`, or the sensor as configured.
    public var sensor: String
    /// A short, stable name: `chip`, `rate`, `noise`, `stuck`, `saturated`, `orientation` …
    public var check: String
    public var measured: String
    public var expected: String
    public var verdict: Verdict
    /// What to do when it is not a pass (nil: nothing).
    public var fix: String?

    public init(_ sensor: String, _ check: String, measured: String, expected: String, _ verdict: Verdict, fix: String? = nil) {
        self.sensor = sensor
        self.check = check
        self.measured = measured
        self.expected = expected
        self.verdict = verdict
        self.fix = fix
    }
}

/// Samples of one vector quantity read at rest: their times (seconds, monotonic) and values (chip axes).
public struct RestSeries: Sendable {
    public var times: [Double]
    public var values: [Vector3]
    public init(times: [Double] = [], values: [Vector3] = []) {
        self.times = times
        self.values = values
    }
    public mutating func append(_ t: Double, _ v: Vector3) {
        times.append(t)
        values.append(v)
    }

    public var mean: Vector3 {
        guard !values.isEmpty else { return .zero }
        return values.reduce(.zero, +) * (1 / Double(values.count))
    }

    /// Standard deviation of each axis.
    public var deviation: Vector3 {
        guard values.count > 1 else { return .zero }
        let m = mean
        let s = values.reduce(Vector3.zero) { r, v in let d = v - m; return r + Vector3(d.x * d.x, d.y * d.y, d.z * d.z) }
        let n = Double(values.count - 1)
        return Vector3((s.x / n).squareRoot(), (s.y / n).squareRoot(), (s.z / n).squareRoot())
    }

    /// Samples a second over the whole series, and over its first and second halves.
    public var rate: Double? { Self.rate(times[...]) }
    public var halves: (first: Double, second: Double)? {
        guard times.count >= 8 else { return nil }
        let mid = times.count / 2
        guard let a = Self.rate(times[..<mid]), let b = Self.rate(times[mid...]) else { return nil }
        return (a, b)
    }
    static func rate(_ t: ArraySlice<Double>) -> Double? {
        guard t.count >= 2, let first = t.first, let last = t.last, last > first else { return nil }
        return Double(t.count - 1) / (last - first)
    }

    /// The overlapping Allan deviation of each axis at `tau` seconds (IEEE Std 952: σ²(τ) = ½⟨(ȳₖ₊₁ − ȳₖ)²⟩ over
    /// clusters of τ), from the series' mean rate; nil when the series is shorter than 3 τ.
    public func allanDeviation(tau: Double) -> Vector3? {
        guard let rate, values.count >= 4 else { return nil }
        let m = Int((tau * rate).rounded())
        guard m >= 1, values.count >= 3 * m else { return nil }
        // Cumulative sums: each cluster's mean in O(1).
        var sums = [Vector3.zero]
        sums.reserveCapacity(values.count + 1)
        for v in values { sums.append(sums[sums.count - 1] + v) }
        var acc = Vector3.zero
        var n = 0
        for k in 0...(values.count - 2 * m) {
            let a = (sums[k + m] - sums[k]) * (1 / Double(m)), b = (sums[k + 2 * m] - sums[k + m]) * (1 / Double(m))
            let d = b - a
            acc = acc + Vector3(d.x * d.x, d.y * d.y, d.z * d.z)
            n += 1
        }
        let f = 1 / (2 * Double(n))
        return Vector3((acc.x * f).squareRoot(), (acc.y * f).squareRoot(), (acc.z * f).squareRoot())
    }

    /// The axes (0 x, 1 y, 2 z) whose every value is the same, when another axis's values vary; all three when
    /// none varies.
    public var stuckAxes: [Int] {
        guard values.count >= 10, let first = values.first else { return [] }
        let still = (0..<3).filter { axis in values.allSatisfy { Self.component($0, axis) == Self.component(first, axis) } }
        return still
    }

    static func component(_ v: Vector3, _ axis: Int) -> Double { axis == 0 ? v.x : axis == 1 ? v.y : v.z }
}

/// What a datasheet says about a chip's noise and zero-rate level, to judge a board's chip against.
public struct DatasheetFigures: Sendable {
    /// Magnetometer: RMS noise per sample, µT.
    public var fieldNoise: Double?
    /// Gyroscope and accelerometer noise density (°/s/√Hz, µg/√Hz): the Allan deviation at 1 s of white noise.
    public var angularRateDensity: Double?
    public var accelerationDensity: Double?
    /// Gyroscope zero-rate level, °/s (typical, uncalibrated).
    public var zeroRate: Double?
    /// Where the figures come from.
    public var source: String

    /// The figures for the chips Bearing drives, by driver name (typical values, the datasheets named in `source`).
    /// A chip without a figure has its noise shown and not judged.
    public static func of(_ chip: String) -> DatasheetFigures? {
        switch chip {
        case "qmc5883l": return DatasheetFigures(fieldNoise: 0.2, source: "QMC5883L datasheet 1.0: noise 2 mG")
        case "hmc5883l": return DatasheetFigures(fieldNoise: 0.2, source: "HMC5883L datasheet rev E: noise floor 2 mG")
        case "lis3mdl": return DatasheetFigures(fieldNoise: 0.41, source: "LIS3MDL datasheet DocID024204: RMS noise 3.2/3.2/4.1 mG at ±4 G, UHP")
        case "lis2mdl": return DatasheetFigures(fieldNoise: 0.3, source: "LIS2MDL datasheet DS12144: RMS noise 3 mG")
        case "bmm150": return DatasheetFigures(fieldNoise: 0.6, source: "BMM150 datasheet BST-BMM150-DS001: noise 0.6 µT, regular preset")
        case "lsm6dsx": return DatasheetFigures(angularRateDensity: 0.007, accelerationDensity: 90, zeroRate: 10,
                                                source: "LSM6DS3 datasheet DocID026899 (the family's largest): 7 mdps/√Hz, 90 µg/√Hz, ±10 dps")
        case "mpu6xxx": return DatasheetFigures(angularRateDensity: 0.01, accelerationDensity: 400, zeroRate: 20,
                                                source: "MPU-6000/6050 PS-MPU-6000A-00 and MPU-9250 PS-MPU-9250A-01: 0.005–0.01 dps/√Hz, 300–400 µg/√Hz, ±20 dps")
        case "icm20948": return DatasheetFigures(angularRateDensity: 0.015, accelerationDensity: 230, zeroRate: 5,
                                                 source: "ICM-20948 DS-000189: 0.015 dps/√Hz, 230 µg/√Hz, ±5 dps")
        default: return nil
        }
    }

    public init(fieldNoise: Double? = nil, angularRateDensity: Double? = nil, accelerationDensity: Double? = nil, zeroRate: Double? = nil,
                source: String) {
        self.fieldNoise = fieldNoise
        self.angularRateDensity = angularRateDensity
        self.accelerationDensity = accelerationDensity
        self.zeroRate = zeroRate
        self.source = source
    }
}
