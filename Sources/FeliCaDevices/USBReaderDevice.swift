import FeliCa
import FeliCaTransportSupport
import FeliCaUSB

/// USB readers driven directly (Sony RC-S380), as `felica devices` and the default device see them.
enum USBReaderDevice {
    /// The supported readers on the bus, each with the `usb:<bus>:<address>` spec that opens it.
    static func list() async -> [DeviceListing] {
        await USBReaders.list().map { r in
            let availability: DeviceListing.Availability
            if let problem = r.problem {
                availability = .cannotOpen(reason: problem)
            } else if r.kernelDriverBound {
                availability = .usable(state: "ready (the kernel's port100 driver is detached while in use)")
            } else {
                availability = .usable(state: "ready")
            }
            return DeviceListing(stack: "usb", name: r.model.name, spec: DeviceSpec(.usb(.path(bus: r.location.bus, address: r.location.address))),
                                 availability: availability)
        }
    }
}
