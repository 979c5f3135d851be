import BearingWire
import ArgumentParser
import BearingAttitude
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Declination: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Declination, inclination and field strength from the embedded World Magnetic Model 2025.")

    /// Taken as unrecognized arguments so that negative coordinates (`50.8 -1.1`) are not read as options.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("LAT LON: degrees, north and east positive.", valueName: "lat-lon"))
    var position: [String] = []
    var latitude: Double { Double(position[0]) ?? .nan }
    var longitude: Double { Double(position[1]) ?? .nan }
    @Option(help: "Height above the WGS84 ellipsoid, km.") var altKm: Double = 0
    @Option(help: "Date, YYYY-MM-DD (default: today, UTC).") var date: String?
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        guard position.count == 2, Double(position[0]) != nil, Double(position[1]) != nil else {
            throw ValidationError("expected LAT LON in degrees, e.g. `bearing declination 50.8 -1.1`; got \(position.isEmpty ? "nothing" : position.joined(separator: " "))")
        }
        guard latitude.isFinite, (-90...90).contains(latitude) else { throw ValidationError("latitude \(latitude): must be within -90…90") }
        guard longitude.isFinite, (-180...360).contains(longitude) else { throw ValidationError("longitude \(longitude): must be within -180…180") }
        guard altKm.isFinite, (-10...1000).contains(altKm) else { throw ValidationError("--alt-km \(altKm): must be within -10…1000 km") }
        _ = try year()
    }

    func year() throws -> Double {
        guard let date else { return WorldMagneticModel.decimalYear(unixSeconds: Date().timeIntervalSince1970) }
        let p = date.split(separator: "-").map { Int($0) }
        guard p.count == 3, let y = p[0], let m = p[1], let d = p[2], (1...12).contains(m), (1...31).contains(d), (1900...2100).contains(y) else {
            throw ValidationError("--date \(date): expected YYYY-MM-DD, e.g. 2026-06-01")
        }
        return WorldMagneticModel.decimalYear(year: y, month: m, day: d)
    }

    func run() throws {
        let model = WorldMagneticModel.wmm2025
        let t = try year()
        let f = model.field(latitude: latitude, longitude: longitude, heightKm: altKm, year: t)
        let valid = model.validity.contains(t)
        if json {
            var w = JSONObjectWriter()
            w.string("model", model.name)
            w.fixed("lat", latitude, 6); w.fixed("lon", longitude, 6); w.number("alt_km", altKm)
            w.fixed("year", t, 4)
            w.fixed("declination", f.declination, 4); w.fixed("inclination", f.inclination, 4)
            w.fixed("total_nT", f.totalIntensity, 1); w.fixed("horizontal_nT", f.horizontalIntensity, 1)
            w.fixed("north_nT", f.north, 1); w.fixed("east_nT", f.east, 1); w.fixed("down_nT", f.down, 1)
            w.bool("valid", valid)
            print(w.finished())
        } else {
            print(String(printf: "declination  %+.2f° (%@)", f.declination, f.declination >= 0 ? "east" : "west"))
            print(String(printf: "inclination  %+.2f°", f.inclination))
            print(String(printf: "total field  %.1f nT (%.2f µT); horizontal %.1f nT", f.totalIntensity, f.totalIntensity / 1000, f.horizontalIntensity))
            print(String(printf: "model %@ at %.4f", model.name, t))
        }
        if !valid {
            Syscall.printToStandardError("warning: \(model.name) is valid \(model.validity.lowerBound)–\(model.validity.upperBound); \(String(printf: "%.2f", t)) is extrapolated\n")
        }
    }
}
