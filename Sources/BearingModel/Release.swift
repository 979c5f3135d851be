/// Bearing's version, stated once: `bearing --version`, the VERSION message's `release` on the socket and the
/// TCP door, and the Debian package's version (`scripts/package` asks the binary).
public enum Release {
    public static let version = "0.11.0"
    /// VERSION's `release`: gpsd puts its own version there; Bearing names itself, so a client can tell.
    public static let wireRelease = "bearing \(version)"
}
