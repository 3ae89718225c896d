import FeliCa
import FeliCaTransportSupport
import FeliCaUSB

/// USB readers driven directly (Sony RC-S380): opening them by device string, and listing them.
enum USBReaderDevice {
    /// Opens `usb`, `usb:<vid>:<pid>` or `usb:<bus>:<address>`.
    static func open(_ selector: USBReaderSelector, name: String) async throws -> any Transport {
        try await RCS380Transport.open(selector, name: name)
    }

    /// The supported readers on the bus, for `felica devices` and the default device.
    static func list() async -> [DeviceListing] {
        await USBReaders.list().map { r in
            let state: String
            if let problem = r.problem {
                state = "cannot open: \(problem)"
            } else if r.kernelDriverBound {
                state = "ready (the kernel's port100 driver is detached while in use)"
            } else {
                state = "ready"
            }
            return DeviceListing(stack: "usb", name: r.model.name, device: r.device, state: state)
        }
    }
}
