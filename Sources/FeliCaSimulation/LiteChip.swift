import FeliCa
import FeliCaSecurity

/// How a FeliCa Lite (RC-S965) or Lite-S (RC-S966) answers Read and Write Without
/// Encryption: the virtual card's rules for those chips, over the blocks of the image's
/// service 000B (`blocks` for S_PAD0-13 and REG, `blocksAt` for the system blocks).
///
/// - Services: 000B reads, 0009 reads and writes; any other is absent (A6), a write
///   through 000B is refused (A4).
/// - A read takes at most 4 blocks; a read ending in MAC (0x81) gets the MAC over the
///   blocks before it, a read ending in MAC_A (0x91, Lite-S) the MAC_A (``LiteMAC``). CK
///   (0x87) never answers a read.
/// - A write takes one block, or (Lite-S) one block and MAC_A, which must carry the MAC
///   under the session key and the current write counter.
/// - MC (0x88) rules the rest: bytes 0-1 one bit per user block (set: writable), byte 2 FF
///   while ID, SYS_C, CKV, CK and MC can be written, byte 5 bit 0 lets CKV and CK be
///   written with MAC_A after that; bytes 6-7 user blocks a read needs MAC_A (after mutual
///   authentication) for, bytes 8-9 and 10-11 user blocks a write needs MAC_A for. D_ID,
///   SER_C, MAC, WCNT and CRC_CHECK are read-only; STATE is written only with MAC_A.
/// - Writing RC (0x80) starts a session: the session key comes from the challenge and
///   the card key (``CardImage/cardKey``), and external authentication is cleared. A
///   STATE write with a valid MAC_A sets byte 0 (EXT_AUTH) when it writes 01.
/// - WCNT (Lite-S) counts successful writes (3 bytes, little-endian).
///
/// A refused block is answered SF1 = its element's number, SF2 = A8 (the block cannot be
/// accessed so); a block count the chip does not take, FF A2.
struct LiteChip {
    /// What one authentication leaves in the chip.
    struct Session {
        var mac: LiteMAC?
        var externallyAuthenticated = false
    }

    let isLiteS: Bool

    static let writeService: ServiceCode = 0x0009
    static let mcBlock = FeliCaLite.memoryConfigurationBlock
    /// Blocks that never take a plain write.
    static let readOnly: Set<Int> = [0x81, 0x83, 0x84, 0x90, 0x91, 0xA0]
    /// System blocks writable while MC byte 2 is FF.
    static let systemWritable: Set<Int> = [0x82, 0x85, 0x86, 0x87, 0x88]

    /// The answer to a checked-for-syntax block access; the image and session change on a write.
    func answer(_ access: BlockAccessRequest, writing: Bool, idm: IDm, image: inout CardImage, system si: Int, session: inout Session) -> [UInt8] {
        guard let storeIndex = image.systems[si].services.firstIndex(where: { $0.code == FeliCaLite.readService }) else {
            return status(writing, idm, StatusFlags(sf1: 1, sf2: 0xA6))
        }
        for (k, code) in access.services.enumerated() {
            let element = access.blocks.firstIndex { Int($0.serviceIndex) == k }
            let at = UInt8(clamping: (element ?? 0xFE) + 1)
            guard code == FeliCaLite.readService || code == Self.writeService else { return status(writing, idm, StatusFlags(sf1: at, sf2: 0xA6)) }
            if writing && code != Self.writeService { return status(writing, idm, StatusFlags(sf1: at, sf2: 0xA4)) }
        }
        if let i = access.blocks.firstIndex(where: { Int($0.serviceIndex) >= access.services.count }) {
            return status(writing, idm, StatusFlags(sf1: UInt8(i + 1), sf2: 0xA3))
        }
        let store = image.systems[si].services[storeIndex]
        let mc = store.block(Self.mcBlock) ?? [UInt8](repeating: 0, count: 16)
        let key = (try? LiteCardKey(bytes: image.cardKey ?? [])) ?? LiteCardKey.zero
        if writing {
            return write(access, idm: idm, store: &image.systems[si].services[storeIndex], mc: mc, key: key, cardKey: &image.cardKey, session: &session)
        }
        return read(access, idm: idm, store: store, mc: mc, key: key, session: session)
    }

    private func status(_ writing: Bool, _ idm: IDm, _ sf: StatusFlags) -> [UInt8] {
        writing ? WriteWithoutEncryptionResponse(idm: idm, status: sf).encode() : ReadWithoutEncryptionResponse(idm: idm, status: sf).encode()
    }

    private static func bit(_ mc: [UInt8], _ at: Int, _ block: Int) -> Bool {
        guard block < 16 else { return false }
        let word = Int(mc[at]) | Int(mc[at + 1]) << 8
        return word >> block & 1 == 1
    }

