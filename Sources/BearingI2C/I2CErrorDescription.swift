import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// What an I2C failure most likely means on a Linux board, and what to do about it.
extension I2CError: CustomStringConvertible {
    public var description: String {
        let addr = address.map(I2CError.hex) ?? ""
        var where_ = "\(operation.rawValue)"
        if let register { where_ += " register \(I2CError.hex(register))" }
        let cause = "\(where_): \(String(cString: strerror(errno))) (errno \(errno))" + (detail.map { "; \($0)" } ?? "")
        switch errno {
        case EBUSY where operation == .select:
            return "a kernel driver owns \(addr) on \(bus) (unbind it, or remove its dtoverlay); \(cause)"
        case ENOENT where operation == .open:
            return "\(bus) does not exist: enable I2C (raspi-config, or dtparam=i2c_arm=on) and load i2c-dev; \(cause)"
        case EACCES where operation == .open, EPERM where operation == .open:
            return "no permission to open \(bus): add the user to group i2c (sudo usermod -aG i2c USER); \(cause)"
        case _ where isNoAnswer && address != nil:
            return "nothing answers at \(addr) on \(bus); \(cause)"
        default:
            return address == nil ? "\(bus): \(cause)" : "\(bus) \(addr): \(cause)"
        }
    }
}
