import BearingModel

/// A declination in force: degrees east and where it came from.
public struct Declination: Equatable, Sendable {
    public var value: Double
    public var source: DeclinationSource
    public init(_ value: Double, _ source: DeclinationSource) {
        self.value = value
        self.source = source
    }
}

/// The WMM field where the board is: the declination in force and the field's norm (µT) and dip, the
/// reference the attitude filter judges magnetic disturbances by.
public struct LocalField: Equatable, Sendable {
    public var declination: Declination
    public var reference: MagneticFieldReference
    public init(declination: Declination, reference: MagneticFieldReference) {
        self.declination = declination
        self.reference = reference
    }

    /// WMM2025 at a configured position (latitude, longitude in degrees, height in km) on the date of
    /// `unixSeconds`: the field in force until the first fix (`heading.fallback_position`).
    public static func fallback(_ position: Vector3, unixSeconds: Double) -> LocalField {
        wmm(.wmm2025, latitude: position.x, longitude: position.y, heightKm: position.z,
            year: WorldMagneticModel.decimalYear(unixSeconds: unixSeconds), source: .fallback)
    }

    /// The WMM field at a position and time (held within the model's validity, `WorldMagneticModel.heldYear`), `source`
    /// saying where the position came from.
    public static func wmm(_ model: WorldMagneticModel, latitude: Double, longitude: Double, heightKm: Double, year: Double,
                           source: DeclinationSource) -> LocalField {
        let f = model.field(latitude: latitude, longitude: longitude, heightKm: heightKm, year: model.heldYear(year))
        return LocalField(declination: Declination(f.declination, source),
                          reference: MagneticFieldReference(norm: f.totalIntensity / 1000, dip: f.inclination))
    }
}

/// What the declination stage remembers: the WMM value at the last position it was computed for.
/// Recomputed only when the position moves by about 1 km or the date by a day: declination changes far
/// more slowly than that. Only a position believed (`PositionJumps`) moves it: a fix out of reach of the last is held
/// until fixes agree with it for 10 s.
public struct DeclinationState: Equatable, Sendable {
    public private(set) var current: Declination?
    /// The field's norm and dip at the same place, for the attitude filter.
    public private(set) var reference: MagneticFieldReference?
    private var at: (lat: Double, lon: Double, year: Double)?
    private var jumps = PositionJumps()
    /// What the last fix taken changed of the positions believed, for the journal (nil: nothing).
    public private(set) var jumpEvent: PositionJumps.Event?
    /// Whether the last fix taken had a position that was not believed (a jump held, 0°, 0°): nothing should learn from
    /// it (`FusionStage.take`).
    public private(set) var heldLast = false

    public init(fallback: Declination? = nil, reference: MagneticFieldReference? = nil) {
        current = fallback
        self.reference = fallback == nil ? nil : reference
    }

    public static func == (a: Self, b: Self) -> Bool { a.current == b.current && a.reference == b.reference }

    /// Declination and reference together, when both are known.
    public var field: LocalField? {
        guard let current, let reference else { return nil }
        return LocalField(declination: current, reference: reference)
    }

    public func updated(with fix: GPSFix, model: WorldMagneticModel) -> DeclinationState {
        var s = self
        s.jumpEvent = nil
        s.heldLast = false
        guard fix.mode >= .twoD, let lat = fix.latitude, let lon = fix.longitude, let time = fix.time else { return s }
        let (believed, event) = s.jumps.take(FixPlace(latitude: lat, longitude: lon, time: time.unixTime))
        s.jumpEvent = event
        s.heldLast = !believed
        guard believed else { return s }
        let year = WorldMagneticModel.decimalYear(unixSeconds: time.unixTime)
        if current?.source == .fix, let p = at, abs(p.lat - lat) < 0.01, abs(p.lon - lon) < 0.01, abs(p.year - year) < 1 / 365 {
            return s
        }
        let f = LocalField.wmm(model, latitude: lat, longitude: lon, heightKm: (fix.altHAE ?? 0) / 1000, year: year, source: .fix)
        s.current = f.declination
        s.reference = f.reference
        s.at = (lat, lon, year)
        return s
    }
}