    private func read(_ access: BlockAccessRequest, idm: IDm, store: CardImage.Service, mc: [UInt8], key: LiteCardKey, session: Session) -> [UInt8] {
        let numbers = access.blocks.map { Int($0.blockNumber) }
        guard numbers.count <= 4 else { return status(false, idm, StatusFlags(sf1: 0xFF, sf2: 0xA2)) }
        var data: [UInt8] = []
        for (i, n) in numbers.enumerated() {
            let last = i == numbers.count - 1
            let refused = StatusFlags(sf1: UInt8(i + 1), sf2: 0xA8)
            switch n {
            case LiteMAC.macBlock where last && i > 0, LiteMAC.macABlock where last && i > 0 && isLiteS:
                guard let mac = session.mac ?? (try? LiteMAC(key: key, rcBlock: store.block(LiteMAC.rcBlockNumber) ?? [])) else {
                    return status(false, idm, refused)
                }
                let wcnt = Array((store.block(LiteMAC.wcntBlock) ?? [0, 0, 0]).prefix(3))
                let computed = n == LiteMAC.macBlock
                    ? (try? mac.mac(data)).map { $0 + [UInt8](repeating: 0, count: 8) }
                    : (try? mac.readMACA(blocks: Array(numbers.dropLast()), data: data)).map { $0 + wcnt + [UInt8](repeating: 0, count: 5) }
                guard let computed else { return status(false, idm, refused) }
                data += computed
            case LiteMAC.macBlock where i == 0:
                // MAC alone covers nothing: the block as it stands.
                guard let block = store.block(n) else { return status(false, idm, refused) }
                data += block
            case LiteMAC.ckBlock, LiteMAC.macBlock, LiteMAC.macABlock:
                return status(false, idm, refused)
            default:
                guard let block = store.block(n) else { return status(false, idm, refused) }
                if isLiteS && Self.bit(mc, 6, n) {
                    // Read-protected: only with MAC_A after mutual authentication.
                    guard session.externallyAuthenticated, numbers.last == LiteMAC.macABlock else { return status(false, idm, refused) }
                }
                data += block
            }
        }
        return ReadWithoutEncryptionResponse(idm: idm, status: .success, data: data[...]).encode()
    }

    private func write(_ access: BlockAccessRequest, idm: IDm, store: inout CardImage.Service, mc: [UInt8], key: LiteCardKey,
                       cardKey: inout [UInt8]?, session: inout Session) -> [UInt8] {
        let numbers = access.blocks.map { Int($0.blockNumber) }
        let withMAC = isLiteS && numbers.count == 2 && numbers[1] == LiteMAC.macABlock
        guard numbers.count == 1 || withMAC else { return status(true, idm, StatusFlags(sf1: 0xFF, sf2: 0xA2)) }
        let n = numbers[0]
        let data = Array(access.data.prefix(16))
        let refused = StatusFlags(sf1: 1, sf2: 0xA8)
        let wcnt = Array((store.block(LiteMAC.wcntBlock) ?? [0, 0, 0]).prefix(3))
        if withMAC {
            let maca = Array(access.data.dropFirst(16).prefix(16))
            guard let mac = session.mac, let expected = try? mac.writeMACA(wcnt: wcnt, block: n, data: data),
                  Array(maca.prefix(8)) == expected, Array(maca[8..<11]) == wcnt else {
                return status(true, idm, StatusFlags(sf1: 2, sf2: 0xA8))
            }
        }
        let systemOpen = mc[2] == 0xFF
        switch n {
        case 0x00...0x0E:
            guard Self.bit(mc, 0, n) else { return status(true, idm, refused) }
            if isLiteS && (Self.bit(mc, 8, n) || Self.bit(mc, 10, n)) && !withMAC { return status(true, idm, refused) }
        case LiteMAC.rcBlockNumber:
            guard let started = try? LiteMAC(key: key, rcBlock: data) else { return status(true, idm, refused) }
            session = Session(mac: started, externallyAuthenticated: false)
            store.blocksAt[n] = data
            return WriteWithoutEncryptionResponse(idm: idm, status: .success).encode()
        case LiteMAC.stateBlock where isLiteS:
            guard withMAC else { return status(true, idm, refused) }
            session.externallyAuthenticated = data[0] == 0x01
        case 0x86...0x87 where isLiteS && withMAC && mc[5] & 1 == 1:
            break
        case _ where Self.systemWritable.contains(n):
            guard systemOpen else { return status(true, idm, refused) }
        default:
            return status(true, idm, refused)
        }
        if n == LiteMAC.ckBlock {
            cardKey = LiteMAC.reversedHalves(data)
        } else if n < (store.blocks?.count ?? 0) {
            store.blocks![n] = data
        } else {
            store.blocksAt[n] = data
        }
        if isLiteS {
            var count = (Int(wcnt[0]) | Int(wcnt[1]) << 8 | Int(wcnt[2]) << 16) + 1
            count &= 0xFFFFFF
            var block = store.block(LiteMAC.wcntBlock) ?? [UInt8](repeating: 0, count: 16)
            block[0] = UInt8(count & 0xFF); block[1] = UInt8(count >> 8 & 0xFF); block[2] = UInt8(count >> 16)
            store.blocksAt[LiteMAC.wcntBlock] = block
        }
        return WriteWithoutEncryptionResponse(idm: idm, status: .success).encode()
    }
}

/// The parts of a Read or Write Without Encryption the Lite rules need.
struct BlockAccessRequest {
    var services: [ServiceCode]
    var blocks: [BlockListElement]
    var data: ArraySlice<UInt8>
}
