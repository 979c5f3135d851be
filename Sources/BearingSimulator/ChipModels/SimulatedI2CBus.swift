import BearingModel
import BearingI2C
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A device on a simulated bus: a register file with the chip's own read/write side effects.
public protocol I2CDeviceModel: AnyObject {
    /// Whether the device acknowledges its address now (e.g. an AK09916 only behind an open bypass).
    var isReachable: Bool { get }
    func read(_ register: UInt8) -> UInt8
    func write(_ register: UInt8, _ value: UInt8)
    func readBlock(_ register: UInt8, count: Int) -> [UInt8]
}

/// An in-memory I2C bus holding chip models, with fault injection: errors after N transfers, unplugged
/// addresses, addresses owned by a kernel driver. Thread-safe: the reader thread and a test can share it.
/// Unchecked Sendable: `lock` guards the devices and fault state; the chip models are not Sendable (tests keep and adjust them), so no `Mutex` can own them.
public final class SimulatedI2CBus: I2CBus, @unchecked Sendable {
    public let path: String
    private let lock = ConditionLock()
    private var devices: [UInt8: I2CDeviceModel] = [:]
    private var busy: Set<UInt8> = []
    private var unplugged: Set<UInt8> = []
    private var failAfter: (count: Int, errno: Int32)?
    /// Successful transfers of any kind, and of them the I2C-block reads.
    public private(set) var transfers = 0
    public private(set) var blockReads = 0

    public init(path: String = "simulator") {
        self.path = path
    }

    public func attach(_ device: I2CDeviceModel, at address: UInt8) {
        lock.lock(); defer { lock.unlock() }
        devices[address] = device
    }

    /// From the next transfer on, nothing answers at `address` (ENXIO) until `plug`.
    public func unplug(_ address: UInt8) { lock.lock(); unplugged.insert(address); lock.unlock() }
    public func plug(_ address: UInt8) { lock.lock(); unplugged.remove(address); lock.unlock() }
    /// A kernel driver owns `address`: selecting it fails with EBUSY.
    public func markBusy(_ address: UInt8) { lock.lock(); busy.insert(address); lock.unlock() }
    /// After `transfers` more successful transfers, every transfer fails with `errno` until `clearFault`.
    public func fail(after transfers: Int, errno: Int32) { lock.lock(); failAfter = (transfers, errno); lock.unlock() }
    public func clearFault() { lock.lock(); failAfter = nil; lock.unlock() }

    private func device(_ address: UInt8, _ register: UInt8?, _ op: I2CError.Operation) throws(I2CError) -> I2CDeviceModel {
        lock.lock(); defer { lock.unlock() }
        func error(_ e: Int32, _ o: I2CError.Operation) -> I2CError {
            I2CError(bus: path, address: address, register: register, operation: o, errno: e)
        }
        if busy.contains(address) { throw error(EBUSY, .select) }
        if let f = failAfter {
            if f.count <= 0 { throw error(f.errno, op) }
            failAfter = (f.count - 1, f.errno)
        }
        guard !unplugged.contains(address), let d = devices[address], d.isReachable else { throw error(ENXIO, op) }
        transfers += 1
        return d
    }

    public func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 {
        let d = try device(address, register, .readByte)
        lock.lock(); defer { lock.unlock() }
        return d.read(register)
    }

    public func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        let d = try device(address, register, .writeByte)
        lock.lock(); defer { lock.unlock() }
        d.write(register, value)
    }

    public func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        guard (1...32).contains(count) else {
            throw I2CError(bus: path, address: address, register: register, operation: .readBlock, errno: EINVAL,
                           detail: "block length \(count) outside 1…32")
        }
        let d = try device(address, register, .readBlock)
        lock.lock(); defer { lock.unlock() }
        blockReads += 1
        return d.readBlock(register, count: count)
    }

    public func probe(address: UInt8) throws(I2CError) -> I2CProbeResult {
        do {
            _ = try device(address, nil, .probe)
            return .present
        } catch where error.errno == EBUSY {
            return .busy
        } catch where error.isNoAnswer {
            return .absent
        }
    }
}

/// A chip as 256 byte registers plus conversion behaviour: data-ready after `readyAfterPolls` status
/// polls (or never), and a field source giving the µT vector the chip senses, in its own axes.
open class RegisterChipModel: I2CDeviceModel {
    public var registers = [UInt8](repeating: 0, count: 256)
    /// The field the chip senses, µT, chip axes.
    public var field: () -> Vector3
    /// Status polls that read "not ready" after each conversion starts.
    public var readyAfterPolls = 0
    /// Data-ready never comes (a chip stuck in standby, a dead ADC).
    public var neverReady = false
    /// Every register write, in order.
    public private(set) var writes: [(register: UInt8, value: UInt8)] = []
    open var isReachable: Bool { true }
    /// Faults injected below the bus (`ChipFaults`): a stuck or saturated axis, noise, a slow rate, a clone.
    public var faults = ChipFaults()
    var pollsLeft = 0
    var lastConversion = -Double.infinity

    public init(field: @escaping () -> Vector3) {
        self.field = field
    }

    /// The field the chip converts now: what it senses, through its faults.
    func sensedField() -> Vector3 { faults.apply(field(), noise: faults.fieldNoise) }

    /// The register after `r` in a multi-byte read.
    open func next(after r: UInt8) -> UInt8 { r &+ 1 }
    open func willRead(_ r: UInt8) {}
    open func didRead(_ r: UInt8) {}
    open func didWrite(_ r: UInt8, _ v: UInt8) {}

    public func read(_ r: UInt8) -> UInt8 {
        willRead(r)
        let v = registers[Int(r)]
        didRead(r)
        return v
    }

    public func write(_ r: UInt8, _ v: UInt8) {
        writes.append((r, v))
        if faults.clone { return }
        registers[Int(r)] = v
        didWrite(r, v)
    }

    open func readBlock(_ register: UInt8, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var r = register
        for _ in 0..<count {
            out.append(read(r))
            r = next(after: r)
        }
        return out
    }

    /// Starts a conversion: the next `readyAfterPolls` polls see no data.
    func startConversion() { pollsLeft = readyAfterPolls }

    /// One status poll: whether the conversion has finished.
    func conversionDone() -> Bool {
        if neverReady { return false }
        if pollsLeft > 0 { pollsLeft -= 1; return false }
        if let rate = faults.outputRate {
            let now = faults.clock()
            guard now - lastConversion >= 1 / rate else { return false }
            lastConversion = now
        }
        return true
    }

    func setBit(_ r: UInt8, _ mask: UInt8, _ on: Bool) {
        registers[Int(r)] = on ? registers[Int(r)] | mask : registers[Int(r)] & ~mask
    }

    static func clamp(_ v: Double, _ lo: Int, _ hi: Int) -> (value: Int, clipped: Bool) {
        let r = v.rounded()
        if r < Double(lo) { return (lo, true) }
        if r > Double(hi) { return (hi, true) }
        return (Int(r), false)
    }

    func putLE(_ r: UInt8, _ v: Int) {
        let u = UInt16(bitPattern: Int16(truncatingIfNeeded: v))
        registers[Int(r)] = UInt8(u & 0xFF)
        registers[Int(r) + 1] = UInt8(u >> 8)
    }

    func putBE(_ r: UInt8, _ v: Int) {
        let u = UInt16(bitPattern: Int16(truncatingIfNeeded: v))
        registers[Int(r)] = UInt8(u >> 8)
        registers[Int(r) + 1] = UInt8(u & 0xFF)
    }
}
