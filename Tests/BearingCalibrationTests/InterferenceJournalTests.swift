import BearingAttitude
import XCTest

/// Interference as episodes, and what the journal says of them: a line when one begins and one when it ends,
/// and at most one line a minute for a source that keeps coming back.
final class InterferenceJournalTests: XCTestCase {
    /// Samples at 10 Hz from `from` to `to` seconds, disturbed where `disturbed(t)` says, 12 % off when disturbed.
    func run(_ episodes: inout InterferenceEpisodes, from: Double, to: Double, disturbed: (Double) -> Bool) -> [(Double, InterferenceEpisodes.Event)] {
        var out: [(Double, InterferenceEpisodes.Event)] = []
        var t = from
        while t < to {
            let d = disturbed(t)
            if let e = episodes.observe(d ? .norm : nil, normOff: d ? 12 : 1, dipOff: d ? -3 : 0.5, at: t) { out.append((t, e)) }
            t += 0.1
        }
        return out
    }

    func testAnEpisodeEndsOnlyAfterTheFieldSettlesAndKeepsItsLargestDeparture() {
        var episodes = InterferenceEpisodes(settle: 2)
        // Disturbed 10–15 s with a gap of 1 s (12–13 s): one episode; then 40–41 s: another.
        let events = run(&episodes, from: 0, to: 60) { ($0 >= 10 && $0 < 12) || ($0 >= 13 && $0 < 15) || ($0 >= 40 && $0 < 41) }
        XCTAssertEqual(events.count, 4, "\(events)")
        guard events.count == 4, case .began(let b) = events[0].1, case .ended(let e) = events[1].1 else { return XCTFail("\(events)") }
        XCTAssertEqual(b.began, 10, accuracy: 0.11)
        XCTAssertEqual(e.ended ?? 0, 16.9, accuracy: 0.11, "ends 2 s after the last disturbed sample")
        XCTAssertEqual(e.duration, 4.9, accuracy: 0.11)
        XCTAssertEqual(e.onsets, 2)
        XCTAssertEqual(e.largestNorm, 12)
        XCTAssertEqual(e.largestDip, 3)
        XCTAssertNil(episodes.current)
    }

    func testAStepKeepsItsEpisodeAndNamesIt() {
        var episodes = InterferenceEpisodes()
        XCTAssertNotNil(episodes.observe(.norm, normOff: 20, dipOff: 0, at: 0))
        XCTAssertNil(episodes.observe(.step, normOff: 20, dipOff: 0, at: 10))
        XCTAssertEqual(episodes.current?.cause, .step)
    }

    /// A source that comes and goes for ten minutes (0.5 s on, 2.5 s off: each episode ends before the next) fills
    /// the journal with at most one line a minute after the first two.
    func testAFlappingSourceIsToldAtMostOnceAMinute() {
        var episodes = InterferenceEpisodes(settle: 2)
        var journal = InterferenceJournal()
        let events = run(&episodes, from: 0, to: 600) { $0.truncatingRemainder(dividingBy: 3) < 0.5 }
        XCTAssertGreaterThan(events.count, 300, "an episode every 3 s")
        var lines: [(Double, String)] = []
        for (t, e) in events { if let line = journal.line(for: e) { lines.append((t, line)) } }
        for l in lines.prefix(4) { print("journal: \(String(format: "%.1f", l.0)) s \(l.1)") }
        XCTAssertLessThanOrEqual(lines.count, 2 + 10, "\(lines.count) lines in 10 minutes")
        XCTAssertGreaterThanOrEqual(lines.count, 2 + 8, "the flapping is still told, once a minute")
        XCTAssertTrue(lines[0].1.hasPrefix("magnetic interference began (norm 12.0 % off the field)"), lines[0].1)
        XCTAssertTrue(lines[1].1.hasPrefix("magnetic interference ended after 0.4 s (largest: norm 12.0 % off the field, dip 3.0° off)"), lines[1].1)
        XCTAssertTrue(lines[2].1.contains("more episodes not told one by one"), lines[2].1)
        for (a, b) in zip(lines.dropFirst(2), lines.dropFirst(3)) { XCTAssertGreaterThanOrEqual(b.0 - a.0, 60 - 1e-9) }
        // Every episode is accounted for: told one by one, or counted in a summary.
        let counted = lines.compactMap { line -> Int? in
            guard let r = line.1.range(of: #"(\d+) more episodes"#, options: .regularExpression) else { return nil }
            return Int(line.1[r].split(separator: " ")[0])
        }.reduce(0, +)
        let told = lines.filter { $0.1.contains("ended after") }.count
        let ended = events.filter { if case .ended = $0.1 { return true }; return false }.count
        XCTAssertLessThanOrEqual(ended - (told + counted), 20, "only the last minute's may wait for the next line")
    }

    /// Episodes a few minutes apart are each told, begun and ended.
    func testSeparateEpisodesAreEachTold() {
        var episodes = InterferenceEpisodes()
        var journal = InterferenceJournal()
        let events = run(&episodes, from: 0, to: 400) { ($0 >= 10 && $0 < 20) || ($0 >= 200 && $0 < 230) }
        let lines = events.compactMap { journal.line(for: $0.1) }
        XCTAssertEqual(lines.count, 4, "\(lines)")
        XCTAssertTrue(lines[3].hasPrefix("magnetic interference ended after 29.9 s"), lines[3])
    }
}
