import BearingModel
/// What to tell the person turning the device: which way to hold it next, and the coverage map.
public enum CalibrationGuide {
    /// A plain hint that fills the biggest gap in coverage.
    ///
    /// `regionCounts` are counts per region of calibrated field directions in the chip's axes;
    /// `orientation` maps chip axes to board axes (x forward, y right, z down). The field the chip
    /// senses points north and down (up in the southern hemisphere), so to see the field along board
    /// direction u the device must be turned until u points down (up in the south).
    public static func hint(regionCounts: [Int], orientation: Orientation = .identity, southernHemisphere: Bool = false) -> String {
        guard regionCounts.count == SphereRegions.count else { return "turn it slowly through every orientation" }
        var missing = Vector3.zero
        var empty = 0
        for r in 0..<SphereRegions.count where regionCounts[r] < 3 {
            missing = missing + orientation.toBoard(SphereRegions.center(of: r))
            empty += 1
        }
        if empty == 0 { return "coverage complete: keep turning slowly, or press Enter to finish" }
        // Scattered gaps cancel out: then aim at the gap nearest their mean, or any gap.
        var target = missing
        if missing.length < 0.2 * Double(empty) {
            let gaps = (0..<SphereRegions.count).filter { regionCounts[$0] < 3 }.map { orientation.toBoard(SphereRegions.center(of: $0)) }
            target = gaps.max(by: { $0.dot(missing) < $1.dot(missing) }) ?? missing
        }
        var u = target.normalized
        if southernHemisphere { u = -u }
        let a = [abs(u.x), abs(u.y), abs(u.z)]
        let phrase: String
        switch a.firstIndex(of: a.max()!)! {
        case 0: phrase = u.x > 0 ? "tilt the nose down" : "tilt the nose up (tail down)"
        case 1: phrase = u.y > 0 ? "roll it onto its right side" : "roll it onto its left side"
        default: phrase = u.z > 0 ? "hold it level, right way up" : "turn it upside down"
        }
        return "\(phrase) and turn it slowly through a full circle"
    }
}
