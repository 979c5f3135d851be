/// How a bus is named in config and on the command line.
public enum I2CBusName {
    /// The simulated buses: `bearing run`'s demo board, a tumbling one for `calibrate`, one whose IMU is held
    /// in the six faces and tilts in turn for `calibrate --accel`.
    public static let simulated: Set<String> = ["simulator", "simulator:tumble", "simulator:six-position"]

    /// `/dev/…` as given, a bus number as `/dev/i2c-N`, a simulated bus as is; nil for anything else.
    public static func path(_ text: String) -> String? {
        if simulated.contains(text) || text.hasPrefix("/dev/") { return text }
        if let n = Int(text), (0...255).contains(n) { return "/dev/i2c-\(n)" }
        return nil
    }
}
