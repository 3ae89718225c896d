internal import CLibUSB
import FeliCa

/// One small wrapper per libusb call: the only place that touches C, turning return codes
/// into ``LibUSBStatus`` values.
enum LibUSB {
    /// `libusb_init` for a context of the caller's own; nil when libusb could not start.
    static func makeContext() -> Result<OpaquePointer, LibUSBStatus> {
        var context: OpaquePointer? = nil
        let rc = libusb_init(&context)
        guard rc == 0, let context else { return .failure(LibUSBStatus(rc)) }
        return .success(context)
    }

    /// `libusb_exit`.
    static func exit(_ context: OpaquePointer) { libusb_exit(context) }

    /// One device on the bus, as enumeration sees it.
    struct Found {
        var vendor: UInt16
        var product: UInt16
        var bus: Int
        var address: Int
        /// The `libusb_device` with a reference held; release it with ``unref(_:)``.
        var device: OpaquePointer
    }

    /// `libusb_get_device_list` + `libusb_get_device_descriptor`: every device, each with
    /// a reference the caller releases.
    static func devices(_ context: OpaquePointer) -> Result<[Found], LibUSBStatus> {
        var list: UnsafeMutablePointer<OpaquePointer?>? = nil
        let n = libusb_get_device_list(context, &list)
        guard n >= 0, let list else { return .failure(LibUSBStatus(Int32(truncatingIfNeeded: n))) }
        defer { libusb_free_device_list(list, 0) }
        var found: [Found] = []
        for i in 0..<Int(n) {
            guard let device = list[i] else { continue }
            var d = libusb_device_descriptor()
            guard libusb_get_device_descriptor(device, &d) == 0 else {
                libusb_unref_device(device)
                continue
            }
            found.append(Found(vendor: d.idVendor, product: d.idProduct, bus: Int(libusb_get_bus_number(device)),
                               address: Int(libusb_get_device_address(device)), device: device))
        }
        return .success(found)
    }

    /// `libusb_unref_device`.
    static func unref(_ device: OpaquePointer) { libusb_unref_device(device) }

    /// `libusb_open`.
    static func open(_ device: OpaquePointer) -> Result<OpaquePointer, LibUSBStatus> {
        var handle: OpaquePointer? = nil
        let rc = libusb_open(device, &handle)
        guard rc == 0, let handle else { return .failure(LibUSBStatus(rc)) }
        return .success(handle)
    }

    /// `libusb_close`.
    static func close(_ handle: OpaquePointer) { libusb_close(handle) }

    /// `libusb_set_auto_detach_kernel_driver`: let libusb detach a kernel driver (the
    /// `port100` module) when claiming, and reattach it on release.
    static func setAutoDetach(_ handle: OpaquePointer, _ on: Bool) -> LibUSBStatus {
        LibUSBStatus(libusb_set_auto_detach_kernel_driver(handle, on ? 1 : 0))
    }

    /// `libusb_kernel_driver_active`: 1 when a kernel driver holds the interface.
    static func kernelDriverActive(_ handle: OpaquePointer, interface: Int32) -> Int32 {
        libusb_kernel_driver_active(handle, interface)
    }

    /// `libusb_claim_interface`.
    static func claim(_ handle: OpaquePointer, interface: Int32) -> LibUSBStatus {
        LibUSBStatus(libusb_claim_interface(handle, interface))
    }

    /// `libusb_release_interface`.
    static func release(_ handle: OpaquePointer, interface: Int32) -> LibUSBStatus {
        LibUSBStatus(libusb_release_interface(handle, interface))
    }

    /// `libusb_bulk_transfer` out: writes all of `bytes`; returns how many went out.
    static func bulkWrite(_ handle: OpaquePointer, endpoint: UInt8, _ bytes: [UInt8], timeoutMilliseconds: UInt32) -> Result<Int, LibUSBStatus> {
        var copy = bytes
        var sent: Int32 = 0
        let rc = copy.withUnsafeMutableBufferPointer { p in
            libusb_bulk_transfer(handle, endpoint, p.baseAddress, Int32(p.count), &sent, timeoutMilliseconds)
        }
        guard rc == 0 else { return .failure(LibUSBStatus(rc)) }
        return .success(Int(sent))
    }

    /// `libusb_bulk_transfer` in: one transfer of at most `capacity` bytes.
    static func bulkRead(_ handle: OpaquePointer, endpoint: UInt8, capacity: Int, timeoutMilliseconds: UInt32) -> Result<[UInt8], LibUSBStatus> {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var got: Int32 = 0
        let rc = buffer.withUnsafeMutableBufferPointer { p in
            libusb_bulk_transfer(handle, endpoint, p.baseAddress, Int32(p.count), &got, timeoutMilliseconds)
        }
        guard rc == 0 else { return .failure(LibUSBStatus(rc)) }
        return .success(Array(buffer.prefix(Int(got))))
    }
}

/// A libusb return code with its C name.
struct LibUSBStatus: Error, Hashable, CustomStringConvertible {
    var code: Int32
    init(_ code: Int32) { self.code = code }

    /// `LIBUSB_ERROR_ACCESS`: no permission on the device node.
    static let access = LibUSBStatus(-3)
    /// `LIBUSB_ERROR_NO_DEVICE`: the device left the bus.
    static let noDevice = LibUSBStatus(-4)
    /// `LIBUSB_ERROR_BUSY`: another driver or program holds the interface.
    static let busy = LibUSBStatus(-6)
    /// `LIBUSB_ERROR_TIMEOUT`.
    static let timeout = LibUSBStatus(-7)
    /// `LIBUSB_ERROR_OTHER`.
    static let other = LibUSBStatus(-99)

    var isSuccess: Bool { code >= 0 }

    /// The C name, e.g. `LIBUSB_ERROR_NO_DEVICE`.
    var name: String { String(cString: libusb_error_name(code)) }
    var description: String { name }
}
