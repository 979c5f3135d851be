import ArgumentParser
import BearingDaemon
import BearingTerminal
import BearingSensors
import BearingAttitude
import BearingModel
import BearingWire
import BearingPOSIX
import BearingMQTT
import BearingConfig
import BearingService
import BearingLog
import BearingGPSD
import BearingPublishing
import BearingMarine

struct Operators: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the operators a chain can use and the classes each applies to.")

    @Flag(help: "Print the table as Markdown (the README's table).") var markdown = false

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
