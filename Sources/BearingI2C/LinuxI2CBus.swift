import CI2C
#if canImport(Glibc)
import Glibc
#endif

/// `/dev/i2c-N` through i2c-dev and libi2c: SMBus byte and I2C-block transfers, the device selected with
/// `I2C_SLAVE` (never `I2C_SLAVE_FORCE`, so an address a kernel driver owns fails with EBUSY instead of
/// being taken over). Every failure is an `I2CError` naming bus, address, register and errno. One bus
/// object belongs to one thread (the selected address is per file descriptor).
public final class LinuxI2CBus: I2CBus {
    public let path: String
    private var fd: Int32
    private var selected: UInt8?
    public let functionality: UInt

    /// Opens the bus and checks that the adapter does byte-data and I2C-block transfers.
    public init(path: String) throws(I2CError) {
        self.path = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw I2CError(bus: path, operation: .open, errno: errno) }
        var funcs: UInt = 0
        let r = bearing_i2c_funcs(fd, &funcs)
        guard r == 0 else {
            close(fd)
            throw I2CError(bus: path, operation: .functionality, errno: -r, detail: "not an i2c-dev device?")
        }
        let needed: [(UInt, String)] = [
            (bearing_i2c_func_byte_data, "SMBus byte data"), (bearing_i2c_func_i2c_block, "I2C block read/write"),
        ]
        for (bit, name) in needed where funcs & bit == 0 {
            close(fd)
            throw I2CError(bus: path, operation: .functionality, errno: EOPNOTSUPP, detail: "the adapter cannot do \(name) transfers")
        }
        self.fd = fd
        functionality = funcs
    }

    /// `/dev/i2c-N` for a bus number.
    public convenience init(number: Int) throws(I2CError) {
        try self.init(path: "/dev/i2c-\(number)")
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    private func select(_ address: UInt8) throws(I2CError) {
        guard selected != address else { return }
        let r = bearing_i2c_select(fd, Int32(address))
        guard r == 0 else {
            selected = nil
            throw I2CError(bus: path, address: address, operation: .select, errno: -r)
        }
        selected = address
    }

    private func check(_ r: Int32, _ address: UInt8, _ register: UInt8?, _ op: I2CError.Operation) throws(I2CError) -> Int32 {
        if r >= 0 { return r }
        throw I2CError(bus: path, address: address, register: register, operation: op, errno: -r)
    }

    public func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 {
        try select(address)
        return UInt8(truncatingIfNeeded: try check(i2c_smbus_read_byte_data(fd, register), address, register, .readByte))
    }

    public func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        try select(address)
        _ = try check(i2c_smbus_write_byte_data(fd, register, value), address, register, .writeByte)
    }

    public func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        guard (1...Int(bearing_i2c_block_max)).contains(count) else {
            throw I2CError(bus: path, address: address, register: register, operation: .readBlock, errno: EINVAL,
                           detail: "block length \(count) outside 1…\(bearing_i2c_block_max)")
        }
        try select(address)
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try check(i2c_smbus_read_i2c_block_data(fd, register, UInt8(count), &buffer), address, register, .readBlock)
        guard Int(n) == count else {
            throw I2CError(bus: path, address: address, register: register, operation: .readBlock, errno: EIO,
                           detail: "short read: \(n) of \(count) bytes")
        }
        return buffer
    }

    /// i2cdetect's probe: `busy` when a kernel driver owns the address, else an SMBus quick write or
    /// receive-byte (see `I2CProbeMethod`) that something acknowledges or not.
    public func probe(address: UInt8) throws(I2CError) -> I2CProbeResult {
        let r = bearing_i2c_select(fd, Int32(address))
        if r == -EBUSY { selected = nil; return .busy }
        guard r == 0 else { throw I2CError(bus: path, address: address, operation: .select, errno: -r) }
        selected = address
        let answer: Int32
        switch I2CProbeMethod.forAddress(address) {
        case .quickWrite:
            guard functionality & bearing_i2c_func_quick != 0 else {
                throw I2CError(bus: path, address: address, operation: .probe, errno: EOPNOTSUPP,
                               detail: "the adapter cannot do SMBus quick writes")
            }
            answer = i2c_smbus_write_quick(fd, UInt8(I2C_SMBUS_WRITE))
        case .readByte:
            answer = i2c_smbus_read_byte(fd)
        }
        if answer >= 0 { return .present }
        let e = I2CError(bus: path, address: address, operation: .probe, errno: -answer)
        if e.isNoAnswer || -answer == ETIMEDOUT { return .absent }
        throw e
    }
}
