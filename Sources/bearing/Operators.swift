import ArgumentParser
import BearingWire

struct Operators: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the operators a chain can use and the classes each applies to.")

    @Flag(help: "Print the table as Markdown (docs/operators.md's table).") var markdown = false

    func run() {
        if markdown {
            print(OperatorSpec.markdownTable)
            return
        }
        for info in OperatorSpec.table {
            print("\(info.name)\n    \(info.summary)\n    parameters: \(info.parameters)\n    applies to: \(StreamClass.list(info.classes))")
        }
    }
}
