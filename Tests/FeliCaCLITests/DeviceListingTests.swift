import Foundation
import Testing

/// `felica devices` and the default reader take the best path to each reader libnfc finds.
@Suite struct DeviceListingTests {
    @Test func aPN532LibnfcFindsIsListedAndChosenAsTheNativeTransport() throws {
        let sim = try EmulatedPN532(["--card", "suica"])
        let path = String(sim.connectionString.dropFirst("pn532_uart:".count))
        let environment = ["LIBNFC_DEVICE": sim.connectionString, "PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm")]
        let listed = try run(["devices", "--json"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("{\"stack\":\"pn532\",\"name\":\"PN532 on \(path)\",\"device\":\"pn532:\(path)\",\"state\":\"ready\"}"), "\(listed.stdout)")
        #expect(!listed.stdout.contains("\"libnfc:"), "\(listed.stdout)")
        let balance = try run(["balance", "--json"], environment: environment)
        #expect(balance.status == 0, "\(balance.stderr)")
        #expect(balance.stdout.contains("\"balance\":1234"), "\(balance.stdout)")
        #expect(try run(["balance", "--json", "--device", "virtual:suica"]).stdout == balance.stdout)
    }

    @Test func aSerialReaderTheNativeTransportCannotOpenStaysLibnfcs() throws {
        for connstring in ["pn532_uart:/dev/felica-no-such-tty", "pn532_uart:/dev/felica-no-such-tty:9600"] {
            let r = try run(["devices", "--json"], environment: ["LIBNFC_DEVICE": connstring, "PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm")])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("\"stack\":\"libnfc\",\"name\":\"\(connstring)\",\"device\":\"libnfc:\(connstring)\",\"state\":\"cannot open: "), "\(r.stdout)")
            #expect(!r.stdout.contains("\"pn532:"), "\(r.stdout)")
        }
    }
}
