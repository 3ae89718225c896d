internal import CPCSCLite
import FeliCa
import FeliCaReaderCodecs
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A reader's state as `SCardGetStatusChange` reports it.
struct ReaderState: Sendable {
    var name: String
    /// `dwEventState`: SCARD_STATE_* bits, event counter in the high 16 bits.
    var eventState: UInt
    var atr: [UInt8]

    private func has(_ flag: Int32) -> Bool { eventState & UInt(flag) != 0 }
    /// SCARD_STATE_PRESENT.
    var isPresent: Bool { has(SCARD_STATE_PRESENT) }
    /// SCARD_STATE_EMPTY.
    var isEmpty: Bool { has(SCARD_STATE_EMPTY) }
    /// SCARD_STATE_EXCLUSIVE or SCARD_STATE_INUSE.
    var inUse: Bool { has(SCARD_STATE_EXCLUSIVE) || has(SCARD_STATE_INUSE) }
    /// SCARD_STATE_EXCLUSIVE.
    var isExclusive: Bool { has(SCARD_STATE_EXCLUSIVE) }
    /// SCARD_STATE_MUTE.
    var isMute: Bool { has(SCARD_STATE_MUTE) }
    /// SCARD_STATE_UNAVAILABLE or SCARD_STATE_UNKNOWN.
    var isUnavailable: Bool { has(SCARD_STATE_UNAVAILABLE) || has(SCARD_STATE_UNKNOWN) }
    /// A card is there and its ATR says FeliCa.
    var holdsFeliCa: Bool { isPresent && !isMute && ((try? ATR(atr))?.isFeliCa ?? false) }
}

/// An established pcsc-lite context: one owner, released exactly once in `deinit`.
///
/// `@unchecked Sendable`: every call except ``cancel()`` runs on the owner's device queue,
/// one at a time; `SCardCancel` is the one call pcsc-lite documents as safe from another
/// thread while the context is blocked in `SCardGetStatusChange`.
final class PCSCContext: @unchecked Sendable {
    private let handle: SCARDCONTEXT
    /// Set by ``cancel()``; later waits end at once.
    private let cancelled = Mutex(false)

    /// Set once the context has been released.
    private let released = Mutex(false)

    private init(handle: SCARDCONTEXT) { self.handle = handle }

    /// A backstop only: the last reference can drop on any thread, even while the process
    /// exits and libpcsclite tears itself down, so owners call ``release()`` on their device
    /// queue first.
    deinit { release() }

    /// SCardReleaseContext, once.
    func release() {
        let first = released.withLock { r in
            defer { r = true }
            return !r
        }
        if first { SCardReleaseContext(handle) }
    }

    /// SCardEstablishContext (system scope).
    static func establish() throws(FeliCaError) -> PCSCContext {
        var h: SCARDCONTEXT = 0
        let rc = SCardEstablishContext(DWORD(SCARD_SCOPE_SYSTEM), nil, nil, &h)
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardEstablishContext", phase: .context) }
        return PCSCContext(handle: h)
    }

    /// SCardListReaders: every reader's name; none is an empty list, not an error.
    func readerNames() throws(FeliCaError) -> [String] {
        var length: DWORD = 0
        var rc = SCardListReaders(handle, nil, nil, &length)
        if rc == SCARD_E_NO_READERS_AVAILABLE { return [] }
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardListReaders", phase: .listing) }
        var buffer = [CChar](repeating: 0, count: Int(length))
        rc = SCardListReaders(handle, nil, &buffer, &length)
        if rc == SCARD_E_NO_READERS_AVAILABLE { return [] }
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardListReaders", phase: .listing) }
        // A multi-string: names separated by NUL, ended by an empty name.
        var names: [String] = []
        var current: [UInt8] = []
        for c in buffer.prefix(Int(length)) {
            if c == 0 {
                if current.isEmpty { break }
                names.append(String(decoding: current, as: UTF8.self))
                current = []
            } else {
                current.append(UInt8(bitPattern: c))
            }
        }
        return names
    }

