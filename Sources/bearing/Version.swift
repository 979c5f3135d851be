/// Bearing's version: `bearing --version`, and the Debian package's version (`scripts/package` asks the binary).
let bearingVersion = "0.11.0"
