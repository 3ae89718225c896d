import FeliCa
import Testing

/// A response frame built by hand from the layouts in Docs/protocol.md, and what it decodes to.
struct ResponseVector: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let decoded: Response
    var testDescription: String { name }
    /// An answer to Polling (which carries no IDm to check against).
    var isPolling: Bool {
        if case .polling = decoded { return true }
        return false
    }
}

let idm = IDm(rawValue: 0x0101_1203_1234_5678)
let idmBytes: [UInt8] = [0x01, 0x01, 0x12, 0x03, 0x12, 0x34, 0x56, 0x78]
let pmmBytes: [UInt8] = [0x10, 0x0B, 0x4B, 0x42, 0x84, 0x85, 0xD0, 0xFF]
let pmm = PMm(rawValue: 0x100B_4B42_8485_D0FF)

func frame(_ body: [UInt8]) -> [UInt8] { [UInt8(body.count + 1)] + body }

/// Source: Docs/protocol.md, "Commands" table (response column), one vector per response kind.
let responseVectors: [ResponseVector] = [
    ResponseVector(name: "Polling, no request data", bytes: frame([0x01] + idmBytes + pmmBytes),
                   decoded: .polling(PollingResponse(idm: idm, pmm: pmm))),
    ResponseVector(name: "Polling, system code", bytes: frame([0x01] + idmBytes + pmmBytes + [0x00, 0x03]),
                   decoded: .polling(PollingResponse(idm: idm, pmm: pmm, requestData: 0x0003))),
    ResponseVector(name: "Request Service, present and absent", bytes: frame([0x03] + idmBytes + [0x02, 0x00, 0x01, 0xFF, 0xFF]),
                   decoded: .requestService(RequestServiceResponse(idm: idm, keyVersions: [0x0100, nil]))),
    ResponseVector(name: "Request Response", bytes: frame([0x05] + idmBytes + [0x00]),
                   decoded: .requestResponse(RequestResponseResponse(idm: idm, mode: 0))),
    ResponseVector(name: "Read, two blocks", bytes: frame([0x07] + idmBytes + [0x00, 0x00, 0x02] + Array(0..<32)),
                   decoded: .readWithoutEncryption(ReadWithoutEncryptionResponse(idm: idm, status: .success, data: Array(0..<32)[...]))),
    ResponseVector(name: "Read, error status", bytes: frame([0x07] + idmBytes + [0x01, 0xA6]),
                   decoded: .readWithoutEncryption(ReadWithoutEncryptionResponse(idm: idm, status: StatusFlags(sf1: 1, sf2: 0xA6)))),
    ResponseVector(name: "Write", bytes: frame([0x09] + idmBytes + [0x00, 0x00]),
                   decoded: .writeWithoutEncryption(WriteWithoutEncryptionResponse(idm: idm, status: .success))),
    ResponseVector(name: "Search Service Code, area", bytes: frame([0x0B] + idmBytes + [0x00, 0x00, 0xFE, 0xFF]),
                   decoded: .searchServiceCode(SearchServiceCodeResponse(idm: idm, node: .area(0x0000, end: 0xFFFE)))),
    ResponseVector(name: "Search Service Code, service", bytes: frame([0x0B] + idmBytes + [0x0F, 0x09]),
                   decoded: .searchServiceCode(SearchServiceCodeResponse(idm: idm, node: .service(0x090F)))),
    ResponseVector(name: "Search Service Code, end", bytes: frame([0x0B] + idmBytes + [0xFF, 0xFF]),
                   decoded: .searchServiceCode(SearchServiceCodeResponse(idm: idm, node: nil))),
    ResponseVector(name: "Request System Code", bytes: frame([0x0D] + idmBytes + [0x02, 0x00, 0x03, 0xFE, 0x00]),
                   decoded: .requestSystemCode(RequestSystemCodeResponse(idm: idm, systemCodes: [0x0003, 0xFE00]))),
    ResponseVector(name: "Request Block Information", bytes: frame([0x0F] + idmBytes + [0x02, 0x14, 0x00, 0x01, 0x00]),
                   decoded: .requestBlockInformation(RequestBlockInformationResponse(idm: idm, blockCounts: [20, 1]))),
    ResponseVector(name: "Request Specification Version", bytes: frame([0x3D] + idmBytes + [0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x10, 0x02]),
                   decoded: .requestSpecificationVersion(RequestSpecificationVersionResponse(idm: idm, status: .success, versionData: [0x00, 0x00, 0x01, 0x01, 0x10, 0x02]))),
    ResponseVector(name: "Reset Mode", bytes: frame([0x3F] + idmBytes + [0x00, 0x00]),
                   decoded: .resetMode(ResetModeResponse(idm: idm, status: .success))),
]

