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
    public var satellites: [Satellite]

    public init(satellites: [Satellite] = []) { self.satellites = satellites }

    public var usedCount: Int { satellites.lazy.filter(\.used).count }
}
