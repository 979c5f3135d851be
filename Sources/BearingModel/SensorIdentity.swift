/// Which sensor something was learnt on: the board profile, the bus and address (the sample's `device`, e.g.
/// `i2c:/dev/i2c-1:0x0d`), the chip, and the chip's serial or unique ID where it has one (none of the chips
/// Bearing drives has one today). What online calibration and the deviation from driving learn is kept with it,
/// and used only on the same sensor: a hard iron learnt on the simulator, or on the Pi's other compass, is
/// another sensor's.
public struct SensorIdentity: Codable, Equatable, Sendable, CustomStringConvertible {
    /// The board profile (`rpi-4b`, `simulator`); nil when the config names none.
    public var board: String?
    public var device: String
    public var chip: String
    public var serial: String?

    public init(board: String?, device: String, chip: String, serial: String? = nil) {
        self.board = board
        self.device = device
        self.chip = chip
        self.serial = serial
    }

    /// `qmc5883l at i2c:/dev/i2c-1:0x0d on board rpi-4b`.
    public var description: String {
        "\(chip) at \(device)" + (serial.map { " (serial \($0))" } ?? "") + " on " + (board.map { "board \($0)" } ?? "no named board")
    }
}
