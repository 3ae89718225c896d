import FeliCa
import FeliCaSimulation
import FeliCaReaderCodecs
import FeliCaFiles
import FeliCaTransportSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A virtual FeliCa card in Debian's vsmartcard-vpcd reader, so the real pcscd carries
/// every exchange (Docs/pcsc.md, "Without hardware: the virtual card for vpcd").
///
/// vpcd listens on TCP (35963 for "Virtual PCD 00 00"); this card connects to it. Both
/// directions frame messages as a 2-byte big-endian length and the payload. A 1-byte
/// payload from vpcd is a control message (`00` power off, `01` power on, `02` reset,
/// `04` ATR request, which gets the ATR as reply); anything longer is a command APDU,
/// answered through ``VPCDResponder`` in the chosen dialect. Closing the socket removes
/// the card; connecting again inserts it.
public final class VPCDCard: Sendable {
    /// Where to connect and what to speak.
    public struct Options: Sendable {
        /// vpcd binds every address but only loopback is meant for virtual cards.
        public var host: String = "127.0.0.1"
        public var port: UInt16 = 35963
        public var dialect: PCSCDialect = .part3
        /// ACR122U only: answer `61 xx` and serve the data on GET RESPONSE (T=0 behaviour).
        public var getResponse = false
        /// Part 3 and Sony: how the reader departs from the plain dialect (refused
        /// commands, APDU forms, cut replies).
        public var quirks = VPCDResponder.Quirks()
        /// How long to keep trying while vpcd does not accept connections yet (pcscd starting).
        public var connectWait: Duration = .seconds(10)
        /// Set `TCP_QUICKACK` before every read. Off only to measure what delayed ACKs cost.
        public var quickAck = true
        /// A wedged card (`--stall-after`): after answering this many FeliCa commands, hold
        /// every later reply back for good, the connection kept open. nil = never.
        public var stallAfter: Int?
        /// Called once when the card stalls (on the serving thread).
        public var onStall: (@Sendable () -> Void)?
        public init() {}
    }

    /// Why ``serve()`` returned.
    public enum End: Sendable, Equatable {
        /// The card left the field (`VirtualCard.isPresent` turned false): the socket was closed.
        case removed
        /// vpcd closed the connection (pcscd stopped or unloaded the driver).
        case readerClosed
    }

    public static let defaultPort: UInt16 = 35963

    public let card: VirtualCard
    public let options: Options
    /// The ATR reported to pcscd: PC/SC Part 3 storage card, standard FeliCa.
    public let atr: [UInt8] = ATR.feliCa()

    /// The connected socket and whether ``eject()`` asked to stop.
    private let link = Mutex<(fd: Int32?, ejected: Bool)>((nil, false))

    public init(card: VirtualCard, options: Options = Options()) {
        self.card = card
        self.options = options
    }