@Test(arguments: responseVectors)
func responseDecodesAndEncodesBack(_ v: ResponseVector) throws {
    let decoded = try Response.decode(v.bytes[...], expecting: idm)
    #expect(decoded == v.decoded)
    let reencoded: [UInt8] = switch decoded {
    case .polling(let r): r.encode()
    case .requestService(let r): r.encode()
    case .requestResponse(let r): r.encode()
    case .readWithoutEncryption(let r): r.encode()
    case .writeWithoutEncryption(let r): r.encode()
    case .searchServiceCode(let r): r.encode()
    case .requestSystemCode(let r): r.encode()
    case .requestBlockInformation(let r): r.encode()
    case .requestSpecificationVersion(let r): r.encode()
    case .resetMode(let r): r.encode()
    }
    #expect(reencoded == v.bytes)
}

@Test(arguments: responseVectors)
func everyStrictPrefixIsTruncated(_ v: ResponseVector) {
    for n in 0..<v.bytes.count {
        #expect(throws: FeliCaError.truncated, "prefix of \(n) bytes") {
            try Response.decode(v.bytes[..<n])
        }
    }
}

@Test(arguments: responseVectors)
func trailingBytesAreRejected(_ v: ResponseVector) {
    // LEN covers the extra byte, so it is a field-level trailing byte...
    var longer = v.bytes + [0x00]
    longer[0] += 1
    #expect(throws: FeliCaError.self) { try Response.decode(longer[...]) }
    // ...and without adjusting LEN, the frame is longer than it says.
    #expect(throws: FeliCaError.trailingBytes) { try Response.decode((v.bytes + [0x00])[...]) }
}

/// Every answer but Polling's (a closure in `@Test(arguments:)` crashes Swift 6.0's compiler).
let nonPollingVectors = responseVectors.filter { !$0.isPolling }

@Test(arguments: nonPollingVectors)
func answerFromWrongCardIsRejected(_ v: ResponseVector) {
    #expect(throws: FeliCaError.wrongCard) {
        try Response.decode(v.bytes[...], expecting: IDm(rawValue: 0x0102_0304_0506_0708))
    }
}

@Test func wrongResponseCodeIsRejected() {
    let bytes = frame([0x05] + idmBytes + [0x00])
    #expect(throws: FeliCaError(.unexpectedResponse, "")) { try ReadWithoutEncryptionResponse.decode(bytes[...]) }
}

@Test func lenBelowTwoIsRejected() {
    #expect(throws: FeliCaError(.badLength, "")) { try Response.decode([0x01][...]) }
}

@Test func errorReasonNamesTheField() {
    let bytes = frame([0x07] + idmBytes + [0x00, 0x00, 0x02] + Array(0..<16))
    do {
        _ = try ReadWithoutEncryptionResponse.decode(bytes[...])
        Issue.record("decoded a frame missing a block")
    } catch {
        #expect(error.code == .truncated)
        #expect(error.reason.contains("block data"))
    }
}

/// A command: its bytes from the command column of Docs/protocol.md, and the value that encodes to them.
struct CommandVector: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let command: Command
    var testDescription: String { name }
}