    /// SCardGetStatusChange: waits until a reader's state differs from `known` (nil = report
    /// at once), or `timeout` passes (then returns nil). `timeout` nil waits without limit.
    func statusChange(_ readers: [String], known: [UInt]?, timeout: Duration?) throws(FeliCaError) -> [ReaderState]? {
        if known != nil && cancelled.withLock({ $0 }) {
            throw FeliCaError(.cancelled, "waiting for a card was cancelled")
        }
        let names = readers.map { strdup($0) }
        defer { names.forEach { free($0) } }
        var states = names.enumerated().map { i, name in
            var s = SCARD_READERSTATE()
            s.szReader = UnsafePointer(name)
            s.dwCurrentState = DWORD(known?[i] ?? UInt(SCARD_STATE_UNAWARE))
            return s
        }
        let ms: DWORD = timeout.map { t in
            let (s, atto) = t.components
            return DWORD(clamping: max(0, s * 1000 + atto / 1_000_000_000_000_000))
        } ?? DWORD(INFINITE)
        let rc = SCardGetStatusChange(handle, known == nil ? 0 : ms, &states, DWORD(states.count))
        if rc == SCARD_E_TIMEOUT { return nil }
        guard rc == SCARD_S_SUCCESS else {
            throw pcscError(rc, "SCardGetStatusChange", reader: readers.count == 1 ? readers[0] : nil, phase: .waiting)
        }
        return zip(readers, states).map { name, s in
            let atr = withUnsafeBytes(of: s.rgbAtr) { Array($0.prefix(Int(s.cbAtr))) }
            return ReaderState(name: name, eventState: UInt(s.dwEventState), atr: atr)
        }
    }

    /// SCardCancel: ends a blocked ``statusChange(_:known:timeout:)`` from another thread.
    func cancel() {
        cancelled.withLock { $0 = true }
        SCardCancel(handle)
    }

    /// SCardConnect, exclusive or shared, T=0 or T=1.
    func connect(_ reader: String, exclusive: Bool) throws(FeliCaError) -> PCSCCard {
        var card: SCARDHANDLE = 0
        var proto: DWORD = 0
        let rc = SCardConnect(handle, reader, DWORD(exclusive ? SCARD_SHARE_EXCLUSIVE : SCARD_SHARE_SHARED),
                              DWORD(SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1), &card, &proto)
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardConnect", reader: reader, phase: .connecting) }
        return PCSCCard(handle: card, protocolT0: proto == DWORD(SCARD_PROTOCOL_T0), reader: reader, context: self)
    }
}

/// A connected card: one owner, disconnected exactly once.
///
/// `@unchecked Sendable`: used only on the owner's device queue.
final class PCSCCard: @unchecked Sendable {
    private let handle: SCARDHANDLE
    private let protocolT0: Bool
    private var connected = true
    let reader: String
    /// Keeps the context alive as long as the card handle.
    let context: PCSCContext

    init(handle: SCARDHANDLE, protocolT0: Bool, reader: String, context: PCSCContext) {
        self.handle = handle
        self.protocolT0 = protocolT0
        self.reader = reader
        self.context = context
    }

    deinit { if connected { SCardDisconnect(handle, DWORD(SCARD_LEAVE_CARD)) } }

    /// SCardTransmit with the active protocol's PCI.
    func transmit(_ apdu: [UInt8]) throws(FeliCaError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(felica_max_buffer_size_extended()))
        var length = DWORD(buffer.count)
        let pci = protocolT0 ? felica_pci_t0() : felica_pci_t1()
        let rc = SCardTransmit(handle, pci, apdu, DWORD(apdu.count), nil, &buffer, &length)
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardTransmit", reader: reader, phase: .exchanging) }
        // Every reader answers at least a status word; nothing at all means the card (for
        // vpcd: the virtual card's connection) is gone.
        guard length > 0 else {
            throw FeliCaError(.transmission, "PC/SC reader '\(reader)' returned an empty response (no status word)")
        }
        return Array(buffer.prefix(Int(length)))
    }

    /// SCardControl: a driver request (`code` from the PC/SC Part 10 feature list), its reply.
    func control(_ code: UInt, _ input: [UInt8] = []) throws(FeliCaError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 1024)
        var length: DWORD = 0
        let rc = SCardControl(handle, DWORD(code), input, DWORD(input.count), &buffer, DWORD(buffer.count), &length)
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardControl", reader: reader, phase: .exchanging) }
        return Array(buffer.prefix(Int(length)))
    }

    /// SCardStatus: the ATR of the connected card.
    func atr() throws(FeliCaError) -> [UInt8] {
        var atr = [UInt8](repeating: 0, count: Int(MAX_ATR_SIZE))
        var atrLength = DWORD(atr.count)
        var state: DWORD = 0, proto: DWORD = 0
        var nameLength: DWORD = 0
        let rc = SCardStatus(handle, nil, &nameLength, &state, &proto, &atr, &atrLength)
        guard rc == SCARD_S_SUCCESS else { throw pcscError(rc, "SCardStatus", reader: reader, phase: .connecting) }
        return Array(atr.prefix(Int(atrLength)))
    }

    /// SCardDisconnect, leaving the card as it is.
    func disconnect() {
        guard connected else { return }
        connected = false
        SCardDisconnect(handle, DWORD(SCARD_LEAVE_CARD))
    }
}
