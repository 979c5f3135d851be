import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A Linux I2C bus as the chip drivers see it: SMBus byte and I2C-block transfers to 7-bit addresses.
/// `LinuxI2CBus` implements it over `/dev/i2c-N`; the register-level chip models
/// (BearingSimulator) implement it in memory, so drivers are tested against the same interface they run on.
public protocol I2CBus: AnyObject {
    /// The bus device, e.g. `/dev/i2c-1`, named in every error.
    var path: String { get }
    func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8
    func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError)
    /// An I2C-block read of `count` (1…32) bytes starting at `register`, the chip auto-incrementing.
    func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8]
    /// Whether something answers at `address`, probed the way i2cdetect does (see `I2CProbeMethod`).
    func probe(address: UInt8) throws(I2CError) -> I2CProbeResult
}

public enum I2CProbeResult: String, Equatable, Sendable {
    case absent
    case present
    /// A kernel driver owns the address (i2cdetect prints `UU`).
    case busy
}

/// i2cdetect's default ("auto") probe: an SMBus receive-byte for 0x30–0x37 and 0x50–0x5F (where a quick
/// write could corrupt an EEPROM or wake a write-protect latch), an SMBus quick write everywhere else.
public enum I2CProbeMethod: String, Sendable {
    case quickWrite = "quick write"
    case readByte = "read byte"

    public static func forAddress(_ address: UInt8) -> I2CProbeMethod {
        (0x30...0x37).contains(address) || (0x50...0x5F).contains(address) ? .readByte : .quickWrite
    }

    /// The addresses i2cdetect scans by default.
    public static let scanRange: ClosedRange<UInt8> = 0x08...0x77
}

/// A failed I2C operation: the bus, the address, the register and the errno. Its description
/// adds what it most likely means on a Linux board (a kernel driver holds the address, nothing answers,
/// no permission, I2C not enabled).
public struct I2CError: Error, Equatable, Sendable {
    public enum Operation: String, Sendable {
        case open = "open"
        case functionality = "I2C_FUNCS"
        case select = "I2C_SLAVE"
        case readByte = "read byte"
        case writeByte = "write byte"
        case readBlock = "block read"
        case probe = "probe"
    }

    public var bus: String
    public var address: UInt8?
    public var register: UInt8?
    public var operation: Operation
    public var errno: Int32
    /// Extra context (e.g. which adapter function is missing).
    public var detail: String?

    public init(bus: String, address: UInt8? = nil, register: UInt8? = nil, operation: Operation,
                errno: Int32, detail: String? = nil) {
        self.bus = bus
        self.address = address
        self.register = register
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    /// Nothing acknowledged the address: the chip is absent, unpowered or on another address.
    public var isNoAnswer: Bool { errno == ENXIO || errno == ENODEV || errno == EREMOTEIO || errno == EIO }

    public static func hex(_ v: UInt8) -> String {
        let s = String(v, radix: 16)
        return "0x" + (s.count < 2 ? "0" + s : s)
    }
}
