import FeliCa
import FeliCaLibNFC

/// The devices that live in other modules: replay, libnfc and PC/SC. Each hook is filled
/// in by the work that brings the device.
enum ExtraDevices {
    static func openReplay(path: String, name: String) async throws -> any Transport {
        try TraceHook.replay(path, name: name)
    }

    static func openLibNFC(connstring: String?, name: String) async throws -> any Transport {
        try await LibNFCTransport.open(name)
    }

    static func openPCSC(reader: String?, name: String, dialect: String? = nil) async throws -> any Transport {
        try await PCSCDevice.open(reader: reader, name: name, dialect: dialect)
    }

    /// Real readers from every stack, for `felica devices` and the default device.
    static func listReaders() async -> [DeviceListing] {
        await USBReaderDevice.list() + libnfcReaders() + PCSCDevice.list()
    }

    /// libnfc's readers: those it finds itself, plus `LIBNFC_DEVICE` / its configuration.
    static func libnfcReaders() async -> [DeviceListing] {
        await LibNFCDevices.list().map { d in
            DeviceListing(stack: "libnfc", name: d.name ?? d.connectionString, device: d.device,
                          state: d.problem.map { "cannot open: \($0)" } ?? "ready")
        }
    }
}
