import OpenCombine

/// A declination in force: degrees east and where it came from.
public struct Declination: Equatable, Sendable {
    public var value: Double
    public var source: DeclinationSource
    public init(_ value: Double, _ source: DeclinationSource) {
        self.value = value
        self.source = source
    }
}

/// The correction in force for one chip (a calibration is fitted in one chip's axes).
public struct ActiveCalibration: Equatable, Sendable {
    public var chip: String
    public var correction: MagneticCalibration
    public init(chip: String, correction: MagneticCalibration) {
        self.chip = chip
        self.correction = correction
    }
}

/// What the declination stage remembers: the WMM value at the last position it was computed for.
/// Recomputed only when the position moves by about 1 km or the date by a day: declination changes far
/// more slowly than that.
public struct DeclinationState: Equatable, Sendable {
    public private(set) var current: Declination?
    private var at: (lat: Double, lon: Double, year: Double)?

    public init(fallback: Declination? = nil) { current = fallback }

    public static func == (a: Self, b: Self) -> Bool { a.current == b.current }

    public func updated(with fix: GPSFix, model: WorldMagneticModel) -> DeclinationState {
        guard fix.mode >= .twoD, let lat = fix.latitude, let lon = fix.longitude, let time = fix.time else { return self }
        let year = WorldMagneticModel.decimalYear(unixSeconds: time.unixTime)
        if current?.source == .fix, let p = at, abs(p.lat - lat) < 0.01, abs(p.lon - lon) < 0.01, abs(p.year - year) < 1 / 365 {
            return self
        }
        var s = self
        let d = model.field(latitude: lat, longitude: lon, heightKm: (fix.altHAE ?? 0) / 1000, year: year).declination
        s.current = Declination(d, .fix)
        s.at = (lat, lon, year)
        return s
    }
}

/// The compass path as pure stages, between the magnetometer's samples and the ATT chains: the
/// calibration in force, then mounting orientation, heading and declination. Each input that changes
/// (a calibration reloaded, a new declination) switches the stage to the new value; no stage reaches
/// outside its inputs.
public enum CompassStages {
    /// Declinations from fixes (WMM at each fix that moved), starting with `fallback` (WMM at the
    /// configured position) until the first fix; duplicates removed.
    public static func declinations(
        _ fixes: AnyPublisher<GPSFix, Never>, model: WorldMagneticModel, fallback: Declination?
    ) -> AnyPublisher<Declination?, Never> {
        fixes.scan(DeclinationState(fallback: fallback)) { $0.updated(with: $1, model: model) }
            .map(\.current)
            .prepend(fallback)
            .removeDuplicates()
            .eraseToAnyPublisher()
    }

    /// Attitudes from raw samples: each sample corrected by the calibration in force when it arrives
    /// (only if fitted for the sample's chip), turned into board axes, with the declination in force.
    public static func attitudes(
        _ samples: AnyPublisher<MagneticSample, Never>,
        calibrations: AnyPublisher<ActiveCalibration?, Never>,
        declinations: AnyPublisher<Declination?, Never>,
        orientation: Orientation
    ) -> AnyPublisher<Attitude, Never> {
        declinations.map { declination in
            calibrations.map { calibration in
                samples.map { sample in
                    let correction = calibration.flatMap { $0.chip == sample.chip ? $0.correction : nil } ?? .identity
                    return Compass.attitude(sample, orientation: orientation, calibration: correction,
                                            declination: declination.map { ($0.value, $0.source) })
                }
            }
            .switchToLatest()
        }
        .switchToLatest()
        .eraseToAnyPublisher()
    }
}
