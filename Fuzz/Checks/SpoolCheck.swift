// The spool line reader fuzz target's checks (Fuzz/Spool). Filled in by the spool work.
import BearingCore

public enum SpoolCheck {
    public static func failure(_ bytes: [UInt8]) -> String? {
        for line in bytes.split(separator: 0x0A) { _ = SpoolRecord.parse(line) }
        return nil
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) { FuzzFailure.abort("fuzz-spool", f) }
    }
}
