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
            try r.section(root, "", keys, into: &p)
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

/// A board profile's tables.
extension BoardProfile {
    static let keys: [ConfigKey<BoardProfile>] = [
        .string("name", \.name, "the board's name"),
        .init("description", "text", "what the board is", default: { _ in "" }) { r, node, path, p in
            p.description = try r.string(node, path, nonEmpty: false)
        },
        .init("i2c_bus", "a bus device or number", "the I2C bus its modules are on", default: { _ in "" }) { r, node, path, p in
            p.i2cBus = try r.busPath(node, path)
        },
        .string("gps_device", \.gpsDevice, "the serial device its GPS is on (for gpsd)"),
        .string("default_module", \.defaultModule, "the module `--module` defaults to (else the first)"),
        .init("modules", "a list of modules", "the GPS+compass modules known to fit", default: { _ in "" }) { r, node, path, p in
            guard case .sequence(let items, _) = node else { throw r.fail(node, path, r.shown(node), "a list of modules") }
            for (i, item) in items.enumerated() {
                let key = "\(path)[\(i)]"
                var m = Mounted(Module(name: "", description: "", gps: "", chip: "", address: 0, orientation: .identity))
                try r.section(item, key, moduleKeys, into: &m)
                m.part.orientation = try r.orientation(item, key, axes: m.axes)
                guard !m.part.name.isEmpty, !m.part.chip.isEmpty, m.part.address != 0 else {
                    throw ConfigError("\(r.at(item)): \(key): name, chip and address are required")
                }
                p.modules.append(m.part)
            }
        },
    ]

    /// A module, or its IMU, while it is read: the orientation is made from `axes` at the end.
    struct Mounted<Part> {
        var part: Part
        var axes = "+X+Y+Z"
        init(_ part: Part) { self.part = part }
    }

    static let moduleKeys: [ConfigKey<Mounted<Module>>] = [
        .string("name", \.part.name, "the module's name"),
        .init("description", "text", "what the module is", default: { _ in "" }) { r, node, path, m in
            m.part.description = try r.string(node, path, nonEmpty: false)
        },
        .init("gps", "text", "its GPS", default: { _ in "" }) { r, node, path, m in m.part.gps = try r.string(node, path, nonEmpty: false) },
        .init("chip", "a magnetometer driver", "its magnetometer", default: { _ in "" }) { r, node, path, m in
            m.part.chip = try r.chip(node, path, allowAuto: false) ?? ""
        },
        .init("address", "0x03–0x77", "the magnetometer's address", default: { _ in "" }) { r, node, path, m in
            m.part.address = try r.i2cAddress(node, path) ?? 0
        },
        .init("orientation", "three signed axes", "the magnetometer's mounting", default: { _ in "" }) { r, node, path, m in
            m.axes = try r.scalar(node, path)
        },
        .init("imu", "a mapping", "its accelerometer + gyroscope", default: { _ in "" }) { r, node, path, m in
            var unit = Mounted<(chip: String?, address: UInt8?)>((nil, nil))
            try r.section(node, path, imuKeys, into: &unit)
            guard let chip = unit.part.chip, let address = unit.part.address else {
                throw ConfigError("\(r.at(node)): \(path): chip and address are required")
            }
            m.part.imu = InertialUnit(chip: chip, address: address, orientation: try r.orientation(node, path, axes: unit.axes))
        },
    ]

    static let imuKeys: [ConfigKey<Mounted<(chip: String?, address: UInt8?)>>] = [
        .init("chip", "an accelerometer/gyroscope driver", "its chip", default: { _ in "" }) { r, node, path, u in
            u.part.chip = try r.inertialChip(node, path, allowAuto: false)
        },
        .init("address", "0x03–0x77", "its address", default: { _ in "" }) { r, node, path, u in u.part.address = try r.i2cAddress(node, path) },
        .init("orientation", "three signed axes", "its mounting", default: { _ in "" }) { r, node, path, u in u.axes = try r.scalar(node, path) },
    ]
}
