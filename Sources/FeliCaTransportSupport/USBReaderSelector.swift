/// Which USB reader to open, in the forms nfcpy users know: the first supported one, one
/// model by vendor and product ID, or one device by its place on the bus (as `lsusb`
/// prints it).
public enum USBReaderSelector: Hashable, Sendable {
    /// The first supported reader found (`usb`).
    case first
    /// A reader by USB vendor and product ID (`usb:054c:06c1`, hex).
    case id(vendor: UInt16, product: UInt16)
    /// The reader at this bus number and device address (`usb:001:004`, decimal).
    case path(bus: Int, address: Int)

    /// Whether a device with these numbers is the one selected.
    public func matches(vendor: UInt16, product: UInt16, bus: Int, address: Int) -> Bool {
        switch self {
        case .first: true
        case .id(let v, let p): v == vendor && p == product
        case .path(let b, let a): b == bus && a == address
        }
    }
}
