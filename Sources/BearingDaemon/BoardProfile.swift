import BearingModel
import BearingPOSIX
import BearingConfig
import BearingYAML
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A board profile (`boards/NAME.yaml`): the board's I2C bus, the serial device its GPS is on (for gpsd)
/// and the GPS+compass modules known to fit it, with chip, address and mounting orientation.
/// `bearing run --board NAME [--module MODULE]` layers it under the config file.
public struct BoardProfile: Equatable, Sendable {
    public struct Module: Equatable, Sendable {
        public var name: String
        public var description: String
        public var gps: String
        public var chip: String
        public var address: UInt8
        public var orientation: Orientation
        /// The module's accelerometer + gyroscope, if it has one.
        public var imu: InertialUnit? = nil
    }

    /// An accelerometer + gyroscope on a module: chip, address and mounting orientation.
    public struct InertialUnit: Equatable, Sendable {
        public var chip: String
        public var address: UInt8
        public var orientation: Orientation
    }

    public var name: String
    public var description: String
    public var i2cBus: String
    public var gpsDevice: String
    public var modules: [Module]
    public var defaultModule: String

    /// Where `--board NAME` looks: `$BEARING_BOARDS`, `/etc/bearing/boards`, `/usr/share/bearing/boards`,
    /// and a `boards/` directory beside or above the executable (a source checkout).
    public static func searchPaths(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var dirs: [String] = []
        if let d = environment["BEARING_BOARDS"], !d.isEmpty { dirs.append(d) }
        dirs += ["/etc/bearing/boards", "/usr/share/bearing/boards"]
        var url = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            dirs.append(url.appendingPathComponent("boards").path)
            dirs.append(url.appendingPathComponent("share/bearing/boards").path)
            url.deleteLastPathComponent()
        }
        return dirs
    }

    /// Loads a profile by name (searching `searchPaths`) or by path (anything containing `/`).
    public static func load(_ nameOrPath: String) throws(ConfigError) -> BoardProfile {
        var path = nameOrPath
        if !nameOrPath.contains("/") {
            let dirs = searchPaths()
            guard nameOrPath.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }),
                  let found = dirs.map({ "\($0)/\(nameOrPath).yaml" }).first(where: { FileManager.default.fileExists(atPath: $0) })
            else {
                let known = available(in: dirs).joined(separator: ", ")
                throw ConfigError("board \"\(nameOrPath)\" not found in \(dirs.prefix(3).joined(separator: ", ")), …; known: \(known.isEmpty ? "none" : known)")
            }
            path = found
        }
        let text: String
        do { text = try AtomicFile.readText(path) } catch {
            throw ConfigError("\(path): cannot read: \(error.message)")
        }
        return try parse(yaml: text, source: path)
    }

    /// The profile names found on the search path.
    public static func available(in dirs: [String] = searchPaths()) -> [String] {
        var names = Set<String>()
        for d in dirs {
            for f in (try? FileManager.default.contentsOfDirectory(atPath: d)) ?? [] where f.hasSuffix(".yaml") {
                names.insert(String(f.dropLast(5)))
            }
        }
        return names.sorted()
    }

    public static func parse(yaml: String, source: String) throws(ConfigError) -> BoardProfile {
        let root: YAMLNode?
        do { root = try YAMLNode.compose(yaml) } catch { throw ConfigError("\(source): not valid YAML: \(error)") }
        guard let root else { throw ConfigError("\(source): empty board profile") }
        let r = ConfigReader(source: source)
        var p = BoardProfile(name: "", description: "", i2cBus: "", gpsDevice: "", modules: [], defaultModule: "")
        do {
            try r.section(root, "", [
                "name": { p.name = try r.string($0, "name", nonEmpty: true) },
                "description": { p.description = try r.string($0, "description", nonEmpty: false) },
                "i2c_bus": { p.i2cBus = try r.busPath($0, "i2c_bus") },
                "gps_device": { p.gpsDevice = try r.string($0, "gps_device", nonEmpty: true) },
                "default_module": { p.defaultModule = try r.string($0, "default_module", nonEmpty: true) },
                "modules": { node in
                    guard case .sequence(let items, _) = node else { throw r.fail(node, "modules", r.shown(node), "a list of modules") }
                    for (i, item) in items.enumerated() {
                        var m = Module(name: "", description: "", gps: "", chip: "", address: 0, orientation: .identity)
                        var axes = "+X+Y+Z"
                        let key = "modules[\(i)]"
                        try r.section(item, key, [
                            "name": { m.name = try r.string($0, "\(key).name", nonEmpty: true) },
                            "description": { m.description = try r.string($0, "\(key).description", nonEmpty: false) },
                            "gps": { m.gps = try r.string($0, "\(key).gps", nonEmpty: false) },
                            "chip": { m.chip = try r.chip($0, "\(key).chip", allowAuto: false) ?? "" },
                            "address": { m.address = try r.i2cAddress($0, "\(key).address") ?? 0 },
                            "orientation": { axes = try r.scalar($0, "\(key).orientation") },
                            "imu": { m.imu = try inertialUnit($0, "\(key).imu", r) },
                        ])
                        m.orientation = try r.orientation(item, key, axes: axes)
                        guard !m.name.isEmpty, !m.chip.isEmpty, m.address != 0 else {
                            throw ConfigError("\(r.at(item)): \(key): name, chip and address are required")
                        }
                        p.modules.append(m)
                    }
                },
            ])
        } catch let e as ConfigError {
            throw e
        } catch {
            throw ConfigError("\(source): \(error)")
        }
        guard !p.name.isEmpty, !p.i2cBus.isEmpty, !p.modules.isEmpty else {
            throw ConfigError("\(source): a board needs name, i2c_bus and at least one module")
        }
        if p.defaultModule.isEmpty { p.defaultModule = p.modules[0].name }
        guard p.modules.contains(where: { $0.name == p.defaultModule }) else {
            throw ConfigError("\(source): default_module \"\(p.defaultModule)\" is not one of \(p.modules.map(\.name).joined(separator: ", "))")
        }
        return p
    }

    private static func inertialUnit(_ node: YAMLNode, _ key: String, _ r: ConfigReader) throws -> InertialUnit {
        var chip: String?, address: UInt8?, axes = "+X+Y+Z"
        try r.section(node, key, [
            "chip": { chip = try r.inertialChip($0, "\(key).chip", allowAuto: false) },
            "address": { address = try r.i2cAddress($0, "\(key).address") },
            "orientation": { axes = try r.scalar($0, "\(key).orientation") },
        ])
        guard let chip, let address else { throw ConfigError("\(r.at(node)): \(key): chip and address are required") }
        return InertialUnit(chip: chip, address: address, orientation: try r.orientation(node, key, axes: axes))
    }

    public func module(named name: String?) throws(ConfigError) -> Module {
        let wanted = name ?? defaultModule
        guard let m = modules.first(where: { $0.name == wanted }) else {
            throw ConfigError("board \(self.name): no module \"\(wanted)\"; known: \(modules.map(\.name).joined(separator: ", "))")
        }
        return m
    }

    /// The defaults this board and module give; a config file read over it overrides any of them.
    public func baseConfig(module name: String?) throws(ConfigError) -> AgentConfig {
        let m = try module(named: name)
        var c = AgentConfig()
        c.board = "\(self.name)/\(m.name)"
        c.magnetometer.enabled = true
        c.magnetometer.reader.bus = i2cBus
        c.magnetometer.reader.chip = m.chip
        c.magnetometer.reader.address = m.address
        c.magnetometer.orientation = m.orientation
        if let imu = m.imu {
            c.imu.enabled = true
            c.imu.reader.bus = i2cBus
            c.imu.reader.chip = imu.chip
            c.imu.reader.address = imu.address
            c.imu.orientation = imu.orientation
        }
        return c
    }
}
