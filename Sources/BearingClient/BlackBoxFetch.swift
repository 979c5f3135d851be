import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Fetching the daemon's black-box ring over its UNIX socket (`?BLACKBOX;`).
public enum BlackBoxFetch {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// The ring as a recording file; throws naming what failed (no daemon, black box off, a bad reply).
    public static func ring(socketPath: String) throws -> [UInt8] {
        let client = BearingClient(.unix(socketPath))
        try client.connect()
        defer { client.disconnect() }
        let reply = try client.request(.blackBox, expecting: "BLACKBOX", timeout: 30)
        guard let text = reply["data"]?.string, let data = Data(base64Encoded: text),
              let size = reply["bytes"]?.number, Int(size) == data.count else {
            throw Failure(description: "the daemon's BLACKBOX reply is damaged (its size and data disagree)")
        }
        return Array(data)
    }
}
