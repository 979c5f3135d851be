// The chips Bearing drives, by kind: what `auto` probes for and what config and CLI names resolve to.

/// Every supported chip.
public enum MagnetometerChips {
    public static var all: [any MagnetometerDriver.Type] { [
        HMC5883L.self, QMC5883L.self, LIS3MDL.self, LIS2MDL.self, MMC5983MA.self, BMM150.self, AK09916.self, AK8963.self,
    ] }

    public static func driver(named name: String) -> (any MagnetometerDriver.Type)? {
        all.first { $0.descriptor.name == name.lowercased() }
    }

    public static var names: [String] { all.map { $0.descriptor.name } }
}

/// Every supported accelerometer + gyroscope chip, and the accelerometer-only LSM303.
public enum InertialChips {
    public static var all: [any InertialDriver.Type] { [
        LSM6DSx.self, LSM9DS1.self, MPU6xxx.self, ICM20948.self, LSM303.self,
    ] }

    public static func driver(named name: String) -> (any InertialDriver.Type)? {
        all.first { $0.descriptor.name == name.lowercased() }
    }

    public static var names: [String] { all.map { $0.descriptor.name } }
}
