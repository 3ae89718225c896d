@testable import FeliCaCLI
import Testing

private func reader(_ device: String, _ state: String) -> DeviceListing {
    DeviceListing(stack: String(device.prefix { $0 != ":" }), name: device, device: device, state: state)
}

@Test func defaultDeviceSkipsReadersThatCannotBeOpened() throws {
    let readers = [reader("libnfc:pn532_uart:/dev/ttyUSB9", "cannot open: no such file"), reader("pcsc:Sony RC-S300", "card present")]
    let (chosen, note) = try #require(DeviceResolver.choose(readers))
    #expect(chosen.device == "pcsc:Sony RC-S300")
    #expect(note == "2 readers found, using pcsc:Sony RC-S300 (1 cannot be opened) — pass --device to choose")
}

@Test func defaultDeviceFallsBackToTheFirstWhenNoneCanBeOpened() throws {
    let readers = [reader("libnfc:a", "cannot open: busy"), reader("libnfc:b", "unusable: kernel driver")]
    #expect(try #require(DeviceResolver.choose(readers)).0.device == "libnfc:a")
    #expect(DeviceResolver.choose([]) == nil)
    #expect(try #require(DeviceResolver.choose([reader("pcsc:x", "empty")])).note == nil)
}
