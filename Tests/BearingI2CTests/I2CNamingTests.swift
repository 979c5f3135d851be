import BearingI2C
import XCTest

/// How buses are named, and I2C errors described: what the user reads in config errors and the journal.
final class I2CNamingTests: XCTestCase {
    func testBusNames() {
        XCTAssertEqual(I2CBusName.path("1"), "/dev/i2c-1")
        XCTAssertEqual(I2CBusName.path("255"), "/dev/i2c-255")
        XCTAssertNil(I2CBusName.path("256"))
        XCTAssertNil(I2CBusName.path("-1"))
        XCTAssertEqual(I2CBusName.path("/dev/i2c-7"), "/dev/i2c-7")
        XCTAssertEqual(I2CBusName.path("simulator"), "simulator")
        XCTAssertNil(I2CBusName.path("simulator:unknown"))
        XCTAssertNil(I2CBusName.path("i2c-1"))
    }

    func testAddressesAreWrittenAsI2CToolsWritesThem() {
        XCTAssertEqual(I2CError.hex(0x0D), "0x0d")
        XCTAssertEqual(I2CError.hex(0x6A), "0x6a")
    }
}
