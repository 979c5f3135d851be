@testable import BearingModel
@testable import BearingWire
@testable import BearingPublishing
@testable import BearingCalibration
import BearingSimulator
@testable import BearingMQTT
import XCTest

/// The outlier rounds take the median and the MAD by quickselect: it must pick what sorting would.
final class KthSmallestTests: XCTestCase {
    func testPicksWhatSortingWould() {
        var rng = SplitMix64(seed: 7)
        for count in [1, 2, 3, 5, 10, 101, 1000] {
            for pattern in ["uniform", "few distinct", "ascending", "descending", "equal"] {
                let values: [Double] = (0..<count).map { i in
                    switch pattern {
                    case "uniform": return rng.uniform(-1, 1)
                    case "few distinct": return Double(Int(rng.uniform(0, 4)))
                    case "ascending": return Double(i)
                    case "descending": return Double(count - i)
                    default: return 0.5
                    }
                }
                let sorted = values.sorted()
                for k in Set([0, count / 2, count - 1, Int(rng.uniform(0, Double(count)))]) {
                    var scratch = values
                    XCTAssertEqual(MagnetometerCalibrator.kthSmallest(&scratch, k), sorted[k], "\(pattern), \(count) values, k = \(k)")
                    XCTAssertEqual(scratch.sorted(), sorted, "only reordered")
                }
            }
        }
    }
}
