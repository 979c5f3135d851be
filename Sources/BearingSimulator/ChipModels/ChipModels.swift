import BearingModel
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// Builds the model of a named chip, sensing `field`, attached to a bus at the chip's usual address.
public enum ChipModels {
    /// Attaches the model of `chip` (a driver name) at `address` (default: the chip's first address);
    /// returns the model that senses the field. For `ak09916` an ICM-20948 host is attached at 0x68 too, for
    /// `ak8963` an MPU-9250.
    @discardableResult
    public static func attach(chip: String, to bus: SimulatedI2CBus, address: UInt8? = nil,
                              field: @escaping () -> Vector3) -> RegisterChipModel? {
        switch chip.lowercased() {
        case "hmc5883l": return put(HMC5883LModel(field: field), bus, address ?? 0x1E)
        case "qmc5883l": return put(QMC5883LModel(field: field), bus, address ?? 0x0D)
        case "lis3mdl": return put(LIS3MDLModel(field: field), bus, address ?? 0x1C)
        case "lis2mdl": return put(LIS2MDLModel(field: field), bus, address ?? 0x1E)
        case "mmc5983ma": return put(MMC5983MAModel(field: field), bus, address ?? 0x30)
        case "bmm150": return put(BMM150Model(field: field), bus, address ?? 0x10)
        case "ak09916":
            let ak = AK09916Model(field: field)
            bus.attach(ICM20948Model(magnetometer: ak), at: 0x68)
            return put(ak, bus, address ?? 0x0C)
        case "ak8963":
            let ak = AK8963Model(field: field)
            bus.attach(MPU6xxxModel(variant: .mpu9250, magnetometer: ak, motion: { .level }), at: 0x68)
            return put(ak, bus, address ?? 0x0C)
        default: return nil
        }
    }

    /// Attaches the model of the accelerometer + gyroscope `chip` (an inertial driver name; for a family,
    /// `variant` picks the member) at `address` (default: the chip's first address), sensing `motion`.
    /// An `icm20948` gets its AK09916 at 0x0C, an `mpu9250` its AK8963, both sensing no field. An
    /// `lsm303agr` gets its magnetometer at 0x1E (a `LIS2MDLModel`), an `lsm303dlhc` an `HMC5883LModel`
    /// there standing in for the DLHC's magnetometer (same ID and data registers; the DLHC's gains differ),
    /// both sensing no field; `lsm303` is the DLHC's accelerometer alone, which the driver cannot tell
    /// from an AGR.
    @discardableResult
    public static func attachInertial(chip: String, to bus: SimulatedI2CBus, address: UInt8? = nil,
                                      motion: @escaping () -> Motion) -> InertialChipModel? {
        func add(_ m: InertialChipModel, _ a: UInt8) -> InertialChipModel {
            bus.attach(m, at: a)
            return m
        }
        switch chip.lowercased() {
        case "lsm6ds3": return add(LSM6DSxModel(variant: .lsm6ds3, motion: motion), address ?? 0x6A)
        case "lsm6dsl": return add(LSM6DSxModel(variant: .lsm6dsl, motion: motion), address ?? 0x6A)
        case "lsm6dsx", "lsm6dsox": return add(LSM6DSxModel(variant: .lsm6dsox, motion: motion), address ?? 0x6A)
        case "lsm9ds1": return add(LSM9DS1Model(motion: motion), address ?? 0x6A)
        case "mpu6050", "mpu6xxx": return add(MPU6xxxModel(variant: .mpu6050, motion: motion), address ?? 0x68)
        case "mpu6500": return add(MPU6xxxModel(variant: .mpu6500, motion: motion), address ?? 0x68)
        case "mpu9250", "mpu9255":
            let ak = AK8963Model { .zero }
            let m = MPU6xxxModel(variant: chip.lowercased() == "mpu9250" ? .mpu9250 : .mpu9255, magnetometer: ak, motion: motion)
            bus.attach(ak, at: 0x0C)
            return add(m, address ?? 0x68)
        case "icm20948":
            let ak = AK09916Model { .zero }
            bus.attach(ak, at: 0x0C)
            return add(ICM20948Model(magnetometer: ak, motion: motion), address ?? 0x68)
        case "lsm303": return add(LSM303Model(variant: .dlhc, motion: motion), address ?? 0x19)
        case "lsm303dlhc":
            bus.attach(HMC5883LModel { .zero }, at: 0x1E)
            return add(LSM303Model(variant: .dlhc, motion: motion), address ?? 0x19)
        case "lsm303agr":
            bus.attach(LIS2MDLModel { .zero }, at: 0x1E)
            return add(LSM303Model(variant: .agr, motion: motion), address ?? 0x19)
        default: return nil
        }
    }

    /// The inertial models `attachInertial` knows: every member of each family.
    public static let inertialNames = ["lsm6ds3", "lsm6dsl", "lsm6dsox", "lsm9ds1", "mpu6050", "mpu6500", "mpu9250",
                                       "mpu9255", "icm20948", "lsm303", "lsm303dlhc", "lsm303agr"]

    private static func put(_ m: RegisterChipModel, _ bus: SimulatedI2CBus, _ a: UInt8) -> RegisterChipModel {
        bus.attach(m, at: a)
        return m
    }

    public static let names = ["hmc5883l", "qmc5883l", "lis3mdl", "lis2mdl", "mmc5983ma", "bmm150", "ak09916", "ak8963"]
}
