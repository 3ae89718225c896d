/// One system of a card as Polling found it: the IDm to address it with, its PMm, and
/// its system code when known.
public struct Target: Hashable, Sendable, CustomStringConvertible {
    public var idm: IDm
    public var pmm: PMm
    public var systemCode: SystemCode?

    public init(idm: IDm, pmm: PMm, systemCode: SystemCode?) {
        self.idm = idm
        self.pmm = pmm
        self.systemCode = systemCode
    }

    public var description: String {
        "IDm \(idm) PMm \(pmm)" + (systemCode.map { " system \($0)" } ?? "")
    }
}

/// Blocks to read from one service.
public struct BlockRequest: Hashable, Sendable {
    public var service: ServiceCode
    public var blocks: [Int]

    public init(service: ServiceCode, blocks: [Int]) {
        self.service = service
        self.blocks = blocks
    }

    public init(service: ServiceCode, blocks: Range<Int>) {
        self.init(service: service, blocks: Array(blocks))
    }
}
