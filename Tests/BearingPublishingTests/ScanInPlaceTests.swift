import BearingPublishing
import BearingDaemon
import OpenCombine
import XCTest

/// `scanInPlace`: the state stepped in place, nil emitting nothing without using the downstream's demand,
/// each subscription with its own state.
final class ScanInPlaceTests: XCTestCase {
    /// A subscriber that asks for `demand` elements and records what comes.
    final class Recorder: Subscriber {
        typealias Input = Int
        typealias Failure = Never
        var received: [Int] = []
        var finished = false
        let demand: Int
        init(demand: Int) { self.demand = demand }
        func receive(subscription: Subscription) { subscription.request(.max(demand)) }
        func receive(_ input: Int) -> Subscribers.Demand { received.append(input); return .none }
        func receive(completion: Subscribers.Completion<Never>) { finished = true }
    }

    /// Running sums, emitted only when even.
    func evenSums<P: Publisher>(_ p: P) -> Publishers.ScanInPlace<P, Int, Int> where P.Output == Int {
        p.scanInPlace(0) { (sum: inout Int, x: Int) -> Int? in
            sum += x
            return sum.isMultiple(of: 2) ? sum : nil
        }
    }

    func testStepsTheStateAndSkippedElementsDoNotUseDemand() {
        let recorder = Recorder(demand: 3)
        evenSums(Publishers.Sequence<[Int], Never>(sequence: [1, 1, 3, 1, 2, 2, 5, 1, 7])).subscribe(recorder)
        // Sums 1, 2, 5, 6, 8, 10, …: the odd ones are skipped, and three even ones fill the demand of three.
        XCTAssertEqual(recorder.received, [2, 6, 8])
        XCTAssertFalse(recorder.finished, "the demand ran out before the sequence did")

        let all = Recorder(demand: 100)
        evenSums(Publishers.Sequence<[Int], Never>(sequence: [1, 1, 3, 1, 2, 2, 5, 1, 7])).subscribe(all)
        XCTAssertEqual(all.received, [2, 6, 8, 10, 16])
        XCTAssertTrue(all.finished)
    }

    func testEachSubscriptionHasItsOwnState() {
        let subject = PassthroughSubject<Int, Never>()
        let sums = evenSums(subject)
        var first: [Int] = [], second: [Int] = []
        let a = sums.sink { first.append($0) }
        subject.send(2)
        let b = sums.sink { second.append($0) }
        subject.send(4)
        XCTAssertEqual(first, [2, 6])
        XCTAssertEqual(second, [4], "a new subscription starts from the initial state")
        a.cancel(); b.cancel()
    }
}
