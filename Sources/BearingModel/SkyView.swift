/// One satellite in a sky view (an entry of gpsd's `SKY.satellites`).
public struct Satellite: Equatable, Sendable {
    public var prn: Int
    public var elevation: Double?
    public var azimuth: Double?
    /// Signal-to-noise ratio, dB-Hz.
    public var signalStrength: Double?
    public var used: Bool
    public var gnssID: Int?
    public var svID: Int?

    public init(prn: Int, elevation: Double? = nil, azimuth: Double? = nil, signalStrength: Double? = nil,
                used: Bool, gnssID: Int? = nil, svID: Int? = nil) {
        self.prn = prn
        self.elevation = elevation
        self.azimuth = azimuth
        self.signalStrength = signalStrength
        self.used = used
        self.gnssID = gnssID
        self.svID = svID
    }
}

/// The satellites a receiver sees and the dilution of precision (gpsd's `SKY`).
///
/// gpsd 3.25 reports SKYs of two kinds: with the satellites, and, in between (from GSA, GBS…), with only the DOPs
/// and `uSat`. The second kind says nothing about which satellites are seen, so `satellites` is nil there, not
/// empty: a consumer keeps the satellites it has, as a gpsd client does.
public struct SkyView: Equatable, Sendable {
    public var device: String?
    public var time: GPSTimestamp?
    public var xdop: Double?
    public var ydop: Double?
    public var vdop: Double?
    public var tdop: Double?
    public var hdop: Double?
    public var gdop: Double?
    public var pdop: Double?
    /// The satellites listed; nil when the SKY listed none (DOPs only).
    public var satellites: [Satellite]?
    /// gpsd's `uSat` for a SKY that listed no satellites (with a list, `usedCount` counts it).
    public var reportedUsed: Int?

    public init(satellites: [Satellite]? = []) { self.satellites = satellites }

    /// Satellites used: counted in the list, else as reported; nil when neither is known.
    public var usedCount: Int? {
        guard let satellites else { return reportedUsed }
        return satellites.lazy.filter(\.used).count
    }
}