let commandVectors: [CommandVector] = {
    let read = try! ReadWithoutEncryptionCommand(idm: idm, services: [0x090F, 0x008B], blocks: [
        try! BlockListElement(serviceIndex: 0, block: 0), try! BlockListElement(serviceIndex: 1, block: 0),
        try! BlockListElement(serviceIndex: 0, block: 0x123),
    ])
    let write = try! WriteWithoutEncryptionCommand(idm: idm, services: [0x0009], blocks: [try! BlockListElement(serviceIndex: 0, block: 1)], data: Array(repeating: 0xAB, count: 16))
    return [
        CommandVector(name: "Polling wildcard RC=1 one slot", bytes: [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00],
                      command: .polling(PollingCommand(systemCode: .wildcard, requestCode: .systemCode, timeSlot: .one))),
        CommandVector(name: "Polling FE00 RC=2 16 slots", bytes: [0x06, 0x00, 0xFE, 0x00, 0x02, 0x0F],
                      command: .polling(PollingCommand(systemCode: 0xFE00, requestCode: .communicationPerformance, timeSlot: .sixteen))),
        CommandVector(name: "Request Service, 2 nodes", bytes: frame([0x02] + idmBytes + [0x02, 0x0F, 0x09, 0x8B, 0x00]),
                      command: .requestService(try! RequestServiceCommand(idm: idm, nodes: [0x090F, 0x008B]))),
        CommandVector(name: "Request Response", bytes: frame([0x04] + idmBytes),
                      command: .requestResponse(RequestResponseCommand(idm: idm))),
        CommandVector(name: "Read, 2 services, 2- and 3-byte elements",
                      bytes: frame([0x06] + idmBytes + [0x02, 0x0F, 0x09, 0x8B, 0x00, 0x03, 0x80, 0x00, 0x81, 0x00, 0x00, 0x23, 0x01]),
                      command: .readWithoutEncryption(read)),
        CommandVector(name: "Write, one block", bytes: frame([0x08] + idmBytes + [0x01, 0x09, 0x00, 0x01, 0x80, 0x01] + Array(repeating: 0xAB, count: 16)),
                      command: .writeWithoutEncryption(write)),
        CommandVector(name: "Search Service Code index 0x0102", bytes: frame([0x0A] + idmBytes + [0x02, 0x01]),
                      command: .searchServiceCode(SearchServiceCodeCommand(idm: idm, index: 0x0102))),
        CommandVector(name: "Request System Code", bytes: frame([0x0C] + idmBytes),
                      command: .requestSystemCode(RequestSystemCodeCommand(idm: idm))),
        CommandVector(name: "Request Block Information", bytes: frame([0x0E] + idmBytes + [0x01, 0x0F, 0x09]),
                      command: .requestBlockInformation(try! RequestBlockInformationCommand(idm: idm, nodes: [0x090F]))),
        CommandVector(name: "Request Specification Version", bytes: frame([0x3C] + idmBytes + [0x00, 0x00]),
                      command: .requestSpecificationVersion(RequestSpecificationVersionCommand(idm: idm))),
        CommandVector(name: "Reset Mode", bytes: frame([0x3E] + idmBytes + [0x00, 0x00]),
                      command: .resetMode(ResetModeCommand(idm: idm))),
    ]
}()

@Test(arguments: commandVectors)
func commandEncodesAndDecodes(_ v: CommandVector) throws {
    #expect(v.command.encode() == v.bytes)
    #expect(try Command.decode(v.bytes[...]) == v.command)
}

@Test(arguments: commandVectors)
func everyStrictCommandPrefixIsTruncated(_ v: CommandVector) {
    for n in 0..<v.bytes.count {
        #expect(throws: FeliCaError.truncated, "prefix of \(n) bytes") { try Command.decode(v.bytes[..<n]) }
    }
}

@Test(arguments: [0, 1, 3, 7, 15] as [UInt8])
func validTimeSlots(_ n: UInt8) throws {
    #expect(try TimeSlot(rawValue: n).slots == Int(n) + 1)
}

@Test(arguments: [2, 4, 8, 14, 16, 255] as [UInt8])
func invalidTimeSlotsAreRefused(_ n: UInt8) {
    #expect(throws: FeliCaError.self) { try TimeSlot(rawValue: n) }
    #expect(throws: FeliCaError.self) { try PollingCommand.decode([0x06, 0x00, 0xFF, 0xFF, 0x00, n][...]) }
}

@Test func pollingRequestCodeOutOfRangeIsRefused() {
    #expect(throws: FeliCaError(.invalidField, "")) { try PollingCommand.decode([0x06, 0x00, 0xFF, 0xFF, 0x03, 0x00][...]) }
}

@Test func readRefusesMoreThanFifteenBlocks() {
    #expect(throws: FeliCaError.self) { try ReadWithoutEncryptionCommand(idm: idm, service: 0x090F, blocks: 0..<16) }
    #expect(throws: FeliCaError.self) { try RequestServiceCommand(idm: idm, nodes: Array(repeating: 0x090F, count: 33)) }
    #expect(throws: FeliCaError.self) { try BlockListElement(serviceIndex: 16, block: 0) }
}

@Test func requestServiceAcceptsThirtyTwoNodes() throws {
    let c = try RequestServiceCommand(idm: idm, nodes: Array(repeating: 0x090F, count: 32))
    #expect(c.encode().count == 11 + 64)
}

/// Found by FuzzCodec: a block number below 256 sent in the 3-byte form decodes, and
/// re-encodes in the 2-byte form; the command it means is the same.
@Test func threeByteElementForASmallBlockDecodesToTheSameCommand() throws {
    let bytes = frame([0x06] + idmBytes + [0x02, 0x0F, 0x09, 0x8B, 0x00, 0x03, 0x80, 0x00, 0x81, 0x00, 0x00, 0x23, 0x00])
    let c = try Command.decode(bytes[...])
    guard case .readWithoutEncryption(let read) = c else { Issue.record("not a read"); return }
    #expect(read.blocks[2].blockNumber == 0x23)
    #expect(read.blocks[2].serviceIndex == 0)
    #expect(c.encode().count == bytes.count - 1)
    #expect(try Command.decode(c.encode()[...]) == c)
}