    /// Takes the card out of the reader: the socket closes and ``serve()`` returns
    /// ``End/removed``. Safe from any thread; a no-op when not serving.
    public func eject() {
        link.withLock { l in
            l.ejected = true
            if let fd = l.fd { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Connects, serves until the card is removed or vpcd hangs up. Blocking socket calls
    /// run on a thread of their own, off the cooperative pool.
    public func serve() async throws(FeliCaError) -> End {
        let result: Result<End, FeliCaError> = await withCheckedContinuation { continuation in
            let serve: @Sendable () -> Void = {
                continuation.resume(returning: Result { () throws(FeliCaError) -> End in try self.serveBlocking() })
            }
            // No thread to be had: serve on this one rather than not at all.
            if !OwnedThread.detach(name: "vpcd \(options.port)", serve) { serve() }
        }
        return try result.get()
    }

    /// ``serve()`` on the calling thread.
    public func serveBlocking() throws(FeliCaError) -> End {
        guard let idm = card.systems.first?.idm, let pmm = card.systems.first?.pmm else {
            throw FeliCaError(.badInput, "the card image has no system, so the virtual card has no IDm")
        }
        link.withLock { $0 = (nil, false) }
        let socket = try connect()
        let ejected = link.withLock { l -> Bool in
            l.fd = socket
            return l.ejected
        }
        defer {
            link.withLock { $0.fd = nil }
            close(socket)
        }
        if ejected { return .removed }
        let card = self.card
        var responder = VPCDResponder(dialect: options.dialect, idm: idm, pmm: pmm, getResponse: options.getResponse, quirks: options.quirks) { card.respond(to: $0) }
        while true {
            guard let message = try receive(socket) else {
                return link.withLock { $0.ejected } ? .removed : .readerClosed
            }
            if message.count == 1 {
                switch message[0] {
                case 0x04: try send(socket, atr)
                case 0x00, 0x01, 0x02:
                    // Power cycles end any transparent session, as on a real reader.
                    responder = VPCDResponder(dialect: options.dialect, idm: idm, pmm: pmm, getResponse: options.getResponse, quirks: options.quirks) { card.respond(to: $0) }
                default: continue
                }
                continue
            }
            let reply = responder.respond(to: message)
            // A card that left the field mid-command never answers: the socket closes.
            if !card.isPresent { return .removed }
            if let n = options.stallAfter, card.exchangeCount > n {
                options.onStall?()
                // Swallow whatever comes next, answer nothing, until vpcd or eject() hangs up.
                while try receive(socket) != nil {}
                return link.withLock { $0.ejected } ? .removed : .readerClosed
            }
            do {
                try send(socket, reply)
            } catch {
                if link.withLock({ $0.ejected }) { return .removed }
                throw error
            }
        }
    }

    // MARK: - Socket calls, one small wrapper each

    private func connect() throws(FeliCaError) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = options.port.bigEndian
        guard inet_pton(AF_INET, options.host, &address.sin_addr) == 1 else {
            throw FeliCaError(.badInput, "vpcd host \"\(options.host)\" is not an IPv4 address")
        }
        let clock = ContinuousClock()
        let deadline = clock.now + options.connectWait
        while true {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw systemError("socket") }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rc == 0 {
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            let e = errno
            close(fd)
            // vpcd listens once pcscd has loaded the driver; there is no event to wait on.
            if link.withLock({ $0.ejected }) {
                throw FeliCaError(.cancelled, "the virtual card was ejected before vpcd accepted it")
            }
            guard e == ECONNREFUSED || e == EINTR, clock.now < deadline else {
                throw FeliCaError(.noReader, "could not connect to vpcd on \(options.host):\(options.port): \(String(cString: strerror(e))) — is pcscd running with vsmartcard-vpcd installed (/etc/reader.conf.d/vpcd)?")
            }
            usleep(20_000)
        }
    }

    /// One message, or nil when vpcd closed the connection.
    private func receive(_ fd: Int32) throws(FeliCaError) -> [UInt8]? {
        guard let header = try readExactly(fd, 2) else { return nil }
        let length = Int(header[0]) << 8 | Int(header[1])
        if length == 0 { return [] }
        guard let payload = try readExactly(fd, length) else { return nil }
        return payload
    }

    private func readExactly(_ fd: Int32, _ count: Int) throws(FeliCaError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            // vpcd writes length and payload separately; without a quick ACK before each read
            // the kernel's delayed ACK costs ~40 ms per APDU.
            if options.quickAck {
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
            if n == 0 { return nil }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw systemError("recv")
            }
            got += n
        }
        return buffer
    }

    private func send(_ fd: Int32, _ payload: [UInt8]) throws(FeliCaError) {
        let frame = [UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF)] + payload
        let e = SystemCalls.writeAll(frame) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL)) }
        if e != 0 {
            errno = e
            throw systemError("send")
        }
    }

    private func systemError(_ call: String) -> FeliCaError {
        FeliCaError(.transmission, "vpcd connection to \(options.host):\(options.port): \(call) failed: \(String(cString: strerror(errno)))")
    }
}
