import BearingModel
/// One object read from Bearing (or gpsd): its class, its fields, and typed views of the classes
/// Bearing writes — the inverse of `WireEncoding`, used by `watch`, `calibrate`, `BearingClient` and
/// the tests.
public struct WireMessage: Sendable, Equatable {
    public let className: String
    public let object: JSONValue
    public let line: String

    /// Reads one line; the error says why it is not a gpsd object.
    public init(line: String) throws(WireDecodingError) {
        let value: JSONValue
        do { value = try JSONValue.parse(line) } catch { throw WireDecodingError("not JSON: \(error)") }
        guard case .map = value else { throw WireDecodingError("not a JSON object") }
        guard let c = value["class"]?.string else { throw WireDecodingError("no \"class\"") }
        className = c
        object = value
        self.line = line
    }

    public subscript(key: String) -> JSONValue? { object[key] }
    public func number(_ key: String) -> Double? { object[key]?.number }
    public func string(_ key: String) -> String? { object[key]?.string }
    public var time: GPSTimestamp? { string("time").flatMap(GPSTimestamp.init(iso8601:)) }

    /// TPV as a fix.
    public var fix: GPSFix? {
        guard className == "TPV" else { return nil }
        var f = GPSFix(mode: FixMode(rawValue: object["mode"]?.int ?? 0) ?? .notSeen)
        f.device = string("device")
        f.status = object["status"]?.int
        f.time = time
        f.ept = number("ept")
        f.latitude = number("lat")
        f.longitude = number("lon")
        f.altHAE = number("altHAE")
        f.altMSL = number("altMSL") ?? number("alt")
        f.epx = number("epx")
        f.epy = number("epy")
        f.epv = number("epv")
        f.track = number("track")
        f.magneticTrack = number("magtrack")
        f.magneticVariation = number("magvar")
        f.speed = number("speed")
        f.climb = number("climb")
        f.epd = number("epd")
        f.eps = number("eps")
        f.epc = number("epc")
        f.geoidSeparation = number("geoidSep")
        f.eph = number("eph")
        f.sep = number("sep")
        return f
    }

    /// SKY as a sky view.
    public var sky: SkyView? {
        guard className == "SKY" else { return nil }
        var s = SkyView()
        s.device = string("device")
        s.time = time
        s.xdop = number("xdop"); s.ydop = number("ydop"); s.vdop = number("vdop"); s.tdop = number("tdop")
        s.hdop = number("hdop"); s.gdop = number("gdop"); s.pdop = number("pdop")
        s.satellites = object["satellites"]?.list?.compactMap { o in
            guard let prn = o["PRN"]?.int else { return nil }
            return Satellite(prn: prn, elevation: o["el"]?.number, azimuth: o["az"]?.number, signalStrength: o["ss"]?.number,
                             used: o["used"]?.bool ?? false, gnssID: o["gnssid"]?.int, svID: o["svid"]?.int)
        }
        if s.satellites == nil { s.reportedUsed = object["uSat"]?.int }
        return s
    }

    /// Bearing's compass ATT (nil for another ATT, such as gpsd's, which lacks the magnetic fields).
    public var attitude: Attitude? {
        guard className == "ATT", let time, let device = string("device"), let m = number("mheading"),
              let x = number("mag_x"), let y = number("mag_y"), let z = number("mag_z") else { return nil }
        var a = Attitude(time: time, device: device, heading: number("heading"), magneticHeading: m,
                         field: Vector3(x, y, z), dip: number("dip") ?? Compass.dip(Vector3(x, y, z)),
                         magStatus: string("mag_st") ?? "C", declination: number("declination"),
                         declinationSource: string("decl_src").flatMap(DeclinationSource.init(rawValue:)))
        a.roll = number("roll")
        a.pitch = number("pitch")
        a.yaw = number("yaw")
        a.acceleration = vector("acc_x", "acc_y", "acc_z")
        a.angularRate = vector("gyro_x", "gyro_y", "gyro_z")
        a.temperature = number("temp")
        if let q = object["quat"]?.list?.compactMap(\.number), q.count == 4 {
            a.quaternion = Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
        }
        return a
    }

    private func vector(_ x: String, _ y: String, _ z: String) -> Vector3? {
        guard let x = number(x), let y = number(y), let z = number(z) else { return nil }
        return Vector3(x, y, z)
    }

    /// MAG as a raw sample.
    public var magneticSample: MagneticSample? {
        guard className == "MAG", let time, let x = number("x"), let y = number("y"), let z = number("z") else { return nil }
        return MagneticSample(time: time, device: string("device") ?? "", chip: string("chip") ?? "", field: Vector3(x, y, z),
                              overflow: object["overflow"]?.bool ?? false)
    }

    /// STATE: source, endpoint and state name.
    public var state: (source: String, endpoint: String, state: String, message: String?)? {
        guard className == "STATE", let source = string("source"), let state = string("state") else { return nil }
        return (source, string("endpoint") ?? "", state, string("message"))
    }

    /// ERROR's message.
    public var errorMessage: String? { className == "ERROR" ? string("message") : nil }

    /// OVERFLOW's count of dropped messages.
    public var dropped: Int? { className == "OVERFLOW" ? object["dropped"]?.int : nil }

    /// DEVICES' paths.
    public var devicePaths: [String]? {
        guard className == "DEVICES" else { return nil }
        return (object["devices"]?.list ?? []).compactMap { $0["path"]?.string }
    }
}

public struct WireDecodingError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
