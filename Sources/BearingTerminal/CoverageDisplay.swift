import BearingCalibration
import BearingModel

/// How `bearing calibrate` draws coverage on a terminal: the glyphs live here, not in the pure core.
public enum CoverageDisplay {
    /// The coverage map: one text row per band of regions (north cap to south cap), `█` for a region
    /// with three or more samples, `▒` for one or two, `·` for none; rows centred in `width` columns.
    public static func map(regionCounts: [Int], width: Int = 40) -> [String] {
        SphereRegions.rows.map { row in
            let cells = row.map { r -> String in
                let n = r < regionCounts.count ? regionCounts[r] : 0
                return n >= 3 ? "█" : (n > 0 ? "▒" : "·")
            }
            let text = cells.count > 20 ? cells.joined() : cells.joined(separator: " ")
            let pad = max(0, (width - text.count) / 2)
            return String(repeating: " ", count: pad) + text
        }
    }

    /// A progress bar of `filled` out of `total`.
    public static func bar(_ filled: Double, total: Double, width: Int = 30) -> String {
        let f = total > 0 ? max(0, min(1, filled / total)) : 0
        let n = Int((f * Double(width)).rounded())
        return "[" + String(repeating: "█", count: n) + String(repeating: "░", count: width - n) + "]"
    }
}
