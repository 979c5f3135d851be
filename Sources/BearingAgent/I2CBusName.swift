/// How a bus is named in config and on the command line.
public enum I2CBusName {
    /// `/dev/…` as given, a bus number as `/dev/i2c-N`, `simulator` as is; nil for anything else.
    public static func path(_ text: String) -> String? {
        if text == "simulator" || text == "simulator:tumble" || text.hasPrefix("/dev/") { return text }
        if let n = Int(text), (0...255).contains(n) { return "/dev/i2c-\(n)" }
        return nil
    }
}
