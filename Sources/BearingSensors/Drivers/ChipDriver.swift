import BearingI2C
#if canImport(Glibc)
import Glibc
#endif

/// What identifies a chip on the bus: the addresses it can have and its ID registers.
public struct ChipDescriptor: Sendable {
    /// The config name, e.g. `hmc5883l`.
    public var name: String
    public var displayName: String
    public var addresses: [UInt8]
    public var idRegister: UInt8
    /// The bytes read from `idRegister` on; for a family driver (`lsm6dsx`, `mpu6xxx`) the one-byte IDs
    /// of its members, any of which identifies it.
    public var idValue: [UInt8]
    /// How far an ID match identifies the chip: `high` for distinctive IDs, `low` for IDs such as 0xFF
    /// that a floating bus also reads.
    public var confidence: Confidence
    /// Where the register map, ID and sensitivities come from.
    public var source: String

    public enum Confidence: String, Sendable { case high, medium, low }
}

/// What a chip driver (magnetometer or inertial) can fail with; every case names the chip and where it is.
public enum SensorError: Error, Equatable, CustomStringConvertible {
    case bus(I2CError)
    /// The ID register did not hold the chip's ID: another chip (or none) is at that address. For a chip
    /// family, `found` is one byte and `expected` lists the members' IDs.
    case wrongChip(chip: String, bus: String, address: UInt8, register: UInt8, found: [UInt8], expected: [UInt8])
    /// Data-ready never came within the bounded poll.
    case dataNotReady(chip: String, bus: String, address: UInt8, polls: Int)
    /// A setting the chip cannot do.
    case unsupported(chip: String, String)

    public var description: String {
        switch self {
        case .bus(let e): return e.description
        case let .wrongChip(chip, bus, address, register, found, expected):
            // One byte found against several: a chip family, any of whose IDs would do.
            let wanted = found.count == 1 && expected.count > 1
                ? "one of " + expected.map(I2CError.hex).joined(separator: ", ") : Self.bytes(expected)
            return "\(bus) \(I2CError.hex(address)): not a \(chip): ID register \(I2CError.hex(register)) reads \(Self.bytes(found)), expected \(wanted)"
        case let .dataNotReady(chip, bus, address, polls):
            return "\(bus) \(I2CError.hex(address)): \(chip) data not ready after \(polls) polls (is it in continuous mode and powered?)"
        case let .unsupported(chip, what): return "\(chip): \(what)"
        }
    }

    static func bytes(_ b: [UInt8]) -> String { b.map(I2CError.hex).joined(separator: " ") }
}

/// The magnetometer drivers' name for `SensorError`.
public typealias MagnetometerError = SensorError

/// A chip on an I2C bus with an ID check: what magnetometer and inertial drivers share.
public protocol ChipDriver: AnyObject {
    static var descriptor: ChipDescriptor { get }
    var bus: I2CBus { get }
    var address: UInt8 { get }
    init(bus: I2CBus, address: UInt8)
    /// Waits between data-ready polls and after resets (`DriverSleep.real`; tests pass a no-op).
    var sleep: (Double) -> Void { get set }
    /// Checks the ID registers; throws `wrongChip` when they do not match.
    func identify() throws(SensorError)
}

/// What every driver keeps: its bus and address, how it waits, and the rate and data-ready poll bound
/// its `configure` chose. Drivers subclass it and add their chip's registers and conversion.
open class ChipDriverBase {
    public let bus: I2CBus
    public let address: UInt8
    public var sleep: (Double) -> Void = DriverSleep.real
    /// Samples per second `configure` selected (sets the data-ready poll interval).
    var rate = 10.0
    /// Data-ready polls allowed per read (`readyPolls` of the settings).
    var polls = 50

    public required init(bus: I2CBus, address: UInt8) {
        self.bus = bus
        self.address = address
    }
}

/// The register helpers every driver uses.
extension ChipDriver {
    var chipName: String { Self.descriptor.name }

    func reg(_ register: UInt8) throws(SensorError) -> UInt8 {
        do { return try bus.readByte(address: address, register: register) } catch { throw .bus(error) }
    }

    func set(_ register: UInt8, _ value: UInt8) throws(SensorError) {
        do { try bus.writeByte(address: address, register: register, value: value) } catch { throw .bus(error) }
    }

    func block(_ register: UInt8, _ count: Int) throws(SensorError) -> [UInt8] {
        let b: [UInt8]
        do { b = try bus.readBlock(address: address, register: register, count: count) } catch { throw .bus(error) }
        guard b.count == count else {
            throw .bus(I2CError(bus: bus.path, address: address, register: register, operation: .readBlock,
                                errno: EIO, detail: "short read: \(b.count) of \(count) bytes"))
        }
        return b
    }

    /// Reads `descriptor.idValue.count` bytes from the ID register (one byte read each) and compares.
    func checkID() throws(SensorError) {
        let d = Self.descriptor
        var found: [UInt8] = []
        for i in 0..<d.idValue.count { found.append(try reg(d.idRegister &+ UInt8(i))) }
        guard found == d.idValue else {
            throw .wrongChip(chip: d.displayName, bus: bus.path, address: address, register: d.idRegister,
                             found: found, expected: d.idValue)
        }
    }

    /// For a chip family whose `descriptor.idValue` lists one ID byte per member: reads the ID register once
    /// and returns the member whose ID it holds; throws `wrongChip` naming every member's ID otherwise.
    func identifyMember<Member>(of members: [Member], id: (Member) -> UInt8) throws(SensorError) -> Member {
        let d = Self.descriptor
        let who = try reg(d.idRegister)
        guard let member = members.first(where: { id($0) == who }) else {
            throw .wrongChip(chip: d.displayName, bus: bus.path, address: address, register: d.idRegister,
                             found: [who], expected: d.idValue)
        }
        return member
    }

    /// Polls `register` until every bit of `mask` is set, at most `polls` times, calling `pause` between
    /// polls. Returns the status byte that had the flags.
    func waitReady(_ register: UInt8, mask: UInt8, polls: Int, pause: () -> Void) throws(SensorError) -> UInt8 {
        for i in 0..<max(1, polls) {
            let s = try reg(register)
            if s & mask == mask { return s }
            if i + 1 < polls { pause() }
        }
        throw .dataNotReady(chip: Self.descriptor.displayName, bus: bus.path, address: address, polls: polls)
    }
}

/// The index of the smallest full scale ≥ `wanted`, or `default` when no range was asked for.
func pickRange(_ fullScales: [Double], _ wanted: Double?, default index: Int) -> Int {
    wanted.map { pick(fullScales, atLeast: $0) } ?? index
}

/// Picks the first option whose value is ≥ `wanted` (the last when none is), returning its index.
func pick(_ options: [Double], atLeast wanted: Double) -> Int {
    options.firstIndex { $0 >= wanted - 1e-9 } ?? options.count - 1
}

func int16BE(_ hi: UInt8, _ lo: UInt8) -> Int { Int(Int16(bitPattern: UInt16(hi) << 8 | UInt16(lo))) }
func int16LE(_ lo: UInt8, _ hi: UInt8) -> Int { int16BE(hi, lo) }

/// How drivers wait between data-ready polls and after resets; tests pass a no-op.
public enum DriverSleep {
    public static let real: @Sendable (Double) -> Void = { seconds in
        if seconds > 0 { usleep(UInt32(min(seconds, 1) * 1_000_000)) }
    }
}
